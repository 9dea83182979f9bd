"""The specification's conditions, one broken (or kept) at a time, on one-operator graphs.

Each case names the condition it breaks (tosa-tools' name, which the message carries in
brackets) and a piece of the message with the values; the valid twin of a case must pass, so a
rule that refuses too much fails here as surely as one that refuses too little.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from vgfc.ir import Data, DType, Graph, Operator, Tensor, Version
from vgfc.verify.spec import RULES, spec_errors


def t(name: str, shape: Sequence[int], dtype: str = "FP32", data: Any = None) -> Tensor:
    element = DType[dtype]
    value = None if data is None else Data.of(np.asarray(data).reshape(shape), element)
    return Tensor(name, tuple(shape), element, value)


def graph(
    op: str,
    inputs: Sequence[Tensor],
    outputs: Sequence[Tensor],
    regions: dict[str, Graph] | None = None,
    **attrs: Any,
) -> Graph:
    """One ``op`` reading ``inputs`` (those with data become CONST or CONST_SHAPE results)."""
    ops = []
    for tensor in inputs:
        if tensor.data is not None:
            kind = "CONST_SHAPE" if tensor.dtype is DType.SHAPE else "CONST"
            ops.append(Operator(len(ops), kind, (), (tensor.name,)))
    ops.append(
        Operator(
            len(ops),
            op,
            tuple(x.name for x in inputs),
            tuple(x.name for x in outputs),
            MappingProxyType(attrs),
        )
    )
    tensors = {x.name: x for x in (*inputs, *outputs)}
    return Graph(
        tensors=MappingProxyType(tensors),
        operators=tuple(ops),
        inputs=tuple(x.name for x in inputs if x.data is None),
        outputs=tuple(x.name for x in outputs),
        version=Version(1, 0, 0, False),
        source="m.tosa",
        regions=("main", *(regions or {})),
        blocks=MappingProxyType(regions or {}),
    )


def zp(name: str, value: float = 0, dtype: str = "INT8") -> Tensor:
    return t(name, (1,), dtype, [value])


def shape(name: str, values: Sequence[int]) -> Tensor:
    return t(name, (len(values),), "SHAPE", list(values) if values else np.zeros(0, np.int64))


def conv(
    x: Sequence[int] = (1, 16, 16, 4),
    w: Sequence[int] = (8, 3, 3, 4),
    y: Sequence[int] = (1, 7, 7, 8),
    bias: int = 8,
    dtype: str = "FP32",
    zps: tuple[float, float] = (0, 0),
    **attrs: Any,
) -> Graph:
    fields = {"pad": (0, 0, 0, 0), "stride": (2, 2), "dilation": (1, 1), "acc_type": "FP32"}
    fields.update(attrs)
    # The specification's combinations: INT8 x INT8 -> INT32, INT16 x INT8 -> INT48.
    weights, wide = {"INT8": ("INT8", "INT32"), "INT16": ("INT8", "INT48")}.get(
        dtype, (dtype, dtype)
    )
    return graph(
        "CONV2D",
        [
            t("x", x, dtype),
            t("w", w, weights, np.zeros(w)),
            t("b", (bias,), wide, np.zeros(bias)),
            zp("xz", zps[0], dtype),
            zp("wz", zps[1], weights),
        ],
        [t("y", y, wide)],
        **fields,
    )


def pool(y: Sequence[int] = (1, 7, 7, 4), **attrs: Any) -> Graph:
    fields = {"kernel": (2, 2), "stride": (2, 2), "pad": (0, 0, 0, 0)}
    fields.update(attrs)
    return graph("MAX_POOL2D", [t("x", (1, 14, 14, 4))], [t("y", y)], **fields)


def rescale(
    x: Sequence[int] = (2, 5),
    channels: int = 5,
    dtype_in: str = "INT32",
    dtype_out: str = "INT8",
    zps: tuple[int, int] = (0, 0),
    **attrs: Any,
) -> Graph:
    fields = {
        "scale32": True,
        "rounding_mode": "SINGLE_ROUND",
        "per_channel": True,
        "input_unsigned": False,
        "output_unsigned": False,
    }
    fields.update(attrs)
    mul = "INT32" if fields["scale32"] else "INT16"
    in_zp_type = dtype_in
    return graph(
        "RESCALE",
        [
            t("x", x, dtype_in),
            t("m", (channels,), mul, [1 << 30] * channels),
            t("s", (channels,), "INT8", [31] * channels),
            zp("iz", zps[0], in_zp_type),
            zp("oz", zps[1], dtype_out),
        ],
        [t("y", x, dtype_out)],
        **fields,
    )


def resize(
    scale: Sequence[int] = (2, 1, 2, 1),
    offset: Sequence[int] = (0, 0),
    border: Sequence[int] = (0, 0),
    y: Sequence[int] = (1, 7, 7, 3),
) -> Graph:
    return graph(
        "RESIZE",
        [t("x", (1, 4, 4, 3)), shape("sc", scale), shape("of", offset), shape("bo", border)],
        [t("y", y)],
        mode="NEAREST",
    )


def cond_if(else_shape: Sequence[int]) -> Graph:
    def branch(name: str, dims: Sequence[int]) -> Graph:
        out = t(f"{name}_out", dims)
        return Graph(
            tensors=MappingProxyType({"v": t("v", (2, 3)), out.name: out}),
            operators=(Operator(0, "ABS", ("v",), (out.name,)),),
            inputs=("v",),
            outputs=(out.name,),
            version=Version(1, 0, 0, False),
        )

    regions = {"then": branch("then", (2, 3)), "else": branch("else", else_shape)}
    return graph(
        "COND_IF",
        [t("c", (1,), "BOOL"), t("v", (2, 3))],
        [t("y", (2, 3))],
        regions,
        then_graph="then",
        else_graph="else",
    )


BINARY_OK = graph("ADD", [t("a", (2, 1, 3)), t("b", (2, 4, 1))], [t("y", (2, 4, 3))])

CASES: list[tuple[str, Graph, str | None, str]] = [
    ("add-broadcast", BINARY_OK, None, ""),
    ("add-rank", graph("ADD", [t("a", (2, 3)), t("b", (1, 2, 3))], [t("y", (1, 2, 3))]),
     "RankMismatch", "input1 has rank 2 (2x3), the output rank 3 (1x2x3)"),
    ("add-broadcast-fails", graph("ADD", [t("a", (2, 3)), t("b", (4, 3))], [t("y", (4, 3))]),
     "BroadcastShapesMismatch", "dimension 0 cannot be broadcast: input1 2x3, input2 4x3"),
    ("add-output", graph("ADD", [t("a", (2, 3)), t("b", (1, 3))], [t("y", (2, 1))]),
     "DimensionMismatch", "output shape 2x1 is not the broadcast of the inputs, 2x3"),
    ("mul-shift-rank", graph("MUL", [t("a", (2,), "INT32"), t("b", (2,), "INT32"),
                                     t("s", (1, 1), "INT8", [[0]])], [t("y", (2,), "INT32")]),
     "InputRank1WrongRank", "shift has rank 2"),
    ("select-condition", graph("SELECT", [t("c", (2,), "INT8"), t("a", (2,)), t("b", (2,))],
                               [t("y", (2,))]), "WrongInputType",
     "element types INT8, FP32, FP32 -> FP32 are not a combination SELECT takes"),
    ("add-int8", graph("ADD", [t("a", (2,), "INT8"), t("b", (2,), "INT8")], [t("y", (2,), "INT8")]),
     "WrongInputType", "ADD takes one of BF16, FP16, FP32, INT32 for every operand"),
    ("add-mixed", graph("ADD", [t("a", (2,), "INT32"), t("b", (2,), "INT32")], [t("y", (2,))]),
     "WrongOutputType", "element types INT32, INT32 -> FP32"),
    ("conv-int8-bias", graph("CONV2D", [t("x", (1, 2, 2, 1), "INT8"),
                                        t("w", (1, 1, 1, 1), "INT8", [0]),
                                        t("b", (1,), "INT8", [0]), zp("xz", 0), zp("wz", 0)],
                             [t("y", (1, 2, 2, 1), "INT32")], pad=(0, 0, 0, 0), stride=(1, 1),
                             dilation=(1, 1)),
     "WrongInputType", "INT8, INT8, INT8, INT8, INT8 -> INT32 are not a combination CONV2D"),
    ("conv-int8-output", graph("CONV2D", [t("x", (1, 2, 2, 1), "INT8"),
                                          t("w", (1, 1, 1, 1), "INT8", [0]),
                                          t("b", (1,), "INT32", [0]), zp("xz", 0), zp("wz", 0)],
                               [t("y", (1, 2, 2, 1), "INT8")], pad=(0, 0, 0, 0), stride=(1, 1),
                               dilation=(1, 1)),
     "WrongOutputType", "INT8, INT8, INT32, INT8, INT8 -> INT8 are not a combination CONV2D"),
    ("abs-shape", graph("ABS", [t("a", (2, 3))], [t("y", (3, 2))]),
     "OutputShapeMismatch", "input shape 2x3 differs from output shape 3x2"),
    ("clamp-order", graph("CLAMP", [t("a", (2,))], [t("y", (2,))], min_val=1.0, max_val=0.5),
     "MaxSmallerMin", "max_val 0.5 is smaller than min_val 1.0"),
    ("clamp-int8-range", graph("CLAMP", [t("a", (2,), "INT8")], [t("y", (2,), "INT8")],
                               min_val=-200, max_val=5), "ClampValueOutOfRange", "min_val -200"),
    ("negate-zp", graph("NEGATE", [t("a", (2,)), zp("z1", 1.0, "FP32"), zp("z2", 0, "FP32")],
                        [t("y", (2,))]),
     "InputZeroPointNotZero", "input1_zp is 1.0, but a FP32 operand takes zero point 0"),
    ("negate-int8-zp", graph("NEGATE", [t("a", (2,), "INT8"), zp("z1", 3), zp("z2", -3)],
                             [t("y", (2,), "INT8")]), None, ""),
    ("table-size", graph("TABLE", [t("a", (2,), "INT8"), t("tb", (255,), "INT8", [0] * 255)],
                         [t("y", (2,), "INT8")]), "TableSizeMismatch", "table of 256 values"),
    ("conv-ok", conv(y=(1, 8, 8, 8), stride=(2, 2), pad=(0, 1, 0, 1)), None, ""),
    ("conv-non-integer", conv(),
     "ConvOutputShapeNonInteger",
     "output height 7 != (input 16 - 1 + pad 0 + 0 - (kernel 3 - 1) * dilation 1) / stride 2 "
     "+ 1 = 7.5 (not an integer)"),
    ("conv-mismatch", conv(y=(1, 9, 7, 8), stride=(2, 2), pad=(0, 1, 0, 1)),
     "ConvOutputShapeMismatch", "output height 9 != (input 16 - 1 + pad 0 + 1"),
    ("conv-bias", conv(bias=3, pad=(0, 1, 0, 1)), "ConvBiasShapeMismatch", "bias has 3 values"),
    ("conv-dilation", conv(dilation=(0, 1)), "DilationSmallerOne", "dilation [0, 1]"),
    ("conv-pad", conv(pad=(0, -1, 0, 1)), "PadSmallerZero", "pad [0, -1, 0, 1]"),
    ("conv-stride", conv(stride=(0, 2)), "StrideSmallerOne", "stride [0, 2]"),
    ("conv-level", conv(stride=(9000, 2)), "LevelLimitExceeded", "over 8192"),
    ("conv-channels", conv(w=(8, 3, 3, 5), pad=(0, 1, 0, 1)), "ChannelMismatch",
     "takes 5 input channels, the input has 4"),
    ("conv-batch", conv(y=(2, 7, 7, 8), pad=(0, 1, 0, 1)), "BatchMismatch", "output batch 2"),
    ("conv-rank", conv(x=(16, 16, 4), pad=(0, 1, 0, 1)), "WrongRank", "input has rank 3"),
    ("conv-int16-input-zp", conv(dtype="INT16", zps=(3, 0), pad=(0, 1, 0, 1)),
     "InputZeroPointNotZero", "input_zp is 3, but a INT16 operand"),
    ("conv-int8-zps", conv(dtype="INT8", zps=(3, -2), pad=(0, 1, 0, 1), y=(1, 8, 8, 8)), None,
     ""),
    ("conv-weight-zp", conv(zps=(0, 0.5), pad=(0, 1, 0, 1)), "WeightZeroPointNotZero",
     "weight_zp is 0.5"),
    ("depthwise-ok", graph("DEPTHWISE_CONV2D",
                           [t("x", (1, 8, 8, 3)), t("w", (3, 3, 3, 2), data=np.zeros((3, 3, 3, 2))),
                            t("b", (6,), data=np.zeros(6)), zp("xz", 0, "FP32"),
                            zp("wz", 0, "FP32")],
                           [t("y", (1, 6, 6, 6))], pad=(0, 0, 0, 0), stride=(1, 1),
                           dilation=(1, 1)), None, ""),
    ("transpose-conv", graph("TRANSPOSE_CONV2D",
                             [t("x", (1, 4, 4, 2)),
                              t("w", (3, 2, 2, 2), data=np.zeros((3, 2, 2, 2))),
                              t("b", (3,), data=np.zeros(3)), zp("xz", 0, "FP32"),
                              zp("wz", 0, "FP32")],
                             [t("y", (1, 8, 9, 3))], out_pad=(0, 0, 0, 0), stride=(2, 2)),
     "ConvOutputShapeMismatch", "output width 9 != (input 4 - 1) * stride 2 + out_pad 0 + 0 "
     "+ kernel 2 = 8"),
    ("pool-ok", pool(), None, ""),
    ("pool-non-integer", pool(kernel=(3, 3), y=(1, 6, 6, 4)), "PoolingOutputShapeNonInteger",
     "(input 14 + pad 0 + 0 - kernel 3) / stride 2 + 1 = 6.5"),
    ("pool-mismatch", pool(y=(1, 8, 7, 4)), "PoolingOutputShapeMismatch", "output height 8"),
    ("pool-pad-kernel", pool(pad=(2, 0, 0, 0), y=(1, 8, 7, 4)), "PadLargerEqualKernel",
     "pad [2, 0] on the height"),
    ("pool-kernel", pool(kernel=(0, 2)), "KernelSmallerOne", "kernel [0, 2]"),
    ("matmul", graph("MATMUL", [t("a", (1, 2, 3)), t("b", (1, 4, 5)), zp("az", 0, "FP32"),
                                zp("bz", 0, "FP32")], [t("y", (1, 2, 5))]),
     "DimensionMismatch", "B 1x4x5 has 4 rows, A 1x2x3 has 3 columns"),
    ("fft-power", graph("FFT2D", [t("r", (1, 6, 8)), t("i", (1, 6, 8))],
                        [t("yr", (1, 6, 8)), t("yi", (1, 6, 8))], inverse=False),
     "KernelNotPowerOfTwo", "input height 6 is not a power of two"),
    ("rfft-output", graph("RFFT2D", [t("r", (1, 8, 8))], [t("yr", (1, 8, 8)), t("yi", (1, 8, 5))]),
     "FFTOutputShapeMismatch", "output_real shape 1x8x8 is not 1x8x5"),
    ("argmax-axis", graph("ARGMAX", [t("a", (2, 3))], [t("y", (2,), "INT32")], axis=2),
     "AxisLargerRank", "axis 2 is not an axis of the input, which has rank 2"),
    ("argmax-shape", graph("ARGMAX", [t("a", (2, 3))], [t("y", (3,), "INT32")], axis=1),
     "ArgmaxOutputShapeMismatch", "output shape 3 is not the input 2x3 without axis 1, 2"),
    ("reduce-axis-one", graph("REDUCE_SUM", [t("a", (2, 3))], [t("y", (2, 3))], axis=1),
     "ShapeOfAxisNotOne", "output dimension 1 (the axis reduced) is 3"),
    ("concat-sum", graph("CONCAT", [t("a", (2, 3)), t("b", (2, 4))], [t("y", (2, 8))], axis=1),
     "ConcatShapeSumMismatch", "output dimension 1 is 8, the inputs' sum along it 7"),
    ("concat-dim", graph("CONCAT", [t("a", (2, 3)), t("b", (3, 4))], [t("y", (2, 7))], axis=1),
     "ConcatInputDimMismatch", "input 1 3x4 differs from input 0 2x3 in dimension 0"),
    ("pad-negative", graph("PAD", [t("a", (2, 3)), shape("p", (0, -1, 0, 0)),
                                   zp("pc", 0, "FP32")], [t("y", (2, 3))]),
     "PadSmallerZero", "padding [0, -1, 0, 0] has a negative entry"),
    ("pad-output", graph("PAD", [t("a", (2, 3)), shape("p", (1, 1, 0, 2)), zp("pc", 0, "FP32")],
                         [t("y", (4, 4))]),
     "PadOutputShapeMismatch", "output shape 4x4 is not the input 2x3 padded by [1, 1, 0, 2], 4x5"),
    ("reshape-size", graph("RESHAPE", [t("a", (2, 3)), shape("s", (4, 2))], [t("y", (4, 2))]),
     "TensorSizeInputOutputMismatch", "output 4x2 holds 8 elements, the input 2x3 6"),
    ("reshape-rank-0", graph("RESHAPE", [t("a", (1, 1)), shape("s", ())], [t("y", ())]), None, ""),
    ("reshape-shape", graph("RESHAPE", [t("a", (2, 3)), shape("s", (3, 2))], [t("y", (6,))]),
     "ReshapeOutputShapeMismatch", "shape [3, 2] is not the output's shape 6"),
    ("slice-bounds", graph("SLICE", [t("a", (4, 4)), shape("st", (2, 0)), shape("sz", (3, 4))],
                           [t("y", (3, 4))]),
     "StartSizeOutsideBounds", "start 2 + size 3 passes the input's dimension 0, 4"),
    ("tile", graph("TILE", [t("a", (2, 3)), shape("m", (2, 2))], [t("y", (4, 3))]),
     "TileMultiplesOutputShapeMismatch", "is not the input 2x3 times multiples [2, 2], 4x6"),
    ("transpose-twice", graph("TRANSPOSE", [t("a", (2, 3))], [t("y", (2, 2))], perms=(0, 0)),
     "IndexUsedTwice", "perms [0, 0] names an axis twice"),
    ("transpose-shape", graph("TRANSPOSE", [t("a", (2, 3))], [t("y", (2, 3))], perms=(1, 0)),
     "TransposePermsOutputShapeMismatch", "permuted by [1, 0], 3x2"),
    ("gather", graph("GATHER", [t("v", (2, 5, 3)), t("i", (1, 4), "INT32")], [t("y", (2, 4, 3))]),
     "BatchMismatch", "indices 1x4 and values 2x5x3 differ in batch"),
    ("resize-ok", resize(), None, ""),
    ("resize-scale", resize(scale=(0, 1, 2, 1)), "ScaleSmallerEqualZero", "scale_y 0/1"),
    ("resize-border", resize(border=(2, 0)), "BorderLargerEqualMax", "border_y 2 is not below 2"),
    ("resize-non-integer", resize(scale=(2, 4, 2, 1), y=(1, 2, 7, 3)),
     "ResizeOutputShapeNonInteger", "((input 4 - 1) * 2 - offset 0 + border 0) / 4 + 1 = 2.5"),
    ("resize-mismatch", resize(y=(1, 8, 7, 3)), "ResizeOutputShapeMismatch", "output height 8"),
    ("rescale-ok", rescale(), None, ""),
    ("rescale-channels", rescale(channels=3),
     "RescaleChannelMismatch", "multiplier has shape 3; it takes 5 (one per channel of the input "
     "2x5)"),
    ("rescale-unsigned-both", rescale(dtype_in="INT8", input_unsigned=True, output_unsigned=True),
     "RescaleInputUnsignedOutputUnsigned", "input_unsigned and output_unsigned are both set"),
    ("rescale-i32-unsigned", rescale(input_unsigned=True), "RescaleI32InputUnsigned",
     "input_unsigned is set for an INT32 input"),
    ("rescale-double-round", rescale(scale32=False, rounding_mode="DOUBLE_ROUND"),
     "ScaleNotTrue", "DOUBLE_ROUND needs scale32"),
    ("rescale-i48", rescale(dtype_in="INT48"), "ScaleTrue", "scale32 is set for an INT48 input"),
    ("rescale-per-channel-rank-0", rescale(x=(), channels=1), "RescalePerChannelRank0",
     "per_channel is set for a rank-0 input"),
    ("rescale-int32-zp", rescale(zps=(4, 0)), "InputZeroPointNotZero", "input_zp is 4"),
    ("rescale-u16-zp", rescale(dtype_in="INT8", dtype_out="INT16", output_unsigned=True,
                               zps=(0, 7)),
     "U16OutputZeroPointNotValid", "takes zero point 0 or 32768"),
    ("rescale-u16-zp-ok", rescale(dtype_in="INT8", dtype_out="INT16", output_unsigned=True,
                                  zps=(0, 32768)), None, ""),
    ("level-rank", graph("ABS", [t("a", (1,) * 7)], [t("y", (1,) * 7)]),
     "WrongRank", "rank 7 (1x1x1x1x1x1x1) is over the level's MAX_RANK, 6"),
    ("cond-if-ok", cond_if((2, 3)), None, ""),
    ("cond-if-else", cond_if((3, 2)), "CondIfOutputListElseGraphMismatch",
     "else_graph outputs: tensor 0 'else_out' is 3x2 FP32, the operator's 'y' 2x3 FP32"),
]  # fmt: skip


@pytest.mark.parametrize(("g", "kind", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_condition(g: Graph, kind: str | None, text: str) -> None:
    errors = spec_errors(g)
    if kind is None:
        assert errors == []
        return
    assert errors, f"no violation found; expected {kind}"
    message = str(errors[0])
    assert message.endswith(f"[{kind}]"), message
    assert text in message, message
    assert message.startswith(f"m.tosa: op #{g.operators[-1].index} {g.operators[-1].op}: ")


def test_every_violation_of_an_operator_is_found() -> None:
    """``vgfc check`` reports each broken condition, not only the first one of an operator."""
    g = conv(dilation=(0, 1), stride=(0, 2))
    kinds = [str(e).rsplit("[", 1)[1] for e in spec_errors(g)]
    assert kinds == ["StrideSmallerOne]", "DilationSmallerOne]"]
    assert len(spec_errors(g, first_only=True)) == 1


def test_values_only_known_at_run_time_are_left_to_the_device() -> None:
    """A zero point that is a graph input (the dynamic extension) is not a constant."""
    g = graph("NEGATE", [t("a", (2,)), t("z1", (1,)), t("z2", (1,))], [t("y", (2,))])
    assert spec_errors(g) == []


def test_every_lowered_operator_has_a_rule() -> None:
    from vgfc.spirv.tosa_ops import TOSA_LOWERINGS

    assert set(TOSA_LOWERINGS) - set(RULES) == set()
