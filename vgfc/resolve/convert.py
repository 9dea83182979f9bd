"""The built-in ops vgfc adds for a custom op that kernel selection bound: the conversions
between the model's view of an operand and the kernel's, and the dropping of those that undo
each other between two bound ops.

Conversions: a CAST where the kernel takes another dtype, a TRANSPOSE where it wants the other
layout (NCHW/NHWC), a PAD of 3 channels to 4 before an image resource and a SLICE back after it.
An input is converted before the op, a result after it (last conversion first), so the op's
outputs keep the names, dtypes and shapes the model declares. Each added op carries an
:class:`~vgfc.diagnostics.Origin` of kind ``conversion``. :class:`Names` and :func:`added_op` make
the tensors and ops every expansion adds (:mod:`vgfc.resolve.compose` too).

Dropping (:func:`cancel_inverse_pairs`): when one kernel's NHWC result goes back to the model's
NCHW only to be turned into NHWC again for the next kernel, the two TRANSPOSEs are a round trip
through memory for nothing (seed 000: adjacent shader regions may drop redundant permutes). The
same holds for a CAST that widens and the CAST that narrows it back (FP16 -> FP32 -> FP16 is
exact). A pair is dropped only when both ops were inserted by vgfc and the value between them is
read by nothing else and is no graph output: the model's own operators and outputs are never
touched. A narrowing then widening pair (FP32 -> FP16 -> FP32) is kept: dropping it would change
the numbers the model computes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from vgfc.dtypes import DType, numpy_dtype
from vgfc.ir import Data, Graph, Operator, Tensor
from vgfc.record import record, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.diagnostics import Origin
    from vgfc.resolve.library.records import Entry
    from vgfc.resolve.select import View

__all__ = ["TO_NCHW", "TO_NHWC", "Names", "added_op", "cancel_inverse_pairs", "converted"]

TO_NHWC = (0, 2, 3, 1)
"""The permutation from NCHW to NHWC."""
TO_NCHW = (0, 3, 1, 2)
"""The permutation from NHWC to NCHW."""

_WIDER = {
    DType.FP16: (DType.FP32,),
    DType.BF16: (DType.FP32,),
    DType.INT8: (DType.INT16, DType.INT32),
    DType.INT16: (DType.INT32,),
}
"""Casts from a key to one of its values and back are exact."""


def cancel_inverse_pairs(
    operators: Sequence[Operator], tensors: Mapping[str, Tensor], outputs: frozenset[str]
) -> dict[int, Operator]:
    """What becomes of each of ``operators``, by ``id()`` of the op given: itself, a copy that
    reads a dropped pair's source instead of its result, or nothing (dropped)."""
    origin = {id(op): id(op) for op in operators}
    ops = list(operators)
    while True:
        pair = _find_pair(ops, tensors, outputs)
        if pair is None:
            return {origin[id(op)]: op for op in ops}
        first, second = pair
        source, result = first.inputs[0], second.outputs[0]
        dropped = {id(first), id(second)}
        kept = []
        for op in ops:
            if id(op) in dropped:
                continue
            if result in op.inputs:
                new = _rewired(op, result, source)
                origin[id(new)] = origin[id(op)]
                op = new
            kept.append(op)
        ops = kept


def _rewired(op: Operator, old: str, new: str) -> Operator:

    inputs = tuple(new if n == old else n for n in op.inputs)
    shader = op.shader
    if shader is not None:
        shader = replace(
            shader,
            inputs=tuple(replace(r, tensor=new) if r.tensor == old else r for r in shader.inputs),
        )
    return replace(op, inputs=inputs, shader=shader)


def _find_pair(
    ops: Sequence[Operator], tensors: Mapping[str, Tensor], outputs: frozenset[str]
) -> tuple[Operator, Operator] | None:
    readers: dict[str, list[Operator]] = {}
    for op in ops:
        for name in op.inputs:
            readers.setdefault(name, []).append(op)
    for first in ops:
        if not first.inserted or first.op not in ("TRANSPOSE", "CAST") or not first.inputs:
            continue
        middle = first.outputs[0]
        if middle in outputs:
            continue
        after = readers.get(middle, [])
        if len(after) != 1:
            continue
        second = after[0]
        if not second.inserted or second.op != first.op:
            continue
        if second.outputs[0] in outputs:
            continue
        if _inverse(first, second, tensors):
            return first, second
    return None


def _inverse(first: Operator, second: Operator, tensors: Mapping[str, Tensor]) -> bool:
    if first.op == "TRANSPOSE":
        p, q = first.attrs.get("perms"), second.attrs.get("perms")
        if not isinstance(p, tuple) or not isinstance(q, tuple) or len(p) != len(q):
            return False
        return all(p[q[i]] == i for i in range(len(p)))
    source = tensors[first.inputs[0]].dtype
    middle = tensors[first.outputs[0]].dtype
    end = tensors[second.outputs[0]].dtype
    return end is source and middle in _WIDER.get(source, ())


# --- Conversions between the model's view of an operand and the kernel's ---------------------

_WHY = "inserted by kernel selection"

_Op = tuple[str, tuple[str, ...], str, dict[str, Any]]
"""An op to insert: kind, inputs, output, attributes."""


@record
class _Step:
    """One conversion of an operand: the value the kernel sees (``near``), the ops that make it
    from the model's value (an input) or the model's value from it (a result), in the order
    they run, the constants they read, and the note the report shows."""

    near: Tensor
    ops: tuple[_Op, ...]
    note: str
    constants: tuple[Tensor, ...] = ()


def _cast(t: Tensor, now: Tensor, view: View, entry: Entry, result: bool, fresh: Names) -> _Step:
    near = Tensor(fresh(f"{t.name}.{view.dtype.value.lower()}"), now.shape, view.dtype)
    if result:
        return _Step(
            near, (("CAST", (near.name,), now.name, {}),), f"{view.dtype.value}->{t.dtype.value}"
        )
    return _Step(
        near, (("CAST", (now.name,), near.name, {}),), f"{t.dtype.value}->{view.dtype.value}"
    )


def _transpose(
    t: Tensor, now: Tensor, view: View, entry: Entry, result: bool, fresh: Names
) -> _Step:
    assert view.layout is not None
    perm, back = (TO_NHWC, TO_NCHW) if view.layout == "NHWC" else (TO_NCHW, TO_NHWC)
    shape = tuple((now.shape or ())[p] for p in perm)
    near = Tensor(fresh(f"{t.name}.{view.layout.lower()}"), shape, now.dtype)
    if result:
        op = ("TRANSPOSE", (near.name,), now.name, {"perms": back})
        return _Step(near, (op,), f"{view.layout}->{entry.layout}")
    op = ("TRANSPOSE", (now.name,), near.name, {"perms": perm})
    return _Step(near, (op,), f"{entry.layout}->{view.layout}")


def _pad(t: Tensor, now: Tensor, view: View, entry: Entry, result: bool, fresh: Names) -> _Step:
    """C = 3 to 4 before an image resource (PAD), and back after it (SLICE)."""
    shape = now.shape or ()
    if result:
        start = _shape_const(fresh(f"{t.name}.start"), [0] * len(shape))
        size = _shape_const(fresh(f"{t.name}.size"), list(shape))
        near = Tensor(fresh(f"{t.name}.c4"), (*shape[:-1], 4), now.dtype)
        ops: tuple[_Op, ...] = (
            ("CONST_SHAPE", (), size.name, {}),
            ("CONST_SHAPE", (), start.name, {}),
            ("SLICE", (near.name, start.name, size.name), now.name, {}),
        )
        return _Step(near, ops, "", (start, size))
    pads = _shape_const(fresh(f"{t.name}.padding"), [0] * (2 * len(shape) - 1) + [1])
    value = _scalar_const(fresh(f"{t.name}.pad_value"), now.dtype)
    near = Tensor(fresh(f"{t.name}.c4"), (*shape[:-1], 4), now.dtype)
    ops = (
        ("CONST_SHAPE", (), pads.name, {}),
        ("CONST", (), value.name, {}),
        ("PAD", (now.name, pads.name, value.name), near.name, {}),
    )
    return _Step(near, ops, "", (pads, value))


_CONVERSIONS: tuple[tuple[Callable[[Tensor, View, Entry], bool], Callable[..., _Step]], ...] = (
    (lambda t, view, entry: view.dtype is not t.dtype, _cast),
    (lambda t, view, entry: view.layout is not None and view.layout != entry.layout, _transpose),
    (lambda t, view, entry: view.pad, _pad),
)
"""The conversions kernel selection may insert, each with when it applies, in order from the
model's value to the kernel's: run forward for an input, backward (last first) for a result."""


def converted(
    op: Operator,
    name: str,
    t: Tensor,
    view: View,
    entry: Entry,
    fresh: Names,
    new: dict[str, Tensor],
    origin: Origin,
    *,
    result: bool = False,
) -> tuple[str, list[Operator]]:
    """The tensor the kernel sees for operand ``name`` (the model's ``t``), and the ops that
    convert to it (an input) or back from it (a result), in the order they run. The tensors
    they add go into ``new``."""
    now = t
    steps: list[list[Operator]] = []
    for applies, make in _CONVERSIONS:
        if not applies(t, view, entry):
            continue
        step: _Step = make(t, now, view, entry, result, fresh)
        for c in step.constants:
            new[c.name] = c
        new[step.near.name] = step.near
        note = f"{_WHY}: {step.note} for '{name}'" if step.note else _WHY
        steps.append(
            [
                added_op(op, kind, inputs, (output,), attrs, note if inputs else _WHY, origin)
                for kind, inputs, output, attrs in step.ops
            ]
        )
        now = step.near
    if result:
        steps.reverse()
    return now.name, [o for ops in steps for o in ops]


class Names:
    """Fresh tensor names: the wanted one, else with a number after it."""

    def __init__(self, graph: Graph) -> None:
        # The graph's names are looked up, not copied: one op's names cost its own size.
        self._graph = graph.tensors
        self._added: set[str] = set()

    def __call__(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self._graph or name in self._added:
            n += 1
            name = f"{wanted}.{n}"
        self._added.add(name)
        return name


def added_op(
    op: Operator,
    kind: str,
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    attrs: Mapping[str, Any],
    why: str,
    origin: Origin,
) -> Operator:
    """An op vgfc adds for the custom op ``op`` (``why``: for the report; ``origin``: for
    diagnostics at it)."""
    return Operator(
        index=op.index,
        op=kind,
        inputs=inputs,
        outputs=outputs,
        attrs=MappingProxyType(dict(attrs)),
        location_text=op.location_text,
        source_index=op.file_index,
        inserted=why,
        origin=origin,
    )


def _shape_const(name: str, values: list[int]) -> Tensor:
    data = np.asarray(values, dtype=np.int64)
    data.flags.writeable = False
    return Tensor(name, (len(values),), DType.SHAPE, data=Data.of(data, DType.SHAPE), is_shape=True)


def _scalar_const(name: str, dtype: DType) -> Tensor:
    np_type = numpy_dtype(dtype)
    assert np_type is not None
    data = np.zeros((1,), dtype=np_type)
    data.flags.writeable = False
    return Tensor(name, (1,), dtype, data=Data.of(data, dtype))
