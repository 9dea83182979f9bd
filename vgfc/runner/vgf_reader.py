"""Read what running a VGF file needs: its model sequence, resources, segments and modules.

Decoding goes through ``vgfpy``, the VGF library's own Python binding, so vgfc reads files
exactly as the runtimes do.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from vgfc.diagnostics import InputError
from vgfc.runner.formats import ElementFormat, element_format

__all__ = ["Interface", "Module", "Resource", "Sampler", "Segment", "VgfModel", "read_vgf"]


@cache
def _vgfpy() -> Any:
    # vgfpy is a compiled extension without type stubs; importing it by name keeps mypy's view
    # of it as Any in one place.
    return importlib.import_module("vgfpy")


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
    vgf = _vgfpy()
    view = memoryview(data)
    header = (
        vgf.CreateHeaderDecoder(data, vgf.HeaderSize(), len(data))
        if len(data) >= vgf.HeaderSize()
        else None
    )
    if header is None or not header.IsValid():
        raise InputError("not a VGF file (bad header)")
    if not header.CheckVersion():
        raise InputError(
            f"unsupported VGF format version {header.GetMajor()}.{header.GetMinor()}"
            f".{header.GetPatch()}"
        )

    def section(create: Any, offset: int, size: int, what: str) -> Any:
        if offset + size > len(data):
            raise InputError(f"truncated VGF file: the {what} ends past the end of the file")
        decoder = create(view[offset : offset + size], size)
        if decoder is None:
            raise InputError(f"corrupt VGF file: cannot decode the {what}")
        return decoder

    modules_dec = section(
        vgf.CreateModuleTableDecoder,
        header.GetModuleTableOffset(),
        header.GetModuleTableSize(),
        "module table",
    )
    sequence = section(
        vgf.CreateModelSequenceTableDecoder,
        header.GetModelSequenceTableOffset(),
        header.GetModelSequenceTableSize(),
        "model sequence table",
    )
    table = section(
        vgf.CreateModelResourceTableDecoder,
        header.GetModelResourceTableOffset(),
        header.GetModelResourceTableSize(),
        "model resource table",
    )

    resources = tuple(_resource(table, i) for i in range(table.size()))
    modules = [_module(vgf, modules_dec, i) for i in range(modules_dec.size())]

    def interfaces(slots: Any, names: Any, prefix: str) -> tuple[Interface, ...]:
        found = []
        for i in range(sequence.getBindingsSize(slots)):
            mrt = sequence.getBindingSlotMrtIndex(slots, i)
            if mrt >= len(resources):
                raise InputError(f"corrupt VGF file: {prefix} {i} refers to resource {mrt}")
            name = sequence.getName(names, i) if i < sequence.getNamesSize(names) else ""
            binding = sequence.getBindingSlotBinding(slots, i)
            found.append(Interface(i, name or f"{prefix}_{i}", binding, resources[mrt]))
        return tuple(found)

    segments = []
    for i in range(sequence.modelSequenceTableSize()):
        module_index = sequence.getSegmentModuleIndex(i)
        if module_index >= len(modules):
            raise InputError(f"corrupt VGF file: segment {i} refers to module {module_index}")
        ranges = sequence.getSegmentPushConstRange(i)
        push = max(
            (
                sequence.getPushConstRangeOffset(ranges, r)
                + sequence.getPushConstRangeSize(ranges, r)
                for r in range(sequence.getPushConstRangesSize(ranges))
            ),
            default=0,
        )
        kind = "compute" if sequence.getSegmentType(i) == vgf.ModuleType.Compute else "graph"
        segments.append(
            Segment(
                i,
                sequence.getSegmentName(i) or f"segment_{i}",
                kind,
                modules[module_index],
                tuple(int(d) for d in sequence.getSegmentDispatchShape(i)),
                push,
            )
        )

    return VgfModel(
        path=path,
        version=f"{header.GetMajor()}.{header.GetMinor()}.{header.GetPatch()}",
        inputs=interfaces(
            sequence.getModelSequenceInputBindingSlotsHandle(),
            sequence.getModelSequenceInputNamesHandle(),
            "input",
        ),
        outputs=interfaces(
            sequence.getModelSequenceOutputBindingSlotsHandle(),
            sequence.getModelSequenceOutputNamesHandle(),
            "output",
        ),
        segments=tuple(segments),
        resources=resources,
    )


def _resource(table: Any, index: int) -> Resource:
    handle = table.getSamplerConfigHandle(index)
    sampler = None
    if handle is not None:
        sampler = Sampler(
            table.getSamplerConfigMinFilter(handle),
            table.getSamplerConfigMagFilter(handle),
            table.getSamplerConfigAddressModeU(handle),
            table.getSamplerConfigAddressModeV(handle),
            table.getSamplerConfigBorderColor(handle),
        )
    return Resource(
        index=index,
        category=str(table.getCategory(index).name).lower(),
        descriptor_type=table.getDescriptorType(index),
        format=int(table.getVkFormat(index)),
        shape=tuple(int(d) for d in table.getTensorShape(index)),
        sampler=sampler,
    )


def _module(vgf: Any, table: Any, index: int) -> Module:
    spirv: bytes | None = None
    source: str | None = None
    if table.hasSPIRVCode(index):
        code = "spirv"
        spirv = bytes(table.getSPIRVModuleCode(index))
    elif table.hasGLSLCode(index):
        code, source = "glsl", str(table.getGLSLModuleCode(index))
    elif table.hasHLSLCode(index):
        code, source = "hlsl", str(table.getHLSLModuleCode(index))
    else:
        code = "none"
    kind = "compute" if table.getModuleType(index) == vgf.ModuleType.Compute else "graph"
    return Module(
        index=index,
        name=str(table.getModuleName(index)),
        kind=kind,
        entry_point=str(table.getModuleEntryPoint(index)),
        code=code,
        spirv=spirv,
        source=source,
    )
