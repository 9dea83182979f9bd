"""The specification's conditions on its tensor operators: ARGMAX, the pooling windows, the
convolutions, MATMUL and the FFTs.

One function per operator (or per shape of operator: the convolutions share one), in the order
of the specification's own ``ERROR_IF`` lines; the window arithmetic is :func:`_window`, the
specification's ``idiv_check`` for each spatial axis.
"""

from __future__ import annotations

from collections.abc import Iterator

from vgfc.ir import DType, Tensor
from vgfc.verify.conditions import (
    LEVEL,
    axis_in_range,
    dims,
    exact_division,
    rank,
    same_shape,
    zero_point,
)
from vgfc.verify.view import OpView, Violation, name_of, shape_of

__all__ = ["TENSOR_RULES"]

_INT8 = frozenset({DType.INT8})
_AXES = ("height", "width")
_AXES3 = ("depth", "height", "width")


def _argmax(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input"), v.output()
    yield from rank(source, "input", 1, LEVEL.max_rank)
    shape, result = shape_of(source), shape_of(out)
    if shape is None:
        return
    axis = v.attr("axis")
    yield from axis_in_range(axis, len(shape))
    if result is None or not isinstance(axis, int) or not 0 <= axis < len(shape):
        return
    want = shape[:axis] + shape[axis + 1 :]
    if len(result) != len(want):
        yield Violation(
            "ArgmaxOutputRankMismatch",
            f"output rank {len(result)} ({dims(result)}) is not the input rank {len(shape)} less 1",
            tensor=name_of(out),
        )
    elif result != want:
        yield Violation(
            "ArgmaxOutputShapeMismatch",
            f"output shape {dims(result)} is not the input {dims(shape)} without axis {axis}, "
            f"{dims(want)}",
            tensor=name_of(out),
        )


def _positive(v: OpView, key: str, kind: str, least: int, limit: int) -> Iterator[Violation]:
    """Every entry of the list attribute ``key`` is at least ``least`` (``kind``) and at most
    the level's ``limit``."""
    values = v.int_list(key)
    if values is None:
        return
    low = [x for x in values if x < least]
    if low:
        what = "negative" if least == 0 else f"smaller than {least}"
        yield Violation(kind, f"{key} {list(values)} has an entry {what}", key=key)
    elif any(x > limit for x in values):
        yield Violation(
            "LevelLimitExceeded",
            f"{key} {list(values)} has an entry over {limit}, the level's limit",
            key=key,
        )


def _window(
    v: OpView,
    names: tuple[str, ...],
    sizes: tuple[int, ...],
    kernels: tuple[int, ...],
    outs: tuple[int, ...],
    *,
    pool: bool,
) -> Iterator[Violation]:
    """The output size along each spatial axis: ``(I - 1 + pads - (K - 1) * dilation) / stride
    + 1`` for a convolution, ``(I + pads - K) / stride + 1`` for a pooling window, exact."""
    pad, stride = v.int_list("pad"), v.int_list("stride")
    dilation = v.int_list("dilation") if not pool else tuple(1 for _ in names)
    n = len(names)
    if (
        pad is None
        or stride is None
        or dilation is None
        or (len(pad), len(stride), len(dilation)) != (2 * n, n, n)
        or min(stride) < 1
        or min(dilation) < 1
        or min(pad) < 0
    ):
        return  # the list checks report these
    kinds = ("PoolingOutputShape" if pool else "ConvOutputShape") + "{}"
    for i, axis in enumerate(names):
        before, after = pad[2 * i], pad[2 * i + 1]
        if pool:
            numerator = sizes[i] + before + after - kernels[i]
            said = f"(input {sizes[i]} + pad {before} + {after} - kernel {kernels[i]})"
        else:
            numerator = sizes[i] - 1 + before + after - (kernels[i] - 1) * dilation[i]
            said = (
                f"(input {sizes[i]} - 1 + pad {before} + {after} - (kernel {kernels[i]} - 1) "
                f"* dilation {dilation[i]})"
            )
        quotient, exact = exact_division(numerator, stride[i])
        want = quotient + 1
        if not exact:
            value = f"{numerator / stride[i] + 1:g}"
            yield Violation(
                kinds.format("NonInteger"),
                f"output {axis} {outs[i]} != {said} / stride {stride[i]} + 1 = {value} "
                "(not an integer)",
                key="stride",
            )
        elif outs[i] != want:
            yield Violation(
                kinds.format("Mismatch"),
                f"output {axis} {outs[i]} != {said} / stride {stride[i]} + 1 = {want}",
                tensor=v.op.outputs[0],
            )


def _pool(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input"), v.output()
    yield from rank(source, "input", 4)
    yield from rank(out, "output", 4)
    if v.op.op == "AVG_POOL2D":
        yield from zero_point(v, "input_zp", source, "InputZeroPointNotZero", _INT8)
        yield from zero_point(v, "output_zp", out, "OutputZeroPointNotZero", _INT8)
    kernel, pad = v.int_list("kernel"), v.int_list("pad")
    yield from _positive(v, "kernel", "KernelSmallerOne", 1, LEVEL.max_kernel)
    yield from _positive(v, "stride", "StrideSmallerOne", 1, LEVEL.max_stride)
    yield from _positive(v, "pad", "PadSmallerZero", 0, LEVEL.max_kernel)
    if kernel is not None and pad is not None and len(kernel) == 2 and len(pad) == 4:
        for i, axis in enumerate(_AXES):
            k = kernel[i]
            if pad[2 * i] >= k or pad[2 * i + 1] >= k:
                yield Violation(
                    "PadLargerEqualKernel",
                    f"pad {list(pad[2 * i : 2 * i + 2])} on the {axis} is not smaller than the "
                    f"kernel's {axis}, {k}",
                    key="pad",
                )
    shape, result = shape_of(source), shape_of(out)
    if shape is None or result is None or len(shape) != 4 or len(result) != 4:
        return
    yield from _batch_channels(shape[0], result[0], shape[3], result[3], out)
    if kernel is not None and len(kernel) == 2 and min(kernel) >= 1:
        yield from _window(v, _AXES, shape[1:3], kernel, result[1:3], pool=True)


def _batch_channels(
    n_in: int, n_out: int, c_in: int | None, c_out: int | None, out: Tensor | None
) -> Iterator[Violation]:
    name = out.name if out is not None else None
    if n_in != n_out:
        yield Violation(
            "BatchMismatch", f"output batch {n_out} differs from the input batch {n_in}", name
        )
    if c_in is not None and c_out is not None and c_in != c_out:
        yield Violation(
            "ChannelMismatch",
            f"output channels {c_out} differ from the channels {c_in} the operator gives",
            name,
        )


def _conv(v: OpView) -> Iterator[Violation]:
    op = v.op.op
    spatial = _AXES3 if op == "CONV3D" else _AXES
    r = len(spatial) + 2
    source, weight, bias, out = v.input("input"), v.input("weight"), v.input("bias"), v.output()
    yield from rank(source, "input", r)
    yield from rank(weight, "weight", r)
    yield from rank(bias, "bias", 1)
    yield from rank(out, "output", r)
    yield from zero_point(v, "input_zp", source, "InputZeroPointNotZero", _INT8)
    yield from zero_point(v, "weight_zp", weight, "WeightZeroPointNotZero", _INT8)
    yield from _positive(v, "stride", "StrideSmallerOne", 1, LEVEL.max_stride)
    if op == "TRANSPOSE_CONV2D":
        yield from _transpose_conv(v, source, weight, bias, out)
        return
    yield from _positive(v, "pad", "PadSmallerZero", 0, LEVEL.max_kernel)
    yield from _positive(v, "dilation", "DilationSmallerOne", 1, LEVEL.max_kernel)
    shape, w, result = shape_of(source), shape_of(weight), shape_of(out)
    if shape is None or w is None or result is None or {len(shape), len(w), len(result)} != {r}:
        return
    if op == "DEPTHWISE_CONV2D":  # weight [KH, KW, C, M], output channels C * M
        kernels, in_channels, out_channels = w[:2], w[2], w[2] * w[3]
    else:  # weight [OC, (KD,) KH, KW, IC]
        kernels, in_channels, out_channels = w[1:-1], w[-1], w[0]
    yield from _batch_channels(shape[0], result[0], out_channels, result[-1], out)
    if in_channels != shape[-1]:
        yield Violation(
            "ChannelMismatch",
            f"weight {dims(w)} takes {in_channels} input channels, the input has {shape[-1]}",
            tensor=name_of(weight),
        )
    yield from _bias(bias, out_channels)
    yield from _window(v, spatial, shape[1:-1], kernels, result[1:-1], pool=False)


def _bias(bias: Tensor | None, channels: int) -> Iterator[Violation]:
    b = shape_of(bias)
    if b is not None and len(b) == 1 and b[0] not in (1, channels):
        yield Violation(
            "ConvBiasShapeMismatch",
            f"bias has {b[0]} values; the output has {channels} channels (1 value, or one "
            "per channel)",
            tensor=name_of(bias),
        )


def _transpose_conv(
    v: OpView, source: Tensor | None, weight: Tensor | None, bias: Tensor | None, out: Tensor | None
) -> Iterator[Violation]:
    shape, w, result = shape_of(source), shape_of(weight), shape_of(out)
    out_pad, stride = v.int_list("out_pad"), v.int_list("stride")
    if w is None or len(w) != 4:
        return
    kernels = w[1:3]
    if out_pad is not None and len(out_pad) == 4:
        for i, axis in enumerate(_AXES):
            if min(out_pad[2 * i], out_pad[2 * i + 1]) <= -kernels[i]:
                yield Violation(
                    "PadLargerEqualKernel",
                    f"out_pad {list(out_pad[2 * i : 2 * i + 2])} on the {axis} is not greater "
                    f"than -kernel {axis} {kernels[i]}",
                    key="out_pad",
                )
            elif max(out_pad[2 * i], out_pad[2 * i + 1]) > LEVEL.max_kernel:
                yield Violation(
                    "LevelLimitExceeded",
                    f"out_pad {list(out_pad)} has an entry over {LEVEL.max_kernel}, the level's "
                    "limit",
                    key="out_pad",
                )
    if shape is None or result is None or {len(shape), len(result)} != {4}:
        return
    yield from _batch_channels(shape[0], result[0], w[0], result[3], out)
    if w[3] != shape[3]:
        yield Violation(
            "ChannelMismatch",
            f"weight {dims(w)} takes {w[3]} input channels, the input has {shape[3]}",
            tensor=name_of(weight),
        )
    yield from _bias(bias, w[0])
    if out_pad is None or stride is None or len(out_pad) != 4 or len(stride) != 2:
        return
    if min(stride) < 1:
        return
    for i, axis in enumerate(_AXES):
        want = (shape[1 + i] - 1) * stride[i] + out_pad[2 * i] + out_pad[2 * i + 1] + kernels[i]
        if result[1 + i] != want:
            yield Violation(
                "ConvOutputShapeMismatch",
                f"output {axis} {result[1 + i]} != (input {shape[1 + i]} - 1) * stride "
                f"{stride[i]} + out_pad {out_pad[2 * i]} + {out_pad[2 * i + 1]} + kernel "
                f"{kernels[i]} = {want}",
                tensor=v.op.outputs[0],
            )


def _matmul(v: OpView) -> Iterator[Violation]:
    a, b, out = v.input("A"), v.input("B"), v.output()
    yield from rank(a, "A", 3)
    yield from rank(b, "B", 3)
    yield from rank(out, "output", 3)
    yield from zero_point(v, "A_zp", a, "InputZeroPointNotZero", _INT8)
    yield from zero_point(v, "B_zp", b, "InputZeroPointNotZero", _INT8)
    sa, sb, so = shape_of(a), shape_of(b), shape_of(out)
    if sa is None or sb is None or so is None or {len(sa), len(sb), len(so)} != {3}:
        return
    if sb[0] != sa[0]:
        yield Violation(
            "BatchMismatch", f"B {dims(sb)} and A {dims(sa)} differ in batch", name_of(b)
        )
    if sb[1] != sa[2]:
        yield Violation(
            "DimensionMismatch",
            f"B {dims(sb)} has {sb[1]} rows, A {dims(sa)} has {sa[2]} columns",
            name_of(b),
        )
    want = (sa[0], sa[1], sb[2])
    if so != want:
        yield Violation(
            "DimensionMismatch",
            f"output shape {dims(so)} is not [N, H, W] of A and B, {dims(want)}",
            name_of(out),
        )


def _power_of_two(v: OpView, shape: tuple[int, ...], label: str) -> Iterator[Violation]:
    for axis, size in zip(("height", "width"), shape[1:3], strict=True):
        if size < 1 or size & (size - 1):
            yield Violation(
                "KernelNotPowerOfTwo", f"{label} {axis} {size} is not a power of two", None
            )


def _fft(v: OpView) -> Iterator[Violation]:
    real = v.input("input_real")
    imag = v.input("input_imag") if v.op.op == "FFT2D" else None
    outs = (v.output(0), v.output(1))
    yield from rank(real, "input_real", 3)
    if imag is not None:
        yield from rank(imag, "input_imag", 3)
        yield from same_shape("input_real", real, "input_imag", imag, "FFTInputShapeMismatch")
    for label, o in zip(("output_real", "output_imag"), outs, strict=True):
        yield from rank(o, label, 3)
    shape = shape_of(real)
    if shape is None or len(shape) != 3:
        return
    yield from _power_of_two(v, shape, "input")
    want = shape if imag is not None else (shape[0], shape[1], shape[2] // 2 + 1)
    for label, o in zip(("output_real", "output_imag"), outs, strict=True):
        got = shape_of(o)
        if got is None or len(got) != 3:
            continue
        if got[0] != shape[0]:
            yield Violation(
                "BatchMismatch",
                f"{label} batch {got[0]} differs from the input's {shape[0]}",
                name_of(o),
            )
        elif got != want:
            yield Violation(
                "FFTOutputShapeMismatch",
                f"{label} shape {dims(got)} is not {dims(want)}",
                name_of(o),
            )


TENSOR_RULES = {
    "ARGMAX": _argmax,
    "AVG_POOL2D": _pool,
    "MAX_POOL2D": _pool,
    "CONV2D": _conv,
    "CONV3D": _conv,
    "DEPTHWISE_CONV2D": _conv,
    "TRANSPOSE_CONV2D": _conv,
    "MATMUL": _matmul,
    "FFT2D": _fft,
    "RFFT2D": _fft,
}
"""Op -> the function that yields its violations."""
