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
"""

from __future__ import annotations

import enum
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vgfc.compiler import Compilation
from vgfc.diagnostics import InputError, UnsupportedError, VgfcError
from vgfc.ir import CUSTOM_SHADER_DOMAIN, Array, Graph, Operator
from vgfc.partition import PartitionKind
from vgfc.record import record, replace

if TYPE_CHECKING:
    from vgfc.resolve.library.records import Entry, Library
    from vgfc.runner.coverage import Unwritten
    from vgfc.runner.numeric import Comparison

__all__ = [
    "ORACLES",
    "Check",
    "OpCheck",
    "Verdict",
    "choose_oracle",
    "independent_outputs",
    "push_constants_by_op",
    "verify_numbers",
]

ORACLES = ("auto", "tosa", "reference", "expected")


class Check(enum.Enum):
    """How far an operator was checked."""

    CHECKED = "checked"
    UNVERIFIED = "unverified"
    NOT_INDEPENDENT = "not independent"


@record
class OpCheck:
    """What one operator of the file was checked against."""

    op: int
    """Its index in the file."""
    label: str
    """``#3 CUSTOM 'blur'``."""
    status: Check
    against: str
    """``tosa_reference_model``, ``python reference m:f``, ``expected arrays``, or why it is
    unverified."""

    @property
    def verified(self) -> bool:
        return self.status is Check.CHECKED


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
) -> Verdict:
    """Run ``compiled`` (a finished compilation of ``model``) with ``inputs`` (every graph
    input) and compare each output with the oracle. ``push_constants`` are by shader op index
    in the compiled graph (:func:`push_constants_by_op`). ``validate``, ``device`` and
    ``timeout`` are :func:`vgfc.runner.run_vgf`'s (they apply to vgfc's file; the oracle runs
    as it always does). ``libraries`` are searched for the Python references of custom ops."""
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
        want, checks = independent_outputs(model, original, inputs, libraries, seen)
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


def independent_outputs(
    model: Path,
    graph: Graph,
    inputs: Mapping[str, Array],
    libraries: Sequence[Library] = (),
    seen: Mapping[str, Array] | None = None,
) -> tuple[dict[str, Array], list[OpCheck]]:
    """The outputs an independent oracle gives for ``inputs``, and what each op of ``graph``
    (the file as read) was checked against. Built-in operators run on the TOSA reference model,
    piece by piece between custom operators; a custom operator runs its library entry's Python
    reference, or is unverified. ``seen`` holds vgfc's own values of tensors (those a run hands
    from segment to segment): the ops after an unverified one are checked on what vgfc
    computed for it; without such a value they are unverified too. An output that is vgfc's own
    value is never compared with itself."""
    from vgfc.runner.numeric import tosa_reference_outputs
    from vgfc.verify import topological_order

    if not any(op.op == "CUSTOM" for op in graph.operators):
        whole = tosa_reference_outputs(model, graph, inputs)
        return whole, [
            OpCheck(op.index, op.label(), Check.CHECKED, "tosa_reference_model")
            for op in graph.operators
        ]
    data = model.read_bytes()
    values: dict[str, Array] = {
        n: t.data.array for n, t in graph.tensors.items() if t.data is not None
    }
    values.update(inputs)
    unknown: dict[str, int] = {}  # value -> the unverified op it comes from
    checks: dict[int, OpCheck] = {}
    batch: list[Operator] = []
    order = topological_order(graph)
    later = _readers(order)

    def flush() -> None:
        _run_builtins(data, graph, batch, values, unknown, checks, later)
        batch.clear()

    given: dict[str, int] = {}  # tensor -> the unverified op whose vgfc value it is
    for op in order:
        if op.op != "CUSTOM":
            batch.append(op)
            continue
        flush()
        _run_custom(op, graph, values, unknown, checks, libraries)
        if op.outputs and all(n in unknown and n in (seen or {}) for n in op.outputs):
            for n in op.outputs:
                values[n] = (seen or {})[n]
                given[n] = unknown.pop(n)
    flush()
    want = {
        n: values[n] for n in graph.outputs if n in values and n not in unknown and n not in given
    }
    checks_given = _given_notes(graph, checks, given)
    return want, [checks_given[op.index] for op in graph.operators]


def _given_notes(
    graph: Graph, checks: Mapping[int, OpCheck], given: Mapping[str, int]
) -> dict[int, OpCheck]:
    """Checks of ops that read vgfc's value of an unverified op say so."""
    if not given:
        return dict(checks)
    producer = {t: op for op in graph.operators for t in op.outputs}
    out = dict(checks)
    for op in graph.operators:
        check = checks[op.index]
        if not check.verified:
            continue
        sources = sorted(_given_sources(op, producer, given))
        if sources:
            ops = ", ".join(f"#{s}" for s in sources)
            out[op.index] = replace(
                check, against=f"{check.against}, on vgfc's result of unverified op {ops}"
            )
    return out


def _given_sources(
    op: Operator, producer: Mapping[str, Operator], given: Mapping[str, int]
) -> set[int]:
    """The unverified ops whose vgfc values ``op``'s inputs are computed from."""
    found: set[int] = set()
    seen: set[str] = set()
    todo = list(op.inputs)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in given:
            found.add(given[name])
        elif name in producer and producer[name].op != "CUSTOM":
            todo.extend(producer[name].inputs)
    return found


def _readers(order: Sequence[Operator]) -> dict[str, set[int]]:
    readers: dict[str, set[int]] = {}
    for op in order:
        for name in op.inputs:
            readers.setdefault(name, set()).add(op.index)
    return readers


def _downstream(op: Operator, unknown: Mapping[str, int]) -> int | None:
    """The unverified op one of ``op``'s inputs comes from, if any."""
    return next((unknown[n] for n in op.inputs if n in unknown), None)


def _run_builtins(
    data: bytes,
    graph: Graph,
    batch: Sequence[Operator],
    values: dict[str, Array],
    unknown: dict[str, int],
    checks: dict[int, OpCheck],
    readers: Mapping[str, set[int]],
) -> None:
    """Run ``batch`` (built-in ops in dependency order) on the TOSA reference model; ops that
    read a value no oracle knows are unverified instead."""
    from vgfc.runner.numeric import run_reference_model
    from vgfc.runner.subgraph import cut

    runnable: list[Operator] = []
    for op in batch:
        source = _downstream(op, unknown)
        if source is not None:
            checks[op.index] = OpCheck(
                op.index,
                op.label(),
                Check.UNVERIFIED,
                f"unverified: computed from op #{source}, which is unverified",
            )
            unknown.update(dict.fromkeys(op.outputs, source))
        else:
            runnable.append(op)
    for op in runnable:
        checks[op.index] = OpCheck(op.index, op.label(), Check.CHECKED, "tosa_reference_model")
    if all(op.is_constant for op in runnable):
        return  # constants: the oracle took their data from the file
    inside = {op.index for op in runnable}
    produced = {n for op in runnable for n in op.outputs}
    needed = []
    for op in runnable:
        for name in op.inputs:
            if name not in produced and name not in needed and graph.tensors[name].data is None:
                needed.append(name)
    wanted = [
        n
        for op in runnable
        if not op.is_constant
        for n in op.outputs
        if n in graph.outputs or readers.get(n, set()) - inside
    ]
    if not wanted:
        return
    piece = cut(data, [op.index for op in runnable], needed, wanted)
    values.update(run_reference_model(piece.data, graph, {n: values[n] for n in needed}, wanted))


def _run_custom(
    op: Operator,
    graph: Graph,
    values: dict[str, Array],
    unknown: dict[str, int],
    checks: dict[int, OpCheck],
    libraries: Sequence[Library],
) -> None:
    from vgfc.resolve.params import ParamError, decode_params
    from vgfc.resolve.reference import call_reference

    entry = _entry(op, libraries)
    source = _downstream(op, unknown)
    why = None
    if source is not None:
        why = f"unverified: computed from op #{source}, which is unverified"
    elif entry is None:
        why = (
            "unverified: a custom shader is its own only description: give --expected "
            "arrays, or a kernel-library entry for it with `reference: module:function`"
        )
    elif entry.reference is None:
        why = (
            f"unverified: its library entry ({entry.where().render()}) names no "
            "`reference: module:function`"
        )
    if why is not None:
        checks[op.index] = OpCheck(op.index, op.label(), Check.UNVERIFIED, why)
        unknown.update(dict.fromkeys(op.outputs, source if source is not None else op.index))
        return
    assert entry is not None
    raw = op.attrs.get("implementation_attrs")
    try:
        params = decode_params(entry.params, bytes(raw) if raw is not None else None)  # type: ignore[arg-type]
    except ParamError as e:
        raise InputError(
            str(e), op.where(graph.source, origin=False), key="implementation_attrs"
        ) from None
    outputs = call_reference(
        entry,
        [values[n] for n in op.inputs],
        params,
        [graph.tensors[n] for n in op.outputs],
    )
    values.update(zip(op.outputs, outputs, strict=True))
    checks[op.index] = OpCheck(
        op.index, op.label(), Check.CHECKED, f"python reference {entry.reference}"
    )


def _entry(op: Operator, libraries: Sequence[Library]) -> Entry | None:
    domain, name = op.domain or "", op.custom_name or ""
    return next((e for lib in libraries if (e := lib.find(domain, name)) is not None), None)
