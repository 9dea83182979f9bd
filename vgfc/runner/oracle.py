"""Compile, run on the CPU, and hold the outputs up against an independent oracle.

What ``vgfc verify`` does, as a library call, so that the command only parses files and prints:
pick the oracle (the user's expected arrays, the TOSA reference model for models without custom
ops, the reference converter's VGF run on the same stack otherwise), map push-constant values
given per shader op (by ``operator_name`` or op index) to the compute segments that run them,
run vgfc's VGF with the same inputs and compare every output.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vgfc.compiler import Compilation
from vgfc.diagnostics import InputError, UnsupportedError, VgfcError
from vgfc.ir import CUSTOM_SHADER_DOMAIN, Array, Graph
from vgfc.partition import PartitionKind

if TYPE_CHECKING:
    from vgfc.runner.numeric import Comparison

__all__ = ["ORACLES", "Verdict", "choose_oracle", "push_constants_by_op", "verify_numbers"]

ORACLES = ("auto", "tosa", "reference", "expected")


@dataclass(frozen=True, slots=True)
class Verdict:
    oracle: str
    """The oracle used: ``tosa``, ``reference`` or ``expected``."""
    rows: tuple[Comparison, ...]
    """One :class:`vgfc.runner.numeric.Comparison` per output."""

    @property
    def failed(self) -> list[str]:
        return [r.name for r in self.rows if not r.ok]


def choose_oracle(against: str, graph: Graph, has_expected: bool) -> str:
    """``auto`` -> expected arrays when given, the TOSA reference model without custom ops,
    the reference converter otherwise."""
    bound = any(
        op.inserted is not None or (op.op == "CUSTOM" and op.domain != CUSTOM_SHADER_DOMAIN)
        for op in graph.operators
    )
    if bound and not has_expected and against in ("auto", "tosa", "reference"):
        raise UnsupportedError(
            "the model's custom ops run through a kernel library: neither the TOSA reference "
            "model nor the reference converter can run them; give --expected NAME=FILE.npy"
        )
    if against != "auto":
        return against
    if has_expected:
        return "expected"
    return "reference" if any(op.op == "CUSTOM" for op in graph.operators) else "tosa"


def push_constants_by_op(
    graph: Graph, values: Iterable[tuple[str, str, bytes]]
) -> dict[int, bytes]:
    """(op key, source, bytes) -> bytes by op index. The key is an ``operator_name`` or an op
    index; each value is checked against the size of the shader's push-constant block, and the
    source (e.g. the file it came from) named when it does not fit."""
    by_name = {op.custom_name: op.index for op in graph.operators if op.is_shader}
    found: dict[int, bytes] = {}
    for key, source, data in values:
        index = int(key) if key.isdigit() else by_name.get(key)
        if index is None or index >= len(graph.operators) or not graph.operators[index].is_shader:
            raise InputError(f"'{key}' is not a shader op of the model")
        op = graph.operators[index]
        size = op.shader.push_constant_size if op.shader is not None else 0
        if len(data) != size:
            raise InputError(
                f"'{source}' holds {len(data)} bytes of push constants, the shader's block "
                f"has {size}",
                graph.where(op),
            )
        found[index] = data
    return found


def verify_numbers(
    model: Path,
    compiled: Compilation,
    inputs: Mapping[str, Array],
    *,
    against: str = "auto",
    expected: Mapping[str, Array] | None = None,
    push_constants: Mapping[int, bytes] | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    validate: bool = False,
    device: str = "cpu",
) -> Verdict:
    """Run ``compiled`` (a finished compilation of ``model``) with ``inputs`` (every graph
    input) and compare each output with the oracle. ``push_constants`` are by shader op index
    (:func:`push_constants_by_op`). ``validate`` and ``device`` are :func:`vgfc.runner.run_vgf`'s
    (they apply to vgfc's file; the oracle runs as it always does)."""
    from vgfc.runner import run_vgf
    from vgfc.runner.numeric import compare, reference_converter_outputs, tosa_reference_outputs

    graph, plan, vgf = compiled.graph, compiled.plan, compiled.vgf
    if graph is None or plan is None or vgf is None:
        raise ValueError("verify_numbers needs a finished compilation")
    pushes_by_op = dict(push_constants or {})
    oracle = choose_oracle(against, graph, bool(expected))
    if oracle == "expected":
        if not expected:
            raise InputError("the expected oracle needs expected output arrays")
        want = dict(expected)
    elif oracle == "tosa":
        want = tosa_reference_outputs(model, graph, inputs)
    else:
        want = reference_converter_outputs(model, graph, inputs, pushes_by_op)
    # Segment i runs partition i; a shader partition runs exactly one op.
    segment_of = {p.operators[0]: p.id for p in plan.partitions if p.kind is PartitionKind.SHADER}
    pushes = {segment_of[op]: data for op, data in pushes_by_op.items()}
    with tempfile.TemporaryDirectory(prefix="vgfc-verify-") as tmp:
        path = Path(tmp) / "model.vgf"
        path.write_bytes(vgf)
        try:
            outputs = run_vgf(
                path, [inputs[n] for n in graph.inputs], pushes, validate=validate, device=device
            )
        except VgfcError as e:  # the file is a temporary one: name the model the user gave
            e.location = dataclasses.replace(e.location, file=str(model))
            raise e.at() from None
    return Verdict(oracle, tuple(compare(outputs, want, atol, rtol)))
