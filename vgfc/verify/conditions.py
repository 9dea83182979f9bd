"""The conditions the specification writes again and again, shared by the operators' rules.

Ranks against the level's ``MAX_RANK``, the broadcast of elementwise operands, an axis in range,
the zero points that must be zero, and the output size of a convolution or pooling window with
``idiv_check``'s exact division. Each yields :class:`~vgfc.verify.view.Violation` records whose
``kind`` is the name tosa-tools gives the condition, so a refusal of an official negative test
names the condition the test is about.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from vgfc.ir import DType, Tensor
from vgfc.record import record
from vgfc.verify.view import OpView, Violation, dtype_of, name_of, shape_of

__all__ = [
    "LEVEL",
    "Level",
    "axis_in_range",
    "broadcast",
    "dims",
    "exact_division",
    "rank",
    "same_rank",
    "same_shape",
    "zero_point",
]


@record
class Level:
    """The limits of a TOSA level (the specification's ``tosa_level_t``), checked as
    ``LEVEL_CHECK`` conditions: a graph beyond them is not one a conforming device runs."""

    max_rank: int
    max_kernel: int
    max_stride: int
    max_scale: int
    max_log2_size: int


LEVEL = Level(max_rank=6, max_kernel=8192, max_stride=8192, max_scale=256, max_log2_size=31)
"""Level 8K, the level the official conformance suite and the reference converter hold a
graph to."""


def dims(shape: Sequence[int] | None) -> str:
    """``1x8x8x4``; ``[]`` for rank 0."""
    if shape is None:
        return "?"
    return "x".join(str(d) for d in shape) if shape else "[]"


def rank(
    tensor: Tensor | None, label: str, low: int, high: int | None = None
) -> Iterator[Violation]:
    """``WrongRank``: the rank of ``tensor`` lies in ``low..high`` (``high`` defaults to
    ``low``; ``LEVEL.max_rank`` when ``low`` is 0 or 1 and ``high`` is left out is what
    :func:`vgfc.verify.spec.check_level` checks for every tensor)."""
    if tensor is None or tensor.shape is None:
        return
    high = low if high is None else high
    r = len(tensor.shape)
    if not low <= r <= high:
        want = f"{low}" if low == high else f"{low} to {high}"
        yield Violation(
            "WrongRank",
            f"{label} has rank {r} ({dims(tensor.shape)}); the operator takes rank {want}",
            tensor=tensor.name,
        )


def same_rank(
    operands: Sequence[tuple[str, Tensor | None]], output: Tensor | None
) -> Iterator[Violation]:
    """``RankMismatch``: every operand has the output's rank."""
    if output is None or output.shape is None:
        return
    want = len(output.shape)
    for label, tensor in operands:
        if tensor is not None and tensor.shape is not None and len(tensor.shape) != want:
            yield Violation(
                "RankMismatch",
                f"{label} has rank {len(tensor.shape)} ({dims(tensor.shape)}), the output "
                f"rank {want} ({dims(output.shape)})",
                tensor=tensor.name,
            )


def broadcast(
    operands: Sequence[tuple[str, Tensor | None]], output: Tensor | None
) -> Iterator[Violation]:
    """``BroadcastShapesMismatch``: in each dimension the operands agree or are 1;
    ``DimensionMismatch``: the output's shape is their broadcast. Checked where the ranks agree
    (:func:`same_rank` reports the rest)."""
    shapes = [(label, t, shape_of(t)) for label, t in operands]
    first = shapes[0][2]
    if first is not None and all(s == first for _, _, s in shapes):
        out = shape_of(output)  # the usual case: no broadcast at all
        if out is not None and len(out) == len(first) and out != first:
            yield Violation(
                "DimensionMismatch",
                f"output shape {dims(out)} is not the broadcast of the inputs, {dims(first)}",
                tensor=name_of(output),
            )
        return
    if any(s is None for _, _, s in shapes) or len({len(s) for _, _, s in shapes}) != 1:  # type: ignore[arg-type]
        return
    result: list[int] = []
    for axis in range(len(shapes[0][2])):  # type: ignore[arg-type]
        sizes = {s[axis] for _, _, s in shapes} - {1}  # type: ignore[index]
        if len(sizes) > 1:
            said = ", ".join(f"{label} {dims(s)}" for label, _, s in shapes)
            yield Violation(
                "BroadcastShapesMismatch",
                f"dimension {axis} cannot be broadcast: {said} (sizes must agree or be 1)",
                tensor=name_of(shapes[-1][1]),
            )
            return
        result.append(sizes.pop() if sizes else 1)
    out = shape_of(output)
    if out is not None and len(out) == len(result) and tuple(result) != out:
        yield Violation(
            "DimensionMismatch",
            f"output shape {dims(out)} is not the broadcast of the inputs, {dims(result)}",
            tensor=name_of(output),
        )


def same_shape(
    label: str, tensor: Tensor | None, other_label: str, other: Tensor | None, kind: str
) -> Iterator[Violation]:
    """``kind``: two tensors the specification gives one shape have the same shape."""
    a, b = shape_of(tensor), shape_of(other)
    if a is not None and b is not None and a != b:
        yield Violation(
            kind,
            f"{label} shape {dims(a)} differs from {other_label} shape {dims(b)}",
            tensor=other.name if other is not None else None,
        )


def axis_in_range(axis: object, rank_: int | None, what: str = "input") -> Iterator[Violation]:
    """``AxisSmallerZero`` / ``AxisLargerRank``: ``0 <= axis < rank``."""
    if not isinstance(axis, int) or rank_ is None:
        return
    if axis < 0:
        yield Violation("AxisSmallerZero", f"axis {axis} is negative", key="axis")
    elif axis >= rank_:
        yield Violation(
            "AxisLargerRank",
            f"axis {axis} is not an axis of the {what}, which has rank {rank_}",
            key="axis",
        )


def zero_point(
    v: OpView, name: str, of: Tensor | None, kind: str, allowed: frozenset[DType]
) -> Iterator[Violation]:
    """``kind`` (``InputZeroPointNotZero`` and its siblings): the zero point ``name`` is 0
    unless ``of``'s element type is one of ``allowed`` (INT8 for most operators). A zero point
    that is not a constant is left to the device."""
    zp = v.input(name)
    element = dtype_of(of)
    if element is None or element in allowed or not v.nonzero(zp):
        return
    values = v.numbers(zp)
    shown = "not 0" if values is None else f"{_one(values)}"
    yield Violation(
        kind,
        f"{name} is {shown}, but a {element.value} operand takes zero point 0 "
        f"(only {'/'.join(sorted(t.value for t in allowed))} take another)",
        tensor=zp.name if zp is not None else None,
    )


def _one(values: Sequence[int | float]) -> str:
    return str(values[0]) if len(values) == 1 else str(list(values))


def exact_division(numerator: int, denominator: int) -> tuple[int, bool]:
    """The specification's ``idiv_check``: the quotient, and whether it is exact (when not, the
    graph is in error). ``denominator`` is positive (the strides are checked first)."""
    quotient, remainder = divmod(numerator, denominator)
    return quotient, remainder == 0
