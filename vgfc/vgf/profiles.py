"""Runtime profiles: what a VGF must look like for the runtime that will load it.

The scenario runner (Arm's ML SDK) loads every file vgfc writes. ExecuTorch's Arm VGF backend is
stricter: its runtime (``backends/arm/runtime/VGFSetup.cpp`` in pytorch/executorch) refuses files
that the scenario runner accepts, and a user only learns that on the device. ``--target
executorch`` holds the laid-out model to that runtime's rules at build time, so each violation is
a compile error naming the op or segment, the rule and the way out.

A rule is data: a name, what it demands, where it comes from, and a check that yields the
segments (with a message) that break it. Rules vgfc's layout always satisfies (input binding ids
equal to input indices, no constants in compute segments, a sampler on every combined image
sampler) are checked all the same, so a change of layout cannot break a target silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from vgfc.record import record
from vgfc.vgf.model import Category, Model, ModuleType

if TYPE_CHECKING:
    from array import array

    from vgfc.diagnostics import VgfcError
    from vgfc.ir import Graph
    from vgfc.partition import Plan

__all__ = [
    "PROFILES",
    "TARGETS",
    "Rule",
    "Violation",
    "replicated_composites_errors",
    "target_errors",
    "uses_capability",
    "violations",
]


@record
class Violation:
    """A rule broken by one segment (``None``: by the model as a whole)."""

    rule: str
    segment: int | None
    message: str


Check = Callable[[Model], Iterator[tuple[int | None, str]]]


@record
class Rule:
    name: str
    demand: str
    """What the runtime demands, in one sentence."""
    source: str
    """Where the rule comes from."""
    check: Check


_VGF_SETUP = "ExecuTorch backends/arm/runtime/VGFSetup.cpp, VgfRepr::process_vgf"

# The formats the runtime can size (get_format_size); any other refuses the file.
_EXECUTORCH_FORMATS = frozenset(
    f"VK_FORMAT_{name}"
    for name in [
        "R8_BOOL_ARM",
        "R8_UINT",
        "R8_SINT",
        "R16_UINT",
        "R16_SINT",
        "R16_SFLOAT",
        "R16_SFLOAT_FPENCODING_BFLOAT16_ARM",
        "R32_UINT",
        "R32_SINT",
        "R32_SFLOAT",
        "R64_SINT",
        "R8G8_UINT",
        "R8G8_SINT",
        "R16G16_UINT",
        "R16G16_SINT",
        "R16G16_SFLOAT",
        "R32G32_UINT",
        "R32G32_SINT",
        "R32G32_SFLOAT",
        "R8G8B8A8_UINT",
        "R8G8B8A8_SNORM",
        "R8G8B8A8_SINT",
        "R16G16B16A16_UINT",
        "R16G16B16A16_SINT",
        "R16G16B16A16_SFLOAT",
        "R32G32B32A32_UINT",
        "R32G32B32A32_SINT",
        "R32G32B32A32_SFLOAT",
    ]
)


def _spirv_everywhere(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, segment in enumerate(model.segments):
        module = model.module_of(segment)
        if module.code == "SPIR-V":
            continue
        if module.code == "none":
            yield i, "the module has no code; give the op its shader (shader_language, shader_code)"
        else:
            yield i, f"the module holds {module.code} source; drop --keep-source"


def _one_descriptor_set(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, segment in enumerate(model.segments):
        sets = [d.set for d in segment.descriptor_sets]
        if sets != [0] and len(sets) == 1:
            yield (
                i,
                (
                    f"the segment's bindings are in descriptor set {sets[0]}; the runtime binds "
                    "set 0 only: use descriptor set 0 in the shader and its attributes"
                ),
            )
        if len(sets) != 1:
            used = ", ".join(map(str, sets)) or "none"
            yield (
                i,
                (
                    f"the segment uses descriptor sets {used}; put all of the shader's bindings "
                    "in one descriptor set (one value for every input_N_descriptorset and "
                    "output_N_descriptorset)"
                ),
            )


def _no_compute_constants(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, segment in enumerate(model.segments):
        if segment.type is ModuleType.COMPUTE and segment.constant_bindings:
            yield i, "a compute segment reads constants; compute them in the graph instead"


_GRAPH_DESCRIPTORS = frozenset(
    {
        "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
        "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
        "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE",
        "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
    }
)


def _no_buffers_in_graphs(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, segment in enumerate(model.segments):
        if segment.type is not ModuleType.GRAPH:
            continue
        for d in segment.descriptor_sets:
            for slot in d.slots:
                kind = model.resources[slot.resource].descriptor_type
                if kind not in _GRAPH_DESCRIPTORS:
                    yield i, f"binding {slot.binding} is a {kind}; graph segments bind tensors"


def _no_push_constants(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, segment in enumerate(model.segments):
        if segment.push_constant_ranges:
            yield (
                i,
                (
                    f"the shader takes {segment.push_constant_size} bytes of push constants, which "
                    "the runtime never pushes (its pipeline layouts have no push-constant range): "
                    "pass the values as a tensor input instead"
                ),
            )


def _formats(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, r in enumerate(model.resources):
        if r.category is not Category.CONSTANT and r.format not in _EXECUTORCH_FORMATS:
            what = f"'{r.tensor}'" if r.tensor else f"resource {i}"
            yield None, f"{what} has format {r.format}, which the runtime cannot allocate"


def _samplers(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, r in enumerate(model.resources):
        if r.descriptor_type == "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER" and r.sampler is None:
            yield None, f"resource {i} is a combined image sampler without a sampler"


def _input_bindings(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, x in enumerate(model.inputs):
        if x.binding != i:
            yield None, f"model input {i} ('{x.name}') is bound to {x.binding}, not {i}"
        if model.resources[x.resource].category is not Category.INPUT:
            yield None, f"model input {i} ('{x.name}') is not an INPUT resource"


EXECUTORCH: tuple[Rule, ...] = (
    Rule("spirv", "every module holds SPIR-V (no shader source, no placeholder)", _VGF_SETUP,
         _spirv_everywhere),
    Rule("one-descriptor-set", "every segment has exactly one descriptor set, set 0", _VGF_SETUP,
         _one_descriptor_set),
    Rule("no-compute-constants", "compute segments read no constants", _VGF_SETUP,
         _no_compute_constants),
    Rule("graph-tensors", "graph segments bind tensors or images, never storage buffers",
         _VGF_SETUP, _no_buffers_in_graphs),
    Rule("no-push-constants", "shaders take no push constants", _VGF_SETUP, _no_push_constants),
    Rule("formats", "inputs, outputs and intermediates use one of 29 formats", _VGF_SETUP,
         _formats),
    Rule("sampler", "every combined image sampler has a sampler config", _VGF_SETUP, _samplers),
    Rule("input-bindings", "model input i is bound to binding id i", _VGF_SETUP, _input_bindings),
)  # fmt: skip

PROFILES: dict[str, tuple[Rule, ...]] = {
    "scenario-runner": (),
    "executorch": EXECUTORCH,
}
"""The rules of each ``--target``; the scenario runner takes every file vgfc can write."""

TARGETS = tuple(PROFILES)


def violations(model: Model, target: str) -> list[Violation]:
    """Every way ``model`` breaks the rules of ``target``, in rule order then segment order."""
    found = []
    for rule in PROFILES[target]:
        for segment, message in rule.check(model):
            found.append(Violation(rule.name, segment, f"{message} ({target} rule '{rule.name}')"))
    return found


def target_errors(graph: Graph, plan: Plan, model: Model, target: str) -> list[VgfcError]:
    """The rules of the runtime ``target`` that the laid-out ``model`` breaks, each as an error
    at the op (for a shader segment) or the segment it is about."""
    from vgfc.diagnostics import Location, UnsupportedError
    from vgfc.partition import PartitionKind

    errors: list[VgfcError] = []
    for v in violations(model, target):
        where = Location(file=graph.source)
        message = v.message
        if v.segment is not None:
            segment = model.segments[v.segment]
            p = plan.partitions[v.segment]
            if p.kind is PartitionKind.SHADER:
                where = graph.operators[p.operators[0]].where(graph.source, origin=False)
            message = f"segment {v.segment} '{segment.name}': {message}"
        errors.append(UnsupportedError(message, where))
    return errors


def uses_capability(spirv: bytes, capability: str) -> bool:
    """True when the module declares ``capability`` (capabilities open every SPIR-V module)."""
    from vgfc.spirv.binary import words_of
    from vgfc.spirv.grammar import enumerant, opcode

    words: array[int] = words_of(spirv)
    header = 2 << 16 | opcode("OpCapability")  # two words: the opcode and the capability
    wanted = enumerant("Capability", capability)
    index = 5
    while index + 1 < len(words) and words[index] == header:
        if words[index + 1] == wanted:
            return True
        index += 2
    return False


def replicated_composites_errors(model: Model, source: str | None) -> list[VgfcError]:
    """``--disable-replicated-composites`` (``vgfc-model-converter``): a module that still needs
    VK_EXT_shader_replicated_composites is an error. The graph modules vgfc writes then spell
    every constant out, so only a shader's own SPIR-V can need it."""
    from vgfc.diagnostics import UnsupportedError

    return [
        UnsupportedError(
            f"--disable-replicated-composites: module '{module.name}' needs "
            "VK_EXT_shader_replicated_composites (its SPIR-V declares the "
            "ReplicatedCompositesEXT capability)",
            file=source,
        )
        for module in model.modules
        if module.spirv is not None and uses_capability(module.spirv, "ReplicatedCompositesEXT")
    ]
