"""A :class:`~vgfc.vgf.model.Model` -> a VGF file, through the official ``vgfpy`` encoder.

A thin layer: every decision was taken by the layout stage; this module only spells the model
in the encoder's calls (Vulkan enum names become values here), in an order that makes the output
the same bytes on every run.

Why the constant section is written here rather than by ``vgfpy``: its ``AddConstant`` copies
every constant into the encoder, and ``WriteTo`` hands the finished file to Python as one more
copy, so a model with gigabytes of constants would hold each constant byte two or three times
over. :func:`encode_to` instead gives the encoder a one-byte placeholder per constant, lets it
write everything else (the header, the module, model-sequence and resource tables, which do not
depend on the constants' sizes), fixes the constant-section size in the header, and writes the
constant section itself, streaming each constant from its buffer, usually a read-only view of
the memory-mapped ``.tosa`` file: each constant byte is read once and written once, and peak
memory does not grow with the constants.

The constant section (VGF 0.5; ``src/constant.hpp`` of the VGF library) is the last section of
the file: ``CONST00\\0``, a u64 count, one record per constant {u32 resource index, i32 sparsity
dimension, u64 size, u64 offset from the first constant}, then the constants, each padded with
zeros to 8 bytes. Every call checks that knowledge against the library: the section ``vgfpy``
writes for the placeholders must be the one this module writes for them, or the library writes
the whole file itself (in memory, as before). The tests hold :func:`encode_to` to the bytes the
library writes when it is given the real constants (:func:`encode_with_vgfpy`).
"""

from __future__ import annotations

import io
import mmap
import struct
from array import array
from collections.abc import Callable, Iterable

import vgfpy

from vgfc import vulkan_names as vk
from vgfc.diagnostics import InternalError
from vgfc.vgf.model import Category, Constant, Model, ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Protocol
else:
    Protocol = object  # Digest is a protocol for type checkers (vgfc.ir says why)

__all__ = ["FORMAT_VERSION", "VK_HEADER_VERSION", "encode", "encode_to", "encode_with_vgfpy"]

VK_HEADER_VERSION = 345
"""Vulkan header version recorded in the file (the one the VGF library was generated from)."""

FORMAT_VERSION = (
    f"{vgfpy.HEADER_MAJOR_VERSION_VALUE}.{vgfpy.HEADER_MINOR_VERSION_VALUE}."
    f"{vgfpy.HEADER_PATCH_VERSION_VALUE}"
)
"""The VGF format version the library writes in the header (what ``format_version`` reads)."""

_SHADER_TYPES = {"GLSL": vgfpy.ShaderType.Glsl, "HLSL": vgfpy.ShaderType.Hlsl}
_MODULE_TYPES = {
    ModuleType.GRAPH: vgfpy.ModuleType.Graph,
    ModuleType.COMPUTE: vgfpy.ModuleType.Compute,
}

_SECTION_MAGIC = b"CONST00\0"
_COUNT = struct.Struct("<Q")
_RECORD = struct.Struct("<IiQQ")
_ALIGN = 8
_CHUNK = 64 << 20
"""Bytes of a constant written at a time; also what of a mapped input is resident at most."""


class Digest(Protocol):
    """What :func:`encode_to` feeds every byte it writes to (``hashlib.sha256()``, say)."""

    def update(self, data: bytes | memoryview, /) -> None: ...


def _words(spirv: bytes) -> list[int]:
    words = array("I")
    words.frombytes(spirv)
    return words.tolist()


def _value(table: dict[str, int], name: str, what: str) -> int:
    value = table.get(name)
    if value is None:
        raise InternalError(f"{what}: '{name}' is not a Vulkan enum name the VGF library knows")
    return value


def _encoder(model: Model, constant_data: Callable[[Constant], Any]) -> Any:
    """A finished ``vgfpy`` encoder for ``model``, each constant's bytes from ``constant_data``."""
    enc = vgfpy.CreateEncoder(model.vk_header_version)
    modules = []
    for m in model.modules:
        kind = _MODULE_TYPES[m.type]
        if m.spirv is not None:
            modules.append(enc.AddModule(kind, m.name, m.entry_point, _words(m.spirv)))
        elif m.source is not None and m.language in _SHADER_TYPES:
            modules.append(
                enc.AddModule(kind, m.name, m.entry_point, _SHADER_TYPES[m.language], m.source)
            )
        else:
            modules.append(enc.AddModule(kind, m.name, m.entry_point, []))

    resources = []
    format_table, descriptor_table = vk.formats(), vk.descriptor_types()
    adders = {
        Category.INPUT: enc.AddInputResource,
        Category.OUTPUT: enc.AddOutputResource,
        Category.INTERMEDIATE: enc.AddIntermediateResource,
    }
    for i, r in enumerate(model.resources):
        what = f"resource {i}"
        fmt = _value(format_table, r.format, what)
        shape, strides = list(r.shape), list(r.strides)
        if r.category is Category.CONSTANT:
            ref = enc.AddConstantResource(fmt, shape, strides)
        else:
            if r.descriptor_type is None:
                raise InternalError(f"{what} ('{r.tensor}') has no descriptor type")
            descriptor = _value(descriptor_table, r.descriptor_type, what)
            ref = adders[r.category](descriptor, fmt, shape, strides, r.alias_group)
        if r.sampler is not None:
            sampler = r.sampler
            enc.AddSamplerConfig(
                ref,
                _value(vk.filters(), sampler.min_filter, what),
                _value(vk.filters(), sampler.mag_filter, what),
                _value(vk.sampler_address_modes(), sampler.address_mode_u, what),
                _value(vk.sampler_address_modes(), sampler.address_mode_v, what),
                _value(vk.border_colors(), sampler.border_color, what),
            )
        resources.append(ref)

    constants = []
    for i, c in enumerate(model.constants):
        if not c.data:  # the library writes it, but no reader (its own included) takes it back
            raise InternalError(f"constant {i} has no data")
        constants.append(
            enc.AddConstant(resources[c.resource], constant_data(c), c.sparsity_dimension)
        )

    slots: dict[tuple[int, int], Any] = {}

    def slot(binding: int, resource: int) -> Any:
        """One binding-slot table per (binding, resource), shared by every list that holds it
        (a segment's descriptor set, its inputs and outputs, the model sequence's), as the
        reference converter shares them: a runtime reads the same slots, from fewer bytes."""
        key = (binding, resource)
        if key not in slots:
            slots[key] = enc.AddBindingSlot(binding, resources[resource])
        return slots[key]

    for s in model.segments:
        sets = [
            enc.AddDescriptorSetInfo([slot(x.binding, x.resource) for x in d.slots], d.set)
            for d in s.descriptor_sets
        ]
        ins = [slot(x.binding, x.resource) for x in s.inputs]
        outs = [slot(x.binding, x.resource) for x in s.outputs]
        pushes = [
            enc.AddPushConstRange(r.stage_flags, r.offset, r.size) for r in s.push_constant_ranges
        ]
        bindings = [
            vgfpy.GraphConstantBindingRef(gid, constants[c]) for gid, c in s.constant_bindings
        ]
        enc.AddSegmentInfo(
            modules[s.module], s.name, sets, ins, outs, bindings, list(s.dispatch), pushes
        )

    enc.AddModelSequenceInputsOutputs(
        [slot(x.binding, x.resource) for x in model.inputs],
        [x.name for x in model.inputs],
        [slot(x.binding, x.resource) for x in model.outputs],
        [x.name for x in model.outputs],
    )
    enc.Finish()
    return enc


def _written(enc: Any) -> bytes:
    out = io.BytesIO()
    if not enc.WriteTo(out):
        raise InternalError("the VGF encoder failed to write the file")
    return out.getvalue()


def encode_with_vgfpy(model: Model) -> bytes:
    """The VGF file for ``model`` as the VGF library writes it when it holds every constant:
    the bytes :func:`encode_to` must write (the tests compare them)."""
    return _written(_encoder(model, lambda c: c.data))


def encode(model: Model) -> bytes:
    """The VGF file for ``model``, in memory (:func:`encode_to` writes it to a file)."""
    out = io.BytesIO()
    encode_to(model, out)
    return out.getvalue()


def _padding(size: int) -> int:
    return -size % _ALIGN


def _section_head(constants: Iterable[tuple[Constant, int]]) -> bytes:
    """The constant section up to its first constant: magic, count and one record each."""
    records = []
    offset = 0
    for c, size in constants:
        # The library clamps the sparsity dimension to the int32 the file holds.
        sparsity = min(max(c.sparsity_dimension, -(2**31)), 2**31 - 1)
        records.append(_RECORD.pack(c.resource, sparsity, size, offset))
        offset += size + _padding(size)
    return _SECTION_MAGIC + _COUNT.pack(len(records)) + b"".join(records)


def encode_to(model: Model, file: BinaryIO, digest: Digest | None = None) -> int:
    """Write the VGF file for ``model`` to ``file``; returns its size in bytes.

    Constants are written straight from their buffers, in chunks, and the pages of a
    memory-mapped input are let go once written (see the module docstring). ``digest``, if
    given, is fed every byte written.
    """
    placeholders = _written(_encoder(model, lambda c: b"\0"))
    offset_at = vgfpy.HEADER_CONSTANT_SECTION_OFFSET_OFFSET
    size_at = vgfpy.HEADER_CONSTANT_SECTION_SIZE_OFFSET
    start, size = (int(v) for v in struct.unpack_from("<QQ", placeholders, offset_at))
    one_byte = [(c, 1) for c in model.constants]
    expected = _section_head(one_byte) + b"\0" * _ALIGN * len(one_byte)
    if (start, size) != (len(placeholders) - len(expected), len(expected)) or (
        placeholders[start:] != expected
    ):
        # Not the constant section this module knows how to write: the library writes it all.
        whole = encode_with_vgfpy(model)
        _write(file, memoryview(whole), digest)
        return len(whole)

    sizes = [(c, _nbytes(c.data)) for c in model.constants]
    head = _section_head(sizes)
    section = len(head) + sum(n + _padding(n) for _, n in sizes)
    header = bytearray(placeholders[:start])
    struct.pack_into("<Q", header, size_at, section)
    _write(file, memoryview(header), digest)
    _write(file, memoryview(head), digest)
    for c, n in sizes:
        _write(file, _bytes_view(c.data), digest, c.origin)
        if _padding(n):
            _write(file, memoryview(bytes(_padding(n))), digest)
    return start + section


def _nbytes(data: bytes | memoryview) -> int:
    return data.nbytes if isinstance(data, memoryview) else len(data)


def _bytes_view(data: bytes | memoryview) -> memoryview:
    view = memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _write(
    file: BinaryIO,
    data: memoryview,
    digest: Digest | None,
    origin: tuple[mmap.mmap, int] | None = None,
) -> None:
    """Write ``data`` in chunks; when it is a view of a read-only memory map (a constant of the
    input file: ``origin`` says which map, and where in it ``data`` starts), let each chunk's
    pages go once written.
    Mapped pages count as the process's memory while they stay mapped in; the kernel keeps them
    in its page cache, so a later read of the same constant finds them there. Nothing is lost:
    the map is read-only."""
    mapping = origin if _lets_go(origin) else None
    for first in range(0, len(data), _CHUNK):
        chunk = data[first : first + _CHUNK]
        file.write(chunk)
        if digest is not None:
            digest.update(chunk)
        if mapping is not None:
            mapped, offset = mapping
            low = (offset + first) // mmap.PAGESIZE * mmap.PAGESIZE
            mapped.madvise(mmap.MADV_DONTNEED, low, offset + first + len(chunk) - low)


def _lets_go(origin: tuple[mmap.mmap, int] | None) -> bool:
    """``origin`` names a read-only map whose pages can be let go."""
    if origin is None or not hasattr(mmap, "MADV_DONTNEED"):
        return False
    mapped = origin[0]
    return not mapped.closed and memoryview(mapped).readonly
