"""What each descriptor a SPIR-V module declares is, and what its elements are read as, from
the module's types and decorations; and the byte size of a push-constant block.

For a storage or uniform buffer the element is the block's data array (its scalar type, vector
width and ``ArrayStride``); for an image the sampled type (and the format qualifier, already in
:attr:`ResourceBinding.image_format`); for an ``OpTypeTensorARM`` its element type.
"""

from __future__ import annotations

from vgfc.diagnostics import ShaderError
from vgfc.spirv.grammar import core_grammar
from vgfc.spirv.reflect_records import Element, ResourceBinding, glsl_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.spirv.reflect_index import ModuleIndex

__all__ = ["block_size", "resource_binding"]


def resource_binding(
    module: ModuleIndex, var_id: int, pointee: int, storage: str
) -> ResourceBinding | None:
    """The descriptor that global ``var_id`` (pointing at ``pointee`` in ``storage``) is;
    ``None`` for a type Vulkan does not bind. Raises :class:`ShaderError` without its
    DescriptorSet and Binding decorations."""
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


def _scalar(module: ModuleIndex, type_id: int, components: int = 1) -> Element | None:
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


def _block_element(module: ModuleIndex, block: int) -> Element | None:
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
    module: ModuleIndex, struct: int, stride: int | None, offset: int
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
    module: ModuleIndex, decorations: dict[str, list[int]], element: int, access: str | None
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


def block_size(
    module: ModuleIndex, type_id: int, matrix_stride: int = 0, row_major: bool = False
) -> int:
    """Byte size of a type in an explicitly laid-out block (Offset, ArrayStride, MatrixStride)."""
    op, operands = module.type(type_id)
    if op in ("OpTypeInt", "OpTypeFloat"):
        return operands[0] // 8
    if op == "OpTypePointer":
        return 8  # a PhysicalStorageBuffer64 address (buffer_reference)
    if op == "OpTypeVector":
        return operands[1] * block_size(module, operands[0])
    if op == "OpTypeMatrix":
        column, columns = operands
        if not matrix_stride:
            return columns * block_size(module, column)
        return (module.type(column)[1][1] if row_major else columns) * matrix_stride
    if op == "OpTypeArray":
        stride = module.decorations.get(type_id, {}).get("ArrayStride")
        element = stride[0] if stride else block_size(module, operands[0], matrix_stride, row_major)
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
            size = block_size(module, member_type, matrix_stride, "RowMajor" in decorations)
            end = max(end, decorations["Offset"][0] + size)
        return end
    raise ShaderError(f"cannot size a {op} (%{type_id}) in a push-constant block")
