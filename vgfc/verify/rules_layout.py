"""The specification's conditions on its data-layout operators (CONCAT, PAD, RESHAPE, REVERSE,
SLICE, TILE, TRANSPOSE), the reductions, GATHER and SCATTER.

Shapes given as CONST_SHAPE operands (PAD's padding, SLICE's start and size, TILE's multiples,
RESHAPE's shape) are read as constants; one that is not a constant is left to the device.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from vgfc.verify.conditions import LEVEL, axis_in_range, dims, rank, same_shape
from vgfc.verify.view import OpView, Violation, name_of, shape_of

__all__ = ["LAYOUT_RULES", "REDUCTIONS"]

REDUCTIONS = frozenset(
    {"REDUCE_ALL", "REDUCE_ANY", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PRODUCT", "REDUCE_SUM"}
)


def _same_rank(
    label: str, a: tuple[int, ...], out: tuple[int, ...], name: str | None
) -> Iterator[Violation]:
    if len(a) != len(out):
        yield Violation(
            "RankMismatch",
            f"output rank {len(out)} ({dims(out)}) differs from the {label} rank {len(a)} "
            f"({dims(a)})",
            tensor=name,
        )


def _concat(v: OpView) -> Iterator[Violation]:
    inputs, out = v.inputs, v.output()
    if not inputs:
        yield Violation("ConcatNoInputList", "has no input to concatenate")
        return
    first = shape_of(inputs[0])
    axis = v.attr("axis")
    if first is None:
        return
    yield from axis_in_range(axis, max(1, len(first)), "first input")
    if not isinstance(axis, int) or not 0 <= axis < len(first):
        return
    total = 0
    for i, tensor in enumerate(inputs):
        shape = shape_of(tensor)
        if shape is None:
            return
        if len(shape) != len(first):
            yield Violation(
                "ConcatInputRankMismatch",
                f"input {i} has rank {len(shape)} ({dims(shape)}), input 0 rank {len(first)}",
                tensor=tensor.name,
            )
            return
        other = [d for d in range(len(shape)) if d != axis and shape[d] != first[d]]
        if other:
            yield Violation(
                "ConcatInputDimMismatch",
                f"input {i} {dims(shape)} differs from input 0 {dims(first)} in dimension "
                f"{other[0]}, not the axis {axis}",
                tensor=tensor.name,
            )
            return
        total += shape[axis]
    result = shape_of(out)
    if result is None:
        return
    yield from _same_rank("input", first, result, name_of(out))
    if len(result) != len(first):
        return
    if result[axis] != total:
        yield Violation(
            "ConcatShapeSumMismatch",
            f"output dimension {axis} is {result[axis]}, the inputs' sum along it {total}",
            tensor=name_of(out),
        )
    elif any(result[d] != first[d] for d in range(len(first)) if d != axis):
        yield Violation(
            "ConcatInputDimMismatch",
            f"output {dims(result)} differs from the inputs {dims(first)} off the axis",
            tensor=name_of(out),
        )


def _pad(v: OpView) -> Iterator[Violation]:
    source, padding, out = v.input("input1"), v.input("padding"), v.output()
    shape, result, pads = shape_of(source), shape_of(out), v.ints(padding)
    if shape is None or result is None:
        return
    yield from _same_rank("input", shape, result, name_of(out))
    if pads is None:
        return
    if len(pads) != 2 * len(shape):
        yield Violation(
            "PadShapeMismatch",
            f"padding has {len(pads)} values, two per input dimension make {2 * len(shape)}",
            tensor=name_of(padding),
        )
        return
    if min(pads, default=0) < 0:
        yield Violation(
            "PadSmallerZero",
            f"padding {list(pads)} has a negative entry",
            tensor=name_of(padding),
        )
        return
    want = tuple(pads[2 * i] + d + pads[2 * i + 1] for i, d in enumerate(shape))
    if len(result) == len(want) and result != want:
        yield Violation(
            "PadOutputShapeMismatch",
            f"output shape {dims(result)} is not the input {dims(shape)} padded by "
            f"{list(pads)}, {dims(want)}",
            tensor=name_of(out),
        )


def _reshape(v: OpView) -> Iterator[Violation]:
    source, new, out = v.input("input1"), v.input("shape"), v.output()
    shape, result = shape_of(source), shape_of(out)
    if shape is None or result is None:
        return
    if math.prod(shape) != math.prod(result):
        yield Violation(
            "TensorSizeInputOutputMismatch",
            f"output {dims(result)} holds {math.prod(result)} elements, the input "
            f"{dims(shape)} {math.prod(shape)}",
            tensor=name_of(out),
        )
    values = v.ints(new)
    if values is not None and values != result:
        yield Violation(
            "ReshapeOutputShapeMismatch",
            f"shape {list(values)} is not the output's shape {dims(result)}",
            tensor=name_of(new),
        )


def _reverse(v: OpView) -> Iterator[Violation]:
    source = v.input("input1")
    shape = shape_of(source)
    yield from axis_in_range(v.attr("axis"), None if shape is None else max(1, len(shape)))
    yield from same_shape("input", source, "output", v.output(), "OutputShapeMismatch")


def _slice(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input1"), v.output()
    start, size = v.ints(v.input("start")), v.ints(v.input("size"))
    shape, result = shape_of(source), shape_of(out)
    if shape is None or result is None:
        return
    yield from _same_rank("input", shape, result, name_of(out))
    if start is None or size is None:
        return
    if len(start) != len(shape) or len(size) != len(shape):
        yield Violation(
            "InputSizeStartLengthMismatch",
            f"start {list(start)} and size {list(size)} must each have one value per input "
            f"dimension ({len(shape)})",
            tensor=v.op.inputs[1],
        )
        return
    for d in range(len(shape)):
        if start[d] < 0:
            yield Violation(
                "StartSmallerZero",
                f"start {list(start)} is negative in dimension {d}",
                tensor=v.op.inputs[1],
            )
        elif size[d] <= 0:
            yield Violation(
                "SizeSmallerEqualZero",
                f"size {list(size)} is not positive in dimension {d}",
                tensor=v.op.inputs[2],
            )
        elif start[d] + size[d] > shape[d]:
            yield Violation(
                "StartSizeOutsideBounds",
                f"start {start[d]} + size {size[d]} passes the input's dimension {d}, {shape[d]}",
                tensor=v.op.inputs[2],
            )
        elif len(result) == len(shape) and result[d] != size[d]:
            yield Violation(
                "SizeOutputShapeMismatch",
                f"output shape {dims(result)} is not the size {list(size)}",
                tensor=name_of(out),
            )
        else:
            continue
        return


def _tile(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input1"), v.output()
    multiples = v.ints(v.input("multiples"))
    shape, result = shape_of(source), shape_of(out)
    if shape is None or result is None:
        return
    yield from _same_rank("input", shape, result, name_of(out))
    if multiples is None or len(result) != len(shape):
        return
    if len(multiples) != len(shape):
        yield Violation(
            "TileMultiplesRankMismatch",
            f"multiples {list(multiples)} has {len(multiples)} values, the input rank is "
            f"{len(shape)}",
            tensor=v.op.inputs[1],
        )
        return
    want = tuple(d * m for d, m in zip(shape, multiples, strict=True))
    if result != want:
        yield Violation(
            "TileMultiplesOutputShapeMismatch",
            f"output shape {dims(result)} is not the input {dims(shape)} times multiples "
            f"{list(multiples)}, {dims(want)}",
            tensor=name_of(out),
        )


def _transpose(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input1"), v.output()
    perms = v.int_list("perms")
    shape, result = shape_of(source), shape_of(out)
    if shape is None or result is None:
        return
    yield from _same_rank("input", shape, result, name_of(out))
    if perms is None:
        return
    if len(perms) != len(shape):
        yield Violation(
            "IndexOutsideBounds",
            f"perms {list(perms)} has {len(perms)} entries, the input rank is {len(shape)}",
            key="perms",
        )
        return
    if any(not 0 <= p < len(shape) for p in perms):
        yield Violation(
            "IndexOutsideBounds",
            f"perms {list(perms)} names an axis outside 0..{len(shape) - 1}",
            key="perms",
        )
        return
    if len(set(perms)) != len(perms):
        yield Violation("IndexUsedTwice", f"perms {list(perms)} names an axis twice", key="perms")
        return
    want = tuple(shape[p] for p in perms)
    if len(result) == len(want) and result != want:
        yield Violation(
            "TransposePermsOutputShapeMismatch",
            f"output shape {dims(result)} is not the input {dims(shape)} permuted by "
            f"{list(perms)}, {dims(want)}",
            tensor=name_of(out),
        )


def _reduce(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input"), v.output()
    yield from rank(source, "input", 1, LEVEL.max_rank)
    shape, result = shape_of(source), shape_of(out)
    if shape is None:
        return
    axis = v.attr("axis")
    yield from axis_in_range(axis, len(shape))
    if result is None or not isinstance(axis, int) or not 0 <= axis < len(shape):
        return
    yield from _same_rank("input", shape, result, name_of(out))
    if len(result) != len(shape):
        return
    if result[axis] != 1:
        yield Violation(
            "ShapeOfAxisNotOne",
            f"output dimension {axis} (the axis reduced) is {result[axis]}, not 1",
            tensor=name_of(out),
        )
    elif any(result[d] != shape[d] for d in range(len(shape)) if d != axis):
        yield Violation(
            "DimensionMismatch",
            f"output {dims(result)} differs from the input {dims(shape)} off the axis {axis}",
            tensor=name_of(out),
        )


def _gather(v: OpView) -> Iterator[Violation]:
    values, indices, out = v.input("values"), v.input("indices"), v.output()
    yield from rank(values, "values", 3)
    yield from rank(indices, "indices", 2)
    yield from rank(out, "output", 3)
    s, i, o = shape_of(values), shape_of(indices), shape_of(out)
    if s is None or i is None or o is None or (len(s), len(i), len(o)) != (3, 2, 3):
        return
    want = (s[0], i[1], s[2])
    if i[0] != s[0]:
        yield Violation(
            "BatchMismatch",
            f"indices {dims(i)} and values {dims(s)} differ in batch",
            name_of(indices),
        )
    elif o != want:
        yield Violation(
            "GatherOutputShapeMismatch",
            f"output shape {dims(o)} is not [N, W, C] of values {dims(s)} and indices "
            f"{dims(i)}, {dims(want)}",
            name_of(out),
        )


def _scatter(v: OpView) -> Iterator[Violation]:
    values, indices, source, out = (
        v.input("values_in"), v.input("indices"), v.input("input"), v.output()
    )  # fmt: skip
    yield from rank(values, "values_in", 3)
    yield from rank(indices, "indices", 2)
    yield from rank(source, "input", 3)
    yield from rank(out, "values_out", 3)
    s, i, x = shape_of(values), shape_of(indices), shape_of(source)
    if s is None or i is None or x is None or (len(s), len(i), len(x)) != (3, 2, 3):
        return
    if i[0] != s[0] or x[0] != s[0]:
        yield Violation(
            "BatchMismatch",
            f"values_in {dims(s)}, indices {dims(i)} and input {dims(x)} differ in batch",
            name_of(indices),
        )
    elif x != (s[0], i[1], s[2]):
        yield Violation(
            "ScatterInputShapeMismatch",
            f"input shape {dims(x)} is not [N, W, C] of values_in {dims(s)} and indices {dims(i)}",
            name_of(source),
        )
    yield from same_shape("values_in", values, "values_out", out, "OutputShapeMismatch")


LAYOUT_RULES = {
    "CONCAT": _concat,
    "PAD": _pad,
    "RESHAPE": _reshape,
    "REVERSE": _reverse,
    "SLICE": _slice,
    "TILE": _tile,
    "TRANSPOSE": _transpose,
    "GATHER": _gather,
    "SCATTER": _scatter,
    **dict.fromkeys(REDUCTIONS, _reduce),
}
"""Op -> the function that yields its violations."""
