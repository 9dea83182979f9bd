"""ExecuTorch's own GLSL shaders (``backends/arm/vgf/shaders`` of the installed wheel, read there,
never copied): GLSL with ``GL_ARM_tensors``, which ExecuTorch compiles with shaderc and embeds as
SPIR-V. Here the GLSL goes into the payload instead, built by ExecuTorch's own
``build_grid_sampler_2d_payload``; vgfc compiles it (through the ML SDK's glslc), ``vgfc run``
runs the VGF in this same environment (lavapipe and the ML emulation layers), and an independent
numpy ``grid_sample`` is the oracle; the output is also bit-identical to the one from the SPIR-V
ExecuTorch ships. Every ``GL_ARM_tensors`` shader of the wheel compiles, and its reflection agrees
with ExecuTorch's shipped binary where there is one.

Needs ExecuTorch: ``make test-executorch`` runs this folder in its environment.
"""

from __future__ import annotations

import base64
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from executorch.backends.arm.vgf.shaders import grid_sampler as et
from tosa_catalogue import attribute_table
from tosa_factory import Op, T, build, custom

from vgfc.shader.glslang import CompileOptions, Language, compile_shader
from vgfc.spirv.reflect import reflect

SHADERS = files("executorch.backends.arm.vgf.shaders")
H, W, HO, WO = 7, 9, 5, 11
# ExecuTorch's sampler payloads: bilinear (0), border padding (1), by align_corners.
SOURCES = {
    False: et.GRID_SAMPLER_2D_SAMPLER_SHADER_SOURCE,
    True: et.GRID_SAMPLER_2D_SAMPLER_ALIGN_CORNERS_SHADER_SOURCE,
}
BORDER = 1


def _glsl_with_tensors() -> list[str]:
    return sorted(
        p.name
        for p in SHADERS.iterdir()
        if p.name.endswith(".glsl") and "GL_ARM_tensors" in p.read_text(encoding="utf-8")
    )


def _source(name: str) -> str:
    text = SHADERS.joinpath(name).read_text(encoding="utf-8")
    # The flow-offset shader is a template ExecuTorch fills in before compiling it.
    return re.sub(r"@[A-Z_]+_CHANNEL@", "0u", re.sub(r"@[A-Z_]+@", "1", text))


@pytest.mark.parametrize("name", _glsl_with_tensors())
def test_every_tensor_shader_of_executorch_compiles(name: str) -> None:
    spirv = compile_shader(_source(name), Language.GLSL, "main", CompileOptions())
    kinds = {b.binding: b.kind for b in reflect(spirv, "main").bindings}
    assert kinds.get(1) == "tensor", kinds  # the grid, bound as TENSOR_ARM by ExecuTorch
    shipped = name.replace(".glsl", ".spirv.b64")
    if SHADERS.joinpath(shipped).is_file():
        theirs = base64.b64decode(SHADERS.joinpath(shipped).read_text(encoding="utf-8"))
        ours, want = reflect(spirv, "main"), reflect(theirs, "main")
        assert ours.bindings == want.bindings and ours.local_size == want.local_size


def _payload(align_corners: bool, glsl: bool) -> dict[str, Any]:
    payload: dict[str, Any] = et.build_grid_sampler_2d_payload(
        0,
        BORDER,
        align_corners,
        input_shape=(1, 4, H, W),
        output_shape=(1, 4, HO, WO),
        input_dtype=torch.float32,
        output_dtype=torch.float32,
        grid_dtype=torch.float32,
    )
    assert payload["input_1_vkdescriptortype"] == "VK_DESCRIPTOR_TYPE_TENSOR_ARM"
    if glsl:
        payload["shader_language"] = "GLSL"
        payload["shader_code"] = SHADERS.joinpath(SOURCES[align_corners]).read_text("utf-8")
    return payload


def _model(path: Path, payload: dict[str, Any]) -> Path:
    """x (NCHW) -> TRANSPOSE -> grid sample (NHWC image, grid tensor) -> TRANSPOSE -> y (NCHW),
    as ExecuTorch's rewrite lays it out."""
    to_nhwc = Op("TRANSPOSE", ["x"], ["img"], attribute_table("TRANSPOSE"), {"perms": [0, 2, 3, 1]})
    back = Op("TRANSPOSE", ["s"], ["y"], attribute_table("TRANSPOSE"), {"perms": [0, 3, 1, 2]})
    sample = custom(["img", "grid"], ["s"], "grid_sample", attrs=payload)
    tensors = [
        T("x", (1, 4, H, W)),
        T("img", (1, H, W, 4)),
        T("grid", (1, HO, WO, 2)),
        T("s", (1, HO, WO, 4)),
        T("y", (1, 4, HO, WO)),
    ]
    path.write_bytes(build(tensors, [to_nhwc, sample, back], ["x", "grid"], ["y"]))
    return path


def _grid_sample(x: np.ndarray, grid: np.ndarray, align_corners: bool) -> np.ndarray:
    """PyTorch's bilinear ``grid_sample`` with border padding, in float64 numpy."""
    _, _, h, w = x.shape
    gx, gy = grid[0, ..., 0].astype(np.float64), grid[0, ..., 1].astype(np.float64)
    if align_corners:
        ix, iy = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
    else:
        ix, iy = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
    ix, iy = np.clip(ix, 0, w - 1), np.clip(iy, 0, h - 1)  # border: the coordinate clamps
    x0, y0 = np.floor(ix).astype(int), np.floor(iy).astype(int)
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    fx, fy = ix - x0, iy - y0
    img = x[0].astype(np.float64)
    top = img[:, y0, x0] * (1 - fx) + img[:, y0, x1] * fx
    bottom = img[:, y1, x0] * (1 - fx) + img[:, y1, x1] * fx
    return (top * (1 - fy) + bottom * fy)[None]


def _run(vgfc_exe: Any, model: Path, inputs: list[Path], out: Path) -> np.ndarray:
    vgf = model.with_suffix(".vgf")
    done = vgfc_exe("compile", "-q", str(model), "-o", str(vgf))
    assert done.code == 0, done.err
    args = [a for i in inputs for a in ("-i", str(i))]
    done = vgfc_exe("run", str(vgf), *args, "-o", str(out))
    assert done.code == 0, done.err
    return np.asarray(np.load(out / "y.npy"))


@pytest.mark.parametrize("align_corners", [False, True])
def test_executorchs_grid_sampler_glsl_runs_and_matches_numpy(
    stack: object, vgfc_exe: Any, tmp_path: Path, align_corners: bool
) -> None:
    rng = np.random.default_rng(30)
    x = rng.random((1, 4, H, W), dtype=np.float32)
    grid = rng.uniform(-1.2, 1.2, (1, HO, WO, 2)).astype(np.float32)
    inputs = [tmp_path / "x.npy", tmp_path / "grid.npy"]
    np.save(inputs[0], x)
    np.save(inputs[1], grid)
    from_glsl = _run(
        vgfc_exe,
        _model(tmp_path / "glsl.tosa", _payload(align_corners, True)),
        inputs,
        tmp_path / "glsl",
    )
    from_spirv = _run(
        vgfc_exe,
        _model(tmp_path / "spirv.tosa", _payload(align_corners, False)),
        inputs,
        tmp_path / "spirv",
    )
    np.testing.assert_array_equal(from_glsl, from_spirv)
    want = _grid_sample(x, grid, align_corners)
    # lavapipe filters in fp32 (measured: 3.1e-7 off the float64 oracle); Vulkan allows as few
    # as 8 fractional bits in the weights, so a GPU would need a looser bound.
    np.testing.assert_allclose(from_glsl, want, rtol=0, atol=1e-5)


# -- a PyTorch op whose kernel reads and writes TENSOR_ARM resources ----------------------------

TENSOR_EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "pytorch_tensor"


def test_a_pytorch_op_with_tensor_resources_exports_and_runs_in_this_environment(
    stack: object, vgfc_exe: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One environment: ExecuTorch exports (vgfc-model-converter compiles the GL_ARM_tensors
    kernel), and ``vgfc run`` runs the delegate's VGF against eager PyTorch."""
    import sys

    from executorch.backends.arm.vgf import VgfCompileSpec, VgfPartitioner
    from executorch.exir import to_edge_transform_and_lower

    import vgfc.executorch

    ops = vgfc.executorch.load(TENSOR_EXAMPLE / "tensor_ops.yaml")

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 5, 3, padding=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(torch.ops.tensor_ops.affine(self.conv(x), scale=1.5))

    torch.manual_seed(30)
    model = Model().eval()
    x = torch.rand(1, 3, 6, 10)
    eager = model(x).detach().numpy()
    monkeypatch.setenv(
        "MODEL_CONVERTER_PATH", str(Path(sys.executable).parent / "vgfc-model-converter")
    )
    spec = VgfCompileSpec()
    spec.dump_intermediate_artifacts_to(str(tmp_path / "dump"))
    partitioner = ops.attach(VgfPartitioner(spec))
    to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[partitioner])
    (vgf,) = (tmp_path / "dump").glob("*.vgf")
    np.save(tmp_path / "x.npy", x.numpy())
    done = vgfc_exe("run", str(vgf), "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / "out"))
    assert done.code == 0, done.err
    (result,) = (tmp_path / "out").glob("*.npy")
    np.testing.assert_allclose(np.load(result), eager, rtol=0, atol=1e-5)
