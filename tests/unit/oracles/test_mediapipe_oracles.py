"""The MediaPipe custom-op oracles (``tests/oracles/mediapipe_ops.py``) on hand-computed cases.

Each oracle is also compared with a plain loop written here from MediaPipe's C++ kernels, and the
option decoders are run on the bytes of the real models in ``tests/data/real/mediapipe`` and the
single-op models in ``tests/data/mediapipe_ops`` (read with the ``tosa`` package, not vgfc).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import tosa.TosaGraph as tosa_graph
from flatbuffers import flexbuffers
from oracles import mediapipe_ops as mp
from paths import DATA
from tosa.CustomAttribute import CustomAttribute
from tosa.DType import DType
from tosa.Op import Op

REAL = DATA / "real" / "mediapipe"
OPS = DATA / "mediapipe_ops"

Array = npt.NDArray[Any]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def f32(a: Any) -> Array:
    return np.asarray(a, dtype=np.float32)


# --- Reading TOSA custom operators with the ``tosa`` package --------------------------------------


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    data: Array | None


@dataclass(frozen=True)
class CustomOp:
    index: int
    domain_name: str
    operator_name: str
    attrs: bytes
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]


_ELEMENT = {DType.FP32: "<f4", DType.FP16: "<f2", DType.INT32: "<i4", DType.INT8: "i1"}


@cache
def custom_ops(path: Path) -> tuple[CustomOp, ...]:
    buf = path.read_bytes()
    block = tosa_graph.TosaGraph.GetRootAs(buf, 0).Regions(0).Blocks(0)
    tensors: dict[str, TensorInfo] = {}
    for i in range(block.TensorsLength()):
        t = block.Tensors(i)
        shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() else ()
        data = None
        element = _ELEMENT.get(t.Type())
        if t.DataLength() and element is not None:
            count = math.prod(shape)
            data = t.DataAsNumpy().view(element)[:count].reshape(shape).copy()
        name = t.Name().decode()
        tensors[name] = TensorInfo(name, shape, data)
    found = []
    for i in range(block.OperatorsLength()):
        op = block.Operators(i)
        if op.Op() != Op.CUSTOM:
            continue
        table = op.Attribute()
        attr = CustomAttribute()
        attr.Init(table.Bytes, table.Pos)
        raw = (
            attr.ImplementationAttrsAsNumpy().tobytes() if attr.ImplementationAttrsLength() else b""
        )
        found.append(
            CustomOp(
                index=i,
                domain_name=attr.DomainName().decode(),
                operator_name=attr.OperatorName().decode(),
                attrs=raw,
                inputs=tuple(tensors[op.Inputs(k).decode()] for k in range(op.InputsLength())),
                outputs=tuple(tensors[op.Outputs(k).decode()] for k in range(op.OutputsLength())),
            )
        )
    return tuple(found)


def ops_manifest() -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = json.loads((OPS / "manifest.json").read_text())["models"]
    return models


# --- Option decoders ------------------------------------------------------------------------------


def test_pool_params_struct_layout() -> None:
    # TensorFlow's converter writes the whole 40-byte TfLitePoolParams: here SAME, stride w=1
    # h=2, filter w=2 h=4, no activation, computed padding zero.
    raw = bytes([1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0] + [0] * 20)
    p = mp.decode_pool_params(raw)
    assert p == mp.PoolParams(mp.PADDING_SAME, 1, 2, 2, 4, mp.ACT_NONE, (0, 0, 0, 0))
    assert [off for _, off in mp.POOL_PARAMS_FIELDS] == list(range(0, 40, 4))
    short = mp.decode_pool_params(raw[:24])
    assert short.computed is None and short.filter_height == 4
    with pytest.raises(ValueError, match="24 bytes"):
        mp.decode_pool_params(raw[:20])
    with pytest.raises(ValueError, match="non-positive"):
        mp.decode_pool_params(struct.pack("<6i", 1, 0, 1, 1, 1, 0))


def test_transpose_conv_params_struct_layout() -> None:
    # The selfie model's bytes: SAME, stride w=2, h=2.
    p = mp.decode_transpose_conv_params(bytes.fromhex("010000000200000002000000"))
    assert p == mp.TransposeConvParams(mp.PADDING_SAME, 2, 2)
    p = mp.decode_transpose_conv_params(struct.pack("<3i", 2, 3, 1))
    assert (p.padding, p.stride_width, p.stride_height) == (mp.PADDING_VALID, 3, 1)
    longer = mp.decode_transpose_conv_params(struct.pack("<5i", 1, 1, 2, 3, 0))
    assert longer.activation == mp.ACT_RELU6 and longer.stride_height == 2
    with pytest.raises(ValueError, match="12 bytes"):
        mp.decode_transpose_conv_params(b"\x01\x00\x00\x00")


# The face model's TransformTensorBilinear options, verbatim: {output_height: 16, output_width: 16}.
TTB_OPTIONS = bytes.fromhex(
    "6f75747075745f686569676874006f75747075745f776964746800021c0f02010210100404042401"
)


def test_transform_tensor_bilinear_options_from_bytes() -> None:
    assert mp.decode_transform_tensor_bilinear(TTB_OPTIONS) == mp.TransformTensorBilinearParams(
        16, 16, 2
    )
    b = flexbuffers.Builder()
    with b.Map():
        b.Key("mode")
        b.String("bilinear")
        b.Key("output_size")
        b.TypedVectorFromElements([5, 7])
    assert mp.decode_transform_tensor_bilinear(bytes(b.Finish()), version=1) == (
        mp.TransformTensorBilinearParams(5, 7, 1)
    )


def _flex(values: dict[str, Any]) -> bytes:
    b = flexbuffers.Builder()
    with b.Map():
        for k, v in values.items():
            b.Key(k)
            if isinstance(v, list):
                b.TypedVectorFromElements(v)
            elif isinstance(v, float):
                b.Float(v)
            elif isinstance(v, str):
                b.String(v)
            else:
                b.Int(v)
    return bytes(b.Finish())


L2TM: dict[str, Any] = {
    "left_rotation_idx": 0,
    "right_rotation_idx": 1,
    "output_height": 2,
    "output_width": 4,
    "scale_x": 1.0,
    "scale_y": 1.0,
    "subset_idxs": [2, 3],
    "target_rotation_radians": 0.0,
}


def test_landmarks_to_transform_matrix_options() -> None:
    p = mp.decode_landmarks_to_transform_matrix(_flex(L2TM | {"subset_idxs": [4, 5, 6, 7, 8]}))
    assert isinstance(p, mp.LandmarksToTransformMatrixV2Params)
    # An odd count: the last index pairs with itself.
    assert p.subset_idxs == ((4, 5), (6, 7), (8, 8))
    assert (p.output_height, p.output_width, p.scale_x) == (2, 4, 1.0)
    for broken, message in [
        ({k: v for k, v in L2TM.items() if k != "scale_y"}, "lack 'scale_y'"),
        (L2TM | {"output_width": 0}, "non-positive output size"),
        (L2TM | {"scale_x": "big"}, "not a number"),
        ({"foo": 1}, "neither"),
    ]:
        with pytest.raises(ValueError, match=message):
            mp.decode_landmarks_to_transform_matrix(_flex(broken))
    with pytest.raises(ValueError, match="empty"):
        mp.decode_landmarks_to_transform_matrix(b"")


def test_transform_landmarks_options() -> None:
    assert mp.decode_transform_landmarks(b"", 2, (1, 80, 2)) == mp.TransformLandmarksParams(2)
    v1 = mp.decode_transform_landmarks(_flex({"dimensions": 3, "scale": 0.5}), 1)
    assert v1 == mp.TransformLandmarksParams(3, 0.5, 1)
    with pytest.raises(ValueError, match="2 or 3"):
        mp.decode_transform_landmarks(b"", 2, (1, 5, 4))


# --- The real models' custom operators ------------------------------------------------------------


def test_selfie_segmentation_custom_op() -> None:
    (op,) = custom_ops(REAL / "selfie_segmentation.tosa")
    assert (op.domain_name, op.operator_name) == (mp.DOMAIN, "Convolution2DTransposeBias")
    assert op.attrs == bytes.fromhex("010000000200000002000000")
    assert [t.shape for t in op.inputs] == [(1, 128, 128, 16), (1, 2, 2, 16), (1,)]
    assert [t.shape for t in op.outputs] == [(1, 256, 256, 1)]
    assert op.inputs[2].data is not None  # the bias is a constant; the weights come from a CAST
    x = rng().standard_normal(op.inputs[0].shape).astype(np.float32)
    w = rng(1).standard_normal(op.inputs[1].shape).astype(np.float32)
    (out,) = mp.evaluate(
        op.operator_name, op.attrs, [x, w, op.inputs[2].data], [op.outputs[0].shape]
    )
    # K == stride == 2, SAME: no overlap, no cut; each input pixel owns a 2x2 output block.
    expect = np.einsum("nhwc,oyxc->nhywxo", x.astype(np.float64), w.astype(np.float64))
    expect = expect.reshape(1, 256, 256, 1) + float(op.inputs[2].data[0])
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5)


def test_face_landmark_custom_ops() -> None:
    ops = custom_ops(REAL / "face_landmark_with_attention.tosa")
    names = [op.operator_name for op in ops]
    assert (
        names
        == ["Landmarks2TransformMatrix"] * 3
        + ["TransformTensorBilinear"] * 3
        + ["TransformLandmarks"] * 5
    )
    assert {op.domain_name for op in ops} == {mp.DOMAIN}
    l2tm = [mp.decode(op.operator_name, op.attrs, [t.shape for t in op.inputs]) for op in ops[:3]]
    assert all(isinstance(p, mp.LandmarksToTransformMatrixV2Params) for p in l2tm)
    first = l2tm[0]
    assert isinstance(first, mp.LandmarksToTransformMatrixV2Params)
    assert (first.left_rotation_idx, first.right_rotation_idx) == (61, 291)
    assert (first.output_height, first.output_width, first.scale_x, first.scale_y) == (
        16,
        16,
        1.5,
        1.5,
    )
    assert first.target_rotation_radians == 0.0 and len(first.subset_idxs) == 40
    eye = l2tm[1]
    assert isinstance(eye, mp.LandmarksToTransformMatrixV2Params)
    assert (eye.left_rotation_idx, eye.right_rotation_idx) == (33, 133)
    assert len(eye.subset_idxs) == 36 and eye.subset_idxs[-1][0] == eye.subset_idxs[-1][1]
    for op in ops[3:6]:
        assert op.attrs == TTB_OPTIONS
    for op in ops[6:]:
        assert op.attrs == b""  # no custom options at all
        assert op.inputs[0].shape[-1] == 2 and op.inputs[1].shape == (1, 4, 4)

    # Every op runs on inputs of its declared shapes and gives the declared result shapes.
    landmarks = f32(rng(2).uniform(0, 48, (1, 468, 3)))
    features = f32(rng(3).standard_normal((1, 48, 48, 32)))
    matrices: dict[str, Array] = {}
    for op in ops:
        if op.operator_name == "Landmarks2TransformMatrix":
            inputs = [landmarks]
        elif op.operator_name == "TransformTensorBilinear":
            inputs = [features, matrices[op.inputs[1].name]]
        else:
            inputs = [f32(rng(4).uniform(0, 16, op.inputs[0].shape)), f32(np.eye(4)[None])]
        results = mp.evaluate(op.operator_name, op.attrs, inputs, [t.shape for t in op.outputs])
        matrices[op.outputs[0].name] = results[0]
        assert all(np.isfinite(r).all() for r in results)


# --- The single-op models -------------------------------------------------------------------------


def _op_inputs(op: CustomOp, params: Any) -> Iterator[Array]:
    for k, t in enumerate(op.inputs):
        if t.data is not None:
            yield t.data
        elif op.operator_name == "MaxUnpooling2D" and k == 1:
            window = params.filter_width * params.filter_height
            yield f32(rng(k).integers(0, window, t.shape) + 0.1)
        elif t.shape == (1, 4, 4):
            m = np.eye(4)
            m[:2, :2] = [[0.9, -0.2], [0.3, 1.1]]
            m[:2, 3] = [0.5, -0.25]
            yield f32(m[None])
        else:
            yield f32(rng(k).uniform(0, 4, t.shape))


@pytest.mark.parametrize("entry", ops_manifest(), ids=lambda e: e["file"])
def test_single_op_model(entry: dict[str, Any]) -> None:
    (op,) = custom_ops(OPS / entry["file"])
    assert op.domain_name == mp.DOMAIN and op.operator_name == entry["operator_name"]
    assert op.attrs.hex() == entry["custom_ops"][0]["implementation_attrs"]
    shapes = [t.shape for t in op.inputs]
    out_shapes = [t.shape for t in op.outputs]
    params = mp.decode(op.operator_name, op.attrs, shapes, out_shapes)
    # The decoded options are what make_mediapipe_ops.py encoded.
    for key, value in entry["params"].items():
        got = getattr(params, key)
        if key == "padding":
            got = mp.PADDING_NAMES[got]
        elif key == "activation":
            got = "NONE" if got == mp.ACT_NONE else got
        elif key == "subset_idxs":
            flat = [i for pair in got for i in pair]
            got = flat[: len(value)]
        assert got == value, key
    results = mp.evaluate(op.operator_name, op.attrs, list(_op_inputs(op, params)), out_shapes)
    assert [r.dtype for r in results] == [np.float32] * len(out_shapes)


# --- Convolution2DTransposeBias -------------------------------------------------------------------


def loop_transpose_conv(x: Array, w: Array, b: Array, p: mp.TransposeConvParams) -> Array:
    """MediaPipe's reference loop, spelled out: bias first, then scatter-accumulate."""
    n, h, wd, cin = x.shape
    cout, kh, kw, _ = w.shape
    oh, pad_t = mp.transpose_conv_output_size(h, kh, p.stride_height, p.padding)
    ow, pad_l = mp.transpose_conv_output_size(wd, kw, p.stride_width, p.padding)
    out = np.zeros((n, oh, ow, cout))
    out[:] = b
    for bi in range(n):
        for iy in range(h):
            for ix in range(wd):
                for ci in range(cin):
                    for fy in range(kh):
                        for fx in range(kw):
                            oy = iy * p.stride_height - pad_t + fy
                            ox = ix * p.stride_width - pad_l + fx
                            if 0 <= oy < oh and 0 <= ox < ow:
                                out[bi, oy, ox, :] += x[bi, iy, ix, ci] * w[:, fy, fx, ci]
    return out


def test_transpose_conv_hand_computed() -> None:
    x = f32([[[[2.0]]]])
    w = f32([[[[1.0], [2.0]], [[3.0], [4.0]]]])  # 1x2x2x1
    out = mp.convolution2d_transpose_bias(x, w, f32([0.5]), mp.TransposeConvParams(2, 2, 2))
    np.testing.assert_array_equal(out[0, :, :, 0], [[2.5, 4.5], [6.5, 8.5]])
    # MediaPipe's SAME is not TensorFlow's "In * stride": over one pixel with K = stride = 2 it
    # pads max(0, 2 - 0 % 2 - 1) = 1 and keeps 1x1 (TensorFlow would keep 2x2).
    out = mp.convolution2d_transpose_bias(x, w, f32([0.5]), mp.TransposeConvParams(1, 2, 2))
    np.testing.assert_array_equal(out[0, :, :, 0], [[2.5]])
    # SAME with a 3-tall kernel and stride 2 over 2 rows: 5 full rows, 1 cut (at the end).
    x = f32([1.0, 10.0]).reshape(1, 2, 1, 1)
    w = f32([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1)
    same = mp.convolution2d_transpose_bias(x, w, f32([0]), mp.TransposeConvParams(1, 1, 2))
    np.testing.assert_array_equal(same[0, :, 0, 0], [1, 2, 13, 20])
    valid = mp.convolution2d_transpose_bias(x, w, f32([0]), mp.TransposeConvParams(2, 1, 2))
    np.testing.assert_array_equal(valid[0, :, 0, 0], [1, 2, 13, 20, 30])
    # 4 rows, K=3, stride 2, SAME: total padding 2, one cut at the top and one at the bottom.
    assert mp.transpose_conv_output_size(3, 3, 2, mp.PADDING_SAME) == (5, 1)
    assert mp.transpose_conv_output_size(128, 2, 2, mp.PADDING_SAME) == (256, 0)


@pytest.mark.parametrize("padding", [mp.PADDING_SAME, mp.PADDING_VALID])
@pytest.mark.parametrize(
    ("strides", "kernel"), [((1, 1), (3, 3)), ((2, 1), (3, 2)), ((1, 2), (2, 3)), ((3, 2), (2, 4))]
)
def test_transpose_conv_against_loop(
    padding: int, strides: tuple[int, int], kernel: tuple[int, int]
) -> None:
    g = rng(sum(strides) + 10 * sum(kernel))
    x = f32(g.standard_normal((2, 3, 4, 2)))
    w = f32(g.standard_normal((3, *kernel, 2)))
    b = f32(g.standard_normal(3))
    p = mp.TransposeConvParams(padding, stride_width=strides[1], stride_height=strides[0])
    np.testing.assert_allclose(
        mp.convolution2d_transpose_bias(x, w, b, p), loop_transpose_conv(x, w, b, p), atol=1e-5
    )


def test_transpose_conv_checks_shapes() -> None:
    with pytest.raises(ValueError, match="do not match"):
        mp.convolution2d_transpose_bias(
            np.zeros((1, 2, 2, 3)),
            np.zeros((1, 2, 2, 2)),
            np.zeros(1),
            mp.TransposeConvParams(1, 1, 1),
        )


# --- MaxPoolingWithArgmax2D / MaxUnpooling2D ------------------------------------------------------


def pool(padding: int, sw: int, sh: int, fw: int, fh: int, act: int = 0) -> mp.PoolParams:
    return mp.PoolParams(padding, sw, sh, fw, fh, act)


def loop_max_pool(x: Array, p: mp.PoolParams) -> tuple[Array, Array]:
    n, h, w, c = x.shape
    oh = mp.pool_output_size(h, p.filter_height, p.stride_height, p.padding)
    ow = mp.pool_output_size(w, p.filter_width, p.stride_width, p.padding)
    ph = mp.tflite_padding(p.stride_height, h, p.filter_height, oh)
    pw = mp.tflite_padding(p.stride_width, w, p.filter_width, ow)
    lo, hi = mp.activation_range(p.activation)
    values = np.zeros((n, oh, ow, c), np.float32)
    index = np.zeros((n, oh, ow, c), np.float32)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for ch in range(c):
                    y0, x0 = oy * p.stride_height - ph, ox * p.stride_width - pw
                    best, by, bx = np.float32(np.finfo(np.float32).min), 0, 0
                    for fy in range(max(0, -y0), min(p.filter_height, h - y0)):
                        for fx in range(max(0, -x0), min(p.filter_width, w - x0)):
                            v = x[b, y0 + fy, x0 + fx, ch]
                            if v > best:
                                best, by, bx = v, fy, fx
                    values[b, oy, ox, ch] = min(max(best, lo), hi)
                    index[b, oy, ox, ch] = np.float32(by * p.filter_width + bx) + np.float32(0.1)
    return values, index


def test_max_pool_hand_computed() -> None:
    x = f32(np.arange(16).reshape(1, 4, 4, 1))
    values, index = mp.max_pooling_with_argmax_2d(x, pool(mp.PADDING_VALID, 2, 2, 2, 2))
    np.testing.assert_array_equal(values[0, :, :, 0], [[5, 7], [13, 15]])
    np.testing.assert_array_equal(index, np.float32(3) + np.float32(0.1))
    # SAME, 3x3 windows, stride 2 over 3x3: padding 1 on top and left; the index counts from the
    # padded window origin, so the top-left window's maximum (input (1, 1)) is window cell 8.
    x = f32(np.arange(9).reshape(1, 3, 3, 1))
    values, index = mp.max_pooling_with_argmax_2d(x, pool(mp.PADDING_SAME, 2, 2, 3, 3))
    np.testing.assert_array_equal(values[0, :, :, 0], [[4, 5], [7, 8]])
    np.testing.assert_array_equal(index[0, :, :, 0], f32([[8, 7], [5, 4]]) + np.float32(0.1))
    assert index.dtype == np.float32


def test_max_pool_ties_nan_infinity_and_activation() -> None:
    p = pool(mp.PADDING_VALID, 2, 2, 2, 2)
    ties = mp.max_pooling_with_argmax_2d(np.ones((1, 2, 2, 1)), p)[1]
    assert ties.item() == np.float32(0.1)  # the first maximum wins
    nan = mp.max_pooling_with_argmax_2d(f32([[[[np.nan], [1]], [[2], [np.nan]]]]), p)
    assert (nan[0].item(), nan[1].item()) == (2.0, float(np.float32(2.1)))
    inf = mp.max_pooling_with_argmax_2d(np.full((1, 2, 2, 1), -np.inf), p)
    assert inf[0].item() == np.finfo(np.float32).min and inf[1].item() == np.float32(0.1)
    x = f32([[[[-3], [9]], [[1], [2]]]])
    relu6 = mp.max_pooling_with_argmax_2d(x, pool(mp.PADDING_VALID, 2, 2, 2, 2, mp.ACT_RELU6))
    assert (relu6[0].item(), relu6[1].item()) == (6.0, float(np.float32(1.1)))
    negative = mp.max_pooling_with_argmax_2d(-np.abs(x), pool(2, 2, 2, 2, 2, mp.ACT_RELU))
    assert negative[0].item() == 0.0


@pytest.mark.parametrize(
    "params",
    [
        pool(mp.PADDING_SAME, 2, 1, 2, 3),
        pool(mp.PADDING_VALID, 2, 1, 2, 3),
        pool(mp.PADDING_SAME, 3, 2, 2, 2),
        pool(mp.PADDING_SAME, 1, 1, 3, 3, mp.ACT_RELU_N1_TO_1),
        pool(mp.PADDING_VALID, 1, 3, 4, 1),
    ],
)
def test_max_pool_against_loop(params: mp.PoolParams) -> None:
    x = f32(rng(params.stride_width).standard_normal((2, 5, 6, 3)))
    got = mp.max_pooling_with_argmax_2d(x, params)
    want = loop_max_pool(x, params)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_unpool_of_pool() -> None:
    x = f32(rng(5).uniform(1, 2, (2, 4, 6, 3)))
    p = pool(mp.PADDING_SAME, 3, 2, 3, 2)  # stride == filter: windows tile the input
    values, index = mp.max_pooling_with_argmax_2d(x, p)
    up = mp.max_unpooling_2d(values, index, p)
    assert up.shape == x.shape
    # Every maximum lands where it came from; everything else is zero.
    assert np.all((up == x) | (up == 0))
    assert np.count_nonzero(up) == values.size
    np.testing.assert_array_equal(mp.max_pooling_with_argmax_2d(up, p)[0], values)
    # The 4x4 example: maxima back in the bottom-right cell of each 2x2 block.
    x = f32(np.arange(16).reshape(1, 4, 4, 1))
    p = pool(mp.PADDING_VALID, 2, 2, 2, 2)
    up = mp.max_unpooling_2d(*mp.max_pooling_with_argmax_2d(x, p), p)
    want = np.zeros((4, 4))
    want[1::2, 1::2] = [[5, 7], [13, 15]]
    np.testing.assert_array_equal(up[0, :, :, 0], want)


def test_unpool_rules() -> None:
    # The output is H*filter x W*filter even when the stride differs (here stride 1, filter 1x2),
    # indices are truncated (1.9 -> 1) and the later write wins a shared cell.
    p = pool(mp.PADDING_VALID, 1, 1, 2, 1)
    up = mp.max_unpooling_2d(f32([[[[1.0], [2.0]]]]), f32([[[[1.9], [0.1]]]]), p)
    assert up.shape == (1, 1, 4, 1)
    np.testing.assert_array_equal(up[0, 0, :, 0], [0, 2, 0, 0])
    # Stride 2, filter 3 over 2 pixels: output 6, ComputePadding ((2-1)*2 + 3 - 6) / 2 -> 0.
    p = pool(mp.PADDING_SAME, 2, 1, 3, 1)
    up = mp.max_unpooling_2d(f32([[[[5.0], [6.0]]]]), f32([[[[2.1], [1.1]]]]), p)
    np.testing.assert_array_equal(up[0, 0, :, 0], [0, 0, 5, 6, 0, 0])
    with pytest.raises(ValueError, match="outside"):
        mp.max_unpooling_2d(f32([[[[5.0]]]]), f32([[[[7.1]]]]), pool(1, 1, 1, 2, 2))
    with pytest.raises(ValueError, match="differs"):
        mp.max_unpooling_2d(np.zeros((1, 2, 2, 1)), np.zeros((1, 2, 1, 1)), pool(1, 1, 1, 2, 2))


# --- Landmarks2TransformMatrix --------------------------------------------------------------------


def l2tm_params(**changes: Any) -> mp.LandmarksToTransformMatrixParams:
    return mp.decode_landmarks_to_transform_matrix(_flex(L2TM | changes))


def landmarks(points: list[tuple[float, float]]) -> Array:
    return f32([[(x, y, 7.0) for x, y in points]])


def test_l2tm_axis_aligned() -> None:
    # left (0,0) -> right (1,0): no rotation. The subset (2, 3) spans x 2..6, y 1..3: a 4x2 box
    # centred at (4, 2); output 4x2 at scale 1: output pixel (0,0) -> (2,1), (4,2) -> (6,3).
    pts = landmarks([(0, 0), (1, 0), (2, 1), (6, 3)])
    m = mp.landmarks_to_transform_matrix(pts, l2tm_params())
    want = np.eye(4)
    want[0, 3], want[1, 3] = 2, 1
    np.testing.assert_allclose(m[0], want, atol=1e-6)
    # scale 1.5 and 2 grow the box about its centre.
    m = mp.landmarks_to_transform_matrix(pts, l2tm_params(scale_x=1.5, scale_y=2.0))
    np.testing.assert_allclose(m[0] @ [0, 0, 0, 1], [1, 0, 0, 1], atol=1e-6)
    np.testing.assert_allclose(m[0] @ [4, 2, 0, 1], [7, 4, 0, 1], atol=1e-6)


def test_l2tm_rotated() -> None:
    # right is straight below left: the eye line points along +y, so the crop's x axis must too.
    pts = landmarks([(5, 5), (5, 9), (3, 4), (8, 12)])
    m = mp.landmarks_to_transform_matrix(pts, l2tm_params())[0].astype(np.float64)
    x_axis = m[:2, 0] / np.linalg.norm(m[:2, 0])
    np.testing.assert_allclose(x_axis, [0, 1], atol=1e-6)
    # In the rotated frame the subset box is 8 (along y) by 5 (along x), centred at (5.5, 8).
    np.testing.assert_allclose(np.linalg.norm(m[:2, 0]) * 4, 8, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(m[:2, 1]) * 2, 5, atol=1e-5)
    np.testing.assert_allclose(m @ [2, 1, 0, 1], [5.5, 8, 0, 1], atol=1e-5)
    assert m[2, 2] == 1 and m[3, 3] == 1 and np.all(m[2:, :2] == 0)


def test_l2tm_general_box_property() -> None:
    g = rng(6)
    pts = f32(g.uniform(0, 50, (1, 12, 3)))
    p = l2tm_params(
        subset_idxs=[2, 3, 4, 5, 6, 7, 8],
        target_rotation_radians=0.3,
        output_width=16,
        output_height=12,
        scale_x=1.5,
        scale_y=1.25,
    )
    assert isinstance(p, mp.LandmarksToTransformMatrixV2Params)
    m = mp.landmarks_to_transform_matrix(pts, p)[0].astype(np.float64)
    d = pts[0, 1, :2].astype(np.float64) - pts[0, 0, :2]
    r = p.target_rotation_radians - math.atan2(d[1], d[0])
    rot = np.array([[math.cos(r), -math.sin(r)], [math.sin(r), math.cos(r)]])
    subset = (pts[0, 2:9, :2].astype(np.float64)) @ rot.T
    corners = np.array([[0, 0, 0, 1], [16, 0, 0, 1], [0, 12, 0, 1], [16, 12, 0, 1]], float)
    mapped = (corners @ m.T)[:, :2] @ rot.T  # the crop's corners in the rotated frame
    span = mapped.max(axis=0) - mapped.min(axis=0)
    box = subset.max(axis=0) - subset.min(axis=0)
    np.testing.assert_allclose(span, box * [1.5, 1.25], rtol=1e-5)
    centre = (subset.max(axis=0) + subset.min(axis=0)) / 2
    np.testing.assert_allclose(mapped.mean(axis=0), centre, rtol=1e-5, atol=1e-4)


def test_l2tm_version_1_identity() -> None:
    # in/out 3x3, range 2, subset box (0,0)..(2,2): every factor cancels to the identity.
    options = _flex(
        {
            "input_hw": [3, 3],
            "output_hw": [3, 3],
            "dimensions": 3,
            "landmarks_range": 2,
            "bbox_size_multiplier": 1.0,
            "left_rotation_idx": 0,
            "right_rotation_idx": 1,
            "subset": [0, 2],
        }
    )
    pts = f32([[[[0, 0, 0, 1, 0, 0, 2, 2, 0]]]])
    (m,) = mp.evaluate("Landmarks2TransformMatrix", options, [pts], [(1, 4, 4)])
    np.testing.assert_allclose(m[0], np.eye(4), atol=1e-6)


# --- TransformTensorBilinear ----------------------------------------------------------------------


def loop_bilinear(x: Array, mat: Array, oh: int, ow: int, version: int) -> Array:
    h, w, c = x.shape[1:]
    m = mat.reshape(-1).astype(np.float64)
    rows = [m[0:4].copy(), m[4:8].copy()]
    if version == 2:
        for r in rows:
            r[3] += 0.5 * r[0] + 0.5 * r[1] - 0.5
    out = np.zeros((1, oh, ow, c))
    for oy in range(oh):
        for ox in range(ow):
            sx = rows[0][0] * ox + rows[0][1] * oy + rows[0][3]
            sy = rows[1][0] * ox + rows[1][1] * oy + rows[1][3]
            if sx < 0 or sx > w - 1 or sy < 0 or sy > h - 1:
                continue
            x0, y0 = math.floor(sx), math.floor(sy)
            ax, ay = sx - x0, sy - y0

            def px(yy: int, xx: int) -> Array:
                return x[0, yy, xx] if yy < h and xx < w else np.zeros(c)

            top = (1 - ax) * px(y0, x0) + ax * px(y0, x0 + 1)
            bottom = (1 - ax) * px(y0 + 1, x0) + ax * px(y0 + 1, x0 + 1)
            out[0, oy, ox] = (1 - ay) * top + ay * bottom
    return out


def affine(a: float, b: float, tx: float, c: float, d: float, ty: float) -> Array:
    m = np.eye(4, dtype=np.float32)
    m[0, [0, 1, 3]] = a, b, tx
    m[1, [0, 1, 3]] = c, d, ty
    return m[None]


def ttb(x: Array, m: Array, oh: int, ow: int, version: int = 2) -> Array:
    return mp.transform_tensor_bilinear(x, m, mp.TransformTensorBilinearParams(oh, ow, version))


def test_bilinear_identity_and_half_pixel_convention() -> None:
    x = f32(rng(7).standard_normal((1, 5, 4, 3)))
    for version in (1, 2):
        np.testing.assert_array_equal(ttb(x, affine(1, 0, 0, 0, 1, 0), 5, 4, version), x)
    # Scale 2 (a 2x downsample): v2 samples the centre of each 2x2 block (their mean),
    # v1 the block's top-left pixel.
    x = f32(np.arange(16).reshape(1, 4, 4, 1))
    half = affine(2, 0, 0, 0, 2, 0)
    np.testing.assert_allclose(ttb(x, half, 2, 2)[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])
    np.testing.assert_array_equal(ttb(x, half, 2, 2, 1)[0, :, :, 0], [[0, 2], [8, 10]])


def test_bilinear_bounds() -> None:
    x = f32(np.arange(1, 7).reshape(1, 2, 3, 1))  # [[1, 2, 3], [4, 5, 6]]
    # +0.5 in x: neighbours are averaged; the last column's source x = 2.5 > W-1 reads 0.
    out = ttb(x, affine(1, 0, 0.5, 0, 1, 0), 2, 3)
    np.testing.assert_allclose(out[0, :, :, 0], [[1.5, 2.5, 0], [4.5, 5.5, 0]])
    # -1 in y: the first row maps to y = -1: outside, 0 (no clamping to the edge).
    out = ttb(x, affine(1, 0, 0, 0, 1, -1), 2, 3)
    np.testing.assert_array_equal(out[0, :, :, 0], [[0, 0, 0], [1, 2, 3]])
    # Exactly on the last column and row is inside (v1: no pixel-centre shift of the matrix).
    assert ttb(x, affine(0, 0, 2, 0, 0, 1), 1, 1, 1).item() == 6.0
    # v2 shifts translation by 0.5 * (a + b) - 0.5: with a zero scale the point moves by -0.5.
    assert ttb(x, affine(0, 0, 2, 0, 0, 1), 1, 1, 2).item() == (2 + 3 + 5 + 6) / 4
    with pytest.raises(ValueError, match="batch 0"):
        ttb(np.zeros((2, 2, 2, 1)), affine(1, 0, 0, 0, 1, 0), 1, 1)


@pytest.mark.parametrize("version", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bilinear_against_loop(version: int, seed: int) -> None:
    g = rng(seed)
    x = f32(g.standard_normal((1, 9, 7, 4)))
    angle = g.uniform(-1, 1)
    s = g.uniform(0.5, 1.5)
    m = affine(
        s * math.cos(angle), -s * math.sin(angle), g.uniform(0, 3),
        s * math.sin(angle), s * math.cos(angle), g.uniform(0, 3),
    )  # fmt: skip
    got = ttb(x, m, 6, 5, version)
    np.testing.assert_allclose(got, loop_bilinear(x, m, 6, 5, version), rtol=1e-5, atol=1e-5)


# --- TransformLandmarks ---------------------------------------------------------------------------


def test_transform_landmarks() -> None:
    pts = f32([[[1, 2], [3, -1], [0, 0]]])
    m = affine(2, 1, 10, -1, 3, 20)
    m[0, 0, 2] = m[0, 1, 2] = 99  # the z column never matters
    (out,) = mp.evaluate("TransformLandmarks", b"", [pts, m], [(1, 3, 2)])
    np.testing.assert_array_equal(out, [[[14, 25], [15, 14], [10, 20]]])
    pts3 = f32([[[1, 2, 5], [3, -1, -7]]])
    (out3,) = mp.evaluate("TransformLandmarks", b"", [pts3, m])
    np.testing.assert_array_equal(out3, [[[14, 25, 5], [15, 14, -7]]])
    np.testing.assert_array_equal(
        mp.evaluate("TransformLandmarks", b"", [pts3, affine(1, 0, 0, 0, 1, 0)])[0], pts3
    )


def test_transform_landmarks_version_1() -> None:
    # [1, 1, 1, 6] holds two 3D landmarks; v1 scales the translation.
    pts = f32([[[[1, 2, 5, 3, -1, -7]]]])
    options = _flex({"dimensions": 3, "scale": 0.5})
    (out,) = mp.evaluate("TransformLandmarks", options, [pts, affine(2, 1, 10, -1, 3, 20)])
    np.testing.assert_array_equal(out, [[[[9, 15, 5, 10, 4, -7]]]])


def test_evaluate_checks_shapes_and_names() -> None:
    with pytest.raises(ValueError, match="must be"):
        mp.evaluate("TransformLandmarks", b"", [np.zeros((1, 3, 2)), np.eye(4)[None]], [(1, 3, 3)])
    with pytest.raises(ValueError, match="no oracle"):
        mp.evaluate("Resampler", b"", [])
