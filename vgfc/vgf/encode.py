"""A :class:`~vgfc.vgf.model.Model` -> VGF bytes, through the official ``vgfpy`` encoder.

A thin layer: every decision was taken by the layout stage; this module only spells the model
in the encoder's calls (Vulkan enum names become values here), in an order that makes the output
the same bytes on every run.
"""

from __future__ import annotations

import io
from array import array

import vgfpy

from vgfc.diagnostics import InternalError
from vgfc.vgf.model import Category, Model, ModuleType
from vgfc.vulkan_names import (
    border_colors,
    descriptor_types,
    filters,
    formats,
    sampler_address_modes,
)

__all__ = ["VK_HEADER_VERSION", "encode"]

VK_HEADER_VERSION = 345
"""Vulkan header version recorded in the file (the one the VGF library was generated from)."""

_SHADER_TYPES = {"GLSL": vgfpy.ShaderType.Glsl, "HLSL": vgfpy.ShaderType.Hlsl}
_MODULE_TYPES = {
    ModuleType.GRAPH: vgfpy.ModuleType.Graph,
    ModuleType.COMPUTE: vgfpy.ModuleType.Compute,
}


def _words(spirv: bytes) -> list[int]:
    words = array("I")
    words.frombytes(spirv)
    return words.tolist()


def _value(table: dict[str, int], name: str, what: str) -> int:
    value = table.get(name)
    if value is None:
        raise InternalError(f"{what}: '{name}' is not a Vulkan enum name the VGF library knows")
    return value


def encode(model: Model) -> bytes:
    """The VGF file for ``model``."""
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
    for i, r in enumerate(model.resources):
        what = f"resource {i}"
        fmt = _value(formats(), r.format, what)
        shape, strides = list(r.shape), list(r.strides)
        if r.category is Category.CONSTANT:
            ref = enc.AddConstantResource(fmt, shape, strides)
        else:
            add = {
                Category.INPUT: enc.AddInputResource,
                Category.OUTPUT: enc.AddOutputResource,
                Category.INTERMEDIATE: enc.AddIntermediateResource,
            }[r.category]
            if r.descriptor_type is None:
                raise InternalError(f"{what} ('{r.tensor}') has no descriptor type")
            descriptor = _value(descriptor_types(), r.descriptor_type, what)
            ref = add(descriptor, fmt, shape, strides, r.alias_group)
        if r.sampler is not None:
            sampler = r.sampler
            enc.AddSamplerConfig(
                ref,
                _value(filters(), sampler.min_filter, what),
                _value(filters(), sampler.mag_filter, what),
                _value(sampler_address_modes(), sampler.address_mode_u, what),
                _value(sampler_address_modes(), sampler.address_mode_v, what),
                _value(border_colors(), sampler.border_color, what),
            )
        resources.append(ref)

    constants = []
    for i, c in enumerate(model.constants):
        if not c.data:  # the library writes it, but no reader (its own included) takes it back
            raise InternalError(f"constant {i} has no data")
        constants.append(enc.AddConstant(resources[c.resource], c.data, c.sparsity_dimension))

    for s in model.segments:
        sets = [
            enc.AddDescriptorSetInfo(
                [enc.AddBindingSlot(slot.binding, resources[slot.resource]) for slot in d.slots],
                d.set,
            )
            for d in s.descriptor_sets
        ]
        ins = [enc.AddBindingSlot(x.binding, resources[x.resource]) for x in s.inputs]
        outs = [enc.AddBindingSlot(x.binding, resources[x.resource]) for x in s.outputs]
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
        [enc.AddBindingSlot(x.binding, resources[x.resource]) for x in model.inputs],
        [x.name for x in model.inputs],
        [enc.AddBindingSlot(x.binding, resources[x.resource]) for x in model.outputs],
        [x.name for x in model.outputs],
    )
    enc.Finish()
    out = io.BytesIO()
    if not enc.WriteTo(out):
        raise InternalError("the VGF encoder failed to write the file")
    return out.getvalue()
