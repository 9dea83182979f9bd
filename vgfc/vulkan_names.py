"""Vulkan enum names and values: formats, descriptor types, filters, address modes, border colours.

The tables come from the VGF library (``ai-ml-sdk-vgf-library``), whose C++ helper header is
generated from the Vulkan headers and lists the name -> value mapping its own encoder uses. Reading
it keeps vgfc in step with the VGF tools instead of carrying a hand-typed copy of the registry.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from vgfc.diagnostics import InternalError
from vgfc.record import record

__all__ = [
    "FormatInfo",
    "border_colors",
    "descriptor_types",
    "filters",
    "format_info",
    "formats",
    "sampler_address_modes",
]

_HEADER = "vulkan_helpers.generated.hpp"
_FUNCTION = re.compile(r"NameTo(\w+)Type\(const std::string &str\) \{(.*?)\n\}", re.S)
_ENTRY = re.compile(r'if \(str == "(VK_\w+)"\) \{\s*return (-?\d+);')


def _header() -> Path:
    """The VGF library's generated header: beside its ``vgfpy`` module where pip puts it, else
    wherever the distribution's file list says (importlib.metadata costs 10 ms to import)."""
    from importlib.util import find_spec

    spec = find_spec("vgfpy")
    if spec is not None and spec.origin:
        beside = Path(spec.origin).parent / "vgf_lib" / "binaries" / "include" / "vgf" / _HEADER
        if beside.is_file():
            return beside
    from importlib import metadata

    try:
        dist = metadata.distribution("ai-ml-sdk-vgf-library")
    except metadata.PackageNotFoundError:
        raise InternalError(
            "the VGF library is not installed: pip install ai-ml-sdk-vgf-library"
        ) from None
    header = next((f for f in dist.files or () if f.name == _HEADER), None)
    if header is None:
        raise InternalError(f"the VGF library installation lacks {_HEADER}")
    return Path(header.locate())


@cache
def _tables() -> dict[str, dict[str, int]]:
    text = _header().read_text(encoding="utf-8")
    tables = {
        kind: {name: int(value) for name, value in _ENTRY.findall(body)}
        for kind, body in _FUNCTION.findall(text)
    }
    for kind in tables.values():
        for name in [n for n in kind if n.endswith("_MAX_ENUM")]:
            del kind[name]
    return tables


def formats() -> dict[str, int]:
    """``VK_FORMAT_*`` name -> VkFormat value."""
    return _tables()["Format"]


def descriptor_types() -> dict[str, int]:
    """``VK_DESCRIPTOR_TYPE_*`` name -> VkDescriptorType value."""
    return _tables()["Descriptor"]


def filters() -> dict[str, int]:
    """``VK_FILTER_*`` name -> VkFilter value."""
    return _tables()["Filter"]


def sampler_address_modes() -> dict[str, int]:
    """``VK_SAMPLER_ADDRESS_MODE_*`` name -> VkSamplerAddressMode value."""
    return _tables()["SamplerAddressMode"]


def border_colors() -> dict[str, int]:
    """``VK_BORDER_COLOR_*`` name -> VkBorderColor value."""
    return _tables()["BorderColor"]


@record
class FormatInfo:
    """What a plain colour format holds per texel."""

    components: int
    """Number of channels (1 for R, 4 for RGBA)."""
    bits: int
    """Bits per channel (all channels of the formats vgfc accepts have the same width)."""
    numeric: str
    """``SFLOAT``, ``SINT``, ``UINT``, ``UNORM``, ``SNORM``, ``BOOL`` or ``BFLOAT16`` ..."""


_PLAIN = re.compile(r"VK_FORMAT_((?:[RGBA]\d+)+)_([A-Z]+)$")
_ARM = {
    "VK_FORMAT_R8_BOOL_ARM": FormatInfo(1, 8, "BOOL"),
    "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM": FormatInfo(1, 16, "BFLOAT16"),
    "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E4M3_ARM": FormatInfo(1, 8, "FLOAT8E4M3"),
    "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E5M2_ARM": FormatInfo(1, 8, "FLOAT8E5M2"),
}


def format_info(name: str) -> FormatInfo | None:
    """Channels, width and numeric type of a format; ``None`` for packed, compressed, depth or
    multi-planar formats and mixed channel widths, which no tensor can describe."""
    if name in _ARM:
        return _ARM[name]
    match = _PLAIN.match(name)
    if match is None:
        return None
    widths = [int(w) for w in re.findall(r"\d+", match.group(1))]
    if len(set(widths)) != 1:
        return None
    return FormatInfo(len(widths), widths[0], match.group(2))
