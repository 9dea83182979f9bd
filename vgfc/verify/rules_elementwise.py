"""The specification's conditions on its elementwise operators and the activations: the
broadcast of the binary and ternary ones, one shape for the unary ones, CLAMP's bounds,
NEGATE's zero points, MUL's shift and TABLE's table.

The operators are grouped as the specification groups them; a group's members share a rule.
"""

from __future__ import annotations

from collections.abc import Iterator

from vgfc.ir import DType
from vgfc.verify.conditions import broadcast, dims, same_rank, same_shape, zero_point
from vgfc.verify.view import OpView, Violation, shape_of

__all__ = ["BINARY", "ELEMENTWISE_RULES", "UNARY"]

BINARY = frozenset(
    {
        "ADD", "ARITHMETIC_RIGHT_SHIFT", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "INTDIV",
        "LOGICAL_AND", "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "LOGICAL_OR", "LOGICAL_XOR",
        "MAXIMUM", "MINIMUM", "MUL", "POW", "SUB", "EQUAL", "GREATER", "GREATER_EQUAL",
    }
)  # fmt: skip
"""Elementwise binary operators (comparisons included): ``input1``, ``input2`` broadcast to the
output."""

UNARY = frozenset(
    {
        "ABS", "BITWISE_NOT", "CEIL", "CLZ", "COS", "EXP", "FLOOR", "LOG", "LOGICAL_NOT",
        "NEGATE", "RECIPROCAL", "RSQRT", "SIN", "ERF", "SIGMOID", "TANH", "CLAMP", "CAST",
        "RESCALE", "TABLE", "IDENTITY",
    }
)  # fmt: skip
"""Operators whose one result has their first input's shape."""

_INT8 = frozenset({DType.INT8})
_TABLE_SIZE = {DType.INT8: 256, DType.INT16: 513}
"""TABLE's table length for each input type."""
_INTEGER_RANGE = {
    DType.INT8: (-(1 << 7), (1 << 7) - 1),
    DType.INT16: (-(1 << 15), (1 << 15) - 1),
    DType.INT32: (-(1 << 31), (1 << 31) - 1),
}


def _binary(v: OpView) -> Iterator[Violation]:
    names = ("input1", "input2", "input3") if v.op.op == "SELECT" else ("input1", "input2")
    operands = [(name, v.input(name)) for name in names]
    out = v.output()
    yield from same_rank(operands, out)
    yield from broadcast(operands, out)
    if v.op.op == "MUL":
        shift = v.input("shift")
        if shift is not None and shift.shape is not None and len(shift.shape) != 1:
            yield Violation(
                "InputRank1WrongRank",
                f"shift has rank {len(shift.shape)} ({dims(shift.shape)}); it is a rank-1 "
                "tensor of one value",
                tensor=shift.name,
            )


def _unary(v: OpView) -> Iterator[Violation]:
    source = v.inputs[0] if v.op.inputs else None
    yield from same_shape("input", source, "output", v.output(), "OutputShapeMismatch")
    rule = _EXTRA.get(v.op.op)
    if rule is not None:
        yield from rule(v)


def _clamp(v: OpView) -> Iterator[Violation]:
    low, high = v.attr("min_val"), v.attr("max_val")
    if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
        return
    if high < low:  # NaN bounds compare false: the specification does not order them
        yield Violation(
            "MaxSmallerMin", f"max_val {high} is smaller than min_val {low}", key="max_val"
        )
    source = v.inputs[0] if v.op.inputs else None
    if source is None:
        return
    bounds = _INTEGER_RANGE.get(source.dtype)
    if bounds is not None:
        for key, value in (("min_val", low), ("max_val", high)):
            if not bounds[0] <= value <= bounds[1]:
                yield Violation(
                    "ClampValueOutOfRange",
                    f"{key} {value} is not a {source.dtype.value} value "
                    f"({bounds[0]} to {bounds[1]})",
                    key=key,
                )


def _negate(v: OpView) -> Iterator[Violation]:
    yield from zero_point(v, "input1_zp", v.input("input1"), "InputZeroPointNotZero", _INT8)
    yield from zero_point(v, "output_zp", v.output(), "OutputZeroPointNotZero", _INT8)


def _table(v: OpView) -> Iterator[Violation]:
    source, table = v.input("input1"), v.input("table")
    if source is None or table is None:
        return
    want = _TABLE_SIZE.get(source.dtype)
    got = shape_of(table)
    if want is not None and got is not None and got != (want,):
        yield Violation(
            "TableSizeMismatch",
            f"table shape {dims(got)}; a {source.dtype.value} input takes a table of {want} values",
            tensor=table.name,
        )


_EXTRA = {"CLAMP": _clamp, "NEGATE": _negate, "TABLE": _table}
"""The further conditions of some unary operators."""


ELEMENTWISE_RULES = {
    **dict.fromkeys(BINARY, _binary),
    **dict.fromkeys(UNARY, _unary),
    "SELECT": _binary,
}
"""Op -> the function that yields its violations."""
