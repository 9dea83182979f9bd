"""VkFormat values of VGF resources as numpy element types.

The scenario runner moves raw little-endian bytes in and out; the format decides how vgfc writes
inputs and views outputs. Formats numpy has no type for (bfloat16, the float8 encodings) travel
as their raw bits (uint16, uint8); normalised formats as their stored integers.
"""

from __future__ import annotations

import numpy as np

from vgfc import vulkan_names
from vgfc.diagnostics import UnsupportedError
from vgfc.record import record

__all__ = ["ElementFormat", "element_format"]

# (numeric kind, bits per channel) -> numpy type of one channel.
_NUMPY: dict[tuple[str, int], str] = {
    ("SFLOAT", 16): "float16",
    ("SFLOAT", 32): "float32",
    ("SFLOAT", 64): "float64",
    ("SINT", 8): "int8",
    ("SINT", 16): "int16",
    ("SINT", 32): "int32",
    ("SINT", 64): "int64",
    ("UINT", 8): "uint8",
    ("UINT", 16): "uint16",
    ("UINT", 32): "uint32",
    ("UINT", 64): "uint64",
    ("BOOL", 8): "bool",
    ("UNORM", 8): "uint8",
    ("UNORM", 16): "uint16",
    ("SNORM", 8): "int8",
    ("SNORM", 16): "int16",
    ("BFLOAT16", 16): "uint16",
    ("FLOAT8E4M3", 8): "uint8",
    ("FLOAT8E5M2", 8): "uint8",
}


@record
class ElementFormat:
    """How one texel or element of a resource is stored."""

    name: str
    """``VK_FORMAT_*`` name."""
    dtype: np.dtype[np.generic]
    """numpy type of one channel."""
    components: int
    """Channels per texel: 1 for tensors and buffers, up to 4 for images."""


def element_format(name: str) -> ElementFormat:
    """The element format of a ``VK_FORMAT_*`` name, or :class:`UnsupportedError` when numpy
    cannot hold it (packed, compressed, depth formats)."""
    info = vulkan_names.format_info(name)
    dtype = None if info is None else _NUMPY.get((info.numeric, info.bits))
    if info is None or dtype is None:
        raise UnsupportedError(f"{name} has no numpy element type")
    return ElementFormat(name, np.dtype(dtype), info.components)
