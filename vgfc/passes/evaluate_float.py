"""FP32 arithmetic evaluated at compile time: ADD, SUB, MUL (shift 0), MAXIMUM, MINIMUM, NEGATE
and ABS, bit for bit as ``tosa_reference_model`` computes them and as a GPU must.

Why numpy's float32 gives the same bits: IEEE 754 binary32 addition, subtraction and
multiplication are correctly rounded (to nearest, ties to even), so the result of each is one
number, whichever conforming hardware computes it; numpy computes float32 operands in float32
(SSE), and computing in double first and rounding once to float32 (as a reference kernel may)
gives the same number, because a double holds the exact sum or product of two float32s closely
enough that rounding twice never differs (53 >= 2 * 24 + 2). MAXIMUM, MINIMUM, NEGATE and ABS
compute no new number: they pick an operand or change a sign.

What a GPU may do differently, and is therefore refused (the operator is left for the GPU):

- Subnormals: a GPU (llvmpipe, most mobile GPUs) may flush subnormal inputs and results to zero.
  Nothing is folded where an input or a result element is subnormal, nor a MUL whose result is
  zero from nonzero operands (an underflow through the subnormal range).
- NaN: its payload and sign are not fixed by the specification, and MAXIMUM/MINIMUM's
  ``nan_mode`` picks between operands; nothing is folded where an input or result is NaN
  (inf - inf, 0 * inf). Infinities are IEEE's and are folded.
- MAXIMUM/MINIMUM of +0 and -0 (IEEE and Vulkan leave the choice open); NEGATE of a zero (the
  specification computes ``0 - x``, giving +0 for +0, where a negation gives -0).
- MUL with a shift other than 0 (an error for floats); every float type but FP32: FP16 and BF16
  arithmetic may be computed in FP32 and rounded twice, which numpy does not reproduce.
"""

from __future__ import annotations

from collections.abc import Sequence

from vgfc.ir import DType, Operator, Tensor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.ir import Array

__all__ = ["FLOAT_EVALUATORS"]


def _plain(*values: Array) -> bool:
    """No NaN and no subnormal among ``values``."""
    import numpy as np

    tiny = np.finfo(np.float32).tiny
    for v in values:
        magnitude = np.abs(v)
        if np.isnan(v).any() or ((magnitude < tiny) & (magnitude != 0)).any():
            return False
    return True


def _fp32(out: Tensor, ins: Sequence[Tensor], count: int) -> bool:
    return out.dtype is DType.FP32 and all(t.dtype is DType.FP32 for t in ins[:count])


def _binary(
    op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
) -> Array | None:
    """ADD, SUB, MUL (shift 0): numpy's float32 result where no input or result is NaN or
    subnormal."""
    import numpy as np

    if not _fp32(out, ins, 2) or not _plain(args[0], args[1]):
        return None
    if op.op == "MUL" and (len(args) < 3 or np.any(args[2] != 0)):
        return None
    compute = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}[op.op]
    with np.errstate(all="ignore"):
        result = compute(args[0], args[1])
    if result.dtype != np.float32 or not _plain(result):
        return None
    if op.op == "MUL":
        # The exact product (float64 holds a product of two float32 exactly) below the smallest
        # normal number: an underflow, which a GPU flushing subnormals may judge before
        # rounding (to 0, where IEEE rounds up to the smallest normal or down to 0).
        exact = np.abs(args[0].astype(np.float64) * args[1].astype(np.float64))
        if np.any((exact != 0) & (exact < np.finfo(np.float32).tiny)):
            return None
    return result


def _pick(op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]) -> Array | None:
    """MAXIMUM, MINIMUM as the specification's ``apply_max_s``/``apply_min_s`` (``a >= b ? a :
    b``, ``a < b ? a : b``), refused where an operand is NaN or subnormal or a pair is +0 and
    -0 (so ``nan_mode`` never matters)."""
    import numpy as np

    a, b = args[0], args[1]
    if not _fp32(out, ins, 2) or not _plain(a, b):
        return None
    if np.any((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))):
        return None
    return np.where(a >= b, a, b) if op.op == "MAXIMUM" else np.where(a < b, a, b)


def _sign(op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]) -> Array | None:
    """NEGATE (zero points 0, no zero element) and ABS (-0 is +0), refused where an element is
    NaN or subnormal."""
    import numpy as np

    x = args[0]
    if not _fp32(out, ins, 1) or not _plain(x):
        return None
    if op.op == "ABS":
        return np.abs(x)
    if len(args) != 3 or any(np.any(zp != 0) for zp in args[1:]) or np.any(x == 0):
        return None
    return np.negative(x)


FLOAT_EVALUATORS = {
    "ADD": _binary,
    "SUB": _binary,
    "MUL": _binary,
    "MAXIMUM": _pick,
    "MINIMUM": _pick,
    "NEGATE": _sign,
    "ABS": _sign,
}
"""The evaluator of each FP32 operator folded (each refuses every other element type)."""
