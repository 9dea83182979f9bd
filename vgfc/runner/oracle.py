"""Compile, run on the CPU, and hold the outputs up against an oracle that does not share vgfc's
mistakes, saying for every operator what it was checked against.

What ``vgfc verify`` does, as a library call, so that the command only parses files and prints.
An oracle is worth something only where it is independent of what it checks, so each operator of
the model (as the file has it) gets one of:

* ``tosa_reference_model``: a built-in operator, run by tosa-tools' reference model. Built-in
  operators between custom ones run piece by piece (:mod:`vgfc.runner.subgraph` cuts the file);
* ``python reference M:F``: a custom operator whose kernel-library entry names a Python reference
  (:mod:`vgfc.resolve.reference`), run on the values the oracle computed before it;
* ``expected arrays``: the user's ``--expected`` outputs, for every operator they depend on;
* ``unverified``: nothing independent describes it: a custom shader is its own only description,
  an entry without ``reference``, or an operator downstream of an unverified one. So is
  ``reference converter: same shader, not independent``: the reference converter's VGF runs the
  very same shader, so agreeing with it proves nothing about the shader (it still checks vgfc's
  lowering of the built-in operators).

The run itself checks write coverage (:mod:`vgfc.runner.coverage`): elements of an output or of a
value between segments that no segment wrote are reported, whatever the oracle says.

Here: the choice of oracle, the run, the expected and reference-converter oracles, and the
comparison (:class:`Verdict`); the ``tosa`` oracle's own evaluation (reference model and Python
references, operator by operator) is :mod:`vgfc.runner.independent`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vgfc.compiler import Compilation
from vgfc.diagnostics import InputError, UnsupportedError, VgfcError
from vgfc.ir import CUSTOM_SHADER_DOMAIN, Array, Graph, Operator
from vgfc.partition import PartitionKind
from vgfc.record import record, replace
from vgfc.runner.independent import Check, OpCheck, independent_outputs

if TYPE_CHECKING:
    from vgfc.resolve.library.records import Library
    from vgfc.runner.coverage import Unwritten
    from vgfc.runner.numeric import Comparison

__all__ = [
    "ORACLES",
    "Verdict",
    "choose_oracle",
    "push_constants_by_op",
    "verify_numbers",
]

ORACLES = ("auto", "tosa", "reference", "expected")


@record
class Verdict:
    oracle: str
    """The oracle used: ``tosa`` (reference model and Python references), ``reference`` or
    ``expected``."""
    rows: tuple[Comparison, ...]
    """One :class:`vgfc.runner.numeric.Comparison` per output the oracle gave a value for."""
    checks: tuple[OpCheck, ...] = ()
    """One per operator of the file, in program order."""
    unwritten: tuple[Unwritten, ...] = ()
    """Outputs and values between segments with elements no segment wrote."""
    unchecked_outputs: tuple[str, ...] = ()
    """Outputs the oracle gave no value for (they depend on an unverified operator)."""

    @property
    def failed(self) -> list[str]:
        return [r.name for r in self.rows if not r.ok]

    @property
    def unverified(self) -> tuple[OpCheck, ...]:
        return tuple(c for c in self.checks if not c.verified)


def choose_oracle(against: str, graph: Graph, has_expected: bool) -> str:
    """``auto`` -> the expected arrays when given, else ``tosa`` (the reference model for the
    built-in operators, Python references for custom ones)."""
    bound = any(
        op.inserted is not None or (op.op == "CUSTOM" and op.domain != CUSTOM_SHADER_DOMAIN)
        for op in graph.operators
    )
    if bound and against == "reference":
        raise UnsupportedError(
            "the model's custom ops run through a kernel library: the reference converter "
            "cannot run them; give --expected NAME=FILE.npy or a `reference` in the library"
        )
    if against == "expected" and not has_expected:
        raise InputError("the expected oracle needs expected output arrays")
    if against != "auto":
        return against
    return "expected" if has_expected else "tosa"


def push_constants_by_op(
    graph: Graph,
    values: Iterable[tuple[str, str, bytes]],
    segments: Mapping[int, int] | None = None,
) -> dict[int, bytes]:
    """(target, source, bytes) -> bytes by op index in ``graph``. A target is an
    ``operator_name``, ``op:N`` (op #N of the file) or ``segment:N`` (``segments`` maps a
    segment to the op it runs); each value is checked against the size of the shader's
    push-constant block, and the source (e.g. the file it came from) named when it does not
    fit."""
    found: dict[int, bytes] = {}
    for key, source, data in values:
        kind, _, value = key.partition(":") if ":" in key else ("name", "", key)
        if kind == "segment":
            op_index = (segments or {}).get(int(value)) if value.isdigit() else None
            if op_index is None:
                raise InputError(f"'{key}': no compute segment {value} in the compiled model")
            ops = [graph.operators[op_index]]
        elif kind == "op":
            ops = [o for o in graph.operators if o.is_shader and str(o.file_index) == value]
        else:
            ops = [o for o in graph.operators if o.is_shader and o.custom_name == value]
        if not ops:
            raise InputError(f"'{key}' is not a shader op of the model")
        for op in ops:
            size = op.shader.push_constant_size if op.shader is not None else 0
            if len(data) != size:
                raise InputError(
                    f"'{source}' holds {len(data)} bytes of push constants, the shader's block "
                    f"has {size}",
                    op.where(graph.source, origin=False),
                )
            found[op.index] = data
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
    libraries: Sequence[Library] = (),
    timeout: float | None = None,
    on_stage: Callable[[str], None] | None = None,
    reference_imports: bool = False,
) -> Verdict:
    """Run ``compiled`` (a finished compilation of ``model``) with ``inputs`` (every graph
    input) and compare each output with the oracle. ``push_constants`` are by shader op index
    in the compiled graph (:func:`push_constants_by_op`). ``validate``, ``device`` and
    ``timeout`` are :func:`vgfc.runner.run_vgf`'s (they apply to vgfc's file; the oracle runs
    as it always does). ``libraries`` are searched for the Python references of custom ops,
    each a Python file in its library's folder, or with ``reference_imports`` any module
    (:func:`vgfc.resolve.reference.load_reference`). ``on_stage`` is told what runs next
    (running the file, computing the oracle's outputs)."""
    from vgfc.read import load
    from vgfc.runner import run_checked
    from vgfc.runner.numeric import compare, reference_converter_outputs
    from vgfc.runner.run import DEFAULT_TIMEOUT

    graph, plan, vgf = compiled.graph, compiled.plan, compiled.vgf
    if graph is None or plan is None or vgf is None:
        raise ValueError("verify_numbers needs a finished compilation")
    original = load(model)
    pushes_by_op = dict(push_constants or {})
    oracle = choose_oracle(against, graph, bool(expected))
    # Segment i runs partition i; a shader partition runs exactly one op.
    segment_of = {p.operators[0]: p.id for p in plan.partitions if p.kind is PartitionKind.SHADER}
    pushes = {segment_of[op]: data for op, data in pushes_by_op.items()}
    say = on_stage or (lambda _text: None)
    say("run on " + ("lavapipe (CPU)" if device == "cpu" else "the GPU"))
    with tempfile.TemporaryDirectory(prefix="vgfc-verify-") as tmp:
        path = Path(tmp) / "model.vgf"
        path.write_bytes(vgf)
        try:
            ran = run_checked(
                path,
                [inputs[n] for n in graph.inputs],
                pushes,
                validate=validate,
                device=device,
                timeout=timeout or DEFAULT_TIMEOUT,
            )
        except VgfcError as e:  # the file is a temporary one: name the model the user gave
            e.location = replace(e.location, file=str(model))
            raise e.at() from None
    say(f"compare with the {oracle} oracle")
    if oracle == "expected":
        assert expected is not None
        want = dict(expected)
        checks = _expected_checks(original, set(want))
    elif oracle == "reference":
        by_file = _file_indices(graph, pushes_by_op)
        want = reference_converter_outputs(model, original, inputs, by_file)
        checks = [
            OpCheck(
                op.index,
                op.label(),
                Check.NOT_INDEPENDENT if op.op == "CUSTOM" else Check.CHECKED,
                "reference converter: same shader, not independent"
                if op.op == "CUSTOM"
                else "reference converter",
            )
            for op in original.operators
        ]
    else:
        # vgfc's own values where a segment hands one on: what an unverified op computed can
        # still feed the oracle of the ops after it.
        seen = {t: ran.between[b] for t, b in compiled.bindings.items() if b in ran.between}
        seen.update({n: ran.outputs[n] for n in original.outputs if n in ran.outputs})
        want, checks = independent_outputs(
            model, original, inputs, libraries, seen, reference_imports=reference_imports
        )
    rows = tuple(compare(ran.outputs, want, atol, rtol))
    unchecked = tuple(n for n in original.outputs if n not in want)
    return Verdict(oracle, rows, tuple(checks), ran.unwritten, unchecked)


def _file_indices(graph: Graph, pushes: Mapping[int, bytes]) -> dict[int, bytes]:
    """Push constants by op index of the file (the reference converter's numbering)."""
    return {graph.operators[i].file_index: data for i, data in pushes.items()}


def _expected_checks(graph: Graph, given: set[str]) -> list[OpCheck]:
    """Every op the given outputs depend on is checked by them; an op they do not depend on
    and that feeds another output is unverified; one that feeds no output changes nothing."""
    producer = {t: op for op in graph.operators for t in op.outputs}
    feeds_given = _ancestors(graph, given, producer)
    feeds_any = _ancestors(graph, set(graph.outputs), producer)
    checks = []
    for op in graph.operators:
        if op.index in feeds_given or op.index not in feeds_any:
            checks.append(OpCheck(op.index, op.label(), Check.CHECKED, "expected arrays"))
        else:
            checks.append(
                OpCheck(
                    op.index,
                    op.label(),
                    Check.UNVERIFIED,
                    "unverified: no --expected array for the outputs it feeds",
                )
            )
    return checks


def _ancestors(graph: Graph, names: set[str], producer: Mapping[str, Operator]) -> set[int]:
    seen: set[int] = set()
    todo = [producer[n] for n in names if n in producer]
    while todo:
        op = todo.pop()
        if op.index in seen:
            continue
        seen.add(op.index)
        todo.extend(producer[n] for n in op.inputs if n in producer)
    return seen
