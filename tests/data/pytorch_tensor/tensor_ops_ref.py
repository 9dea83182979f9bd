"""The eager implementation of tensor_ops::affine (docs/pytorch.md)."""

import numpy as np


def affine(x, scale=2.0):
    return (x.astype(np.float64) * scale).astype(x.dtype)
