"""Drop conversions that undo each other between two custom ops bound by kernel selection.

When one kernel's NHWC result goes back to the model's NCHW only to be turned into NHWC again
for the next kernel, the two TRANSPOSEs are a round trip through memory for nothing (seed 000:
adjacent shader regions may drop redundant permutes). The same holds for a CAST that widens and
the CAST that narrows it back (FP16 -> FP32 -> FP16 is exact). A pair is dropped only when both
ops were inserted by vgfc and the value between them is read by nothing else and is no graph
output: the model's own operators and outputs are never touched. A narrowing then widening pair
(FP32 -> FP16 -> FP32) is kept: dropping it would change the numbers the model computes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vgfc.dtypes import DType
from vgfc.ir import Operator, Tensor
from vgfc.record import replace

__all__ = ["cancel_inverse_pairs"]

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
