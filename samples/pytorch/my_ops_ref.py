"""What the two operators of my_ops.yaml compute, in numpy, written apart from their shaders.

These references are the ops' eager PyTorch implementations (``vgfc.executorch``) and the
independent oracle ``vgfc verify`` holds the shaders to. Each takes the op's inputs as numpy
arrays, in order, and its parameters as keyword arguments, and returns the output.
"""

from __future__ import annotations

import numpy as np


def swish(x: np.ndarray, beta: float = 1.0) -> np.ndarray:
    """``x * sigmoid(beta * x)``."""
    x64 = x.astype(np.float64)
    return (x64 / (1.0 + np.exp(-beta * x64))).astype(x.dtype)


def upsample2x(x: np.ndarray) -> np.ndarray:
    """Bilinear 2x upscale of an NCHW tensor, sampling at pixel centres and clamping at the
    edges (``torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear",
    align_corners=False)``)."""
    n, c, h, w = x.shape
    x64 = x.astype(np.float64)

    def axis(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # Destination pixel i lies at (i + 0.5) / 2 - 0.5 in source pixels.
        pos = np.clip((np.arange(2 * size) + 0.5) / 2 - 0.5, 0, size - 1)
        low = np.floor(pos).astype(np.int64)
        high = np.minimum(low + 1, size - 1)
        return low, high, pos - low

    y0, y1, fy = axis(h)
    x0, x1, fx = axis(w)
    top = x64[:, :, y0, :] * (1 - fy)[:, None] + x64[:, :, y1, :] * fy[:, None]
    out = top[:, :, :, x0] * (1 - fx) + top[:, :, :, x1] * fx
    assert out.shape == (n, c, 2 * h, 2 * w)
    return out.astype(x.dtype)
