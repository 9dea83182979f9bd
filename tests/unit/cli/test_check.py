"""`vgfc check`: each shader compiled and cross-checked against its declaration; no output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from samples_module import SAMPLES_DIR
from shader_models import CHECK_CASES, COPY, attrs, model, where
from tosa_factory import SHADER_DOMAIN


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES_DIR.glob("*.tosa")))
def test_every_sample_checks_clean(cli, sample: str) -> None:
    run = cli("check", str(SAMPLES_DIR / sample))
    assert run.code == 0, run.err
    assert ": ok: " in run.out
    assert "error" not in run.err


def test_clean_model_reports_its_summary(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs())
    run = cli("check", str(path))
    assert run.code == 0, run.err
    assert run.out.strip() == (
        f"{path}: ok: 2 operators, 2 partitions, 1 of 1 shaders compiled and checked"
    )
    assert list(tmp_path.iterdir()) == [path]  # check writes nothing


@pytest.mark.parametrize(
    ("what", "payload", "message"), CHECK_CASES, ids=[c[0] for c in CHECK_CASES]
)
def test_check_errors(
    cli, tmp_path: Path, what: str, payload: dict[str, Any], message: str
) -> None:
    path = model(tmp_path, payload)
    run = cli("check", str(path))
    assert run.code == 1
    lines = [line for line in run.err.strip().splitlines() if not line.startswith("    ")]
    assert len(lines) == 1, run.err  # plus, for a shader error, its source line and a caret
    assert lines[0].startswith(f"{path}: error: {where()}: {message}"), lines[0]
    assert "Traceback" not in run.err


def test_undersized_dispatch_is_a_warning(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(workgroup_sizes=[1, 1, 1]))
    run = cli("check", str(path))
    assert run.code == 0
    assert run.err.startswith(
        f"{path}: warning: {where()}: workgroup_sizes: the dispatch runs 16 invocations "
        "(workgroup counts [1, 1, 1] x local size [16, 1, 1]), fewer than the 64 elements of "
        "output_0 's0'"
    )
    assert "1 warning(s)" in run.out


def test_global_size_derives_the_counts(cli, tmp_path: Path) -> None:
    from vgfc.compiler import compile_model
    from vgfc.lower.shader import ShaderModule

    path = model(tmp_path, attrs(workgroup_sizes=None, global_size=[64, 1, 1]))
    result = compile_model(path)
    (shader,) = [m for m in result.modules if isinstance(m, ShaderModule)]
    assert shader.op.index == 1 and shader.dispatch == (4, 1, 1)
    assert not result.diagnostics

    bad = model(tmp_path, attrs(workgroup_sizes=[2, 1, 1], global_size=[64, 1, 1]))
    run = cli("check", str(bad))
    assert run.code == 1
    assert (
        "workgroup_sizes: workgroup_sizes [2, 1, 1] disagrees with global_size [64, 1, 1] / "
        "local size [16, 1, 1] = [4, 1, 1]" in run.err
    )


def test_every_broken_op_is_reported_in_one_run(cli, tmp_path: Path) -> None:
    path = model(
        tmp_path,
        attrs(input_0_vkformat="VK_FORMAT_R32_FLOAT"),
        attrs(),
        attrs(input_0_binding=9),
    )
    run = cli("check", str(path))
    assert run.code == 1
    lines = run.err.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}: error: {where(1)}: input_0_vkformat: unknown format")
    assert lines[1].startswith(f"{path}: error: {where(3)}: input_0_binding: declared at set 0")


def test_unknown_custom_domain(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(), domain="com.arm.VulkanCustomShaders")
    run = cli("check", str(path))
    assert run.code == 1
    assert run.err.strip() == (
        f"{path}: error: op #1 CUSTOM 'k0' (com.arm.VulkanCustomShaders): no kernel for "
        "custom operator com.arm.VulkanCustomShaders/k0: vgfc compiles "
        f"{SHADER_DOMAIN} operators with shader code, and others through a kernel library "
        f"given with --kernels FILE (did you mean {SHADER_DOMAIN}?)"
    )


def test_json_diagnostics(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(input_0_binding=3), attrs(workgroup_sizes=[1, 1, 1]))
    run = cli("check", str(path), "--json")
    assert run.code == 1
    doc = json.loads(run.out)
    assert doc["ok"] is False and doc["errors"] == 1 and doc["warnings"] == 1
    first, second = doc["diagnostics"]
    assert first["severity"] == "error"
    assert first["location"] == {
        "file": str(path),
        "op_index": 1,
        "op": "CUSTOM",
        "name": "k0",
        "domain": SHADER_DOMAIN,
        "key": "input_0_binding",
    }
    assert second["severity"] == "warning" and second["location"]["op_index"] == 2


def test_defines_and_include_dirs_reach_the_shader(cli, tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.glsl").write_text("float scale(float v) { return v * FACTOR; }\n")
    code = COPY.replace(
        "void main() {",
        '#extension GL_GOOGLE_include_directive : require\n#include "scale.glsl"\nvoid main() {',
    ).replace("x[i] * 2.0", "scale(x[i])")
    path = model(tmp_path, attrs(code))
    run = cli("check", str(path))
    assert run.code == 1  # neither the include nor FACTOR is known
    run = cli("check", str(path), "-I", str(inc), "-D", "FACTOR=3.0")
    assert run.code == 0, run.err
