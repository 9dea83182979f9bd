"""An ML partition -> a SPIR-V graph module (``SPV_ARM_graph``, TOSA.001000.1 instructions).

Each ML partition becomes one module with one graph entry point. The partition's inputs and
outputs are the graph's inputs and outputs, backed by ``UniformConstant`` tensor variables
decorated ``DescriptorSet 0`` and the ``Binding`` the resource plan chose. Operators become
``OpExtInst`` instructions through :data:`vgfc.spirv.tosa_ops.TOSA_LOWERINGS`; the structural
ops are entries of :data:`STRUCTURAL_LOWERINGS` (IDENTITY is folded away, control flow and state
are refused with the reason); CONST and CONST_SHAPE values become inline constants when small and
graph constants (``OpGraphConstantARM``, data carried beside the module) when large.

The size rule is the reference converter's: a CONST with more than 16 elements, or a CONST_SHAPE
with more than 32, is a graph constant. Graph constant ids are numbered over the whole graph in
program order (only constants that something reads and that are over the limit get one), as the
reference converter numbers them, so a constant two partitions read has the same id in both and
the VGF needs to hold it once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import MappingProxyType

from vgfc.diagnostics import Diagnostic, InputError, InternalError, UnsupportedError, VgfcError
from vgfc.environments import GRAPH_SPIRV
from vgfc.ir import Data, DType, Graph, Operator, Tensor
from vgfc.lower.call import check_call, lower_call
from vgfc.lower.constant_operands import LOWERED_OTHERWISE, ConstantOperands
from vgfc.lower.pad_value import lower_pad_with_input_value
from vgfc.partition import Partition, PartitionKind
from vgfc.record import field, record
from vgfc.spirv.builder import ModuleBuilder
from vgfc.spirv.extinst import TOSA_SET
from vgfc.spirv.tensors import (
    BASE_CAPABILITIES,
    BASE_EXTENSIONS,
    constant_buffer,
    data_bits,
    spirv_shape,
    storage_dtype,
    tensor_constant,
    tensor_type,
)
from vgfc.spirv.tosa_ops import TOSA_LOWERINGS, check_operand_counts, lower_operator

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap

__all__ = [
    "DEFAULT_INLINE_LIMIT",
    "SHAPE_INLINE_LIMIT",
    "GraphConstant",
    "GraphModule",
    "graph_constant_ids",
    "lower_partition",
]

DEFAULT_INLINE_LIMIT = 16
"""CONST values with at most this many elements are inlined (the reference converter's limit)."""
SHAPE_INLINE_LIMIT = 32
"""CONST_SHAPE values with at most this many elements are inlined (also the reference's)."""


@record
class GraphConstant:
    """A tensor the module reads through ``OpGraphConstantARM``; its data goes into the VGF."""

    id: int
    """The ``GraphConstantID`` operand of ``OpGraphConstantARM``."""
    tensor: str
    """The TOSA tensor it came from."""
    dtype: DType
    """Element type of ``data``: the tensor's, except INT4 -> INT8, INT48 -> INT64 and
    SHAPE -> INT32, which are widened the way their SPIR-V tensor types are."""
    shape: tuple[int, ...]
    """Shape of the SPIR-V tensor (a rank-0 tensor has shape ``(1,)``)."""
    data: bytes | memoryview
    """Packed little-endian elements; BOOL is one byte per element (0xFF for true). Where no
    conversion is needed, a read-only byte view of the tensor's data (of the input file)."""
    origin: tuple[mmap.mmap, int] | None = field(default=None, compare=False, repr=False)
    """The read-only memory map ``data`` is a view of and where in it ``data`` starts."""


@record
class GraphModule:
    """One ML partition lowered to a SPIR-V graph module."""

    name: str
    """Module and entry point name, e.g. ``graph_partition_0``."""
    spirv: bytes
    inputs: tuple[str, ...]
    """Tensors bound to the graph's inputs, in ``OpGraphInputARM`` index order."""
    outputs: tuple[str, ...]
    """Tensors bound to the graph's outputs, in ``OpGraphSetOutputARM`` index order."""
    constants: tuple[GraphConstant, ...]
    """The graph constants the module reads, by increasing id."""
    warnings: tuple[Diagnostic, ...] = ()


def graph_constant_ids(graph: Graph, inline_limit: int = DEFAULT_INLINE_LIMIT) -> dict[str, int]:
    """Tensor name -> graph constant id, for every constant too large to inline.

    Numbered in program order over the whole graph; constants nothing reads get no id.
    """
    large: list[str] = []
    for op in graph.operators:
        if not op.is_constant:
            continue
        limit = SHAPE_INLINE_LIMIT if op.op == "CONST_SHAPE" else inline_limit
        for name in op.outputs:
            tensor = graph.tensors.get(name)
            if tensor is not None and _element_count(tensor) > limit:
                large.append(name)
    if not large:
        return {}  # nor collect what every operator reads
    read = {name for op in graph.operators if not op.is_constant for name in op.inputs}
    read.update(graph.outputs)
    return {name: i for i, name in enumerate(n for n in large if n in read)}


def _element_count(tensor: Tensor) -> int:
    return 0 if tensor.data is None else int(tensor.data.size)


class _Unsupported:
    """A lowering-table entry for an op TOSA.001000.1 has no instruction for, with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def error(self, op: Operator) -> UnsupportedError:
        return UnsupportedError(f"cannot lower {op.op} to a SPIR-V graph: {self.reason}")

    def __call__(self, em: _Emitter, op: Operator) -> None:
        raise self.error(op)


def _fold_identity(em: _Emitter, op: Operator) -> None:
    """IDENTITY emits nothing: its output names the same value as its input."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise InputError(
            f"IDENTITY takes one input and one output, not {len(op.inputs)} and {len(op.outputs)}"
        )
    source, result = em.tensor(op.inputs[0]), em.tensor(op.outputs[0])
    if source.shape != result.shape or source.dtype is not result.dtype:

        def text(t: Tensor) -> str:
            shape = "unranked" if t.shape is None else str(list(t.shape))
            return f"{t.dtype.value} {shape}"

        raise InputError(
            f"IDENTITY must keep its value as it is, but turns {text(source)} into "
            f"{text(result)}: use RESHAPE or CAST",
            tensor=op.outputs[0],
        )
    em.aliases[op.outputs[0]] = em.aliases.get(op.inputs[0], op.inputs[0])


def _extinst(em: _Emitter, op: Operator) -> None:
    if op.op in LOWERED_OTHERWISE and not em.is_constant(op.inputs[-1]):
        # PAD with a pad value from an input: instructions that take it so (ConstantOperands)
        em.values[op.outputs[0]] = lower_pad_with_input_value(em, op)
        return
    # lower_partition checked every op's operand counts before emitting anything
    for name, value in zip(op.outputs, lower_operator(em, op, counts_checked=True), strict=True):
        em.values[name] = value
        em.computed.add(name)


_CONTROL_FLOW = _Unsupported("control flow has no TOSA.001000.1 instruction")
_STATE = _Unsupported("stateful variables have no TOSA.001000.1 instruction")

STRUCTURAL_LOWERINGS: Mapping[str, Callable[[_Emitter, Operator], None]] = MappingProxyType(
    {
        "IDENTITY": _fold_identity,
        "COND_IF": _CONTROL_FLOW,
        "WHILE_LOOP": _CONTROL_FLOW,
        "VARIABLE": _STATE,
        "VARIABLE_READ": _STATE,
        "VARIABLE_WRITE": _STATE,
        "CUSTOM": _Unsupported(
            "only com.arm.VulkanCustomShader custom operators are supported, and those of a "
            "domain --custom-op-domain-to-opcode maps"
        ),
    }
)
"""How the ops that are not TOSA.001000.1 instructions lower: folded away, or refused with the
reason. Every other op is one ``OpExtInst`` through :data:`TOSA_LOWERINGS`."""

_NEWER = _Unsupported(
    "it is not a TOSA 1.0 operator (TOSA 1.1 draft), so TOSA.001000.1 has no instruction"
)


def _lowering(op: Operator) -> Callable[[_Emitter, Operator], None]:
    if op.op in TOSA_LOWERINGS:
        return _extinst
    if op.call_opcode is not None:
        return lower_call
    return STRUCTURAL_LOWERINGS.get(op.op, _NEWER)


def _check_supported(op: Operator) -> None:
    if op.op in TOSA_LOWERINGS:
        check_operand_counts(op)
        return
    if op.call_opcode is not None:
        check_call(op)
        return
    lowering = STRUCTURAL_LOWERINGS.get(op.op, _NEWER)
    if isinstance(lowering, _Unsupported):
        raise lowering.error(op)


@functools.cache
def _prologue(version: tuple[int, int]) -> ModuleBuilder:
    """What every graph module starts with (never changed: each module builds on a copy)."""
    b = ModuleBuilder(version)
    b.capability(*BASE_CAPABILITIES)
    b.extension(*BASE_EXTENSIONS)
    b.import_set(TOSA_SET)
    b.memory_model("Logical", "Vulkan")
    return b


class _Emitter:
    """Builds one graph: maps tensor names to SPIR-V values while the operators are lowered."""

    def __init__(
        self, graph: Graph, ids: Mapping[str, int], name: str, version: tuple[int, int]
    ) -> None:
        self.graph = graph
        self.name = name
        self.builder = _prologue(version).copy()
        self.instruction_set = self.builder.import_set(TOSA_SET)
        self.ids = ids
        self.variables: list[int] = []
        self.values: dict[str, int] = {}
        self.aliases: dict[str, str] = {}
        self.constants: dict[int, GraphConstant] = {}
        self.checked: dict[str, Tensor] = {}
        self.computed: set[str] = set()
        """Tensors an instruction computes (the others are inputs or constants)."""

    def tensor(self, name: str) -> Tensor:
        """The tensor ``name``, checked to be one a SPIR-V graph can hold."""
        tensor = self.checked.get(name)
        if tensor is None:
            tensor = self.checked[name] = self._check_tensor(name)
        return tensor

    def _check_tensor(self, name: str) -> Tensor:
        tensor = self.graph.tensors.get(name)
        if tensor is None:
            raise InputError("refers to a tensor the model does not define", tensor=name)
        if tensor.is_variable:
            raise UnsupportedError(
                "stateful variable tensors have no TOSA.001000.1 equivalent", tensor=name
            )
        if tensor.shape is None:
            raise UnsupportedError("unranked tensors cannot be lowered to SPIR-V", tensor=name)
        if not tensor.shape or min(tensor.shape) > 0:
            return tensor  # what nearly every tensor is, found without the checks below
        if any(d < 0 for d in tensor.shape):
            raise UnsupportedError(
                f"dynamic shape {list(tensor.shape)}: SPIR-V graph tensors need static shapes",
                tensor=name,
            )
        if tensor.dtype is not DType.SHAPE and any(d == 0 for d in tensor.shape):
            raise UnsupportedError(
                f"shape {list(tensor.shape)} has no elements; SPIR-V tensors cannot be empty",
                tensor=name,
            )
        return tensor

    def type_of(self, name: str) -> int:
        tensor = self.tensor(name)
        if tensor.dtype is DType.SHAPE:
            raise UnsupportedError(
                "a shape value computed at run time cannot cross a graph boundary", tensor=name
            )
        return tensor_type(self.builder, tensor.dtype, tensor.shape or ())

    def is_constant(self, name: str) -> bool:
        """The value of ``name`` is a CONST's (also through IDENTITY ops)."""
        return self.graph.tensors[self.aliases.get(name, name)].data is not None

    def operand(self, name: str) -> int:
        name = self.aliases.get(name, name)
        found = self.values.get(name)
        if found is None:
            found = self.values[name] = self._constant(name)
        return found

    def _constant(self, name: str) -> int:
        tensor = self.tensor(name)
        data = tensor.data
        if data is None and tensor.is_shape and tensor.shape == (0,):
            # The shape of a rank-0 tensor: no values, no bytes.
            data = Data(memoryview(b"").toreadonly(), DType.SHAPE, (0,))
        if data is None:
            if tensor.is_shape:
                raise UnsupportedError(
                    "shape operands must be constants (CONST_SHAPE) to lower to SPIR-V",
                    tensor=name,
                )
            raise InternalError(
                "the partition reads a tensor it neither receives nor computes", tensor=name
            )
        b = self.builder
        constant_id = self.ids.get(name)
        if constant_id is None:
            bits = data_bits(data)
            return tensor_constant(b, tensor.dtype, tensor.shape or (), bits, replicate=True)
        shape = spirv_shape(tensor.shape or (), tensor.dtype)
        buffer = constant_buffer(data)
        origin = data.origin if buffer is data.raw else None
        self.constants[constant_id] = GraphConstant(
            constant_id, name, storage_dtype(tensor.dtype), shape, buffer, origin
        )
        return b.graph_constant(tensor_type(b, tensor.dtype, tensor.shape or ()), constant_id)

    def output(self, name: str) -> int:
        """The value graph output ``name`` is set to. A small constant is spelt out even when
        it is all zeros: the emulation layer writes nothing to an output set to an
        ``OpConstantNull`` (an all-false BOOL output came back unwritten)."""
        source = self.aliases.get(name, name)
        tensor = self.tensor(source)
        if tensor.data is None or source in self.ids or source in self.computed:
            return self.operand(name)
        bits = data_bits(tensor.data)
        shape = tensor.shape or ()
        return tensor_constant(self.builder, tensor.dtype, shape, bits, replicate=True, null=False)

    def interface(self, names: tuple[str, ...], bindings: Mapping[str, int], tag: str) -> list[int]:
        """Declare one tensor variable per graph input (or output); returns their types."""
        types = []
        kind = "input" if tag == "arg" else "output"
        for index, name in enumerate(names):
            if name not in bindings:
                raise InternalError(f"the resource plan gave no binding for graph {kind} '{name}'")
            type_id = self.type_of(name)
            pointer = self.builder.type_pointer("UniformConstant", type_id)
            variable = self.builder.variable(pointer, "UniformConstant")
            self.builder.name(variable, f"{self.name}_{tag}_{index}")
            self.builder.decorate(variable, "Binding", bindings[name])
            self.builder.decorate(variable, "DescriptorSet", 0)
            self.variables.append(variable)
            types.append(type_id)
        return types


def lower_partition(
    graph: Graph,
    partition: Partition,
    bindings: Mapping[str, int],
    *,
    name: str | None = None,
    inline_limit: int = DEFAULT_INLINE_LIMIT,
    constant_ids: Mapping[str, int] | None = None,
    spirv_version: tuple[int, int] = GRAPH_SPIRV,
    debug_info: bool = False,
    replicated_composites: bool = True,
) -> GraphModule:
    """Lower one ML partition of ``graph`` to a SPIR-V graph module.

    ``bindings`` gives the ``Binding`` (descriptor set 0) of every partition input and output.
    Constants with more than ``inline_limit`` elements (CONST_SHAPE: more than
    :data:`SHAPE_INLINE_LIMIT`) become graph constants, listed in the result; ``constant_ids``
    (from :func:`graph_constant_ids`, computed once for all partitions) is found here when not
    given. ``spirv_version`` is the module's (the target environment's, at most
    :data:`~vgfc.environments.GRAPH_SPIRV`); ``debug_info`` adds the reference converter's
    NonSemantic.Graph.DebugInfo.1 instructions (:mod:`vgfc.lower.debug_info`);
    ``replicated_composites`` off spells out constants of equal elements
    (``--disable-replicated-composites``), so the module needs no
    VK_EXT_shader_replicated_composites. Raises
    :class:`UnsupportedError` for operators or tensors TOSA.001000.1 cannot express.
    """
    if partition.kind is not PartitionKind.ML:
        raise InternalError(f"partition {partition.id} is a shader partition, not ML work")
    ops = [graph.operators[i] for i in partition.operators]
    if constant_ids is None:
        constant_ids = graph_constant_ids(graph, inline_limit)
    em = _Emitter(graph, constant_ids, name or _default_name(partition), spirv_version)
    em.builder.replicated_composites = replicated_composites
    # Everything a user can fix is reported before anything is built. One handler for the loop,
    # not a context manager per op: a 100,000-op graph pays for each.
    op = None
    constant_operands = ConstantOperands(graph)
    try:
        for op in ops:
            _check_supported(op)
            for tensor in op.inputs:
                em.tensor(tensor)
            for tensor in op.outputs:
                em.tensor(tensor)
            constant_operands.check(op)
    except VgfcError as e:
        raise e.at(graph.where(op)) from None
    if not partition.outputs:
        raise UnsupportedError(
            f"ML partition {partition.id} computes nothing that is read; "
            "a SPIR-V graph needs at least one output",
            graph.where(ops[0] if ops else None),
        )
    inputs = _graph_order(partition.inputs, graph.inputs)
    outputs = _graph_order(partition.outputs, graph.outputs)
    b = em.builder
    try:
        in_types = em.interface(inputs, bindings, "arg")
        out_types = em.interface(outputs, bindings, "res")
    except VgfcError as e:
        raise e.at(graph.where()) from None
    graph_id = b.new_id()
    graph_type = b.type_graph(in_types, out_types)
    b.graph_entry_point(graph_id, em.name, em.variables)
    b.begin_graph(graph_type, graph_id)
    for index, (tensor, type_id) in enumerate(zip(inputs, in_types, strict=True)):
        em.values[tensor] = b.graph_input(type_id, index)
    op = None
    try:
        for op in ops:
            _lowering(op)(em, op)
    except VgfcError as e:
        raise e.at(graph.where(op)) from None
    tensor = ""
    try:  # one handler, not a context manager per output: some modules are one op
        values = [em.output(tensor) for tensor in outputs]
        if debug_info:
            from vgfc.lower.debug_info import emit_debug_info

            consts = [graph.operators[i] for i in partition.constants]
            emit_debug_info(em, graph_id, ops, consts, inputs, outputs, values)
        for index, value in enumerate(values):
            b.graph_set_output(value, index)
    except VgfcError as e:
        raise e.at(graph.where(), tensor=tensor) from None
    b.end_graph()
    constants = tuple(em.constants[i] for i in sorted(em.constants))
    return GraphModule(em.name, b.to_bytes(), inputs, outputs, constants)


def _default_name(partition: Partition) -> str:
    return f"graph_partition_{partition.id}"


def _graph_order(names: tuple[str, ...], model_order: tuple[str, ...]) -> tuple[str, ...]:
    """Model inputs (outputs) first, in the model's order, then the partition's own order.

    A partition holding the whole model then has the model's signature, as the reference
    converter writes it.
    """
    position = {name: i for i, name in enumerate(model_order)}
    ranked = sorted(enumerate(names), key=lambda x: (position.get(x[1], len(position)), x[0]))
    return tuple(name for _, name in ranked)
