"""RESCALE evaluated at compile time, bit for bit as the TOSA 1.0 specification's pseudo-code
(``apply_scale_32``, ``apply_scale_16``) and ``tosa_reference_model`` compute it.

RESCALE is integer arithmetic on at most 64 bits: the input less its zero point (an INT48 value
at most), times a 16- or 32-bit multiplier, plus a rounding constant, shifted right
arithmetically, plus the output zero point, clipped to the output type. numpy's int64 does each
step exactly (no product exceeds 2**62 in the cases folded), so the result is the reference
model's, and the one any conforming implementation must give: the specification requires
SINGLE_ROUND and DOUBLE_ROUND results to be exact.

Folded: INT8, INT16, INT32 and INT48 inputs to INT8, INT16 and INT32 outputs, per tensor or per
channel (the last dimension), ``scale32`` true (32-bit multipliers, either rounding mode) or
false (16-bit multipliers, SINGLE_ROUND), signed or unsigned (``input_unsigned`` or
``output_unsigned``: the value read, or its zero point, zero-extended; the result clipped to the
unsigned range and stored as its bit pattern).

Not folded (the operator is left for the GPU):

- ``rounding_mode`` INEXACT_ROUND: the specification lets an implementation round differently
  (within a bound), so the GPU need not compute what the reference model does.
- Every case the specification makes an ERROR_IF (a zero point where the type takes none, an
  unsigned INT16 zero point other than 0 or 32768, DOUBLE_ROUND without ``scale32``, ``scale32``
  on INT48, both sides unsigned, an unsigned INT32 or INT48 side, ``per_channel`` on a rank-0
  input, multipliers of the wrong type or count).
- Every element where a REQUIRE of the specification fails, whose result is unpredictable: a
  negative multiplier, a shift outside 2..62, with ``scale32`` a value outside
  ``-(1 << (shift - 1)) .. (1 << (shift - 1)) - 1``, without it a scaled result outside INT32,
  and a scaled result plus output zero point outside INT32.
- An unsigned output where some result is negative before clipping: the specification clips it
  with ``apply_clip_u``, which reads the negative INT32 zero-extended (a large number, so the
  maximum), where implementations clip it to 0; the two readings disagree, so neither is folded.
"""

from __future__ import annotations

from collections.abc import Sequence

from vgfc.ir import DType, Operator, Tensor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.ir import Array

__all__ = ["rescale"]

_INPUTS = {DType.INT8: 8, DType.INT16: 16, DType.INT32: 32, DType.INT48: 48}
_OUTPUTS = {DType.INT8: 8, DType.INT16: 16, DType.INT32: 32}
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_ROUNDINGS = frozenset({"SINGLE_ROUND", "DOUBLE_ROUND"})
_CHUNK_ELEMENTS = 1 << 18
"""Elements scaled at once: int64 temporaries of 2 MiB each."""


def _flags_allowed(op: Operator, source: DType, target: DType) -> bool:
    """The attributes are of a case folded: none an ERROR_IF, INEXACT_ROUND refused."""
    attrs = op.attrs
    scale32, rounding, per_channel = (
        attrs.get("scale32"),
        attrs.get("rounding_mode"),
        attrs.get("per_channel"),
    )
    in_unsigned, out_unsigned = attrs.get("input_unsigned"), attrs.get("output_unsigned")
    if not all(isinstance(f, bool) for f in (scale32, per_channel, in_unsigned, out_unsigned)):
        return False
    if rounding not in _ROUNDINGS or (rounding == "DOUBLE_ROUND" and not scale32):
        return False
    if scale32 and source is DType.INT48:
        return False
    if in_unsigned and (out_unsigned or source not in (DType.INT8, DType.INT16)):
        return False
    if in_unsigned and target is DType.INT32:
        return False
    return not out_unsigned or (
        target in (DType.INT8, DType.INT16) and source not in (DType.INT32, DType.INT48)
    )


def _zero_point(value: Array, dtype: DType, unsigned: bool) -> int | None:
    """The zero point as the pseudo-code extends it; ``None`` where it is an ERROR_IF."""
    if value.size != 1:
        return None
    zp = int(value.reshape(-1)[0])
    if unsigned:
        zp &= (1 << _INPUTS[dtype]) - 1
        if dtype is DType.INT16 and zp not in (0, 1 << 15):
            return None
    elif dtype is not DType.INT8 and zp != 0:
        return None
    return zp


def rescale(
    op: Operator, args: Sequence[Array], out: Tensor, ins: Sequence[Tensor]
) -> Array | None:
    """RESCALE of constants (see the module docstring for what is refused)."""
    import numpy as np

    source, target = ins[0].dtype, out.dtype
    if source not in _INPUTS or target not in _OUTPUTS or len(args) != 5:
        return None
    if not _flags_allowed(op, source, target):
        return None
    scale32, per_channel = op.attrs["scale32"] is True, op.attrs["per_channel"] is True
    in_unsigned = op.attrs["input_unsigned"] is True
    out_unsigned = op.attrs["output_unsigned"] is True
    double_round = op.attrs["rounding_mode"] == "DOUBLE_ROUND"
    x, multiplier, shift, in_zp_value, out_zp_value = args
    if ins[1].dtype is not (DType.INT32 if scale32 else DType.INT16):
        return None
    if ins[2].dtype is not DType.INT8 or (per_channel and x.ndim < 1):
        return None
    in_zp = _zero_point(in_zp_value, source, in_unsigned)
    out_zp = _zero_point(out_zp_value, target, out_unsigned)
    if in_zp is None or out_zp is None:
        return None
    if x.size == 0:
        return None
    channels = x.shape[-1] if per_channel else 1
    m = multiplier.reshape(-1).astype(np.int64)
    s = shift.reshape(-1).astype(np.int64)
    if m.size != channels or s.size != channels:
        return None
    if m.min() < 0 or s.min() < 2 or s.max() > 62:
        return None

    # Rows of channels (one column per tensor), scaled a chunk of rows at a time so that the
    # int64 temporaries stay small beside the constant, whatever its size.
    rows = x.reshape(-1, channels)
    bits = _OUTPUTS[target]
    result = np.empty(rows.shape, np.dtype(f"i{bits // 8}"))
    step = max(1, _CHUNK_ELEMENTS // channels)
    for first in range(0, rows.shape[0], step):
        value = rows[first : first + step].astype(np.int64)
        if in_unsigned:
            value &= (1 << _INPUTS[source]) - 1
        scaled = _apply_scale(value - in_zp, m, s, scale32, double_round)
        if scaled is None:
            return None
        scaled += out_zp
        if scaled.min() < _INT32_MIN or scaled.max() > _INT32_MAX:
            return None  # apply_add_s REQUIREs an INT32
        if out_unsigned:
            if scaled.min() < 0:
                return None
            clipped = np.minimum(scaled, (1 << bits) - 1)
            result[first : first + step] = clipped.astype(np.dtype(f"u{bits // 8}")).view(
                result.dtype
            )
        else:
            low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            result[first : first + step] = np.clip(scaled, low, high)
    return result.reshape(x.shape)


def _apply_scale(
    value: Array, m: Array, s: Array, scale32: bool, double_round: bool
) -> Array | None:
    """``apply_scale_32`` or ``apply_scale_16`` of int64 values (rows of channels) by one
    multiplier and shift per channel; ``None`` where a REQUIRE fails."""
    import numpy as np

    half = np.left_shift(np.int64(1), s - 1)
    if scale32:
        if value.min() < _INT32_MIN or value.max() > _INT32_MAX:
            return None
        if np.any(value < -half) or np.any(value >= half):
            return None
        rounding = np.broadcast_to(half, value.shape)
        if double_round:
            extra = np.where(value >= 0, np.int64(1 << 30), np.int64(-(1 << 30)))
            rounding = rounding + np.where(s > 31, extra, np.int64(0))
        return (value * m + rounding) >> s  # type: ignore[no-any-return]
    scaled = (value * m + half) >> s
    if scaled.min() < _INT32_MIN or scaled.max() > _INT32_MAX:
        return None
    return scaled  # type: ignore[no-any-return]
