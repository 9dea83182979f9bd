"""The records reflection returns (:class:`ShaderInfo`, :class:`ResourceBinding`,
:class:`Element`) and the GLSL spelling of the element types they hold (:func:`glsl_name`).

Element types are what lets the compiler hold a shader to the data a tensor holds: a
``float x[]`` block over FP16 data reads pairs of halves as one float, and nothing at run time
notices. :mod:`vgfc.spirv.reflect_resources` finds them; :mod:`vgfc.lower.elements` holds them
against the tensors.
"""

from __future__ import annotations

from vgfc.record import field, record

__all__ = ["Element", "ResourceBinding", "ShaderInfo", "glsl_name"]


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
    """What :func:`vgfc.spirv.reflect.reflect` found in a module."""

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
