"""Lay out the VGF model of a lowered plan once, for the whole model sequence.

Plan + one lowered module per partition -> :class:`~vgfc.vgf.model.Model`. The layout follows the
reference converter, so runtimes built for its files work unchanged:

* every value that crosses a segment boundary gets one **logical binding id**
  (:func:`vgfc.partition.logical_bindings`): graph inputs first (0..n-1), then intermediates in
  segment order, then graph outputs;
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

from collections.abc import Mapping, Sequence

from vgfc.diagnostics import VgfcError
from vgfc.dtypes import element_format
from vgfc.ir import Graph
from vgfc.lower.graph import GraphModule
from vgfc.partition import Partition, Plan
from vgfc.vgf.model import (
    Category,
    Constant,
    DescriptorSet,
    Interface,
    Model,
    Module,
    ModuleType,
    Resource,
    Segment,
    Slot,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.ir import ShaderResource
    from vgfc.ir_shaders import Sampler
    from vgfc.lower.shader import ShaderModule

__all__ = ["TENSOR_ARM", "layout", "unsigned_values"]

TENSOR_ARM = "VK_DESCRIPTOR_TYPE_TENSOR_ARM"

_View = tuple[str, str, "Sampler | None"]
"""How a value is seen: (descriptor type, format, sampler)."""


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


def _shader_view(r: ShaderResource) -> _View:
    return (r.descriptor_type, r.format, r.sampler)


class _Layout:
    """The tables being filled, and the rules that decide each entry."""

    def __init__(self, graph: Graph, bindings: Mapping[str, int]) -> None:
        self.graph = graph
        self.bindings = bindings
        self.unsigned = unsigned_values(graph)
        self.views: dict[str, list[_View]] = {}
        self.groups: dict[str, int] = {}
        self.resources: list[Resource] = []
        self.index_of: dict[tuple[str, _View], int] = {}
        self.constants: list[Constant] = []
        self.constant_index: dict[int, int] = {}  # graph constant id -> constant table index

    def graph_view(self, tensor: str) -> _View:
        dtype = self.graph.tensors[tensor].dtype
        try:
            fmt = element_format(dtype, tensor in self.unsigned)
        except VgfcError as e:  # the dtype table cannot know which file and tensor it is about
            raise e.at(self.graph.where(), tensor=tensor) from None
        return (TENSOR_ARM, fmt, None)

    def see_all(self, modules: Sequence[GraphModule | ShaderModule]) -> None:
        """Every way each value is seen, in segment order: decides resource order and alias
        groups (a value seen more than one way gets a group, numbered by first sight)."""
        for module in modules:
            if isinstance(module, GraphModule):
                seen = [(n, self.graph_view(n)) for n in (*module.inputs, *module.outputs)]
            else:
                seen = [(r.tensor, _shader_view(r)) for r in module.spec.resources]
            for tensor, view in seen:
                known = self.views.setdefault(tensor, [])
                if view not in known:
                    known.append(view)
        multiple = (t for t, v in self.views.items() if len(v) > 1)
        self.groups = {t: g for g, t in enumerate(multiple)}

    def add_constants(self, modules: Sequence[GraphModule]) -> None:
        """Constant resources first; one graph constant read by several partitions is stored
        once."""
        for module in modules:
            for c in module.constants:
                if c.id in self.constant_index:
                    continue
                fmt = element_format(c.dtype, c.tensor in self.unsigned)
                self.resources.append(
                    Resource(Category.CONSTANT, None, fmt, c.shape, tensor=c.tensor)
                )
                self.constant_index[c.id] = len(self.constants)
                self.constants.append(Constant(len(self.resources) - 1, c.data, origin=c.origin))

    def resource(self, tensor: str, view: _View) -> int:
        """The resource of ``tensor`` seen as ``view``, added on first use."""
        key = (tensor, view)
        if key not in self.index_of:
            graph = self.graph
            category = (
                Category.INPUT
                if tensor in graph.inputs
                else Category.OUTPUT
                if tensor in graph.outputs
                else Category.INTERMEDIATE
            )
            self.index_of[key] = len(self.resources)
            self.resources.append(
                Resource(
                    category,
                    view[0],
                    view[1],
                    graph.tensors[tensor].shape or (),
                    alias_group=self.groups.get(tensor),
                    sampler=view[2],
                    tensor=tensor,
                )
            )
        return self.index_of[key]

    def slot(self, tensor: str, view: _View) -> Slot:
        return Slot(self.bindings[tensor], self.resource(tensor, view))

    def graph_segment(self, p: Partition, gm: GraphModule, index: int) -> Segment:
        ins = tuple(self.slot(n, self.graph_view(n)) for n in gm.inputs)
        outs = tuple(self.slot(n, self.graph_view(n)) for n in gm.outputs)
        return Segment(
            type=ModuleType.GRAPH,
            name=f"graph_segment_{index}",
            module=p.id,
            descriptor_sets=(DescriptorSet(0, ins + outs),),
            inputs=ins,
            outputs=outs,
            constant_bindings=tuple((c.id, self.constant_index[c.id]) for c in gm.constants),
            partition=p.id,
        )

    def compute_segment(self, p: Partition, sm: ShaderModule, index: int) -> Segment:
        by_set: dict[int, list[Slot]] = {}
        first_view: dict[str, _View] = {}
        for r in sm.spec.resources:
            view = _shader_view(r)
            by_set.setdefault(r.set, []).append(Slot(r.binding, self.resource(r.tensor, view)))
            first_view.setdefault(r.tensor, view)
        return Segment(
            type=ModuleType.COMPUTE,
            name=f"compute_segment_{index}",
            module=p.id,
            descriptor_sets=tuple(
                DescriptorSet(s, tuple(sorted(slots, key=lambda x: x.binding)))
                for s, slots in sorted(by_set.items())
            ),
            inputs=tuple(self.slot(n, first_view[n]) for n in p.inputs),
            outputs=tuple(self.slot(n, first_view[n]) for n in p.outputs),
            dispatch=sm.dispatch,
            push_constant_ranges=sm.push_constant_ranges,
            partition=p.id,
        )

    def interface(self, name: str, shown: str | None = None) -> Interface:
        """A sequence input or output, bound to the first resource that holds the value;
        named ``shown`` where the model calls it so (the tensor's name otherwise)."""
        first = next(
            (
                i
                for i, r in enumerate(self.resources)
                if r.tensor == name and r.category is not Category.CONSTANT
            ),
            None,
        )
        if first is None:  # an input nothing reads still gets its place in the sequence
            first = self.resource(name, self.graph_view(name))
        return Interface(name if shown is None else shown, self.bindings[name], first)


def _modules(
    plan: Plan, lowered: Sequence[GraphModule | ShaderModule], keep_source: bool
) -> tuple[Module, ...]:
    """The module table: graph modules under their lowered names, compute modules under the
    custom op's ``operator_name`` (made unique with the partition id)."""
    modules: list[Module] = []
    names: set[str] = set()
    for p, m in zip(plan.partitions, lowered, strict=True):
        if isinstance(m, GraphModule):
            modules.append(Module(ModuleType.GRAPH, m.name, m.name, m.spirv))
            names.add(m.name)
            continue
        spec = m.spec
        name = spec.name or f"graph_partition_{p.id}"
        if name in names:
            name = f"{name}_{p.id}"
        names.add(name)
        if keep_source and spec.code is not None:
            modules.append(
                Module(ModuleType.COMPUTE, name, spec.entry_point, None, spec.code, spec.language)
            )
        else:
            modules.append(Module(ModuleType.COMPUTE, name, spec.entry_point, m.spirv))
    return tuple(modules)


def layout(
    graph: Graph,
    plan: Plan,
    lowered: Sequence[GraphModule | ShaderModule],
    bindings: Mapping[str, int],
    *,
    keep_source: bool = False,
) -> Model:
    """The VGF model of ``plan``: ``lowered`` holds one module per partition (in partition
    order), ``bindings`` the ids from :func:`vgfc.partition.logical_bindings` (which the graph
    modules were decorated with)."""
    state = _Layout(graph, bindings)
    state.see_all(lowered)
    state.add_constants([m for m in lowered if isinstance(m, GraphModule)])
    # Then the sequence inputs, in order, each in the view of its first reader; then the rest in
    # segment order (the reference converter's order).
    for name in graph.inputs:
        if name in state.views:
            state.resource(name, state.views[name][0])
    segments: list[Segment] = []
    counts = {ModuleType.GRAPH: 0, ModuleType.COMPUTE: 0}
    for p, m in zip(plan.partitions, lowered, strict=True):
        if isinstance(m, GraphModule):
            segment = state.graph_segment(p, m, counts[ModuleType.GRAPH])
        else:
            segment = state.compute_segment(p, m, counts[ModuleType.COMPUTE])
        counts[segment.type] += 1
        segments.append(segment)
    modules = _modules(plan, lowered, keep_source)
    inputs = tuple(state.interface(n) for n in graph.inputs)
    shown = graph.output_names or graph.outputs
    outputs = tuple(state.interface(n, s) for n, s in zip(graph.outputs, shown, strict=True))
    return Model(
        modules=modules,
        segments=tuple(segments),
        resources=tuple(state.resources),
        constants=tuple(state.constants),
        inputs=inputs,
        outputs=outputs,
    )
