"""The independent oracle of ``vgfc verify --against tosa``: the outputs that tools sharing
none of vgfc's code give for a model's inputs, and what each operator was checked against
(:class:`OpCheck`).

Built-in operators run on tosa-tools' reference model: the whole file when it holds no custom
operator, else piece by piece between the custom ones (:mod:`vgfc.runner.subgraph` cuts the
file). A custom operator runs its kernel-library entry's Python reference
(:mod:`vgfc.resolve.reference`) on the values computed before it, or is unverified, and so is
every operator computed from an unverified one, unless vgfc's own value of it is given
(:func:`independent_outputs`' ``seen``). Comparing the run with these outputs, and the other
oracles, are :mod:`vgfc.runner.oracle`'s.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vgfc.diagnostics import InputError
from vgfc.ir import Array, Graph, Operator
from vgfc.record import record, replace

if TYPE_CHECKING:
    from vgfc.resolve.exported import Exported
    from vgfc.resolve.library.records import Entry, Library

__all__ = ["Check", "OpCheck", "independent_outputs"]


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


def independent_outputs(
    model: Path,
    graph: Graph,
    inputs: Mapping[str, Array],
    libraries: Sequence[Library] = (),
    seen: Mapping[str, Array] | None = None,
    *,
    reference_imports: bool = False,
) -> tuple[dict[str, Array], list[OpCheck]]:
    """The outputs an independent oracle gives for ``inputs``, and what each op of ``graph``
    (the file as read) was checked against. Built-in operators run on the TOSA reference model,
    piece by piece between custom operators; a custom operator runs its library entry's Python
    reference, or is unverified. ``seen`` holds vgfc's own values of tensors (those a run hands
    from segment to segment): the ops after an unverified one are checked on what vgfc
    computed for it; without such a value they are unverified too. An output that is vgfc's own
    value is never compared with itself. ``reference_imports``: a reference may be any module,
    not only a Python file in its library's folder
    (:func:`vgfc.resolve.reference.load_reference`)."""
    from vgfc.read import load_flatbuffer
    from vgfc.runner.numeric import tosa_reference_outputs
    from vgfc.verify import topological_order

    if not any(op.op == "CUSTOM" for op in graph.operators):
        whole = tosa_reference_outputs(model, graph, inputs)
        return whole, [
            OpCheck(op.index, op.label(), Check.CHECKED, "tosa_reference_model")
            for op in graph.operators
        ]
    data = load_flatbuffer(model)
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
        _run_custom(op, graph, values, unknown, checks, libraries, reference_imports)
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
    # A piece holds the CONST ops of the constants it reads, wherever the file has them
    # (ExecuTorch writes every CONST first, before the custom ops that split the pieces).
    producer = {o: op for op in graph.operators if op.is_constant for o in op.outputs}
    own = {op.index for op in runnable}
    for op in list(runnable):
        for name in op.inputs:
            const = producer.get(name)
            if const is not None and const.index not in own:
                own.add(const.index)
                runnable.append(const)
    runnable.sort(key=lambda op: op.index)
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
    reference_imports: bool,
) -> None:
    from vgfc.resolve.exported import inverse
    from vgfc.resolve.params import ParamError, decode_params
    from vgfc.resolve.reference import call_reference

    entry = _entry(op, libraries)
    exported = None
    if entry is None:  # an op vgfc.executorch exported says which entry it came from
        exported, entry = _exported(op, libraries)
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
    if exported is not None:
        raw = exported.params
    try:
        params = decode_params(entry.params, bytes(raw) if raw is not None else None)  # type: ignore[arg-type]
    except ParamError as e:
        raise InputError(
            str(e), op.where(graph.source, origin=False), key="implementation_attrs"
        ) from None
    inputs = [values[n] for n in op.inputs]
    declared = [graph.tensors[n] for n in op.outputs]
    if exported is not None:  # the shader's views -> the entry's, and its results back
        inputs = [_permuted(a, inverse(p)) for a, p in zip(inputs, exported.inputs, strict=True)]
        declared = [
            replace(t, shape=_permuted_shape(t.shape, inverse(p)))
            for t, p in zip(declared, exported.outputs, strict=True)
        ]
    outputs = call_reference(entry, inputs, params, declared, imports=reference_imports)
    if exported is not None:
        outputs = [_permuted(a, p) for a, p in zip(outputs, exported.outputs, strict=True)]
    values.update(zip(op.outputs, outputs, strict=True))
    checks[op.index] = OpCheck(
        op.index, op.label(), Check.CHECKED, f"python reference {entry.reference}"
    )


def _entry(op: Operator, libraries: Sequence[Library]) -> Entry | None:
    domain, name = op.domain or "", op.custom_name or ""
    return next((e for lib in libraries if (e := lib.find(domain, name)) is not None), None)


def _exported(op: Operator, libraries: Sequence[Library]) -> tuple[Exported | None, Entry | None]:
    """The entry an exported shader op names (:mod:`vgfc.resolve.exported`), when its operands
    match the entry's."""
    from vgfc.resolve.exported import read_exported

    exported = read_exported(op)
    if exported is None:
        return None, None
    domain, _, name = exported.entry.rpartition("/")
    entry = next((e for lib in libraries if (e := lib.find(domain, name)) is not None), None)
    if entry is None:
        return None, None
    if (len(exported.inputs), len(exported.outputs)) != (len(op.inputs), len(op.outputs)) or (
        len(entry.inputs),
        len(entry.outputs),
    ) != (len(op.inputs), len(op.outputs)):
        return None, None
    return exported, entry


def _permuted(array: Array, perm: Sequence[int] | None) -> Array:
    import numpy as np

    if perm is None:
        return array
    if len(perm) != array.ndim:
        raise InputError(
            f"kernel_library_entry: a permutation of rank {len(perm)} for a value of rank "
            f"{array.ndim}"
        )
    return np.ascontiguousarray(np.transpose(array, perm))


def _permuted_shape(
    shape: tuple[int, ...] | None, perm: Sequence[int] | None
) -> tuple[int, ...] | None:
    if perm is None or shape is None or len(perm) != len(shape):
        return shape
    return tuple(shape[i] for i in perm)
