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
from dataclasses import dataclass

from vgfc.vgf.model import Category, Model, ModuleType

__all__ = ["PROFILES", "TARGETS", "Rule", "Violation", "violations"]


@dataclass(frozen=True, slots=True)
class Violation:
    """A rule broken by one segment (``None``: by the model as a whole)."""

    rule: str
    segment: int | None
    message: str


Check = Callable[[Model], Iterator[tuple[int | None, str]]]


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    demand: str
    """What the runtime demands, in one sentence."""
    source: str
    """Where the rule comes from."""
    check: Check


_VGF_SETUP = "ExecuTorch backends/arm/runtime/VGFSetup.cpp"


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


def _tensors_in_graphs(model: Model) -> Iterator[tuple[int | None, str]]:
    for i, segment in enumerate(model.segments):
        if segment.type is not ModuleType.GRAPH:
            continue
        for d in segment.descriptor_sets:
            for slot in d.slots:
                kind = model.resources[slot.resource].descriptor_type
                if kind != "VK_DESCRIPTOR_TYPE_TENSOR_ARM":
                    yield i, f"binding {slot.binding} is a {kind}; graph segments bind tensors only"


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
    Rule("one-descriptor-set", "every segment has exactly one descriptor set", _VGF_SETUP,
         _one_descriptor_set),
    Rule("no-compute-constants", "compute segments read no constants", _VGF_SETUP,
         _no_compute_constants),
    Rule("graph-tensors", "graph segments bind tensors (VK_DESCRIPTOR_TYPE_TENSOR_ARM) only",
         _VGF_SETUP, _tensors_in_graphs),
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
