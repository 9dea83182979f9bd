"""The operators constant folding evaluates, each with numpy, bit for bit as the TOSA reference
model (``tosa_reference_model``, the executable form of the TOSA 1.0 specification) computes
them. An evaluator returns ``None`` for a case it cannot reproduce exactly, and the operator is
then left for the GPU: folding never changes a value.

What is folded, and what is not:

- Data movement (TRANSPOSE, SLICE, CONCAT, TILE, PAD with its constant pad value, REVERSE,
  SELECT): every element type numpy holds exactly (all but the packed FP6, FP4 and MXINT8
  formats of the 1.1 draft); the values are copied, never computed. RESHAPE and IDENTITY
  (:data:`SAME_BYTES`) keep their operand's bytes, every element type, without numpy.
- CAST: between BOOL, INT8, INT16 and INT32 (to BOOL: not zero; from BOOL: 0 or 1; to a
  narrower integer: the low bits, as the specification's truncation), and the exact widenings
  FP16 -> FP32 and BF16 -> FP32 (a NaN the quiet NaN of its sign, without payload, as the
  reference model writes it). Not folded: any cast to a float narrower than its source or from
  a float to an integer (rounding modes and saturation numpy does not share), FP8.
- ADD, SUB on INT32 and MUL of INT8/INT16/INT32 to INT32 with a zero shift: only where no
  element leaves the INT32 range (the specification makes that an error, so the reference model
  and a GPU may disagree); MUL with a shift is not folded.
- RESCALE (:mod:`vgfc.passes.evaluate_scale`): INT8/16/32/48 to INT8/16/32, SINGLE_ROUND and
  DOUBLE_ROUND, 16- and 32-bit multipliers, per channel, zero points, unsigned sides, with
  saturation; not INEXACT_ROUND, nor any element where the specification's REQUIREs fail.
- FP32 ADD, SUB, MUL (shift 0), MAXIMUM, MINIMUM, NEGATE, ABS
  (:mod:`vgfc.passes.evaluate_float`): IEEE binary32 is correctly rounded, so numpy's float32
  gives the reference model's bits; not where an input or result is NaN or subnormal (a GPU
  may flush subnormals), nor FP16/BF16 arithmetic (rounded twice by implementations).
- BITWISE_AND/OR/XOR/NOT on INT8/16/32; LOGICAL_AND/OR/XOR/NOT on BOOL.
- LOGICAL_LEFT_SHIFT and LOGICAL_RIGHT_SHIFT on INT8/16/32 where every shift is in
  ``0 .. width - 1`` (the bits of the element type, shifted as an unsigned number).
- MAXIMUM, MINIMUM on INT32 and FP32; EQUAL, GREATER, GREATER_EQUAL on INT32.
- Not folded: ARITHMETIC_RIGHT_SHIFT, integer NEGATE and ABS, CLZ, reductions, every other
  float operator (RECIPROCAL, EXP, ...: not correctly rounded), and every operator on shape
  values.

Elementwise operators broadcast size-1 dimensions of operands of one rank, as numpy does; an
evaluator's result whose shape is not the output tensor's is not used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from vgfc.ir import DType, Operator, Tensor
from vgfc.passes.evaluate_float import FLOAT_EVALUATORS
from vgfc.passes.evaluate_scale import rescale

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.ir import Array

__all__ = ["FOLDABLE", "SAME_BYTES", "Evaluator", "evaluators"]

Evaluator = Callable[[Operator, Sequence["Array"], Tensor, Sequence[Tensor]], "Array | None"]
"""(op, its input values, its output tensor, its input tensors) -> the output value, or
``None`` where the case is not folded."""

_INTS = frozenset({DType.INT8, DType.INT16, DType.INT32})
_WIDTH = {DType.INT8: 8, DType.INT16: 16, DType.INT32: 32}
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_EXACT_CASTS = frozenset(
    {
        *((a, b) for a in (DType.BOOL, *_INTS) for b in (DType.BOOL, *_INTS) if a is not b),
        (DType.FP16, DType.FP32),
        (DType.BF16, DType.FP32),
    }
)


def _shape_values(value: Array) -> tuple[int, ...]:
    return tuple(int(v) for v in value.reshape(-1))


def _transpose(
    op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
) -> Array | None:
    import numpy as np

    perms = op.attrs.get("perms")
    if not isinstance(perms, tuple) or sorted(perms) != list(range(args[0].ndim)):
        return None
    return np.transpose(args[0], perms)


def _slice(op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]) -> Array | None:
    start, size = _shape_values(args[1]), _shape_values(args[2])
    x = args[0]
    if len(start) != x.ndim or len(size) != x.ndim:
        return None
    if any(s < 0 or n < 0 or s + n > d for s, n, d in zip(start, size, x.shape, strict=True)):
        return None
    return x[tuple(slice(s, s + n) for s, n in zip(start, size, strict=True))]


def _concat(
    op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
) -> Array | None:
    import numpy as np

    axis = op.attrs.get("axis")
    if not isinstance(axis, int) or not 0 <= axis < args[0].ndim:
        return None
    return np.concatenate(list(args), axis=axis)


def _tile(op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]) -> Array | None:
    import numpy as np

    multiples = _shape_values(args[1])
    if len(multiples) != args[0].ndim or min(multiples, default=1) < 1:
        return None
    return np.tile(args[0], multiples)


def _pad(op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]) -> Array | None:
    import numpy as np

    x, padding = args[0], _shape_values(args[1])
    if len(args) < 3 or args[2].size != 1 or len(padding) != 2 * x.ndim or min(padding) < 0:
        return None
    pairs = [(padding[2 * i], padding[2 * i + 1]) for i in range(x.ndim)]
    result = np.full(
        tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, pairs, strict=True)),
        args[2].reshape(-1)[0],
        dtype=x.dtype,
    )
    result[tuple(slice(lo, lo + d) for d, (lo, _) in zip(x.shape, pairs, strict=True))] = x
    return result


def _reverse(
    op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
) -> Array | None:
    import numpy as np

    axis = op.attrs.get("axis")
    if not isinstance(axis, int) or not 0 <= axis < args[0].ndim:
        return None
    return np.flip(args[0], axis=axis)


def _select(
    op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
) -> Array | None:
    import numpy as np

    if ins[0].dtype is not DType.BOOL or ins[1].dtype is not ins[2].dtype:
        return None
    return np.where(args[0], args[1], args[2])


def _cast(op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]) -> Array | None:
    import numpy as np

    from vgfc.dtypes import numpy_dtype

    source, target = ins[0].dtype, out.dtype
    if (source, target) not in _EXACT_CASTS:
        return None
    x = args[0]
    if target is DType.BOOL:
        return x != 0  # type: ignore[no-any-return]
    if source is DType.BOOL:
        return x.astype(numpy_dtype(target))
    if target in _INTS and source in _INTS:
        # Two's-complement truncation to the low bits (numpy's astype of an integer wraps).
        return x.astype(np.int64).astype(numpy_dtype(target))
    # FP16/BF16 -> FP32: every number exact, subnormals included; the reference model makes
    # a NaN the quiet NaN of its sign, without payload (numpy keeps the payload).
    wide = x.astype(np.float32)
    nan = np.isnan(wide)
    if nan.any():
        bits = wide.view(np.uint32)
        quiet = (bits & np.uint32(0x8000_0000)) | np.uint32(0x7FC0_0000)
        wide = np.where(nan, quiet, bits).astype(np.uint32).view(np.float32)
    return wide


def _wide_int32(
    compute: Callable[[Array, Array], Array],
) -> Evaluator:
    """ADD, SUB, MUL (shift 0): computed in int64, folded only where every result is an
    INT32 (out of range is an error of the specification)."""

    def evaluate(
        op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
    ) -> Array | None:
        import numpy as np

        if out.dtype is not DType.INT32 or any(t.dtype not in _INTS for t in ins[:2]):
            return None
        if op.op != "MUL" and (ins[0].dtype, ins[1].dtype) != (DType.INT32, DType.INT32):
            return None
        if op.op == "MUL" and (len(args) < 3 or np.any(args[2] != 0)):
            return None
        wide = compute(args[0].astype(np.int64), args[1].astype(np.int64))
        if wide.size and (wide.min() < _INT32_MIN or wide.max() > _INT32_MAX):
            return None
        return wide.astype(np.int32)

    return evaluate


def _same_types(types: frozenset[DType], compute: Callable[..., Array]) -> Evaluator:
    """An operator whose inputs are all of one of ``types``, computed exactly by ``compute``."""

    def evaluate(
        op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
    ) -> Array | None:
        if any(t.dtype is not ins[0].dtype or t.dtype not in types for t in ins):
            return None
        return compute(*args)

    return evaluate


def _logical_shift(left: bool) -> Evaluator:
    def evaluate(
        op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
    ) -> Array | None:
        import numpy as np

        dtype = ins[0].dtype
        if dtype not in _INTS or ins[1].dtype is not dtype or out.dtype is not dtype:
            return None
        width = _WIDTH[dtype]
        shift = args[1].astype(np.int64)
        if shift.size and (shift.min() < 0 or shift.max() >= width):
            return None
        unsigned = np.dtype(f"u{width // 8}")
        bits = args[0].view(unsigned).astype(np.uint64)
        moved = (bits << shift.astype(np.uint64)) if left else (bits >> shift.astype(np.uint64))
        return (moved & np.uint64((1 << width) - 1)).astype(unsigned).view(args[0].dtype)

    return evaluate


def _first(*choices: Evaluator) -> Evaluator:
    """An operator several evaluators share, each for its own element types: the first result
    one gives."""

    def evaluate(
        op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
    ) -> Array | None:
        for choice in choices:
            value = choice(op, args, out, ins)
            if value is not None:
                return value
        return None

    return evaluate


def _table() -> Mapping[str, Evaluator]:
    import numpy as np

    bools = frozenset({DType.BOOL})
    int32 = frozenset({DType.INT32})
    return MappingProxyType(
        {
            "TRANSPOSE": _transpose,
            "SLICE": _slice,
            "CONCAT": _concat,
            "TILE": _tile,
            "PAD": _pad,
            "REVERSE": _reverse,
            "SELECT": _select,
            "CAST": _cast,
            "ADD": _first(_wide_int32(np.add), FLOAT_EVALUATORS["ADD"]),
            "SUB": _first(_wide_int32(np.subtract), FLOAT_EVALUATORS["SUB"]),
            "MUL": _first(_wide_int32(np.multiply), FLOAT_EVALUATORS["MUL"]),
            "RESCALE": rescale,
            "NEGATE": FLOAT_EVALUATORS["NEGATE"],
            "ABS": FLOAT_EVALUATORS["ABS"],
            "BITWISE_AND": _same_types(_INTS, np.bitwise_and),
            "BITWISE_OR": _same_types(_INTS, np.bitwise_or),
            "BITWISE_XOR": _same_types(_INTS, np.bitwise_xor),
            "BITWISE_NOT": _same_types(_INTS, np.invert),
            "LOGICAL_AND": _same_types(bools, np.logical_and),
            "LOGICAL_OR": _same_types(bools, np.logical_or),
            "LOGICAL_XOR": _same_types(bools, np.logical_xor),
            "LOGICAL_NOT": _same_types(bools, np.logical_not),
            "LOGICAL_LEFT_SHIFT": _logical_shift(left=True),
            "LOGICAL_RIGHT_SHIFT": _logical_shift(left=False),
            "MAXIMUM": _first(_same_types(int32, np.maximum), FLOAT_EVALUATORS["MAXIMUM"]),
            "MINIMUM": _first(_same_types(int32, np.minimum), FLOAT_EVALUATORS["MINIMUM"]),
            "EQUAL": _same_types(int32, np.equal),
            "GREATER": _same_types(int32, np.greater),
            "GREATER_EQUAL": _same_types(int32, np.greater_equal),
        }
    )


FOLDABLE = frozenset(
    {
        "IDENTITY", "RESHAPE", "TRANSPOSE", "SLICE", "CONCAT", "TILE", "PAD", "REVERSE",
        "SELECT", "CAST", "ADD", "SUB", "MUL", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR",
        "BITWISE_NOT", "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_XOR", "LOGICAL_NOT",
        "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT", "MAXIMUM", "MINIMUM", "EQUAL", "GREATER",
        "GREATER_EQUAL", "RESCALE", "NEGATE", "ABS",
    }
)  # fmt: skip
"""The ops :func:`evaluators` has an entry for, or :data:`SAME_BYTES` names, known without
importing numpy (a graph with none of them, all constant, costs folding nothing)."""

SAME_BYTES = frozenset({"IDENTITY", "RESHAPE"})
"""The foldable ops whose result is their operand's bytes under the output's shape: folded on
the bytes (:func:`vgfc.passes.fold.fold`), with no evaluator and no numpy. ExecuTorch's exports
often hold a RESHAPE of a weight and nothing else to fold; numpy cost more than the compile."""


_BUILT: list[Mapping[str, Evaluator]] = []


def evaluators() -> Mapping[str, Evaluator]:
    """The evaluator of each op folding evaluates (:data:`FOLDABLE` names them), the table built
    (with numpy) when first asked for."""
    if not _BUILT:
        _BUILT.append(_table())
    return _BUILT[0]
