"""FP32 arithmetic folding: ADD, SUB, MUL, MAXIMUM, MINIMUM, NEGATE and ABS folded where IEEE
rounding fixes every bit, and refused where a GPU may give other bits (subnormals, NaN, the sign
of a zero), or the type is not FP32. The reference model's bits are the property test's
(``tests/property/test_fold.py``)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from vgfc.ir import DType, Operator, Tensor
from vgfc.passes.evaluate import evaluators

F32, F16 = DType.FP32, DType.FP16
TINY = float(np.finfo(np.float32).tiny)  # the smallest normal FP32
INF, NAN = float("inf"), float("nan")


def _fold(name: str, *values: Any, dtype: DType = F32, **attrs: Any) -> np.ndarray | None:
    """The folded value of ``name`` on constant operands (``None``: refused). MUL gets its
    shift operand and NEGATE its zero points from ``attrs``."""
    numpy = np.float32 if dtype is F32 else np.float16
    args = [np.asarray(v, numpy) for v in values]
    types = [dtype] * len(args)
    if name == "MUL":
        args.append(np.asarray([attrs.pop("shift", 0)], np.int8))
        types.append(DType.INT8)
    if name == "NEGATE":
        args += [np.asarray([z], numpy) for z in attrs.pop("zps", (0, 0))]
        types += [dtype, dtype]
    ins = [Tensor(f"t{i}", a.shape, t) for i, (a, t) in enumerate(zip(args, types, strict=True))]
    shape = np.broadcast_shapes(*(a.shape for a in args[: 1 if name in ("NEGATE", "ABS") else 2]))
    out = Tensor("out", shape, dtype)
    op = Operator(0, name, tuple(t.name for t in ins), ("out",), MappingProxyType(attrs))
    return evaluators()[name](op, args, out, ins)


def _bits(value: np.ndarray | None) -> list[int]:
    assert value is not None and value.dtype == np.float32
    return value.view(np.uint32).tolist()  # type: ignore[no-any-return]


def _want(values: list[float]) -> list[int]:
    return np.asarray(values, np.float32).view(np.uint32).tolist()  # type: ignore[no-any-return]


def test_add_sub_mul_round_to_nearest_even_in_float32() -> None:
    a = [1.0, 0.1, 3.0e38, -2.5, 16777216.0]
    b = [2.0**-24, 0.2, 3.0e38, -0.0, 1.0]
    # 1 + 2**-24 is a tie: to even, 1.0; 16777216 + 1 is a tie: to even, 16777216.
    x, y = np.float32(a), np.float32(b)
    with np.errstate(over="ignore"):
        sums, differences, products = (x + y).tolist(), (x - y).tolist(), (x * y).tolist()
    assert sums[0] == 1.0 and sums[2] == INF and sums[4] == 16777216.0
    assert _bits(_fold("ADD", a, b)) == _want(sums)
    assert _bits(_fold("SUB", a, b)) == _want(differences)
    assert _bits(_fold("MUL", a, b)) == _want(products)
    # -0 + -0 is -0; x - x is +0.
    assert _bits(_fold("ADD", [-0.0], [-0.0])) == _want([-0.0])
    assert _bits(_fold("SUB", [5.0], [5.0])) == _want([0.0])


def test_broadcast_operands_fold() -> None:
    have = _fold("MUL", [[1.5], [2.0]], [[2.0, 4.0, -1.0]])
    assert have is not None and have.tolist() == [[3.0, 6.0, -1.5], [4.0, 8.0, -2.0]]


def test_infinities_fold() -> None:
    assert _fold("ADD", [INF], [1.0]).tolist() == [INF]  # type: ignore[union-attr]
    assert _fold("MUL", [-INF], [2.0]).tolist() == [-INF]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("why", "name", "a", "b"),
    [
        ("a subnormal input", "ADD", [1.0, TINY / 2], [1.0, 1.0]),
        ("a subnormal result", "SUB", [TINY * 1.5], [TINY]),
        ("a NaN input", "MUL", [NAN], [1.0]),
        ("inf - inf is NaN", "ADD", [INF], [-INF]),
        ("0 * inf is NaN", "MUL", [0.0], [INF]),
        ("an underflow to zero", "MUL", [1e-30], [1e-30]),
        # exactly 2**-126 - 2**-150, which rounds up to the smallest normal number: a GPU that
        # judges underflow before rounding flushes it to zero
        ("an underflow rounded up", "MUL", [float.fromhex("0x1.fffffep-64")], [2.0**-63]),
        ("+0 and -0 to MAXIMUM", "MAXIMUM", [0.0], [-0.0]),
        ("-0 and +0 to MINIMUM", "MINIMUM", [-0.0], [0.0]),
        ("a NaN to MAXIMUM (nan_mode)", "MAXIMUM", [NAN], [1.0]),
        ("a subnormal to MINIMUM", "MINIMUM", [TINY / 4], [1.0]),
    ],
)
def test_binary_refused(why: str, name: str, a: list[float], b: list[float]) -> None:
    assert _fold(name, a, b) is None, why


def test_half_floats_and_a_mul_shift_are_refused() -> None:
    assert _fold("ADD", [1.0], [2.0], dtype=F16) is None
    assert _fold("MUL", [1.0], [2.0], dtype=F16) is None
    assert _fold("MUL", [1.0], [2.0], shift=1) is None


def test_maximum_and_minimum_pick_an_operand() -> None:
    a, b = [1.0, -3.0, INF, -0.0, 2.0], [2.0, -4.0, 5.0, -0.0, 2.0]
    assert _bits(_fold("MAXIMUM", a, b)) == _want([2.0, -3.0, INF, -0.0, 2.0])
    assert _bits(_fold("MINIMUM", a, b)) == _want([1.0, -4.0, 5.0, -0.0, 2.0])


def test_negate_and_abs_change_only_the_sign() -> None:
    x = [1.5, -2.0, INF, -3.0e38]
    assert _bits(_fold("NEGATE", x)) == _want([-1.5, 2.0, -INF, 3.0e38])
    assert _bits(_fold("ABS", [*x, -0.0])) == _want([1.5, 2.0, INF, 3.0e38, 0.0])


@pytest.mark.parametrize(
    ("why", "name", "x", "zps"),
    [
        ("NEGATE of +0 is +0 by the specification's 0 - x", "NEGATE", [1.0, 0.0], (0, 0)),
        ("NEGATE of -0", "NEGATE", [-0.0], (0, 0)),
        ("a float zero point", "NEGATE", [1.0], (1.0, 0)),
        ("NEGATE of NaN", "NEGATE", [NAN], (0, 0)),
        ("ABS of a subnormal", "ABS", [-TINY / 2], None),
        ("ABS of NaN", "ABS", [NAN], None),
    ],
)
def test_unary_refused(why: str, name: str, x: list[float], zps: Any) -> None:
    attrs = {} if zps is None else {"zps": zps}
    assert _fold(name, x, **attrs) is None, why
