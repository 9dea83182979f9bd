"""Numpy references for MediaPipe's TFLite custom operators, as they appear in TOSA files.

``tosa-converter-for-tflite`` turns every TFLite ``CUSTOM`` operator into a TOSA ``CUSTOM``
operator with

* ``domain_name`` ``"TFL"``,
* ``operator_name`` the TFLite ``custom_code`` (e.g. ``"Convolution2DTransposeBias"``),
* ``implementation_attrs`` the TFLite ``custom_options`` bytes, verbatim (empty when the TFLite
  operator has none),
* operands and results in the TFLite operator's input and output order.

The TFLite operator code's ``version`` is lost on the way. MediaPipe's CPU resolver registers only
version 2 of ``TransformTensorBilinear``, ``TransformLandmarks`` and
``Landmarks2TransformMatrix`` (version 1 of the bilinear resampler is a different TFLite name,
``TransformTensor``), and the models MediaPipe ships use version 2; :func:`evaluate` infers the
version from the name, the options and the operand ranks.

The semantics follow MediaPipe's CPU kernels (``mediapipe/util/tflite/operations/*.cc``) and the
option parsers of its TFLite GPU delegate patch (``third_party/litert_custom_ops.diff``); this is
an independent rewrite in numpy, not a translation. Each function's docstring states the rules in
words. Two kinds of option encoding exist:

* raw TFLite C structs, little-endian 32-bit fields (``TfLitePoolParams``,
  ``TfLiteTransposeConvParams``): :func:`decode_pool_params`,
  :func:`decode_transpose_conv_params`;
* FlexBuffers maps (the transform operators): :func:`decode_landmarks_to_transform_matrix`,
  :func:`decode_transform_tensor_bilinear`, :func:`decode_transform_landmarks`.

Numerics: the references accumulate in float64 and return float32, except where MediaPipe's own
float32 rounding decides a discrete outcome (the sampling coordinates of the bilinear resampler),
which is reproduced in float32. Compare kernels with them at about 1e-5 relative tolerance.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from flatbuffers import flexbuffers

DOMAIN = "TFL"
"""``domain_name`` of every TFLite custom operator in a converted TOSA file."""

# TfLitePadding
PADDING_UNKNOWN = 0
PADDING_SAME = 1
PADDING_VALID = 2
PADDING_NAMES = {PADDING_UNKNOWN: "UNKNOWN", PADDING_SAME: "SAME", PADDING_VALID: "VALID"}

# TfLiteFusedActivation
ACT_NONE = 0
ACT_RELU = 1
ACT_RELU_N1_TO_1 = 2
ACT_RELU6 = 3
ACT_TANH = 4
ACT_SIGN_BIT = 5
ACT_SIGMOID = 6

_F32_LOWEST = float(np.finfo(np.float32).min)
_F32_MAX = float(np.finfo(np.float32).max)

FloatArray = npt.NDArray[np.float32]
Array = npt.NDArray[Any]

# --- Raw struct options ---------------------------------------------------------------------------

POOL_PARAMS_FIELDS = (
    ("padding", 0),
    ("stride_width", 4),
    ("stride_height", 8),
    ("filter_width", 12),
    ("filter_height", 16),
    ("activation", 20),
    ("computed_padding_width", 24),
    ("computed_padding_height", 28),
    ("computed_padding_width_offset", 32),
    ("computed_padding_height_offset", 36),
)
"""``TfLitePoolParams``: field name and byte offset, each an int32 (enums are int32 too)."""

TRANSPOSE_CONV_PARAMS_FIELDS = (
    ("padding", 0),
    ("stride_width", 4),
    ("stride_height", 8),
    ("activation", 12),
    ("quantized_bias_type", 16),
)
"""``TfLiteTransposeConvParams``: field name and byte offset, each an int32. MediaPipe's models
carry only the first three (12 bytes); newer TFLite headers append the last two."""


@dataclass(frozen=True)
class PoolParams:
    """``TfLitePoolParams`` as MaxPoolingWithArgmax2D and MaxUnpooling2D read it."""

    padding: int
    stride_width: int
    stride_height: int
    filter_width: int
    filter_height: int
    activation: int = ACT_NONE
    computed: tuple[int, int, int, int] | None = None
    """``computed.padding`` (width, height, width_offset, height_offset) when the 40-byte struct
    is present. The kernels never read it: they compute their own padding."""


@dataclass(frozen=True)
class TransposeConvParams:
    """``TfLiteTransposeConvParams`` as Convolution2DTransposeBias reads it (padding, strides)."""

    padding: int
    stride_width: int
    stride_height: int
    activation: int | None = None
    """Present only in the 20-byte layout; the kernel ignores it."""
    quantized_bias_type: int | None = None


def _int32s(data: bytes, count: int) -> tuple[int, ...]:
    return struct.unpack_from(f"<{count}i", data, 0)


def decode_pool_params(data: bytes) -> PoolParams:
    """Decode ``TfLitePoolParams`` (little-endian int32 fields, see :data:`POOL_PARAMS_FIELDS`).

    MediaPipe reinterprets the custom options as this struct and reads the first six fields
    (24 bytes); TensorFlow's converter writes the whole 40-byte struct with ``computed`` zero.
    """
    data = bytes(data)
    if len(data) < 24:
        raise ValueError(f"TfLitePoolParams needs at least 24 bytes, got {len(data)}")
    if len(data) >= 40:
        values = _int32s(data, 10)
        computed: tuple[int, int, int, int] | None = (values[6], values[7], values[8], values[9])
    else:
        values = _int32s(data, 6)
        computed = None
    padding, stride_w, stride_h, filter_w, filter_h, activation = values[:6]
    params = PoolParams(padding, stride_w, stride_h, filter_w, filter_h, activation, computed)
    if min(stride_w, stride_h, filter_w, filter_h) <= 0:
        raise ValueError(f"non-positive stride or filter size in {params}")
    return params


def decode_transpose_conv_params(data: bytes) -> TransposeConvParams:
    """Decode ``TfLiteTransposeConvParams`` (little-endian int32 fields, 12 or 20 bytes)."""
    data = bytes(data)
    if len(data) < 12:
        raise ValueError(f"TfLiteTransposeConvParams needs at least 12 bytes, got {len(data)}")
    if len(data) >= 20:
        padding, stride_w, stride_h, activation, bias_type = _int32s(data, 5)
        params = TransposeConvParams(padding, stride_w, stride_h, activation, bias_type)
    else:
        padding, stride_w, stride_h = _int32s(data, 3)
        params = TransposeConvParams(padding, stride_w, stride_h)
    if min(stride_w, stride_h) <= 0:
        raise ValueError(f"non-positive stride in {params}")
    return params


# --- FlexBuffers options --------------------------------------------------------------------------


def _flex_map(data: bytes) -> dict[str, Any]:
    if not data:
        raise ValueError("empty custom options: expected a FlexBuffers map")
    root = flexbuffers.GetRoot(bytearray(data))
    if not root.IsMap:
        raise ValueError("custom options are not a FlexBuffers map")
    value: dict[str, Any] = root.Value
    return value


def _int(m: Mapping[str, Any], key: str) -> int:
    if key not in m:
        raise ValueError(f"custom options lack {key!r}")
    v = m[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{key!r} is {v!r}, not a number")
    return int(v)  # flexbuffers AsInt32 truncates a float, as int() does


def _float(m: Mapping[str, Any], key: str) -> float:
    if key not in m:
        raise ValueError(f"custom options lack {key!r}")
    v = m[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{key!r} is {v!r}, not a number")
    return float(np.float32(v))


def _ints(m: Mapping[str, Any], key: str) -> list[int]:
    if key not in m:
        raise ValueError(f"custom options lack {key!r}")
    v = m[key]
    if not isinstance(v, list) or not all(isinstance(i, int) for i in v):
        raise ValueError(f"{key!r} is {v!r}, not a vector of integers")
    return [int(i) for i in v]


def _pairs(flat: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Group a flat index list in pairs; an odd last index pairs with itself (as MediaPipe does)."""
    pairs = [(flat[i], flat[i + 1]) for i in range(0, len(flat) - 1, 2)]
    if len(flat) % 2:
        pairs.append((flat[-1], flat[-1]))
    return tuple(pairs)


@dataclass(frozen=True)
class LandmarksToTransformMatrixV2Params:
    """Version 2 options (FlexBuffers map keys of the same names)."""

    subset_idxs: tuple[tuple[int, int], ...]
    left_rotation_idx: int
    right_rotation_idx: int
    target_rotation_radians: float
    output_height: int
    output_width: int
    scale_x: float
    scale_y: float


@dataclass(frozen=True)
class LandmarksToTransformMatrixV1Params:
    """Version 1 options (FlexBuffers map; ``input_hw``/``output_hw`` are [h, w] vectors)."""

    input_hw: tuple[int, int]
    output_hw: tuple[int, int]
    dimensions: int
    landmarks_range: int
    bbox_size_multiplier: float
    left_rotation_idx: int
    right_rotation_idx: int
    subset: tuple[tuple[int, int], ...]


LandmarksToTransformMatrixParams = (
    LandmarksToTransformMatrixV1Params | LandmarksToTransformMatrixV2Params
)


def decode_landmarks_to_transform_matrix(data: bytes) -> LandmarksToTransformMatrixParams:
    """Decode Landmarks2TransformMatrix options; the keys tell the version.

    Version 2: ``subset_idxs`` (int vector, read in pairs; an odd last index is paired with
    itself), ``left_rotation_idx``, ``right_rotation_idx``, ``output_height``, ``output_width``
    (ints), ``target_rotation_radians``, ``scale_x``, ``scale_y`` (floats). Version 1: ``subset``,
    ``input_hw``, ``output_hw``, ``dimensions``, ``landmarks_range``, ``bbox_size_multiplier``,
    ``left_rotation_idx``, ``right_rotation_idx``.
    """
    m = _flex_map(data)
    if "subset_idxs" in m:
        params2 = LandmarksToTransformMatrixV2Params(
            subset_idxs=_pairs(_ints(m, "subset_idxs")),
            left_rotation_idx=_int(m, "left_rotation_idx"),
            right_rotation_idx=_int(m, "right_rotation_idx"),
            target_rotation_radians=_float(m, "target_rotation_radians"),
            output_height=_int(m, "output_height"),
            output_width=_int(m, "output_width"),
            scale_x=_float(m, "scale_x"),
            scale_y=_float(m, "scale_y"),
        )
        if params2.output_height <= 0 or params2.output_width <= 0:
            raise ValueError(f"non-positive output size in {params2}")
        if params2.scale_x <= 0 or params2.scale_y <= 0:
            raise ValueError(f"non-positive scale in {params2}")
        if min(params2.left_rotation_idx, params2.right_rotation_idx) < 0:
            raise ValueError(f"negative rotation index in {params2}")
        if any(i < 0 for pair in params2.subset_idxs for i in pair):
            raise ValueError(f"negative subset index in {params2}")
        return params2
    if "subset" in m:
        in_hw = _ints(m, "input_hw")
        out_hw = _ints(m, "output_hw")
        if len(in_hw) < 2 or len(out_hw) < 2:
            raise ValueError("input_hw and output_hw need two values each")
        params1 = LandmarksToTransformMatrixV1Params(
            input_hw=(in_hw[0], in_hw[1]),
            output_hw=(out_hw[0], out_hw[1]),
            dimensions=_int(m, "dimensions"),
            landmarks_range=_int(m, "landmarks_range"),
            bbox_size_multiplier=_float(m, "bbox_size_multiplier"),
            left_rotation_idx=_int(m, "left_rotation_idx"),
            right_rotation_idx=_int(m, "right_rotation_idx"),
            subset=_pairs(_ints(m, "subset")),
        )
        if params1.dimensions != 3 or params1.bbox_size_multiplier == 0:
            raise ValueError(f"unsupported dimensions or zero bbox multiplier in {params1}")
        if min(*params1.input_hw, *params1.output_hw, params1.landmarks_range) <= 0:
            raise ValueError(f"non-positive size or landmarks range in {params1}")
        if not params1.subset:
            raise ValueError("empty subset")
        return params1
    raise ValueError(f"neither 'subset_idxs' (v2) nor 'subset' (v1) in {sorted(m)}")


@dataclass(frozen=True)
class TransformTensorBilinearParams:
    """Output size of TransformTensorBilinear; ``version`` 2 samples at pixel centres."""

    output_height: int
    output_width: int
    version: int = 2


def decode_transform_tensor_bilinear(
    data: bytes, version: int = 2
) -> TransformTensorBilinearParams:
    """Decode TransformTensorBilinear options.

    Version 2 (TFLite name ``TransformTensorBilinear``): ints ``output_height``,
    ``output_width``. Version 1 (TFLite name ``TransformTensor``): ``output_size`` [h, w] and an
    optional ``mode`` string that must be ``"bilinear"``.
    """
    m = _flex_map(data)
    if version == 2:
        params = TransformTensorBilinearParams(_int(m, "output_height"), _int(m, "output_width"), 2)
    elif version == 1:
        if "mode" in m and m["mode"] != "bilinear":
            raise ValueError(f"mode {m['mode']!r}: only 'bilinear' is supported")
        size = _ints(m, "output_size")
        if len(size) < 2:
            raise ValueError("output_size needs two values")
        params = TransformTensorBilinearParams(size[0], size[1], 1)
    else:
        raise ValueError(f"TransformTensorBilinear has versions 1 and 2, not {version}")
    if params.output_height <= 0 or params.output_width <= 0:
        raise ValueError(f"non-positive output size in {params}")
    return params


@dataclass(frozen=True)
class TransformLandmarksParams:
    """``dimensions`` per landmark (2 or 3) and, in version 1, a ``scale`` of the translation."""

    dimensions: int
    scale: float = 1.0
    version: int = 2


def decode_transform_landmarks(
    data: bytes, version: int = 2, output_shape: Sequence[int] | None = None
) -> TransformLandmarksParams:
    """Decode TransformLandmarks options.

    Version 2 reads no options (the real models carry none): ``dimensions`` is the last
    dimension of the output shape and the scale is 1. Version 1 reads ``dimensions`` (int) and
    ``scale`` (float) from a FlexBuffers map.
    """
    if version == 2:
        if output_shape is None or not output_shape:
            raise ValueError("TransformLandmarks v2 takes its dimensions from the output shape")
        params = TransformLandmarksParams(int(output_shape[-1]), 1.0, 2)
    elif version == 1:
        m = _flex_map(data)
        params = TransformLandmarksParams(_int(m, "dimensions"), _float(m, "scale"), 1)
        if params.scale == 0:
            raise ValueError("scale 0")
    else:
        raise ValueError(f"TransformLandmarks has versions 1 and 2, not {version}")
    if params.dimensions not in (2, 3):
        raise ValueError(f"dimensions must be 2 or 3, not {params.dimensions}")
    return params


# --- Shared pieces --------------------------------------------------------------------------------


def _f32(a: Any) -> FloatArray:
    return np.asarray(a, dtype=np.float32)


def _check_rank(name: str, a: Array, rank: int) -> None:
    if a.ndim != rank:
        raise ValueError(f"{name} must have rank {rank}, has shape {a.shape}")


def activation_range(activation: int) -> tuple[float, float]:
    """TFLite's float clamp range for a fused activation (other activations clamp nothing)."""
    if activation == ACT_RELU:
        return 0.0, _F32_MAX
    if activation == ACT_RELU6:
        return 0.0, 6.0
    if activation == ACT_RELU_N1_TO_1:
        return -1.0, 1.0
    return _F32_LOWEST, _F32_MAX


def tflite_padding(stride: int, in_size: int, filter_size: int, out_size: int) -> int:
    """TFLite's ``ComputePadding`` (dilation 1): half the missing extent, never negative.

    C++ integer division truncates toward zero; a negative total clamps to 0 either way.
    """
    total = (out_size - 1) * stride + filter_size - in_size
    return max(0, total // 2)


# --- Convolution2DTransposeBias -------------------------------------------------------------------


def transpose_conv_output_size(
    in_size: int, filter_size: int, stride: int, padding: int
) -> tuple[int, int]:
    """Output extent and leading crop of one spatial axis: ``(size, pad_before)``."""
    total = max(0, filter_size - (in_size - 1) % stride - 1) if padding == PADDING_SAME else 0
    return stride * (in_size - 1) + filter_size - total, total // 2


def convolution2d_transpose_bias(
    x: Array, weights: Array, bias: Array, params: TransposeConvParams
) -> FloatArray:
    """Convolution2DTransposeBias: a transposed convolution with a bias, float32 only.

    Operands: input ``[N, H, W, Cin]``, weights ``[Cout, KH, KW, Cin]`` (OHWI), bias ``[Cout]``.
    Every input pixel ``(y, x)`` scatters ``input[n, y, x, :] . weights[o, ky, kx, :]`` to output
    pixel ``(y * stride_h - pad_top + ky, x * stride_w - pad_left + kx)``; contributions falling
    outside the output are dropped; the output starts from the bias.

    Padding: for SAME, ``total = max(0, K - (In - 1) % stride - 1)`` per axis, else 0; the
    output extent is ``stride * (In - 1) + K - total`` and ``pad_top = total // 2`` (the rest is
    cut at the bottom/right). With K == stride (the selfie model: 2x2, stride 2) the output is
    exactly ``stride * In`` and nothing is cut. The options' activation, if any, is ignored.
    """
    x = _f32(x)
    w = _f32(weights)
    b = _f32(bias)
    _check_rank("input", x, 4)
    _check_rank("weights", w, 4)
    _check_rank("bias", b, 1)
    n, h, wd, cin = x.shape
    cout, kh, kw, wcin = w.shape
    if wcin != cin or b.shape[0] != cout:
        raise ValueError(f"shapes do not match: input {x.shape}, weights {w.shape}, bias {b.shape}")
    out_h, pad_top = transpose_conv_output_size(h, kh, params.stride_height, params.padding)
    out_w, pad_left = transpose_conv_output_size(wd, kw, params.stride_width, params.padding)
    sh, sw = params.stride_height, params.stride_width
    full = np.zeros((n, sh * (h - 1) + kh, sw * (wd - 1) + kw, cout), dtype=np.float64)
    x64 = x.astype(np.float64)
    for ky in range(kh):
        for kx in range(kw):
            contrib = np.einsum("nhwc,oc->nhwo", x64, w[:, ky, kx, :].astype(np.float64))
            full[:, ky : ky + sh * (h - 1) + 1 : sh, kx : kx + sw * (wd - 1) + 1 : sw, :] += contrib
    out = full[:, pad_top : pad_top + out_h, pad_left : pad_left + out_w, :] + b.astype(np.float64)
    return out.astype(np.float32)


# --- MaxPoolingWithArgmax2D / MaxUnpooling2D ------------------------------------------------------


def pool_output_size(in_size: int, filter_size: int, stride: int, padding: int) -> int:
    """TensorFlow's windowed output size: SAME ``ceil(In / s)``, VALID ``(In - K + s) // s``."""
    if padding == PADDING_SAME:
        return (in_size + stride - 1) // stride
    if padding == PADDING_VALID:
        return (in_size - filter_size + stride) // stride
    return 0


def max_pooling_with_argmax_2d(x: Array, params: PoolParams) -> tuple[FloatArray, FloatArray]:
    """MaxPoolingWithArgmax2D: max pooling that also returns where each maximum was.

    Operand ``[N, H, W, C]`` float32; two results of shape ``[N, OH, OW, C]``, both float32: the
    maxima (clamped by the fused activation's range) and the argmax indices.

    Output size as TensorFlow: SAME ``ceil(In / stride)``, VALID ``(In - K + stride) // stride``.
    Padding ``ComputePadding(stride, In, K, Out)`` = ``max(0, ((Out-1)*stride + K - In) // 2)``.

    The window of output ``(oy, ox)`` starts at input ``(oy*sh - pad_h, ox*sw - pad_w)``; only
    its cells inside the input are read (padding never wins). The scan runs row-major over the
    window, keeps the first strict maximum, and starts from float32's lowest value with index 0,
    so NaN never wins and a window of only ``-inf``/lowest values reports lowest at index 0.

    Index encoding: the position **inside the window, counted from the window's padded origin**,
    ``fy * filter_width + fx``, stored as float32 **plus 0.1** (``3`` is written ``3.1``) so that
    a later float-to-int truncation is safe. It is neither a flat input index (as TensorFlow's
    ``MaxPoolWithArgmax``) nor clipped to the valid part of the window.
    """
    x = _f32(x)
    _check_rank("input", x, 4)
    n, h, w, c = x.shape
    fh, fw = params.filter_height, params.filter_width
    sh, sw = params.stride_height, params.stride_width
    oh = pool_output_size(h, fh, sh, params.padding)
    ow = pool_output_size(w, fw, sw, params.padding)
    pad_h = tflite_padding(sh, h, fh, oh)
    pad_w = tflite_padding(sw, w, fw, ow)
    # -inf outside the input: never strictly greater than the running maximum.
    bottom = max(0, (oh - 1) * sh - pad_h + fh - h)
    right = max(0, (ow - 1) * sw - pad_w + fw - w)
    padded = np.pad(x, ((0, 0), (pad_h, bottom), (pad_w, right), (0, 0)), constant_values=-np.inf)
    best = np.full((n, oh, ow, c), _F32_LOWEST, dtype=np.float32)
    index = np.zeros((n, oh, ow, c), dtype=np.int64)
    for fy in range(fh):
        for fx in range(fw):
            rows = slice(fy, fy + (oh - 1) * sh + 1, sh)
            cols = slice(fx, fx + (ow - 1) * sw + 1, sw)
            window = padded[:, rows, cols, :]
            better = window > best
            best = np.where(better, window, best)
            index = np.where(better, fy * fw + fx, index)
    lo, hi = activation_range(params.activation)
    values = np.minimum(np.maximum(best, np.float32(lo)), np.float32(hi)).astype(np.float32)
    return values, (index.astype(np.float32) + np.float32(0.1)).astype(np.float32)


def max_unpooling_2d(x: Array, indices: Array, params: PoolParams) -> FloatArray:
    """MaxUnpooling2D: scatter each input value to the position its argmax index names.

    Operands ``[N, H, W, C]`` (values) and indices of the same shape, both float32; the result is
    ``[N, H * filter_h, W * filter_w, C]`` (the **filter** size, not the stride, scales it),
    zero wherever nothing is written. The options' padding mode and activation are not used.

    Padding: ``ComputePadding(stride, In=OutH, K, Out=H)`` = ``max(0, ((H-1)*stride + K - OutH)
    // 2)`` (0 whenever stride == filter). The index is truncated to an integer (so ``3.1`` is 3),
    split as ``fy = idx // filter_w``, ``fx = idx % filter_w``, and the value goes to
    ``(y*stride_h - pad_h + fy, x*stride_w - pad_w + fx)``. Writes happen in (n, y, x, c) order,
    so when two inputs name the same cell the later one wins. MediaPipe does not check bounds; this
    reference raises ValueError for a target outside the output.
    """
    x = _f32(x)
    idx_f = _f32(indices)
    _check_rank("input", x, 4)
    if idx_f.shape != x.shape:
        raise ValueError(f"indices shape {idx_f.shape} differs from input shape {x.shape}")
    n, h, w, c = x.shape
    fh, fw = params.filter_height, params.filter_width
    sh, sw = params.stride_height, params.stride_width
    oh, ow = h * fh, w * fw
    pad_h = tflite_padding(sh, oh, fh, h)
    pad_w = tflite_padding(sw, ow, fw, w)
    if not np.all(np.isfinite(idx_f)):
        raise ValueError("non-finite argmax index")
    idx = np.trunc(idx_f).astype(np.int64)
    # C++ integer division and remainder truncate toward zero.
    fy = np.fix(idx / fw).astype(np.int64)
    fx = np.fmod(idx, fw)
    ys = np.arange(h).reshape(1, h, 1, 1) * sh - pad_h + fy
    xs = np.arange(w).reshape(1, 1, w, 1) * sw - pad_w + fx
    if ys.size and (ys.min() < 0 or ys.max() >= oh or xs.min() < 0 or xs.max() >= ow):
        raise ValueError("an argmax index points outside the unpooled output")
    nn = np.arange(n).reshape(n, 1, 1, 1)
    cc = np.arange(c).reshape(1, 1, 1, c)
    flat = (((nn * oh + ys) * ow + xs) * c + cc).reshape(-1)
    values = x.reshape(-1)
    # Keep the last write to each cell: the first occurrence in the reversed order.
    _, first_in_reversed = np.unique(flat[::-1], return_index=True)
    keep = flat.size - 1 - first_in_reversed
    out = np.zeros(n * oh * ow * c, dtype=np.float32)
    out[flat[keep]] = values[keep]
    return out.reshape(n, oh, ow, c)


# --- Landmarks2TransformMatrix --------------------------------------------------------------------


def _rot(theta: float) -> Array:
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


def _landmark_xy(flat: Array, index: int) -> Array:
    if 3 * index + 2 > flat.size:
        raise ValueError(f"landmark {index} is outside a tensor of {flat.size // 3} landmarks")
    return flat[3 * index : 3 * index + 2]


def landmarks_to_transform_matrix(
    landmarks: Array, params: LandmarksToTransformMatrixParams
) -> FloatArray:
    """Landmarks2TransformMatrix: a 4x4 matrix mapping crop pixels to landmark coordinates.

    Operand: landmarks, float32, read as a flat list of (x, y, z) triples (landmark ``i`` is
    elements ``3i, 3i+1``; z is ignored); v2 expects ``[1, N, 3]``, v1 ``[1, 1, 1, 3N]``.
    Result ``[1, 4, 4]``, row-major: ``out[0, r, c]`` is row r, column c. Applied to a column
    ``(x_out, y_out, 0, 1)`` of output pixel coordinates it gives the input coordinates to sample
    (TransformTensorBilinear and TransformLandmarks read rows 0 and 1 of it).

    Version 2, which the face landmark model uses:

    1. ``rotation = target_rotation_radians - atan2(ry - ly, rx - lx)`` with l, r the landmarks
       ``left_rotation_idx`` and ``right_rotation_idx``;
    2. every landmark named in ``subset_idxs`` is rotated by ``rotation`` about the origin
       (``R(t) = [[cos t, -sin t], [sin t, cos t]]``); their axis-aligned bounding box gives
       ``crop_w``, ``crop_h`` and a centre, rotated back by ``-rotation`` to ``(cx, cy)``;
    3. ``M = T(cx, cy) . R(-rotation) . S(scale_x * crop_w / output_width,
       scale_y * crop_h / output_height) . T(-output_width / 2, -output_height / 2)``, where T
       translates x and y, S scales them, z and w pass through.

    Version 1: ``alpha = -atan((ry - ly) / (rx - lx))``; the subset's landmarks rotated by alpha
    (bounding box seeded at +-100000) give ``size = (max - min) * bbox_size_multiplier`` and the
    middle ``m``, rotated back to ``m'``; the 3x3 matrix
    ``A . [[R(-alpha), 2 m'/range - 1], [0, 1]] . diag(size / range, 1) . Rel`` with
    ``Rel = [[2/(out_w-1), 0, -1], [0, 2/(out_h-1), -1], [0, 0, 1]]`` and
    ``A = [[(in_w-1)/2, 0, (in_w-1)/2], [0, (in_h-1)/2, (in_h-1)/2], [0, 0, 1]]`` is embedded as
    ``[[a00, a01, 0, a02], [a10, a11, 0, a12], [a20, a21, a22, 0], [0, 0, 0, 1]]``.
    """
    flat = _f32(landmarks).astype(np.float64).reshape(-1)
    if isinstance(params, LandmarksToTransformMatrixV2Params):
        left = _landmark_xy(flat, params.left_rotation_idx)
        right = _landmark_xy(flat, params.right_rotation_idx)
        d = right - left
        rotation = float(params.target_rotation_radians) - math.atan2(d[1], d[0])
        ids = [i for pair in params.subset_idxs for i in pair]
        if not ids:
            raise ValueError("empty subset_idxs")
        pts = np.stack([_landmark_xy(flat, i) for i in ids])  # [K, 2]
        rotated = pts @ _rot(rotation).T
        lo, hi = rotated.min(axis=0), rotated.max(axis=0)
        crop_w, crop_h = hi - lo
        cx, cy = _rot(-rotation) @ ((lo + hi) / 2)
        shift = np.eye(4)
        shift[0, 3], shift[1, 3] = cx, cy
        rot = np.eye(4)
        rot[:2, :2] = _rot(-rotation)
        scale = np.diag(
            [
                params.scale_x * crop_w / params.output_width,
                params.scale_y * crop_h / params.output_height,
                1.0,
                1.0,
            ]
        )
        shift2 = np.eye(4)
        shift2[0, 3] = -params.output_width / 2.0
        shift2[1, 3] = -params.output_height / 2.0
        m: FloatArray = (shift @ rot @ scale @ shift2).astype(np.float32)
        return m.reshape(1, 4, 4)

    p = params
    left = _landmark_xy(flat, p.left_rotation_idx)
    right = _landmark_xy(flat, p.right_rotation_idx)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = -math.atan(float(np.float64(right[1] - left[1]) / np.float64(right[0] - left[0])))
    pts = np.stack([_landmark_xy(flat, i) for pair in p.subset for i in pair])
    rotated = pts @ _rot(alpha).T
    hi = np.maximum(rotated.max(axis=0), -100000.0)
    lo = np.minimum(rotated.min(axis=0), 100000.0)
    size = (hi - lo) * p.bbox_size_multiplier
    rng = float(p.landmarks_range)
    scale3 = np.diag([size[0] / rng, size[1] / rng, 1.0])
    middle = _rot(-alpha) @ ((hi + lo) / 2)
    rotation3 = np.eye(3)
    rotation3[:2, :2] = _rot(-alpha)
    rotation3[0, 2] = middle[0] / rng * 2.0 - 1.0
    rotation3[1, 2] = middle[1] / rng * 2.0 - 1.0
    (in_h, in_w), (out_h, out_w) = p.input_hw, p.output_hw
    to_relative = np.array([[2.0 / (out_w - 1.0), 0, -1], [0, 2.0 / (out_h - 1.0), -1], [0, 0, 1]])
    a_w, a_h = (in_w - 1.0) / 2.0, (in_h - 1.0) / 2.0
    to_absolute = np.array([[a_w, 0, a_w], [0, a_h, a_h], [0, 0, 1]])
    itm = to_absolute @ rotation3 @ scale3 @ to_relative
    out = np.array(
        [
            [itm[0, 0], itm[0, 1], 0.0, itm[0, 2]],
            [itm[1, 0], itm[1, 1], 0.0, itm[1, 2]],
            [itm[2, 0], itm[2, 1], itm[2, 2], 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )
    return out.astype(np.float32).reshape(1, 4, 4)


# --- TransformTensorBilinear ----------------------------------------------------------------------


def transform_tensor_bilinear(
    x: Array, matrix: Array, params: TransformTensorBilinearParams
) -> FloatArray:
    """TransformTensorBilinear: resample a feature map through an affine matrix, bilinearly.

    Operands: data ``[1, H, W, C]`` (batch 0 only) and matrix ``[1, 4, 4]`` (16 floats, row-major;
    only rows 0 and 1 are read). Result ``[1, output_height, output_width, C]``.

    For output pixel ``(ox, oy)`` the source point is ``sx = m0 . (ox, oy, 0, 1)``,
    ``sy = m1 . (ox, oy, 0, 1)`` with ``m0``, ``m1`` the first two rows. Version 2 first adds the
    pixel-centre correction ``m[r][3] += 0.5 * m[r][0] + 0.5 * m[r][1] - 0.5`` for r = 0, 1
    (i.e. ``S(-0.5) . M . S(+0.5)``: output pixel centres mapped to input pixel centres); the
    identity matrix thus copies the input. Version 1 has no correction.

    A source point with ``sx < 0``, ``sx > W - 1``, ``sy < 0`` or ``sy > H - 1`` gives 0 in every
    channel (no clamping, no border extension). Otherwise the four neighbours
    ``(floor(sy) + {0, 1}, floor(sx) + {0, 1})`` are blended with weights from the fractional
    parts; a neighbour outside the input (only possible with a zero weight, on the last row or
    column) reads 0. The coordinates are computed in float32 in MediaPipe's order; the blend in
    float64.
    """
    x = _f32(x)
    mat = _f32(matrix).reshape(-1)
    _check_rank("input", x, 4)
    if x.shape[0] != 1:
        raise ValueError(f"TransformTensorBilinear reads batch 0 only; input shape {x.shape}")
    if mat.size < 8:
        raise ValueError(f"the matrix needs at least 8 elements, has {mat.size}")
    _, h, w, c = x.shape
    oh, ow = params.output_height, params.output_width
    rows = [mat[0:4].copy(), mat[4:8].copy()]
    if params.version == 2:
        for r in rows:
            r[3] = np.float32(float(r[3]) + (float(r[0]) * 0.5 + float(r[1]) * 0.5 - 0.5))
    oy, ox = np.meshgrid(
        np.arange(oh, dtype=np.float32), np.arange(ow, dtype=np.float32), indexing="ij"
    )
    zero, one = np.float32(0.0), np.float32(1.0)

    def dot(r: Array) -> Array:
        acc = (r[0] * ox).astype(np.float32) + (r[1] * oy).astype(np.float32)
        acc = acc.astype(np.float32) + np.float32(r[2] * zero)
        result: Array = (acc + np.float32(r[3] * one)).astype(np.float32)
        return result

    sx, sy = dot(rows[0]), dot(rows[1])
    outside = (sx < 0) | (sx > w - 1) | (sy < 0) | (sy > h - 1)
    fx = np.floor(np.where(outside, 0, sx)).astype(np.int64)
    fy = np.floor(np.where(outside, 0, sy)).astype(np.int64)
    rx = np.where(outside, 0, sx - np.floor(np.where(outside, 0, sx))).astype(np.float64)
    ry = np.where(outside, 0, sy - np.floor(np.where(outside, 0, sy))).astype(np.float64)
    padded = np.zeros((h + 1, w + 1, c), dtype=np.float64)
    padded[:h, :w] = x[0]
    q11 = padded[fy, fx]
    q21 = padded[fy, fx + 1]
    q12 = padded[fy + 1, fx]
    q22 = padded[fy + 1, fx + 1]
    rxe, rye = rx[..., None], ry[..., None]
    upper = (1.0 - rxe) * q11 + rxe * q21
    lower = (1.0 - rxe) * q12 + rxe * q22
    out = rye * lower + (1.0 - rye) * upper
    out[outside] = 0.0
    result: FloatArray = out.astype(np.float32)
    return result.reshape(1, oh, ow, c)


# --- TransformLandmarks ---------------------------------------------------------------------------


def transform_landmarks(
    landmarks: Array, matrix: Array, params: TransformLandmarksParams
) -> FloatArray:
    """TransformLandmarks: apply the affine part of a 4x4 matrix to landmarks' x and y.

    Version 2 operands: landmarks ``[1, N, D]`` (D = ``dimensions``, 2 or 3) and matrix
    ``[1, 4, 4]`` (row-major, rows 0 and 1 read); the result has the landmarks' shape.
    Each landmark becomes ``x' = m00 x + m01 y + m03``, ``y' = m10 x + m11 y + m13`` (z is taken
    as 0 for the product, so m02 and m12 never matter); a third coordinate is copied unchanged.

    Version 1 operands: landmarks ``[1, H, W, C]`` with C a multiple of D; every group of D
    channels is one landmark; the translations ``m03``, ``m13`` are multiplied by ``scale``.
    """
    pts = _f32(landmarks)
    mat = _f32(matrix).reshape(-1).astype(np.float64)
    if mat.size < 8:
        raise ValueError(f"the matrix needs at least 8 elements, has {mat.size}")
    d = params.dimensions
    if params.version == 2:
        _check_rank("landmarks", pts, 3)
        if pts.shape[0] != 1 or pts.shape[2] != d:
            raise ValueError(f"v2 landmarks must be [1, N, {d}], not {pts.shape}")
    else:
        _check_rank("landmarks", pts, 4)
        if pts.shape[3] % d:
            raise ValueError(f"channels {pts.shape[3]} are not a multiple of {d}")
    scale = params.scale if params.version == 1 else 1.0
    groups = pts.astype(np.float64).reshape(-1, d)
    x, y = groups[:, 0], groups[:, 1]
    out = groups.copy()
    out[:, 0] = mat[0] * x + mat[1] * y + mat[3] * scale
    out[:, 1] = mat[4] * x + mat[5] * y + mat[7] * scale
    return out.astype(np.float32).reshape(pts.shape)


# --- Dispatch by TOSA custom operator -------------------------------------------------------------

OPERATORS = (
    "Convolution2DTransposeBias",
    "MaxPoolingWithArgmax2D",
    "MaxUnpooling2D",
    "Landmarks2TransformMatrix",
    "TransformTensorBilinear",
    "TransformLandmarks",
)
"""The operator names (TFLite ``custom_code``) this module models."""


def decode(
    operator_name: str,
    implementation_attrs: bytes,
    input_shapes: Sequence[Sequence[int]],
    output_shapes: Sequence[Sequence[int]] | None = None,
) -> Any:
    """Decode one operator's options, inferring the TFLite version where it matters."""
    if operator_name == "Convolution2DTransposeBias":
        return decode_transpose_conv_params(implementation_attrs)
    if operator_name in ("MaxPoolingWithArgmax2D", "MaxUnpooling2D"):
        return decode_pool_params(implementation_attrs)
    if operator_name in ("Landmarks2TransformMatrix", "Landmarks2TransformMatrixV2"):
        return decode_landmarks_to_transform_matrix(implementation_attrs)
    if operator_name == "TransformTensorBilinear":
        return decode_transform_tensor_bilinear(implementation_attrs, version=2)
    if operator_name == "TransformTensor":
        return decode_transform_tensor_bilinear(implementation_attrs, version=1)
    if operator_name == "TransformLandmarks":
        version = 1 if len(input_shapes[0]) == 4 else 2
        shape = output_shapes[0] if output_shapes else input_shapes[0]
        return decode_transform_landmarks(implementation_attrs, version, shape)
    raise ValueError(f"no oracle for custom operator {operator_name!r}")


def evaluate(
    operator_name: str,
    implementation_attrs: bytes,
    inputs: Sequence[Array],
    output_shapes: Sequence[Sequence[int]] | None = None,
) -> list[FloatArray]:
    """Run the reference of a ``TFL`` custom operator on numpy inputs; returns its results.

    ``output_shapes``, when given (the shapes the TOSA file declares), are checked against the
    shapes the reference computes.
    """
    arrays = [np.asarray(a) for a in inputs]
    params = decode(operator_name, implementation_attrs, [a.shape for a in arrays], output_shapes)
    results: list[FloatArray]
    if operator_name == "Convolution2DTransposeBias":
        results = [convolution2d_transpose_bias(arrays[0], arrays[1], arrays[2], params)]
    elif operator_name == "MaxPoolingWithArgmax2D":
        results = list(max_pooling_with_argmax_2d(arrays[0], params))
    elif operator_name == "MaxUnpooling2D":
        results = [max_unpooling_2d(arrays[0], arrays[1], params)]
    elif operator_name in ("Landmarks2TransformMatrix", "Landmarks2TransformMatrixV2"):
        results = [landmarks_to_transform_matrix(arrays[0], params)]
    elif operator_name in ("TransformTensorBilinear", "TransformTensor"):
        results = [transform_tensor_bilinear(arrays[0], arrays[1], params)]
    else:
        results = [transform_landmarks(arrays[0], arrays[1], params)]
    if output_shapes is not None:
        got = [tuple(r.shape) for r in results]
        want = [tuple(int(d) for d in s) for s in output_shapes]
        if got != want:
            raise ValueError(f"{operator_name}: the reference computes shapes {got}, not {want}")
    return results
