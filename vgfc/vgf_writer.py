"""A planned :class:`~vgfc.resources.Program` -> VGF bytes, through the official ``vgfpy`` encoder.

A thin layer: every decision was taken by the resource planner; this module only spells it in
the encoder's calls, in an order that makes the output the same bytes on every run.
"""

from __future__ import annotations

import io
from array import array

import vgfpy

from vgfc.diagnostics import InternalError
from vgfc.resources import Category, Program
from vgfc.vulkan_names import descriptor_types, formats

__all__ = ["VK_HEADER_VERSION", "encode"]

VK_HEADER_VERSION = 345
"""Vulkan header version recorded in the file (the one the VGF library was generated from)."""

_SHADER_TYPES = {"GLSL": vgfpy.ShaderType.Glsl, "HLSL": vgfpy.ShaderType.Hlsl}


def _words(spirv: bytes) -> list[int]:
    words = array("I")
    words.frombytes(spirv)
    return words.tolist()


def encode(program: Program) -> bytes:
    """The VGF file for ``program``."""
    enc = vgfpy.CreateEncoder(VK_HEADER_VERSION)
    modules = []
    for m in program.modules:
        kind = vgfpy.ModuleType.Graph if m.kind == "graph" else vgfpy.ModuleType.Compute
        if m.spirv is not None:
            modules.append(enc.AddModule(kind, m.name, m.entry_point, _words(m.spirv)))
        elif m.source is not None and m.language in _SHADER_TYPES:
            modules.append(
                enc.AddModule(kind, m.name, m.entry_point, _SHADER_TYPES[m.language], m.source)
            )
        else:
            modules.append(enc.AddModule(kind, m.name, m.entry_point, []))

    resources = []
    for r in program.resources:
        fmt = formats()[r.format]
        shape, strides = list(r.shape), list[int]()
        if r.category is Category.CONSTANT:
            ref = enc.AddConstantResource(fmt, shape, strides)
        else:
            add = {
                Category.INPUT: enc.AddInputResource,
                Category.OUTPUT: enc.AddOutputResource,
                Category.INTERMEDIATE: enc.AddIntermediateResource,
            }[r.category]
            if r.descriptor_type is None:
                raise InternalError(f"resource {r.index} ('{r.tensor}') has no descriptor type")
            ref = add(descriptor_types()[r.descriptor_type], fmt, shape, strides, r.alias_group)
        if r.sampler is not None:
            enc.AddSamplerConfig(ref, *r.sampler.values())
        resources.append(ref)

    constants = [enc.AddConstant(resources[i], data, -1) for i, data in program.constants]

    for s in program.segments:
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
        [enc.AddBindingSlot(x.binding, resources[x.resource]) for _, x in program.inputs],
        [name for name, _ in program.inputs],
        [enc.AddBindingSlot(x.binding, resources[x.resource]) for _, x in program.outputs],
        [name for name, _ in program.outputs],
    )
    enc.Finish()
    out = io.BytesIO()
    if not enc.WriteTo(out):
        raise InternalError("the VGF encoder failed to write the file")
    return out.getvalue()
