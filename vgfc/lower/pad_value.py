"""PAD whose pad value is not a constant: padded with zero, then the border chosen by SELECT.

TOSA.001000.1's PAD takes ``pad_const`` only as a constant (the runtime rejects a graph that
reads it from an input: ``Missing declared constant``), but the TOSA dynamic extension lets a
model give it as a graph input. The same result comes from instructions whose constant operands
are constants:

    padded = PAD(input, padding, 0)              # the input inside, zeros around it
    inside = PAD(true[input shape], padding, false)  # true exactly where the input lands
    value  = RESHAPE(pad_const, [1, ..., 1])     # the value, broadcast by SELECT
    result = SELECT(inside, padded, value)

``true[input shape]`` is one replicated constant, so the module does not grow with the tensor.
Where the padding adds nothing the value is never used: ``PAD(input, padding, 0)`` alone. The
ML emulation layer has no SELECT for fp8 (``Missing precompiled shader: select_float8_e5m2_t``),
so fp8 values are selected as fp16, which holds every fp8 value exactly, and cast back.
(The reference converter drops the pad-value input instead, and pads with whatever its constant
folding left: right only when no padding is added.)
"""

from __future__ import annotations

from vgfc.diagnostics import InternalError
from vgfc.ir import DType, Operator
from vgfc.spirv.extinst import tosa_instructions
from vgfc.spirv.tensors import tensor_constant, tensor_type, value_bits
from vgfc.spirv.tosa_ops import Emitter

__all__ = ["lower_pad_with_input_value"]

_SELECTED_AS = {DType.FP8E4M3: DType.FP16, DType.FP8E5M2: DType.FP16}
"""Element types SELECT runs in for types the runtime has no SELECT of (exact: fp16 holds every
fp8 value)."""


def lower_pad_with_input_value(em: Emitter, op: Operator) -> int:
    """Emit ``op`` (a PAD whose ``pad_const`` is computed or a graph input); returns the id of
    its result."""
    if len(op.inputs) != 3 or len(op.outputs) != 1:
        raise InternalError("PAD's operand counts were not checked before lowering")
    source, padding, pad_const = op.inputs
    x, out = em.tensor(source), em.tensor(op.outputs[0])
    dtype, in_shape, out_shape = x.dtype, x.shape or (), out.shape or ()
    b, ext = em.builder, em.instruction_set
    codes = tosa_instructions()
    pad, reshape, select = (codes[n].opcode for n in ("PAD", "RESHAPE", "SELECT"))
    pads = em.operand(padding)
    result_type = tensor_type(b, dtype, out_shape)

    zero = tensor_constant(b, dtype, (1,), value_bits(dtype, [0]), replicate=True)
    padded = b.ext_inst(result_type, ext, pad, [em.operand(source), pads, zero])
    widths = em.tensor(padding).data
    if widths is not None and not widths.array.any():
        return padded
    count = 1
    for d in in_shape:
        count *= d
    everywhere = tensor_constant(b, DType.BOOL, in_shape, [1] * count, replicate=True)
    nowhere = tensor_constant(b, DType.BOOL, (1,), [0], replicate=True)
    inside = b.ext_inst(
        tensor_type(b, DType.BOOL, out_shape), ext, pad, [everywhere, pads, nowhere]
    )
    ones = (1,) * len(out_shape)
    value = em.operand(pad_const)
    if ones != (1,):
        shape = tensor_constant(
            b, DType.SHAPE, (len(ones),), value_bits(DType.SHAPE, ones), replicate=True
        )
        value = b.ext_inst(tensor_type(b, dtype, ones), ext, reshape, [value, shape])
    if dtype not in _SELECTED_AS:
        return b.ext_inst(result_type, ext, select, [inside, padded, value])
    wide, cast = _SELECTED_AS[dtype], codes["CAST"].opcode
    padded = b.ext_inst(tensor_type(b, wide, out_shape), ext, cast, [padded])
    value = b.ext_inst(tensor_type(b, wide, ones), ext, cast, [value])
    chosen = b.ext_inst(tensor_type(b, wide, out_shape), ext, select, [inside, padded, value])
    return b.ext_inst(result_type, ext, cast, [chosen])
