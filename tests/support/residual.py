"""A small FP32 residual conv block (two CONV2D, a skip ADD, CLAMP as ReLU), the shape of
ExecuTorch's ``test_residual_conv_block``: the VGF size and operator-count tests share it."""

from __future__ import annotations

import numpy as np
import tosa.DType as fb_dtype
from tosa_factory import Op, T, build

RESIDUAL_OPS = {"CONV2D": 2, "CLAMP": 2, "ADD": 1}
"""The TOSA operators :func:`residual_block` holds, CONST aside."""

C = 4
RELU = {
    "min_val": np.float32(0).tobytes(),
    "max_val": np.float32(np.inf).tobytes(),
    "nan_mode": 1,
}


def _conv(i: int, x: str, y: str) -> list[Op]:
    fields = {
        "pad": [1, 1, 1, 1],
        "stride": [1, 1],
        "dilation": [1, 1],
        "local_bound": False,
        "acc_type": fb_dtype.DType.FP32,
    }
    return [
        Op("CONST", [], [f"w{i}"]),
        Op("CONST", [], [f"b{i}"]),
        Op("CONV2D", [x, f"w{i}", f"b{i}", "zp", "zp"], [y], "Conv2dAttribute", fields),
    ]


def residual_block() -> bytes:
    """y = relu(x + conv1(relu(conv0(x)))) on a 1x8x8x4 FP32 input."""
    rng = np.random.default_rng(0)
    tensors = [T("x", (1, 8, 8, C)), T("zp", (1,), "FP32", np.zeros(1, np.float32))]
    for i in range(2):
        w = rng.standard_normal((C, 3, 3, C)).astype(np.float32)
        tensors += [T(f"w{i}", (C, 3, 3, C), "FP32", w)]
        tensors += [T(f"b{i}", (C,), "FP32", rng.standard_normal(C).astype(np.float32))]
    tensors += [T(n, (1, 8, 8, C)) for n in ("c0", "r0", "c1", "s", "y")]
    ops = [
        Op("CONST", [], ["zp"]),
        *_conv(0, "x", "c0"),
        Op("CLAMP", ["c0"], ["r0"], "ClampAttribute", RELU),
        *_conv(1, "r0", "c1"),
        Op("ADD", ["x", "c1"], ["s"]),
        Op("CLAMP", ["s"], ["y"], "ClampAttribute", RELU),
    ]
    return build(tensors, ops, ["x"], ["y"])
