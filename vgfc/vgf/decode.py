"""VGF bytes -> :class:`~vgfc.vgf.model.Model`, through the official ``vgfpy`` decoders.

The one decoder of vgfc: ``vgfc inspect``, ``--diff``, the runner and the tests all read files
through it, so a file is read exactly as the VGF library reads it, whichever tool wrote it. Each
Vulkan enum value is turned into its name here, and a value that names nothing is refused, as is
an index that points outside its table.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from typing import Any

import vgfpy

from vgfc.diagnostics import InputError
from vgfc.vgf import model as vgf
from vgfc.vulkan_names import (
    border_colors,
    descriptor_types,
    filters,
    formats,
    sampler_address_modes,
)

__all__ = ["decode", "format_version", "read_vgf"]

_TABLES: dict[str, Callable[[], dict[str, int]]] = {
    "VkFormat": formats,
    "VkDescriptorType": descriptor_types,
    "VkFilter": filters,
    "VkSamplerAddressMode": sampler_address_modes,
    "VkBorderColor": border_colors,
}


@cache
def _names(kind: str) -> dict[int, str]:
    names: dict[int, str] = {}
    for name, value in _TABLES[kind]().items():
        names.setdefault(value, name)  # the first name of a value is the core one, not an alias
    return names


def read_vgf(path: str | os.PathLike[str]) -> vgf.Model:
    """Read and decode a VGF file; malformed input raises :class:`InputError` naming the file.

    The file is opened through :func:`vgfc.files.inputs.open_input` (a regular file, not a FIFO or a
    device); its header is read alone and every section it points at must lie inside the file
    before the rest is touched, and the rest is memory-mapped, not read: a sparse file of
    gigabytes with a bad header costs one small read. ``-`` reads standard input."""
    from vgfc.files.inputs import STDIN, STDIN_SHOWN, open_input, shown_path

    name = STDIN_SHOWN if os.fspath(path) == STDIN else shown_path(path)
    try:
        with open_input(path, what="VGF file", stdin=True) as f:
            _check_header(f.header(vgfpy.HeaderSize()), f.size)
            data = f.map()
        return decode(data)
    except InputError as e:
        raise e.at(file=name) from None


def _header(data: Any, size: int) -> Any:
    header_size = vgfpy.HeaderSize()
    if size < header_size:
        raise InputError(f"{size} bytes is too short for a VGF file")
    header = vgfpy.CreateHeaderDecoder(data, header_size, size)
    if header is None or not header.IsValid():
        raise InputError("not a VGF file (bad header)")
    if not header.CheckVersion():
        raise InputError(f"unsupported VGF version {header.GetMajor()}.{header.GetMinor()}")
    return header


_SECTIONS = (
    ("module table", "GetModuleTableOffset", "GetModuleTableSize"),
    ("model sequence table", "GetModelSequenceTableOffset", "GetModelSequenceTableSize"),
    ("model resource table", "GetModelResourceTableOffset", "GetModelResourceTableSize"),
    ("constants", "GetConstantsOffset", "GetConstantsSize"),
)


def _check_header(header_bytes: bytes, size: int) -> list[tuple[int, int]]:
    """The header of a file of ``size`` bytes, checked: a VGF header of a version vgfc reads,
    and every section inside the file. Returns each section's (offset, size)."""
    header = _header(header_bytes, size)
    sections = []
    for what, offset_of, size_of in _SECTIONS:
        offset, length = int(getattr(header, offset_of)()), int(getattr(header, size_of)())
        if offset + length > size:
            raise InputError(
                f"truncated VGF file: the {what} ({length} bytes at offset {offset}) lies "
                f"beyond the end of the file ({size} bytes)"
            )
        sections.append((offset, length))
    return sections


class _Reader:
    """The four section decoders of one file, and the checks every value passes."""

    def __init__(self, data: Any) -> None:
        header = _header(data, len(data))
        sections = _check_header(bytes(memoryview(data)[: vgfpy.HeaderSize()]), len(data))
        self.version = f"{header.GetMajor()}.{header.GetMinor()}.{header.GetPatch()}"
        self.vk_header_version = int(header.GetEncoderVulkanHeadersVersion())
        # Views into the file, not copies (a mapped file stays unread where nothing looks);
        # kept here for as long as the decoders that point into them.
        view = memoryview(data)
        self.views = [view[offset : offset + length] for offset, length in sections]
        mt, st, rt, ct = (length for _, length in sections)
        self.modules = vgfpy.CreateModuleTableDecoder(self.views[0], mt)
        self.sequence = vgfpy.CreateModelSequenceTableDecoder(self.views[1], st)
        self.resources = vgfpy.CreateModelResourceTableDecoder(self.views[2], rt)
        self.constants = vgfpy.CreateConstantDecoder(self.views[3], ct)
        if None in (self.modules, self.sequence, self.resources, self.constants):
            raise InputError("malformed VGF file: a section does not decode")

    @staticmethod
    def name(kind: str, value: int, what: str) -> str:
        found = _names(kind).get(value)
        if found is None:
            raise InputError(f"corrupt VGF file: {what} has {kind} value {value}, which names none")
        return found


def format_version(data: bytes) -> str:
    """The VGF format version in the header of ``data`` (nothing else is decoded)."""
    if len(data) < vgfpy.HeaderSize():
        raise InputError(f"{len(data)} bytes is too short for a VGF file")
    header = vgfpy.CreateHeaderDecoder(data, vgfpy.HeaderSize(), len(data))
    if header is None or not header.IsValid():
        raise InputError("not a VGF file (bad header)")
    return f"{header.GetMajor()}.{header.GetMinor()}.{header.GetPatch()}"


def decode(data: Any) -> vgf.Model:
    """Decode VGF bytes held in memory (or a mapped file). Raises :class:`InputError` for
    anything malformed."""
    return _model(_Reader(data))


def _model(r: _Reader) -> vgf.Model:
    seq = r.sequence
    model = vgf.Model(
        modules=tuple(_module(r.modules, i) for i in range(r.modules.size())),
        segments=tuple(_segment(seq, i) for i in range(seq.modelSequenceTableSize())),
        resources=tuple(_resource(r, i) for i in range(r.resources.size())),
        constants=tuple(_constant(r, i) for i in range(r.constants.size())),
        inputs=_interfaces(
            seq,
            seq.getModelSequenceInputNamesHandle(),
            seq.getModelSequenceInputBindingSlotsHandle(),
            "input",
        ),
        outputs=_interfaces(
            seq,
            seq.getModelSequenceOutputNamesHandle(),
            seq.getModelSequenceOutputBindingSlotsHandle(),
            "output",
        ),
        vk_header_version=r.vk_header_version,
        version=r.version,
    )
    _check_references(model)
    return model


def _text(what: str, read: Callable[..., Any], *args: Any) -> str:
    """A string of the file: the library hands it over as UTF-8 text, so bytes that are not
    UTF-8 mean a corrupt file, not a bug."""
    try:
        return str(read(*args))
    except UnicodeDecodeError:
        raise InputError(f"corrupt VGF file: {what} is not UTF-8 text") from None


def _constant(r: _Reader, i: int) -> vgf.Constant:
    data = r.constants.getConstant(i)
    if data is None:  # the library's own vgf_dump calls this invalid constant metadata
        raise InputError(f"corrupt VGF file: constant {i} has no data")
    return vgf.Constant(
        int(r.constants.getConstantMrtIndex(i)),
        bytes(data),
        int(r.constants.getConstantSparsityDimension(i)),
    )


def _check_references(model: vgf.Model) -> None:
    """Every index a table holds must point inside the table it refers to."""
    resources = len(model.resources)
    slots: list[vgf.Slot | vgf.Interface] = [*model.inputs, *model.outputs]
    for i, seg in enumerate(model.segments):
        if seg.module >= len(model.modules):
            raise InputError(f"corrupt VGF file: segment {i} refers to module {seg.module}")
        slots += [*seg.inputs, *seg.outputs, *(s for d in seg.descriptor_sets for s in d.slots)]
        for _, index in seg.constant_bindings:
            if index >= len(model.constants):
                raise InputError(f"corrupt VGF file: segment {i} refers to constant {index}")
    for slot in slots:
        if slot.resource >= resources:
            raise InputError(f"corrupt VGF file: a binding slot refers to resource {slot.resource}")
    for i, c in enumerate(model.constants):
        if c.resource >= resources:
            raise InputError(f"corrupt VGF file: constant {i} refers to resource {c.resource}")


def _module_type(value: Any) -> vgf.ModuleType:
    return vgf.ModuleType.GRAPH if value == vgfpy.ModuleType.Graph else vgf.ModuleType.COMPUTE


def _module(dec: Any, i: int) -> vgf.Module:
    kind = _module_type(dec.getModuleType(i))
    what = f"module {i}"
    name = _text(f"the name of {what}", dec.getModuleName, i)
    entry = _text(f"the entry point of {what}", dec.getModuleEntryPoint, i)
    if dec.hasSPIRVCode(i):
        return vgf.Module(kind, name, entry, spirv=bytes(dec.getSPIRVModuleCode(i)))
    for language, is_language, read in (
        ("GLSL", dec.isGLSL, dec.getGLSLModuleCode),
        ("HLSL", dec.isHLSL, dec.getHLSLModuleCode),
    ):
        if is_language(i):
            source = _text(f"the source of {what}", read, i)
            return vgf.Module(kind, name, entry, source=source, language=language)
    return vgf.Module(kind, name, entry)


def _slots(seq: Any, handle: Any) -> tuple[vgf.Slot, ...]:
    return tuple(
        vgf.Slot(
            int(seq.getBindingSlotBinding(handle, j)),
            int(seq.getBindingSlotMrtIndex(handle, j)),
        )
        for j in range(seq.getBindingsSize(handle))
    )


def _interfaces(seq: Any, names: Any, handle: Any, prefix: str) -> tuple[vgf.Interface, ...]:
    slots = _slots(seq, handle)
    count = seq.getNamesSize(names)
    return tuple(
        vgf.Interface(
            (_text(f"the name of {prefix} {j}", seq.getName, names, j) if j < count else "")
            or f"{prefix}_{j}",
            slot.binding,
            slot.resource,
        )
        for j, slot in enumerate(slots)
    )


def _segment(seq: Any, i: int) -> vgf.Segment:
    sets = tuple(
        vgf.DescriptorSet(
            int(seq.getSegmentDescriptorSetIndex(i, d)),
            _slots(seq, seq.getDescriptorBindingSlotsHandle(i, d)),
        )
        for d in range(seq.getSegmentDescriptorSetInfosSize(i))
    )
    ranges = seq.getSegmentPushConstRange(i)
    pushes = tuple(
        vgf.PushConstantRange(
            int(seq.getPushConstRangeStageFlags(ranges, r)),
            int(seq.getPushConstRangeOffset(ranges, r)),
            int(seq.getPushConstRangeSize(ranges, r)),
        )
        for r in range(seq.getPushConstRangesSize(ranges))
    )
    bindings = tuple(
        (int(b.graphConstantId), int(b.constantIndex))
        for b in seq.getSegmentConstantBindings(i) or ()
    )
    shape = seq.getSegmentDispatchShape(i)
    if shape is None or len(shape) != 3:
        raise InputError(f"corrupt VGF file: segment {i} has no dispatch shape")
    dispatch = [int(v) for v in shape]
    return vgf.Segment(
        type=_module_type(seq.getSegmentType(i)),
        name=_text(f"the name of segment {i}", seq.getSegmentName, i) or f"segment_{i}",
        module=int(seq.getSegmentModuleIndex(i)),
        descriptor_sets=sets,
        inputs=_slots(seq, seq.getSegmentInputBindingSlotsHandle(i)),
        outputs=_slots(seq, seq.getSegmentOutputBindingSlotsHandle(i)),
        constant_bindings=bindings,
        dispatch=(dispatch[0], dispatch[1], dispatch[2]),
        push_constant_ranges=pushes,
    )


_CATEGORIES = {c.name: c for c in vgf.Category}


def _resource(r: _Reader, i: int) -> vgf.Resource:
    res = r.resources
    what = f"resource {i}"
    category = _CATEGORIES.get(str(res.getCategory(i).name).upper())
    if category is None:
        raise InputError(f"corrupt VGF file: {what} has category {res.getCategory(i)}")
    descriptor = res.getDescriptorType(i)
    sampler = None
    handle = res.getSamplerConfigHandle(i)
    if handle is not None:
        from vgfc.ir_shaders import Sampler  # only a file with samplers needs the type

        sampler = Sampler(
            r.name("VkFilter", res.getSamplerConfigMinFilter(handle), what),
            r.name("VkFilter", res.getSamplerConfigMagFilter(handle), what),
            r.name("VkSamplerAddressMode", res.getSamplerConfigAddressModeU(handle), what),
            r.name("VkSamplerAddressMode", res.getSamplerConfigAddressModeV(handle), what),
            r.name("VkBorderColor", res.getSamplerConfigBorderColor(handle), what),
        )
    alias = res.getAliasGroupId(i)
    return vgf.Resource(
        category=category,
        descriptor_type=None
        if descriptor is None
        else r.name("VkDescriptorType", descriptor, what),
        format=r.name("VkFormat", res.getVkFormat(i), what),
        shape=tuple(int(d) for d in res.getTensorShape(i) or ()),
        strides=tuple(int(d) for d in res.getTensorStride(i) or ()),
        alias_group=None if alias is None else int(alias),
        sampler=sampler,
    )
