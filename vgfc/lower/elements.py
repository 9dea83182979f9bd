"""What a shader reads against what the tensor holds: reflected element types held up against the
declared ``VkFormat`` (which the resource contract already tied to the tensor's dtype).

Nothing at run time checks this. A ``float x[]`` block over FP16 data reads two halves as one
float; an ``int`` over INT8 data reads four values as one; an ``isampler2D`` over a float image
returns undefined values; a ``vec3`` array or a std140 ``float u[16]`` strides past the packed
elements. Every one of them gives wrong numbers with no error anywhere, so vgfc refuses them and
says how to read the data instead.

One exception (docs/commands.md, "What a shader may read"): an *unsigned integer* element may
view any data as raw bits when the sizes fit whole elements into words (or words into elements):
``uint[]`` over FP32 read with ``uintBitsToFloat``, 32-bit words over FP16 pairs
(``unpackHalf2x16``) or INT8 quads (``unpack8``, ``bitfieldExtract``). That is a common packing
idiom and gets a note, not an error. A signed integer or a float element reading data of another
kind is an error.
"""

from __future__ import annotations

import re

from vgfc.diagnostics import Diagnostic, Location, Severity, ShaderError
from vgfc.ir import Graph, ShaderResource, ShaderSpec
from vgfc.record import record
from vgfc.spirv.reflect_records import Element, ResourceBinding, ShaderInfo, glsl_name
from vgfc.vulkan_names import FormatInfo, format_info

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.resolve.library.records import Kernel

__all__ = ["check_elements", "check_kernel_elements", "code_name"]

# What the shader must read each numeric kind of format as: a sampled or storage image returns
# float values for float, normalized and scaled formats, int for SINT, uint for UINT (Vulkan's
# "numeric type of the format must match the image's Sampled Type").
_IMAGE_KIND = {"SINT": "int", "UINT": "uint"}
# FPEncoding operand of OpTypeFloat for the ARM float formats.
_ENCODINGS = {
    "BFLOAT16": "BFloat16KHR",
    "FLOAT8E4M3": "Float8E4M3EXT",
    "FLOAT8E5M2": "Float8E5M2EXT",
}
# GLSL extension a buffer member of this width needs, for the fix we suggest.
_STORAGE_EXTENSION = {8: "GL_EXT_shader_8bit_storage", 16: "GL_EXT_shader_16bit_storage"}
# How to unpack 32-bit words into elements of each (numeric, bits).
_UNPACK = {
    ("SFLOAT", 16): "unpackHalf2x16",
    ("SFLOAT", 32): "uintBitsToFloat",
    ("SINT", 8): "unpack8 or bitfieldExtract",
    ("UINT", 8): "unpack8 or bitfieldExtract",
    ("BOOL", 8): "unpack8 or bitfieldExtract",
    ("SINT", 16): "bitfieldExtract",
    ("UINT", 16): "bitfieldExtract",
    ("BFLOAT16", 16): "a shift into the high half and uintBitsToFloat",
}
_IMAGE_FORMAT = re.compile(r"^(Rgba|Rg|R)(\d+)(f|i|ui|Snorm)?$")


@record
class _Data:
    """What one element of the tensor is, as the declared format says."""

    numeric: str
    """``SFLOAT``, ``SINT``, ``UINT``, ``BOOL``, ``BFLOAT16``, ``FLOAT8E4M3`` ..."""
    bits: int
    components: int
    dtype: str
    """The tensor's TOSA dtype, for messages."""

    @property
    def size(self) -> int:
        return self.bits // 8

    @property
    def kind(self) -> str:
        """The element kind that reads it exactly: float, int, uint (bool counts as uint)."""
        if self.numeric in ("SINT",):
            return "int"
        if self.numeric in ("UINT", "BOOL"):
            return "uint"
        return "float"


def check_elements(
    spec: ShaderSpec,
    bindings: dict[tuple[int, int], ResourceBinding],
    graph: Graph,
    where: Location,
) -> list[Diagnostic]:
    """Raise :class:`ShaderError` for the first resource the shader reads as a type that cannot
    hold the tensor's elements; notes for raw-bits views. ``bindings`` are the reflected
    resources the shader uses, by (set, binding)."""
    notes: list[Diagnostic] = []
    for r in spec.resources:
        b = bindings.get((r.set, r.binding))
        if b is None or b.element is None:
            continue
        info = format_info(r.format)
        if info is None:
            continue  # the contract refused it already
        data = _Data(info.numeric, info.bits, info.components, graph.tensors[r.tensor].dtype.value)
        note = _check_binding(spec, r, b, data, info, where)
        if note is not None:
            notes.append(note)
    return notes


def _check_binding(
    spec: ShaderSpec,
    r: ShaderResource,
    b: ResourceBinding,
    data: _Data,
    info: FormatInfo,
    where: Location,
) -> Diagnostic | None:
    """The element type the shader declares for ``b`` against what ``r``'s tensor holds: an
    error when it cannot read it, a note when it views it as raw bits."""
    e = b.element
    if e is None:
        return None  # reflection found no element type to hold against the data
    at = _where(r, where)
    if b.kind in ("combined_image_sampler", "sampled_image", "storage_image"):
        _check_image(spec, r, b, e, data, info, at)
    elif b.kind in ("storage_buffer", "uniform_buffer"):
        return _check_buffer(spec, r, b, e, data, at)
    elif b.kind == "tensor":
        return _check_tensor(spec, r, b, e, data, at)
    return None


def _exact(e: Element, data: _Data) -> bool:
    """True when ``e`` reads one element of ``data`` (per component) bit for bit."""
    if e.bits != data.bits:
        return False
    if data.numeric in _ENCODINGS:
        return e.kind == "float" and e.encoding == _ENCODINGS[data.numeric]
    if data.kind == "float":
        return e.kind == "float" and e.encoding is None
    # Integers are integers whatever their sign: the bits are the values.
    return e.kind in ("int", "uint")


def _where(r: ShaderResource, where: Location) -> Location:
    return Location(key=f"{r.key}_vkformat", tensor=r.tensor).merged(where)


def code_name(spec: ShaderSpec) -> str:
    """What messages call the shader's source: a kernel library's file (``swish.comp``), else
    the attribute that holds it (``shader_code``)."""
    if spec.source_file is not None:
        return spec.source_file.replace("\\", "/").rsplit("/", 1)[-1]
    return "shader_code"


def _declared_at(spec: ShaderSpec, b: ResourceBinding) -> tuple[str, tuple[str, ...]]:
    from vgfc.shader.messages import declaration, source_excerpt

    if spec.code is None or spec.language is None:
        return "", ()
    line = declaration(spec.code, spec.language, b.set, b.binding)
    if line is None:
        return "", ()
    return f" (declared at {code_name(spec)}:{line})", source_excerpt(spec.code, line)


def _resource(b: ResourceBinding) -> str:
    name = f" '{b.name}'" if b.name else ""
    return f"set {b.set} binding {b.binding} ({b.kind}{name})"


def _holds(r: ShaderResource, data: _Data) -> str:
    return f"{r.format} holds {data.dtype} elements"


def _wanted(data: _Data, language: str | None) -> str:
    """The element type that reads ``data`` exactly, with the extension it needs."""
    if data.numeric in _ENCODINGS:
        return f"a {data.bits}-bit float of encoding {_ENCODINGS[data.numeric]}"
    name = glsl_name(data.kind if data.numeric != "SINT" else "int", data.bits)
    if language == "HLSL":
        return name.removesuffix("_t") if data.bits != 16 else name
    extension = _STORAGE_EXTENSION.get(data.bits)
    return f"{name} ({extension})" if extension else name


def _fix(data: _Data, language: str | None) -> str:
    parts = [f"declare the element {_wanted(data, language)}"]
    unpack = _UNPACK.get((data.numeric, data.bits))
    if unpack is not None and data.bits <= 32:
        parts.append(f"read 32-bit uint words and convert with {unpack}")
    return " or ".join(parts)


def _check_buffer(
    spec: ShaderSpec, r: ShaderResource, b: ResourceBinding, e: Element, data: _Data, at: Location
) -> Diagnostic | None:
    if e.offset:
        shown, excerpt = _declared_at(spec, b)
        raise ShaderError(
            f"the shader's {_resource(b)} reads its data from byte {e.offset} of the block (a "
            f"member comes before the array), but the tensor '{r.tensor}' starts at byte 0: "
            f"move the array to the start of the block{shown}",
            at,
            excerpt=excerpt,
        )
    exact = _exact(e, data)
    raw = e.kind == "uint" and (e.size % data.size == 0 or data.size % e.size == 0)
    if not exact and not raw:
        shown, excerpt = _declared_at(spec, b)
        if e.kind == "uint":
            why = f"{e.size}-byte words do not fit whole {data.size}-byte elements"
        elif e.kind == data.kind and e.size == data.size:
            why = f"it reads each {data.dtype} element as a {e.describe()}, another encoding"
        elif e.kind != data.kind and e.bits == data.bits:
            what = {"float": "a float", "int": "an integer", "uint": "an integer"}[e.kind]
            why = f"it reads the bits of each {data.dtype} element as {what}"
        elif e.size > data.size:
            why = f"each read takes the bits of {e.size // max(data.size, 1)} elements"
        else:
            why = f"each element is read in {data.size // max(e.size, 1)} pieces"
        raise ShaderError(
            f"{_holds(r, data)}, but the shader reads {e.describe()} elements ({e.text}) "
            f"from {_resource(b)}: {why}; {_fix(data, spec.language)}{shown}",
            at,
            excerpt=excerpt,
        )
    packed = e.size
    if e.stride is not None and e.stride != packed:
        shown, excerpt = _declared_at(spec, b)
        layout = "std140 rounds" if b.kind == "uniform_buffer" else "the block layout rounds"
        raise ShaderError(
            f"the shader's {_resource(b)} reads {e.text} elements {e.stride} bytes apart "
            f"({layout} the array stride up), but the tensor '{r.tensor}' packs them "
            f"{packed} bytes apart: declare a scalar or vec4 array, or use "
            f"GL_EXT_scalar_block_layout{shown}",
            at,
            excerpt=excerpt,
        )
    if exact:
        return None
    count = e.size // data.size if e.size >= data.size else data.size // e.size
    if e.size == data.size:
        how = f"each {e.text} is one {data.dtype} element"
    elif e.size > data.size:
        how = f"each {e.text} holds {count} {data.dtype} elements"
    else:
        how = f"each {data.dtype} element is {count} {e.text} words"
    return Diagnostic(
        Severity.NOTE,
        f"the shader views {_resource(b)} as raw bits ({e.text}) over {data.dtype} data: "
        f"{how}, which it must convert itself (uintBitsToFloat, unpackHalf2x16 and the like)",
        at,
    )


def _check_tensor(
    spec: ShaderSpec, r: ShaderResource, b: ResourceBinding, e: Element, data: _Data, at: Location
) -> Diagnostic | None:
    if _exact(e, data):
        return None
    if e.kind == "uint" and e.bits == data.bits:
        return Diagnostic(
            Severity.NOTE,
            f"the shader reads {_resource(b)} as raw bits ({e.text}) over {data.dtype} data",
            at,
        )
    shown, excerpt = _declared_at(spec, b)
    raise ShaderError(
        f"{_holds(r, data)}, but the shader's tensor at {_resource(b)} has {e.describe()} "
        f"elements ({e.text}): declare the tensor's element type {_wanted(data, spec.language)}"
        f"{shown}",
        at,
        excerpt=excerpt,
    )


def _check_image(
    spec: ShaderSpec,
    r: ShaderResource,
    b: ResourceBinding,
    e: Element,
    data: _Data,
    info: FormatInfo,
    at: Location,
) -> None:
    want = _IMAGE_KIND.get(info.numeric, "float")
    if e.kind != want:
        shown, excerpt = _declared_at(spec, b)
        prefix = {"float": "", "int": "i", "uint": "u"}[want]
        kind = "sampler2D" if b.kind == "combined_image_sampler" else "image2D"
        raise ShaderError(
            f"{_holds(r, data)}, but the shader's {_resource(b)} returns {e.kind} values: "
            f"a {info.numeric} format is read as {want} (declare it {prefix}{kind}){shown}",
            at,
            excerpt=excerpt,
        )
    qualifier = b.image_format
    if qualifier is None or qualifier == "Unknown":
        return
    match = _IMAGE_FORMAT.match(qualifier)
    if match is None:
        return  # packed formats (R11fG11fB10f, Rgb10A2): no tensor describes them
    channels = {"R": 1, "Rg": 2, "Rgba": 4}[match.group(1)]
    numeric = {"f": "SFLOAT", "i": "SINT", "ui": "UINT", "Snorm": "SNORM", None: "UNORM"}[
        match.group(3)
    ]
    if (channels, int(match.group(2)), numeric) == (info.components, info.bits, info.numeric):
        return
    shown, excerpt = _declared_at(spec, b)
    raise ShaderError(
        f"{_holds(r, data)}, but the shader's {_resource(b)} is declared "
        f"layout({_glsl_format(qualifier)}); a storage image's format qualifier must match the "
        f"image's format: declare layout({_qualifier(info)}){shown}",
        at,
        excerpt=excerpt,
    )


def _glsl_format(enumerant: str) -> str:
    """``Rgba8Snorm`` -> ``rgba8_snorm`` (GLSL spells format qualifiers in lower case)."""
    return enumerant.replace("Snorm", "_snorm").lower()


def _qualifier(info: FormatInfo) -> str:
    """The GLSL format qualifier of a format (``rgba32f``, ``r8ui``, ``rgba8``)."""
    channels = {1: "r", 2: "rg", 4: "rgba"}.get(info.components, "rgba")
    suffix = {"SFLOAT": "f", "SINT": "i", "UINT": "ui", "SNORM": "_snorm"}.get(info.numeric, "")
    return f"{channels}{info.bits}{suffix}"


def check_kernel_elements(
    kernel: Kernel, operands: tuple[str, ...], inputs: int, info: ShaderInfo
) -> None:
    """The same check for a kernel-library kernel without a model (``vgfc kernels``): each
    operand's shader element against every dtype its ``arg_meta`` admits (an operand that
    admits anything is checked at compile time, against the model's dtype). Raises
    :class:`ShaderError` naming ``resources.<operand>`` and the dtype."""
    from vgfc.dtypes import element_format
    from vgfc.ir import IMAGE_DESCRIPTORS

    reflected = {(b.set, b.binding): b for b in info.bindings}
    for position, name in enumerate(operands):
        meta = kernel.arg_meta.get(name)
        r = kernel.resources[name]
        b = reflected.get((r.set, r.binding))
        if meta is None or meta.dtypes is None or b is None or b.element is None:
            continue
        if r.descriptor in IMAGE_DESCRIPTORS and r.format is None:
            continue  # the format depends on the model's channel count
        for dtype in meta.dtypes:
            fmt = r.format or element_format(dtype)
            info_ = format_info(fmt)
            if info_ is None:
                continue
            role, index = (
                ("input", position) if position < inputs else ("output", position - inputs)
            )
            resource = ShaderResource(role, index, name, r.binding, r.set, r.descriptor, fmt, None)
            spec = ShaderSpec(name, "main", (1, 1, 1), None, None, None, None, (), (resource,), ())
            data = _Data(info_.numeric, info_.bits, info_.components, dtype.value)
            try:
                _check_binding(spec, resource, b, data, info_, Location())
            except ShaderError as e:
                shown = kernel.shader.path.name
                raise ShaderError(
                    f"resources.{name}: arg_meta admits {dtype.value}, but in {shown}: {e.message}"
                ) from None
