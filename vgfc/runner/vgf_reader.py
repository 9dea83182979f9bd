"""What running a VGF file needs: its model sequence, resources, segments and modules' code.

A view over :mod:`vgfc.vgf_reader` (which decodes through ``vgfpy``, the VGF library's own
binding, so vgfc reads files exactly as the runtimes do).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vgfc.diagnostics import InputError
from vgfc.runner.formats import ElementFormat, element_format
from vgfc.vgf_reader import BindingSlot, decode, module_code
from vgfc.vulkan_names import (
    border_colors,
    descriptor_types,
    filters,
    formats,
    sampler_address_modes,
)

__all__ = ["Interface", "Module", "Resource", "Sampler", "Segment", "VgfModel", "read_vgf"]


@dataclass(frozen=True, slots=True)
class Sampler:
    """Sampler state of a combined image sampler, as Vulkan enum values."""

    min_filter: int
    mag_filter: int
    address_mode_u: int
    address_mode_v: int
    border_color: int


@dataclass(frozen=True, slots=True)
class Resource:
    """One entry of the model resource table."""

    index: int
    category: str
    """``input``, ``output``, ``intermediate`` or ``constant``."""
    descriptor_type: int | None
    format: int
    shape: tuple[int, ...]
    sampler: Sampler | None

    @property
    def element(self) -> ElementFormat:
        """The element format (raises when numpy cannot hold it)."""
        return element_format(self.format)


@dataclass(frozen=True, slots=True)
class Interface:
    """An input or output of the model sequence."""

    index: int
    name: str
    """The name the VGF gives it, or ``input_<i>`` / ``output_<i>`` when it has none."""
    binding: int
    """The binding id a runtime binds the value to."""
    resource: Resource


@dataclass(frozen=True, slots=True)
class Module:
    """One entry of the module table."""

    index: int
    name: str
    kind: str
    """``graph`` or ``compute``."""
    entry_point: str
    code: str
    """``spirv``, ``glsl``, ``hlsl``, or ``none`` for a placeholder without code."""
    spirv: bytes | None
    source: str | None


@dataclass(frozen=True, slots=True)
class Segment:
    """One entry of the model sequence."""

    index: int
    name: str
    kind: str
    """``graph`` or ``compute``."""
    module: Module
    dispatch: tuple[int, ...]
    push_constant_size: int
    """Bytes of push constants the segment declares (end of its last range), 0 for none."""


@dataclass(frozen=True, slots=True)
class VgfModel:
    """The parts of a VGF file that running it needs."""

    path: Path
    version: str
    inputs: tuple[Interface, ...]
    outputs: tuple[Interface, ...]
    segments: tuple[Segment, ...]
    resources: tuple[Resource, ...]


def read_vgf(path: Path) -> VgfModel:
    """Decode ``path``; a file that is not a valid VGF raises :class:`InputError`."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read VGF file: {e.strerror}", file=str(path)) from None
    try:
        return _decode(path, data)
    except InputError as e:
        raise e.at(file=str(path)) from None


def _decode(path: Path, data: bytes) -> VgfModel:
    # The container is decoded once, by vgfc.vgf_reader; this is the runner's view of it, with
    # Vulkan enums as values and module code attached.
    f = decode(data)
    resources = tuple(
        Resource(
            index=r.index,
            category=r.category.lower(),
            descriptor_type=None
            if r.descriptor_type is None
            else descriptor_types()[r.descriptor_type],
            format=formats()[r.format],
            shape=r.shape,
            sampler=None
            if r.sampler is None
            else Sampler(
                filters()[r.sampler.min_filter],
                filters()[r.sampler.mag_filter],
                sampler_address_modes()[r.sampler.address_mode_u],
                sampler_address_modes()[r.sampler.address_mode_v],
                border_colors()[r.sampler.border_color],
            ),
        )
        for r in f.resources
    )
    modules = []
    for m in f.modules:
        code = module_code(data, m.index)
        modules.append(
            Module(
                index=m.index,
                name=m.name,
                kind=m.type.lower(),
                entry_point=m.entry_point,
                code={"SPIR-V": "spirv", "GLSL": "glsl", "HLSL": "hlsl"}.get(m.code, "none"),
                spirv=code if isinstance(code, bytes) else None,
                source=code if isinstance(code, str) else None,
            )
        )

    def interfaces(
        named: tuple[tuple[str, BindingSlot], ...], prefix: str
    ) -> tuple[Interface, ...]:
        return tuple(
            Interface(i, name or f"{prefix}_{i}", slot.binding, resources[slot.resource])
            for i, (name, slot) in enumerate(named)
        )

    segments = tuple(
        Segment(
            s.index,
            s.name or f"segment_{s.index}",
            s.type.lower(),
            modules[s.module],
            s.dispatch_shape,
            max((r.offset + r.size for r in s.push_constant_ranges), default=0),
        )
        for s in f.segments
    )
    return VgfModel(
        path=path,
        version=f.version,
        inputs=interfaces(f.inputs, "input"),
        outputs=interfaces(f.outputs, "output"),
        segments=segments,
        resources=resources,
    )
