"""The shader must read what the tensor holds: reflected element types against the declared
VkFormat and the tensor's dtype (vgfc/lower/elements.py).

Each mismatch class is refused naming the key, both types and a fix; each packing idiom and
exact match compiles (raw-bits views with a note). The oracle is the case table itself: every
shader below was written by hand for the data it is paired with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tosa_factory import T, build, custom

from vgfc.compiler import compile_model
from vgfc.diagnostics import Severity, VgfcError

STORAGE = "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
UNIFORM = "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER"
SAMPLER = "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER"
IMAGE = "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE"
FORMATS = {
    "FP32": "VK_FORMAT_R32_SFLOAT",
    "FP16": "VK_FORMAT_R16_SFLOAT",
    "INT8": "VK_FORMAT_R8_SINT",
    "INT16": "VK_FORMAT_R16_SINT",
    "INT32": "VK_FORMAT_R32_SINT",
    "BOOL": "VK_FORMAT_R8_BOOL_ARM",
}
EXT = """#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
"""


def shader(inp: str, out: str, body: str, extra: str = "") -> str:
    return f"""#version 450
{EXT}layout(local_size_x = 1) in;
{extra}layout(set = 0, binding = 0) readonly buffer In {{ {inp}; }};
layout(set = 0, binding = 1) writeonly buffer Out {{ {out}; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    {body}
}}
"""


def model(
    tmp_path: Path,
    code: str,
    dtype: str,
    out_dtype: str | None = None,
    *,
    shape: tuple[int, ...] = (1, 16),
    counts: tuple[int, int, int] = (16, 1, 1),
    descriptors: tuple[str, str] = (STORAGE, STORAGE),
    formats: tuple[str | None, str | None] = (None, None),
    **extra: Any,
) -> Path:
    out_dtype = out_dtype or dtype
    attrs: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": list(counts),
        "shader_language": "GLSL",
        "shader_code": code,
    }
    dtypes = (dtype, out_dtype)
    for i, role in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": descriptors[i],
            f"{role}_vkformat": formats[i] or FORMATS[dtypes[i]],
        }
    attrs |= extra
    path = tmp_path / "m.tosa"
    tensors = [T("x", shape, dtype), T("y", shape, out_dtype)]
    path.write_bytes(build(tensors, [custom(["x"], ["y"], "k", attrs=attrs)], ["x"], ["y"]))
    return path


def refused(path: Path) -> str:
    with pytest.raises(VgfcError) as e:
        compile_model(path)
    return str(e.value)


# (name, shader, tensor dtype in, dtype out, words that must be in the message)
MISMATCHES = [
    (
        "float over fp16",
        shader("float x[]", "float y[]", "y[i] = x[i];"),
        "FP16",
        "FP16",
        ["input_0_vkformat", "VK_FORMAT_R16_SFLOAT", "FP16", "32-bit float", "float16_t"],
    ),
    (
        "float16 over fp32",
        shader("float16_t x[]", "float16_t y[]", "y[i] = x[i];"),
        "FP32",
        "FP32",
        ["input_0_vkformat", "FP32", "16-bit float", "declare the element float"],
    ),
    (
        "int over fp32",
        shader("int x[]", "float y[]", "y[i] = float(x[i]);"),
        "FP32",
        "FP32",
        ["input_0_vkformat", "as an integer", "uintBitsToFloat"],
    ),
    (
        "float over int32",
        shader("int x[]", "float y[]", "y[i] = float(x[i]);"),
        "INT32",
        "INT32",
        ["output_0_vkformat", "INT32", "32-bit float", "as a float"],
    ),
    (
        "int32 over int8 quads",
        shader("int x[]", "int8_t y[]", "y[i] = int8_t(x[i]);"),
        "INT8",
        "INT8",
        ["input_0_vkformat", "VK_FORMAT_R8_SINT", "32-bit signed integer", "int8_t"],
    ),
    (
        "int8 over int32",
        shader("int8_t x[]", "int y[]", "y[i] = int(x[i]);"),
        "INT32",
        "INT32",
        ["input_0_vkformat", "8-bit signed integer", "in 4 pieces"],
    ),
    (
        "double over fp32",
        shader("float x[]", "double y[]", "y[i] = double(x[i]);"),
        "FP32",
        "FP32",
        ["output_0_vkformat", "64-bit float"],
    ),
    (
        "vec3 array strides past packed data",
        shader("vec3 x[]", "float y[]", "y[i] = x[i].x;"),
        "FP32",
        "FP32",
        ["input_0_vkformat", "16 bytes apart", "12 bytes apart"],
    ),
    (
        "header member before the array",
        shader("uint n; float x[]", "float y[]", "y[i] = x[i] + float(n);"),
        "FP32",
        "FP32",
        ["input_0_vkformat", "from byte 4 of the block"],
    ),
]


@pytest.mark.parametrize(
    ("code", "dtype", "out", "words"),
    [case[1:] for case in MISMATCHES],
    ids=[case[0] for case in MISMATCHES],
)
def test_a_shader_that_cannot_read_the_tensor_is_refused(
    tmp_path: Path, code: str, dtype: str, out: str, words: list[str]
) -> None:
    message = refused(model(tmp_path, code, dtype, out))
    for word in words:
        assert word in message, message


def test_std140_uniform_array_is_refused(tmp_path: Path) -> None:
    code = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform In { float x[16]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() { uint i = gl_GlobalInvocationID.x; y[i] = x[i]; }
"""
    message = refused(model(tmp_path, code, "FP32", descriptors=(UNIFORM, STORAGE)))
    assert "std140" in message and "16 bytes apart" in message and "4 bytes apart" in message


# (name, shader, dtype in, dtype out, notes expected)
CONTROLS = [
    (
        "uint words over fp32 with uintBitsToFloat",
        shader("uint x[]", "float y[]", "y[i] = uintBitsToFloat(x[i]) * 2.0;"),
        "FP32",
        "FP32",
        1,
    ),
    (
        "uint words over fp16 pairs with unpackHalf2x16",
        shader("uint x[]", "uint y[]", "y[i] = packHalf2x16(unpackHalf2x16(x[i]) * 2.0);"),
        "FP16",
        "FP16",
        2,
    ),
    (
        "uint words over int8 quads",
        shader("uint x[]", "uint y[]", "y[i] = x[i] ^ 0x01010101u;"),
        "INT8",
        "INT8",
        2,
    ),
    (
        "8-bit storage",
        shader("int8_t x[]", "int8_t y[]", "y[i] = x[i] + int8_t(1);"),
        "INT8",
        "INT8",
        0,
    ),
    (
        "16-bit storage",
        shader("float16_t x[]", "float16_t y[]", "y[i] = x[i] * float16_t(2);"),
        "FP16",
        "FP16",
        0,
    ),
    ("vec4 over fp32", shader("vec4 x[]", "vec4 y[]", "y[i] = x[i] * 2.0;"), "FP32", "FP32", 0),
    (
        "uint over int32 sign",
        shader("uint x[]", "int y[]", "y[i] = int(x[i]);"),
        "INT32",
        "INT32",
        0,
    ),
    ("uint8 over bool", shader("uint8_t x[]", "uint8_t y[]", "y[i] = x[i];"), "BOOL", "BOOL", 0),
    (
        "int16 over int16",
        shader("int16_t x[]", "int16_t y[]", "y[i] = x[i];"),
        "INT16",
        "INT16",
        0,
    ),
    (
        "widening read: fp16 in, fp32 out",
        shader("float16_t x[]", "float y[]", "y[i] = float(x[i]);"),
        "FP16",
        "FP32",
        0,
    ),
]


@pytest.mark.parametrize(
    ("code", "dtype", "out", "notes"),
    [case[1:] for case in CONTROLS],
    ids=[case[0] for case in CONTROLS],
)
def test_exact_reads_and_packing_idioms_compile(
    tmp_path: Path, code: str, dtype: str, out: str, notes: int
) -> None:
    counts = (4, 1, 1) if "words" in code or "vec4" in code else (16, 1, 1)
    result = compile_model(model(tmp_path, code, dtype, out, counts=counts))
    found = [d for d in result.diagnostics if d.severity is Severity.NOTE]
    assert len(found) == notes, found
    for d in found:
        assert "raw bits" in d.message and d.location.key is not None
    assert not result.errors


IMAGE_SHAPE = (1, 4, 4, 4)
RGBA32F = "VK_FORMAT_R32G32B32A32_SFLOAT"


def image_shader(sampler: str, qualifier: str, kind: str, load: str) -> str:
    return f"""#version 450
layout(local_size_x = 4, local_size_y = 4) in;
layout(set = 0, binding = 0) uniform {sampler} src;
layout(set = 0, binding = 1, {qualifier}) uniform writeonly {kind} dst;
void main() {{
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    imageStore(dst, p, {load});
}}
"""


def image_model(tmp_path: Path, code: str, dtype: str = "FP32", fmt: str = RGBA32F) -> Path:
    return model(
        tmp_path,
        code,
        dtype,
        shape=IMAGE_SHAPE,
        counts=(1, 1, 1),
        descriptors=(SAMPLER, IMAGE),
        formats=(fmt, fmt),
        input_0_sampler={
            "min_filter": "VK_FILTER_NEAREST",
            "mag_filter": "VK_FILTER_NEAREST",
            "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
            "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
            "border_color": "VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK",
        },
    )


def test_sampled_float_image_compiles(tmp_path: Path) -> None:
    code = image_shader("sampler2D", "rgba32f", "image2D", "texelFetch(src, p, 0) * 2.0")
    result = compile_model(image_model(tmp_path, code))
    assert not result.errors and not result.notes


def test_integer_sampler_over_a_float_image_is_refused(tmp_path: Path) -> None:
    code = image_shader("isampler2D", "rgba32f", "image2D", "vec4(texelFetch(src, p, 0))")
    message = refused(image_model(tmp_path, code))
    assert "input_0_vkformat" in message and "returns int values" in message
    assert "declare it sampler2D" in message


def test_storage_image_qualifier_must_match_the_format(tmp_path: Path) -> None:
    code = image_shader("sampler2D", "rgba8", "image2D", "texelFetch(src, p, 0)")
    message = refused(image_model(tmp_path, code))
    assert "output_0_vkformat" in message and "layout(rgba8)" in message
    assert "declare layout(rgba32f)" in message


def test_signed_integer_image_reads_ints(tmp_path: Path) -> None:
    code = image_shader("isampler2D", "rgba32i", "iimage2D", "texelFetch(src, p, 0) * 2")
    fmt = "VK_FORMAT_R32G32B32A32_SINT"
    result = compile_model(image_model(tmp_path, code, "INT32", fmt))
    assert not result.errors
    wrong = image_shader("usampler2D", "rgba32i", "iimage2D", "ivec4(texelFetch(src, p, 0))")
    assert "returns uint values" in refused(image_model(tmp_path, wrong, "INT32", fmt))


def test_an_hlsl_structured_buffer_is_checked_too(tmp_path: Path) -> None:
    code = """StructuredBuffer<float> x : register(t0, space0);
RWStructuredBuffer<float> y : register(u1, space0);
[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) { y[id.x] = x[id.x] * 2.0; }
"""
    path = model(tmp_path, code, "FP16", shader_language="HLSL")
    message = refused(path)
    assert "VK_FORMAT_R16_SFLOAT holds FP16" in message and "32-bit float" in message


def test_fp16_elements_over_bf16_data_are_another_encoding(tmp_path: Path) -> None:
    bf16 = "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM"
    code = shader("float16_t x[]", "float16_t y[]", "y[i] = x[i];")
    message = refused(model(tmp_path, code, "BF16", formats=(bf16, bf16)))
    assert "holds BF16 elements" in message and "another encoding" in message
    raw = shader("uint16_t x[]", "uint16_t y[]", "y[i] = x[i];")
    result = compile_model(model(tmp_path, raw, "BF16", formats=(bf16, bf16)))
    assert len(result.notes) == 2 and not result.errors
