"""Plan the resources of the whole model sequence once: binding ids, resource table, segments.

The layout follows the reference converter, so runtimes built for its files work unchanged:

* every value that crosses a segment boundary gets one **logical binding id**: graph inputs
  first (0..n-1), then intermediates in segment order, then graph outputs;
* each way a value is seen gets a **resource** (graph segments see TENSOR_ARM with the element
  format of the dtype, shaders see the descriptor type and format they declare); one value seen
  two ways gives entries that share an **alias group**; constants come first;
* a graph segment has one descriptor set (0) whose binding slots carry the logical ids (the
  graph's SPIR-V is decorated with the same ids); a compute segment has one descriptor set per
  distinct set the shader declares, whose slots carry the shader's own binding numbers;
* segment inputs and outputs are slots of logical ids, one per value.

Unlike the reference, a shader that binds one tensor twice (``custom(x, x)``) keeps both of its
descriptor bindings.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vgfc.custom.attrs import Sampler, ShaderResource
from vgfc.diagnostics import UnsupportedError
from vgfc.ir import DType, Graph
from vgfc.partition import PartitionKind, Plan
from vgfc.shader.lower import PushConstantRange, ShaderModule

if TYPE_CHECKING:
    from vgfc.lower_graph import GraphModule

__all__ = [
    "Category",
    "DescriptorSet",
    "Module",
    "Program",
    "Resource",
    "Segment",
    "Slot",
    "element_format",
    "logical_bindings",
    "plan_program",
]

TENSOR_ARM = "VK_DESCRIPTOR_TYPE_TENSOR_ARM"

_ELEMENT_FORMATS = {
    DType.BOOL: "VK_FORMAT_R8_BOOL_ARM",
    DType.INT8: "VK_FORMAT_R8_SINT",
    DType.INT16: "VK_FORMAT_R16_SINT",
    DType.INT32: "VK_FORMAT_R32_SINT",
    DType.INT48: "VK_FORMAT_R64_SINT",
    DType.INT64: "VK_FORMAT_R64_SINT",
    DType.FP16: "VK_FORMAT_R16_SFLOAT",
    DType.FP32: "VK_FORMAT_R32_SFLOAT",
    DType.BF16: "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM",
    DType.FP8E4M3: "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E4M3_ARM",
    DType.FP8E5M2: "VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E5M2_ARM",
}


def element_format(dtype: DType, unsigned: bool = False) -> str:
    """The scalar VkFormat name of a TOSA element type, as graph tensors use it; ``unsigned``
    picks the UINT format of the same width for integers a RESCALE reads or writes unsigned."""
    if dtype not in _ELEMENT_FORMATS:
        raise UnsupportedError(f"{dtype.value} tensors have no Vulkan tensor format")
    name = _ELEMENT_FORMATS[dtype]
    return name.replace("_SINT", "_UINT") if unsigned else name


def unsigned_values(graph: Graph) -> frozenset[str]:
    """Tensors whose integers are unsigned: TOSA integers carry no sign, but a RESCALE says how
    it reads its input and writes its output, and the reference converter gives such values
    UINT formats, which is what a runtime feeding unsigned data expects."""
    written = {o for op in graph.operators if op.op == "RESCALE" for o in op.outputs}
    found: set[str] = set()
    for op in graph.operators:
        if op.op != "RESCALE":
            continue
        if op.attrs.get("output_unsigned") is True:
            found.update(op.outputs)
        if op.attrs.get("input_unsigned") is True and op.inputs and op.inputs[0] not in written:
            found.add(op.inputs[0])
    return frozenset(found)


class Category(enum.Enum):
    INPUT = "input"
    OUTPUT = "output"
    INTERMEDIATE = "intermediate"
    CONSTANT = "constant"


@dataclass(frozen=True, slots=True)
class Resource:
    """One entry of the model resource table."""

    index: int
    category: Category
    tensor: str
    """The TOSA tensor it holds."""
    descriptor_type: str | None
    """``VK_DESCRIPTOR_TYPE_*`` name; ``None`` for constants."""
    format: str
    shape: tuple[int, ...]
    alias_group: int | None = None
    sampler: Sampler | None = None


@dataclass(frozen=True, slots=True)
class Slot:
    """A binding slot: a binding number pointing at a resource."""

    binding: int
    resource: int


@dataclass(frozen=True, slots=True)
class DescriptorSet:
    set: int
    slots: tuple[Slot, ...]


@dataclass(frozen=True, slots=True)
class Module:
    """One entry of the module table."""

    kind: str
    """``graph`` or ``compute``."""
    name: str
    entry_point: str
    spirv: bytes | None
    source: str | None = None
    """GLSL/HLSL text, stored instead of SPIR-V with ``keep_source``."""
    language: str | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    index: int
    kind: str
    """``graph`` or ``compute``."""
    name: str
    module: int
    partition: int
    """Id of the partition it runs."""
    descriptor_sets: tuple[DescriptorSet, ...]
    inputs: tuple[Slot, ...]
    outputs: tuple[Slot, ...]
    constant_bindings: tuple[tuple[int, int], ...]
    """(graph constant id, index into :attr:`Program.constants`)."""
    dispatch: tuple[int, int, int]
    push_constant_ranges: tuple[PushConstantRange, ...]


@dataclass(frozen=True, slots=True)
class Program:
    """Everything the VGF file holds, with every cross-reference resolved to an index."""

    modules: tuple[Module, ...]
    segments: tuple[Segment, ...]
    resources: tuple[Resource, ...]
    constants: tuple[tuple[int, bytes], ...]
    """(constant resource index, raw data) in constant-table order."""
    inputs: tuple[tuple[str, Slot], ...]
    """Model sequence inputs: (name, slot)."""
    outputs: tuple[tuple[str, Slot], ...]


def logical_bindings(graph: Graph, plan: Plan) -> dict[str, int]:
    """Logical binding id of every value that crosses a segment boundary."""
    ids: dict[str, int] = {}
    for name in graph.inputs:
        ids.setdefault(name, len(ids))
    outputs = set(graph.outputs)
    for p in plan.partitions:
        for name in p.outputs:
            if name not in outputs:
                ids.setdefault(name, len(ids))
    for name in graph.outputs:
        ids.setdefault(name, len(ids))
    return ids


def _view_key(
    descriptor: str, fmt: str, sampler: Sampler | None
) -> tuple[str, str, Sampler | None]:
    return (descriptor, fmt, sampler)


def plan_program(
    graph: Graph,
    plan: Plan,
    shaders: Mapping[int, ShaderModule],
    graph_modules: Mapping[int, GraphModule],
    *,
    keep_source: bool = False,
) -> Program:
    """Lay out modules, resources, constants and segments for ``plan``.

    ``shaders`` maps shader op indices to compiled modules, ``graph_modules`` maps ML partition
    ids to lowered graph modules (whose bindings came from :func:`logical_bindings`).
    """
    ids = logical_bindings(graph, plan)
    for name in graph.outputs:
        if name in graph.inputs:
            raise UnsupportedError(
                "a graph output that is also a graph input is not supported: nothing computes it",
                graph.where(),
                tensor=name,
            )
    # Every way each value is seen, in segment order: decides resource order and alias groups.
    views: dict[str, list[tuple[str, str, Sampler | None]]] = {}

    def see(tensor: str, key: tuple[str, str, Sampler | None]) -> None:
        seen = views.setdefault(tensor, [])
        if key not in seen:
            seen.append(key)

    unsigned = unsigned_values(graph)

    def graph_view(tensor: str) -> tuple[str, str, Sampler | None]:
        fmt = element_format(graph.tensors[tensor].dtype, tensor in unsigned)
        return _view_key(TENSOR_ARM, fmt, None)

    def shader_view(r: ShaderResource) -> tuple[str, str, Sampler | None]:
        return _view_key(r.descriptor_type, r.format, r.sampler)

    for p in plan.partitions:
        if p.kind is PartitionKind.ML:
            gm = graph_modules[p.id]
            for name in (*gm.inputs, *gm.outputs):
                see(name, graph_view(name))
        else:
            module = shaders[p.operators[0]]
            if any(c for c in p.constants):
                op = graph.operators[p.operators[0]]
                raise UnsupportedError(
                    "a shader that reads a constant directly is not supported yet: compute it "
                    "in the graph or pass it as a graph input",
                    op.where(graph.source),
                )
            for r in module.spec.inputs:
                see(r.tensor, shader_view(r))
            for r in module.spec.outputs:
                see(r.tensor, shader_view(r))

    groups = {t: g for g, t in enumerate(t for t, v in views.items() if len(v) > 1)}
    resources: list[Resource] = []
    constants: list[tuple[int, bytes]] = []
    constant_index: dict[int, int] = {}  # graph constant id -> index in the constant table
    for p in plan.partitions:
        if p.kind is PartitionKind.ML:
            for c in graph_modules[p.id].constants:
                if c.id in constant_index:
                    continue  # one graph constant read by several partitions is stored once
                resources.append(
                    Resource(
                        len(resources),
                        Category.CONSTANT,
                        c.tensor,
                        None,
                        element_format(c.dtype, c.tensor in unsigned),
                        c.shape,
                    )
                )
                constant_index[c.id] = len(constants)
                constants.append((len(resources) - 1, c.data))

    index_of: dict[tuple[str, tuple[str, str, Sampler | None]], int] = {}

    def resource(tensor: str, key: tuple[str, str, Sampler | None]) -> int:
        if (tensor, key) not in index_of:
            category = (
                Category.INPUT
                if tensor in graph.inputs
                else Category.OUTPUT
                if tensor in graph.outputs
                else Category.INTERMEDIATE
            )
            shape = graph.tensors[tensor].shape or ()
            index_of[tensor, key] = len(resources)
            resources.append(
                Resource(
                    len(resources),
                    category,
                    tensor,
                    key[0],
                    key[1],
                    shape,
                    groups.get(tensor),
                    key[2],
                )
            )
        return index_of[tensor, key]

    # Then the sequence inputs, in order, each in the view of its first reader; then the rest in
    # segment order (the reference converter's order).
    for name in graph.inputs:
        if name in views:
            resource(name, views[name][0])

    modules: list[Module] = []
    segments: list[Segment] = []
    names: set[str] = set()
    for p in plan.partitions:
        if p.kind is PartitionKind.ML:
            gm = graph_modules[p.id]
            ins = tuple(Slot(ids[n], resource(n, graph_view(n))) for n in gm.inputs)
            outs = tuple(Slot(ids[n], resource(n, graph_view(n))) for n in gm.outputs)
            modules.append(Module("graph", gm.name, gm.name, gm.spirv))
            segments.append(
                Segment(
                    index=len(segments),
                    kind="graph",
                    name=f"graph_segment_{sum(s.kind == 'graph' for s in segments)}",
                    module=len(modules) - 1,
                    partition=p.id,
                    descriptor_sets=(DescriptorSet(0, ins + outs),),
                    inputs=ins,
                    outputs=outs,
                    constant_bindings=tuple((c.id, constant_index[c.id]) for c in gm.constants),
                    dispatch=(0, 0, 0),
                    push_constant_ranges=(),
                )
            )
            names.add(gm.name)
            continue
        sm = shaders[p.operators[0]]
        spec = sm.spec
        by_set: dict[int, list[Slot]] = {}
        for r in spec.resources:
            by_set.setdefault(r.set, []).append(Slot(r.binding, resource(r.tensor, shader_view(r))))
        first_view: dict[str, tuple[str, str, Sampler | None]] = {}
        for r in spec.resources:
            first_view.setdefault(r.tensor, shader_view(r))
        ins = tuple(Slot(ids[n], resource(n, first_view[n])) for n in p.inputs)
        outs = tuple(Slot(ids[n], resource(n, first_view[n])) for n in p.outputs)
        name = spec.name or f"graph_partition_{p.id}"
        if name in names:
            name = f"{name}_{p.id}"
        names.add(name)
        if keep_source and spec.code is not None:
            entry = Module("compute", name, spec.entry_point, None, spec.code, spec.language)
        else:
            entry = Module("compute", name, spec.entry_point, sm.spirv)
        modules.append(entry)
        segments.append(
            Segment(
                index=len(segments),
                kind="compute",
                name=f"compute_segment_{sum(s.kind == 'compute' for s in segments)}",
                module=len(modules) - 1,
                partition=p.id,
                descriptor_sets=tuple(
                    DescriptorSet(s, tuple(sorted(slots, key=lambda x: x.binding)))
                    for s, slots in sorted(by_set.items())
                ),
                inputs=ins,
                outputs=outs,
                constant_bindings=(),
                dispatch=sm.dispatch,
                push_constant_ranges=sm.push_constant_ranges,
            )
        )

    def sequence_slot(name: str) -> Slot:
        first = next(
            (
                r.index
                for r in resources
                if r.tensor == name and r.category is not Category.CONSTANT
            ),
            None,
        )
        if first is None:  # an input nothing reads still gets its place in the sequence
            first = resource(name, graph_view(name))
        return Slot(ids[name], first)

    return Program(
        modules=tuple(modules),
        segments=tuple(segments),
        resources=tuple(resources),
        constants=tuple(constants),
        inputs=tuple((n, sequence_slot(n)) for n in graph.inputs),
        outputs=tuple((n, sequence_slot(n)) for n in graph.outputs),
    )
