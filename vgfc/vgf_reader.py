"""VGF bytes -> plain dataclasses, through the official ``vgfpy`` decoders.

Used by ``vgfc inspect``, by the runner, and by tests that compare vgfc's files with the
reference converter's. Reads any VGF the library reads, not only vgfc's own.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import vgfpy

from vgfc.diagnostics import InputError
from vgfc.vulkan_names import (
    border_colors,
    descriptor_types,
    filters,
    formats,
    sampler_address_modes,
)

__all__ = ["VgfFile", "decode", "read_vgf"]


@dataclass(frozen=True, slots=True)
class BindingSlot:
    binding: int
    resource: int


@dataclass(frozen=True, slots=True)
class DescriptorSetInfo:
    set: int
    bindings: tuple[BindingSlot, ...]


@dataclass(frozen=True, slots=True)
class PushConstantRange:
    stage_flags: int
    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class ModuleInfo:
    index: int
    type: str
    """``GRAPH`` or ``COMPUTE``."""
    name: str
    entry_point: str
    code: str
    """``SPIR-V``, ``GLSL``, ``HLSL`` or ``none`` (a placeholder)."""
    code_size: int
    """Bytes of SPIR-V or characters of source."""


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    index: int
    type: str
    name: str
    module: int
    descriptor_sets: tuple[DescriptorSetInfo, ...]
    inputs: tuple[BindingSlot, ...]
    outputs: tuple[BindingSlot, ...]
    constants: tuple[int, ...]
    constant_bindings: tuple[tuple[int, int], ...]
    """(graph constant id, constant index)."""
    dispatch_shape: tuple[int, int, int]
    push_constant_ranges: tuple[PushConstantRange, ...]


@dataclass(frozen=True, slots=True)
class SamplerInfo:
    min_filter: str
    mag_filter: str
    address_mode_u: str
    address_mode_v: str
    border_color: str


@dataclass(frozen=True, slots=True)
class ResourceInfo:
    index: int
    category: str
    """``INPUT``, ``OUTPUT``, ``INTERMEDIATE`` or ``CONSTANT``."""
    descriptor_type: str | None
    format: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    alias_group: int | None
    sampler: SamplerInfo | None


@dataclass(frozen=True, slots=True)
class ConstantInfo:
    index: int
    resource: int
    size: int
    sparsity_dimension: int


@dataclass(frozen=True, slots=True)
class VgfFile:
    """Everything a VGF file declares (constant and module payloads are read on request)."""

    version: str
    vk_header_version: int
    modules: tuple[ModuleInfo, ...]
    segments: tuple[SegmentInfo, ...]
    resources: tuple[ResourceInfo, ...]
    constants: tuple[ConstantInfo, ...]
    inputs: tuple[tuple[str, BindingSlot], ...]
    outputs: tuple[tuple[str, BindingSlot], ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@cache
def _names(kind: str) -> dict[int, str]:
    table = {
        "format": formats,
        "descriptor": descriptor_types,
        "filter": filters,
        "address": sampler_address_modes,
        "border": border_colors,
    }[kind]()
    names: dict[int, str] = {}
    for name, value in table.items():
        names.setdefault(value, name)
    return names


def _name(kind: str, value: int) -> str:
    return _names(kind).get(value, str(value))


def read_vgf(path: str | os.PathLike[str]) -> VgfFile:
    """Read and decode a VGF file; malformed input raises :class:`InputError`."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=name) from None
    return decode(data, name)


def decode(data: bytes, source: str | None = None) -> VgfFile:
    """Decode VGF bytes held in memory."""
    header_size = vgfpy.HeaderSize()
    if len(data) < header_size:
        raise InputError(f"{len(data)} bytes is too short for a VGF file", file=source)
    header = vgfpy.CreateHeaderDecoder(data, header_size, len(data))
    if header is None or not header.IsValid():
        raise InputError("not a VGF file (bad header)", file=source)
    if not header.CheckVersion():
        raise InputError(
            f"unsupported VGF version {header.GetMajor()}.{header.GetMinor()}", file=source
        )

    def section(offset: int, size: int) -> bytes:
        if offset + size > len(data):
            raise InputError("truncated VGF file: a section lies beyond its end", file=source)
        return data[offset : offset + size]

    mt = header.GetModuleTableSize()
    modules = vgfpy.CreateModuleTableDecoder(section(header.GetModuleTableOffset(), mt), mt)
    st = header.GetModelSequenceTableSize()
    seq = vgfpy.CreateModelSequenceTableDecoder(
        section(header.GetModelSequenceTableOffset(), st), st
    )
    rt = header.GetModelResourceTableSize()
    res = vgfpy.CreateModelResourceTableDecoder(
        section(header.GetModelResourceTableOffset(), rt), rt
    )
    ct = header.GetConstantsSize()
    consts = vgfpy.CreateConstantDecoder(section(header.GetConstantsOffset(), ct), ct)
    if None in (modules, seq, res, consts):
        raise InputError("malformed VGF file: a section does not decode", file=source)
    f = VgfFile(
        version=f"{header.GetMajor()}.{header.GetMinor()}.{header.GetPatch()}",
        vk_header_version=header.GetEncoderVulkanHeadersVersion(),
        modules=tuple(_module(modules, i) for i in range(modules.size())),
        segments=tuple(_segment(seq, i) for i in range(seq.modelSequenceTableSize())),
        resources=tuple(_resource(res, i) for i in range(res.size())),
        constants=tuple(
            ConstantInfo(
                i,
                consts.getConstantMrtIndex(i),
                len(bytes(consts.getConstant(i))),
                consts.getConstantSparsityDimension(i),
            )
            for i in range(consts.size())
        ),
        inputs=_named_slots(
            seq,
            seq.getModelSequenceInputNamesHandle(),
            seq.getModelSequenceInputBindingSlotsHandle(),
        ),
        outputs=_named_slots(
            seq,
            seq.getModelSequenceOutputNamesHandle(),
            seq.getModelSequenceOutputBindingSlotsHandle(),
        ),
    )
    _check_references(f, source)
    return f


def _check_references(f: VgfFile, source: str | None) -> None:
    """Every index a table holds must point inside the table it refers to."""
    slots = [s for _, s in (*f.inputs, *f.outputs)]
    for seg in f.segments:
        if seg.module >= len(f.modules):
            raise InputError(
                f"corrupt VGF file: segment {seg.index} refers to module {seg.module}", file=source
            )
        slots += [*seg.inputs, *seg.outputs, *(b for d in seg.descriptor_sets for b in d.bindings)]
    for slot in slots:
        if slot.resource >= len(f.resources):
            raise InputError(
                f"corrupt VGF file: a binding slot refers to resource {slot.resource}", file=source
            )


def module_code(data: bytes, index: int) -> bytes | str | None:
    """The SPIR-V binary or the source text of module ``index``."""
    header = vgfpy.CreateHeaderDecoder(data, vgfpy.HeaderSize(), len(data))
    size = header.GetModuleTableSize()
    offset = header.GetModuleTableOffset()
    modules = vgfpy.CreateModuleTableDecoder(data[offset : offset + size], size)
    if modules.hasSPIRVCode(index):
        return bytes(modules.getSPIRVModuleCode(index))
    if modules.isGLSL(index):
        return str(modules.getGLSLModuleCode(index))
    if modules.isHLSL(index):
        return str(modules.getHLSLModuleCode(index))
    return None


def _module(dec: Any, i: int) -> ModuleInfo:
    if dec.hasSPIRVCode(i):
        code, size = "SPIR-V", len(bytes(dec.getSPIRVModuleCode(i)))
    elif dec.isGLSL(i):
        code, size = "GLSL", len(dec.getGLSLModuleCode(i))
    elif dec.isHLSL(i):
        code, size = "HLSL", len(dec.getHLSLModuleCode(i))
    else:
        code, size = "none", 0
    kind = "GRAPH" if dec.getModuleType(i) == vgfpy.ModuleType.Graph else "COMPUTE"
    return ModuleInfo(i, kind, dec.getModuleName(i), dec.getModuleEntryPoint(i), code, size)


def _slots(seq: Any, handle: Any) -> tuple[BindingSlot, ...]:
    return tuple(
        BindingSlot(seq.getBindingSlotBinding(handle, j), seq.getBindingSlotMrtIndex(handle, j))
        for j in range(seq.getBindingsSize(handle))
    )


def _named_slots(seq: Any, names: Any, slots: Any) -> tuple[tuple[str, BindingSlot], ...]:
    decoded = _slots(seq, slots)
    count = seq.getNamesSize(names)
    return tuple(
        (seq.getName(names, j) if j < count else f"slot_{j}", slot)
        for j, slot in enumerate(decoded)
    )


def _segment(seq: Any, i: int) -> SegmentInfo:
    sets = tuple(
        DescriptorSetInfo(
            seq.getSegmentDescriptorSetIndex(i, d),
            _slots(seq, seq.getDescriptorBindingSlotsHandle(i, d)),
        )
        for d in range(seq.getSegmentDescriptorSetInfosSize(i))
    )
    ranges = seq.getSegmentPushConstRange(i)
    pushes = tuple(
        PushConstantRange(
            seq.getPushConstRangeStageFlags(ranges, r),
            seq.getPushConstRangeOffset(ranges, r),
            seq.getPushConstRangeSize(ranges, r),
        )
        for r in range(seq.getPushConstRangesSize(ranges))
    )
    bindings = tuple(
        (int(b.graphConstantId), int(b.constantIndex))
        for b in seq.getSegmentConstantBindings(i) or ()
    )
    dispatch = tuple(int(v) for v in seq.getSegmentDispatchShape(i))
    kind = "GRAPH" if seq.getSegmentType(i) == vgfpy.ModuleType.Graph else "COMPUTE"
    return SegmentInfo(
        index=i,
        type=kind,
        name=seq.getSegmentName(i),
        module=seq.getSegmentModuleIndex(i),
        descriptor_sets=sets,
        inputs=_slots(seq, seq.getSegmentInputBindingSlotsHandle(i)),
        outputs=_slots(seq, seq.getSegmentOutputBindingSlotsHandle(i)),
        constants=tuple(int(c) for c in seq.getSegmentConstantIndexes(i) or ()),
        constant_bindings=bindings,
        dispatch_shape=(dispatch[0], dispatch[1], dispatch[2]),
        push_constant_ranges=pushes,
    )


def _resource(res: Any, i: int) -> ResourceInfo:
    category = str(res.getCategory(i).name).upper()
    descriptor = res.getDescriptorType(i)
    sampler = None
    handle = res.getSamplerConfigHandle(i)
    if handle is not None:
        sampler = SamplerInfo(
            _name("filter", res.getSamplerConfigMinFilter(handle)),
            _name("filter", res.getSamplerConfigMagFilter(handle)),
            _name("address", res.getSamplerConfigAddressModeU(handle)),
            _name("address", res.getSamplerConfigAddressModeV(handle)),
            _name("border", res.getSamplerConfigBorderColor(handle)),
        )
    return ResourceInfo(
        index=i,
        category=category,
        descriptor_type=None if descriptor is None else _name("descriptor", descriptor),
        format=_name("format", res.getVkFormat(i)),
        shape=tuple(int(d) for d in res.getTensorShape(i) or ()),
        strides=tuple(int(d) for d in res.getTensorStride(i) or ()),
        alias_group=res.getAliasGroupId(i),
        sampler=sampler,
    )
