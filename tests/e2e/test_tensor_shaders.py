"""GLSL with ``GL_ARM_tensors`` (``tensorARM`` resources, ``VK_DESCRIPTOR_TYPE_TENSOR_ARM``)
wherever vgfc takes GLSL: in a payload and behind a kernel-library entry. vgfc compiles it (glslang
13 does not know the extension; the ML SDK's glslc does), the VGF runs on lavapipe under the ML
emulation layers with the Khronos validation layer, and numpy is the oracle.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tosa_factory import Op, T, build, custom

# y = x * SCALE + OFFSET over a rank-2 tensor, element by element through tensorReadARM and
# tensorWriteARM; SCALE and OFFSET come from definitions.
AFFINE = """#version 450
#extension GL_ARM_tensors : require
layout(local_size_x = 4, local_size_y = 4) in;
layout(set = 0, binding = 0) uniform tensorARM<float, 2> src;
layout(set = 0, binding = 1) uniform tensorARM<float, 2> dst;
void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= tensorSizeARM(src, 1) || p.y >= tensorSizeARM(src, 0)) return;
    uint at[2] = uint[](p.y, p.x);
    float v;
    tensorReadARM(src, at, v);
    tensorWriteARM(dst, at, v * SCALE + OFFSET);
}
"""
SHAPE = (6, 10)


def _tensor(key: str, binding: int) -> dict[str, Any]:
    return {
        f"{key}_binding": binding,
        f"{key}_descriptorset": 0,
        f"{key}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
        f"{key}_vkformat": "VK_FORMAT_R32_SFLOAT",
        f"{key}_type": "Tensor",
    }


def _x(tmp_path: Path) -> tuple[Path, np.ndarray]:
    x = np.random.default_rng(30).standard_normal(SHAPE).astype(np.float32)
    path = tmp_path / "x.npy"
    np.save(path, x)
    return path, x


def _run(cli: Any, model: Path, tmp_path: Path, *options: str) -> np.ndarray:
    vgf = tmp_path / "m.vgf"
    done = cli("compile", "-q", str(model), "-o", str(vgf), *options)
    assert done.code == 0, done.err
    x, _ = _x(tmp_path)
    out = tmp_path / "out"
    done = cli("run", str(vgf), "-i", str(x), "-o", str(out), "--validate")
    assert done.code == 0, done.err
    assert "validation-clean" in done.out
    return np.asarray(np.load(out / "y.npy"))


def test_a_payloads_tensor_glsl_runs_and_matches_numpy(stack: object, cli, tmp_path: Path) -> None:
    code = AFFINE.replace("SCALE", "3.0").replace("OFFSET", "1.0")
    attrs = {
        "entry_point": "main",
        "workgroup_sizes": [3, 2, 1],  # 10 x 6 invocations at 4 x 4 each
        "shader_language": "GLSL",
        "shader_code": code,
        **_tensor("input_0", 0),
        **_tensor("output_0", 1),
    }
    model = tmp_path / "m.tosa"
    ops = [Op("ABS", ["x"], ["a"]), custom(["a"], ["y"], "affine", attrs=attrs)]
    model.write_bytes(build([T("x", SHAPE), T("a", SHAPE), T("y", SHAPE)], ops, ["x"], ["y"]))
    got = _run(cli, model, tmp_path)
    _, x = _x(tmp_path)
    np.testing.assert_array_equal(got, np.abs(x) * np.float32(3.0) + np.float32(1.0))


def test_a_kernel_library_entry_declares_tensor_resources(
    stack: object, cli, tmp_path: Path
) -> None:
    (tmp_path / "affine.comp").write_text(AFFINE)
    library = tmp_path / "lib.yaml"
    library.write_text(
        textwrap.dedent(
            """\
            vgfc_kernels: 1
            operators:
              - domain: test
                name: Affine
                inputs: [x]
                outputs: [y]
                params:
                  encoding: json
                  fields:
                    - {name: scale, type: f32}
                infer:
                  y: {same_as: x}
                kernels:
                  - name: affine_tensor
                    shader:
                      file: affine.comp
                      defines: {SCALE: scale, OFFSET: "x[1]"}
                    resources:
                      x: {binding: 0, descriptor: tensor}
                      y: {binding: 1, descriptor: tensor}
                    dispatch: {global: ["x[1]", "x[0]"]}
            """
        )
    )
    checked = cli("kernels", str(library))
    assert checked.code == 0, checked.out + checked.err
    model = tmp_path / "m.tosa"
    op = custom(["x"], ["y"], "Affine", domain="test", attrs={"scale": 0.5})
    model.write_bytes(build([T("x", SHAPE), T("y", SHAPE)], [op], ["x"], ["y"]))
    got = _run(cli, model, tmp_path, "--kernels", str(library))
    _, x = _x(tmp_path)
    np.testing.assert_array_equal(got, x * np.float32(0.5) + np.float32(SHAPE[1]))


def test_without_glslc_the_op_gets_one_error_with_the_install(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib import metadata

    from vgfc.shader import glslc

    def not_installed(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(glslc, "_FOUND", None)
    monkeypatch.setattr(metadata, "distribution", not_installed)
    attrs = {
        "entry_point": "main",
        "workgroup_sizes": [3, 2, 1],
        "shader_language": "GLSL",
        "shader_code": AFFINE,
        **_tensor("input_0", 0),
        **_tensor("output_0", 1),
    }
    model = tmp_path / "m.tosa"
    op = custom(["x"], ["y"], "affine", attrs=attrs)
    model.write_bytes(build([T("x", SHAPE), T("y", SHAPE)], [op], ["x"], ["y"]))
    # In this process (no worker forked before the patch), without the cache.
    done = cli("check", str(model), "--shader-timeout", "0", "--no-cache")
    assert done.code == 1
    lines = done.err.strip().splitlines()
    assert len(lines) == 1, done.err
    assert (
        "op #0 CUSTOM 'affine'" in lines[0] and "shader_code: GLSL with GL_ARM_tensors" in lines[0]
    )
    assert lines[0].endswith("ai-ml-sdk-scenario-runner is not installed: pip install 'vgfc[run]'")
