"""The resource layout contract between a TOSA tensor and the shader resource that views it.

Seed 000: tensor and buffer resources are dense and scalar (channels stay in the shape, the format
is the element format); image resources are packed texels, logical shape ``[H, W, C]`` or
``[1, H, W, C]`` with the C channels packed into the format (C in 1, 2, 4 and equal to the format's
component count). Nothing repacks data at run time, so a mismatch here computes garbage silently
on the device: vgfc refuses it at build time.
"""

from __future__ import annotations

import functools

from vgfc.diagnostics import InputError, Location
from vgfc.dtypes import shader_formats
from vgfc.ir import Graph, Operator, ShaderResource, ShaderSpec
from vgfc.vulkan_names import FormatInfo, format_info

__all__ = ["check_contract"]

# An image may also view integers through normalized or scaled formats: the shader reads the
# same bits, converted on load.
_NORMALIZED = frozenset({"SNORM", "UNORM", "SSCALED", "USCALED"})
_IMAGE_CHANNELS = (1, 2, 4)


@functools.lru_cache(maxsize=512)
def _format_info(name: str) -> FormatInfo | None:
    """:func:`format_info`, worked out once per format name (parsing the name with regular
    expressions costs more than the rest of a resource's check; a model uses a few names)."""
    return format_info(name)


def check_contract(spec: ShaderSpec, op: Operator, graph: Graph) -> None:
    """Raise :class:`InputError` for the first resource that breaks the layout contract."""
    for resource in spec.resources:
        _check(resource, op, graph)


def _at(r: ShaderResource, field: str, op: Operator, graph: Graph) -> Location:
    """``op``'s location narrowed to ``r``'s key ``field`` and its tensor: made only for an
    error, as most ops have none."""
    return Location(key=f"{r.key}_{field}", tensor=r.tensor).merged(op.where(graph.source))


def _check(r: ShaderResource, op: Operator, graph: Graph) -> None:
    tensor = graph.tensors[r.tensor]
    info = _format_info(r.format)
    if info is None:
        raise InputError(
            f"{r.format} is a packed, compressed or planar format; shader tensors need a plain "
            "format with equal-width channels",
            _at(r, "vkformat", op, graph),
        )
    expected = shader_formats(tensor.dtype)
    if expected is None:
        raise InputError(
            f"{tensor.dtype.value} tensors cannot be bound to a shader",
            _at(r, "vkformat", op, graph),
        )
    bits, numerics = expected.bits, expected.numerics
    if r.is_image:
        numerics = numerics | (_NORMALIZED if tensor.dtype.value.startswith("INT") else numerics)
    if info.bits != bits or info.numeric not in numerics:
        raise InputError(
            f"{r.format} does not hold {tensor.dtype.value} elements "
            f"({bits}-bit {'/'.join(sorted(numerics))} expected)",
            _at(r, "vkformat", op, graph),
        )
    if not r.is_image:
        if info.components != 1:
            raise InputError(
                f"{r.format} packs {info.components} channels, but a "
                f"{r.descriptor_type.removeprefix('VK_DESCRIPTOR_TYPE_').lower()} resource is "
                "scalar: use the element format (channels stay in the shape)",
                _at(r, "vkformat", op, graph),
            )
        return
    _check_image_shape(r, tensor.shape, info.components, op.where(graph.source))


def _check_image_shape(
    r: ShaderResource, shape: tuple[int, ...] | None, components: int, where: Location
) -> None:
    at = Location(key=f"{r.key}_vkdescriptortype", tensor=r.tensor).merged(where)
    if shape is None or len(shape) not in (3, 4):
        dims = "unranked" if shape is None else f"rank {len(shape)}"
        raise InputError(f"an image needs shape [H, W, C] or [1, H, W, C], got {dims}", at)
    if len(shape) == 4 and shape[0] != 1:
        raise InputError(f"an image of shape {list(shape)} must have batch N = 1", at)
    channels = shape[-1]
    if channels == 3:
        raise InputError(
            f"an image cannot have 3 channels (shape {list(shape)}): pad to 4 channels before "
            "the custom op, or bind it as a buffer or tensor",
            at,
        )
    if channels not in _IMAGE_CHANNELS:
        raise InputError(
            f"an image packs 1, 2 or 4 channels into its format, shape {list(shape)} has "
            f"{channels}: bind it as a buffer or tensor",
            at,
        )
    if channels != components:
        wanted = _with_channels(r.format, channels)
        fix = f": use {wanted}" if wanted else ""
        raise InputError(
            f"{r.format} has {components} component{'s' if components > 1 else ''}, the image "
            f"has C = {channels} (shape {list(shape)}): they must be equal{fix}",
            Location(key=f"{r.key}_vkformat").merged(at),
        )


def _with_channels(name: str, channels: int) -> str | None:
    """The format like ``name`` with ``channels`` components (VK_FORMAT_R32_SFLOAT, 4 ->
    VK_FORMAT_R32G32B32A32_SFLOAT), when Vulkan has one."""
    from vgfc.vulkan_names import formats

    info = _format_info(name)
    if info is None:
        return None
    wanted = (
        "VK_FORMAT_" + "".join(f"{c}{info.bits}" for c in "RGBA"[:channels]) + f"_{info.numeric}"
    )
    return wanted if wanted in formats() else None
