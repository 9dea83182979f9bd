"""ExecuTorch's int8 grid-sampler payloads, built by its own code, compiled by vgfc and run.

``scripts/export_executorch_shader_payloads.py`` runs ExecuTorch's rewrite and its flow-offset
payload builder and keeps each payload with its operands (the int8 grid's scale and zero point
as constants). Here each becomes a one-op TOSA file (the CONSTs, then the CUSTOM op), which
vgfc compiles (the constants reach the shader through a graph segment) and ``vgfc run`` runs
on lavapipe; the reference converter compiles and runs the same file. The outputs must be
bit-identical, and within one step of a numpy oracle written from the shaders' GLSL (bilinear
filtering of int8 snorm texels by Vulkan's rules: lavapipe's filter weights are not exact).
The sampler payloads also run as ExecuTorch lays out a 3-channel image (padded to 4 channels
before the shader, sliced back after it), with graph work on both sides of the shader.

``tests/data/executorch_shader_payloads/`` holds one export (ExecuTorch 1.5.1); with
``VGFC_EXECUTORCH_SHADER_PAYLOADS=DIR`` the same checks run on a fresh one
(``make test-executorch``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from reference_tools import tool
from tosa_catalogue import attribute_table
from tosa_factory import SHADER_DOMAIN, Op, T, build, custom

ROOT = Path(__file__).resolve().parents[2]
FOLDER = Path(
    os.environ.get("VGFC_EXECUTORCH_SHADER_PAYLOADS")
    or ROOT / "tests" / "data" / "executorch_shader_payloads"
)
CASES: list[dict[str, Any]] = json.loads((FOLDER / "shader_payloads.json").read_text())["cases"]
_NP = {"INT8": np.int8, "FP32": np.float32, "INT32": np.int32}


def _model(case: dict[str, Any], path: Path) -> list[str]:
    """The case as a TOSA file; returns the graph inputs' names."""
    tensors, ops, inputs = [], [], []
    for operand in case["operands"]:
        data = operand["data"]
        array = None if data is None else np.asarray(data, _NP[operand["dtype"]])
        tensors.append(T(operand["name"], operand["shape"], operand["dtype"], data=array))
        if array is None:
            inputs.append(operand["name"])
        else:
            ops.append(Op("CONST", [], [operand["name"]]))
    out = case["output"]
    tensors.append(T("output", out["shape"], out["dtype"]))
    names = [o["name"] for o in case["operands"]]
    ops.append(custom(names, ["output"], case["operator_name"], SHADER_DOMAIN, case["payload"]))
    path.write_bytes(build(tensors, ops, inputs, ["output"]))
    return inputs


def _inputs(case: dict[str, Any], rng: np.random.Generator) -> dict[str, np.ndarray]:
    arrays = {}
    for operand in case["operands"]:
        if operand["data"] is not None:
            continue
        low, high = (-127, 128) if operand["name"] == "image" else (-40, 41)
        arrays[operand["name"]] = rng.integers(low, high, operand["shape"]).astype(np.int8)
    return arrays


def _texture(image: np.ndarray, u: np.ndarray, v: np.ndarray, edge: bool) -> np.ndarray:
    """``texture()`` of an int8 snorm [H, W, 4] image, linear filter, at (u, v): Vulkan's
    texel coordinates, clamp to edge or a transparent black border."""
    h, w, _ = image.shape
    texels = np.maximum(image.astype(np.float64) / 127.0, -1.0)
    x, y = u * w - 0.5, v * h - 0.5
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    a, b = (x - x0)[..., None], (y - y0)[..., None]

    def fetch(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        if edge:
            return texels[np.clip(j, 0, h - 1), np.clip(i, 0, w - 1)]
        inside = ((i >= 0) & (i < w) & (j >= 0) & (j < h))[..., None]
        return np.where(inside, texels[np.clip(j, 0, h - 1), np.clip(i, 0, w - 1)], 0.0)

    return (
        (1 - a) * (1 - b) * fetch(x0, y0)
        + a * (1 - b) * fetch(x0 + 1, y0)
        + (1 - a) * b * fetch(x0, y0 + 1)
        + a * b * fetch(x0 + 1, y0 + 1)
    )


def _oracle(case: dict[str, Any], arrays: dict[str, np.ndarray]) -> np.ndarray:
    oracle, payload = case["oracle"], case["payload"]
    edge = payload["input_0_sampler"]["address_mode_u"].endswith("CLAMP_TO_EDGE")
    image = arrays["image"][0]
    h, w, _ = image.shape
    if oracle["kind"] == "grid_sample":
        scale, zero = (np.asarray(o["data"]) for o in case["operands"][2:4])
        grid = (arrays["grid"][0].astype(np.float64) - zero[0]) * scale[0]
        size = np.array([w, h], np.float64)
        if oracle["align_corners"]:
            uv = ((grid + 1) * 0.5 * (size - 1) + 0.5) / size
        else:
            uv = (grid + 1) * 0.5
        sampled = _texture(image, uv[..., 0], uv[..., 1], edge)
        return np.round(np.clip(sampled, -1, 1) * 127).astype(np.int8)[None]
    flow = (arrays["flow"][0].astype(np.float64) - oracle["flow_zero_point"]) * oracle["flow_scale"]
    first = oracle["flow_channel_offset"]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    size = np.array([w, h], np.float64)
    base = np.stack([xs, ys], -1) * 2 / (size - 1) - 1
    offset = np.stack([flow[first], flow[first + 1]], -1)
    uv = ((base + offset + 1) * 0.5 * (size - 1) + 0.5) / size
    raw = _texture(image, uv[..., 0], uv[..., 1], edge) * 127.0
    dequantized = (raw - oracle["input_zero_point"]) * oracle["input_scale"]
    out = np.round(dequantized / oracle["output_scale"]) + oracle["output_zero_point"]
    return np.clip(out, -127, 127).astype(np.int8)[None]


def _run(vgfc_exe: Any, vgf: Path, arrays: dict[str, np.ndarray], out: Path) -> np.ndarray:
    folder = out.parent
    given = []
    for name, array in arrays.items():  # by position: the reference renames the inputs
        np.save(folder / f"{name}.npy", array)
        given += ["-i", str(folder / f"{name}.npy")]
    run = vgfc_exe("run", str(vgf), *given, "-o", str(out))
    assert run.code == 0, run.err
    (result,) = out.glob("*.npy")
    return np.load(result)


def _reference(
    vgfc_exe: Any, model: Path, arrays: dict[str, np.ndarray], folder: Path
) -> np.ndarray:
    """``model`` compiled by the reference converter and run as vgfc's VGF is."""
    converter = tool("model-converter", "ai-ml-sdk-model-converter")
    theirs = folder / "model-converter.vgf"
    subprocess.run(
        [str(converter), "--input", str(model), "--output", str(theirs)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return _run(vgfc_exe, theirs, arrays, folder / "out-model-converter")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vgfc_compiles_runs_and_matches_the_oracle_and_the_reference(
    case: dict[str, Any], tmp_path: Path, vgfc_exe: Any
) -> None:
    model = tmp_path / "model.tosa"
    inputs = _model(case, model)
    arrays = _inputs(case, np.random.default_rng(7))
    assert list(arrays) == inputs
    ours = tmp_path / "vgfc.vgf"
    report = tmp_path / "report.json"
    compiled = vgfc_exe("compile", "-q", str(model), "-o", str(ours), "--report", str(report))
    assert compiled.code == 0, compiled.err
    (shader,) = json.loads(report.read_text())["shaders"]
    # The keys neither the shader's own nor in the operand grammar: ExecuTorch's metadata.
    documented = {"entry_point", "workgroup_sizes", "shader_language", "shader_code"}
    metadata = {
        k: v
        for k, v in case["payload"].items()
        if k not in documented and re.match(r"(input|output)_?[0-9]", k) is None
    }
    assert shader["metadata"] == metadata  # ExecuTorch's keys, kept as written
    got = _run(vgfc_exe, ours, arrays, tmp_path / "out-vgfc")
    out = case["output"]
    assert got.dtype == np.int8 and list(got.shape) == out["shape"]
    want = _oracle(case, arrays)
    err = int(np.abs(got.astype(int) - want.astype(int)).max())
    print(f"{case['name']}: max error against the numpy oracle: {err} step(s) of int8")
    assert err <= 1

    reference = _reference(vgfc_exe, model, arrays, tmp_path)
    assert np.array_equal(reference.view(np.int8).reshape(got.shape), got)


SAMPLERS = [c for c in CASES if c["oracle"]["kind"] == "grid_sample"]


def _three_channel_model(case: dict[str, Any], path: Path) -> None:
    """The case as ExecuTorch's rewrite lays out a 3-channel image (``_pad_c3_input_to_c4``):
    the NCHW image padded with a zero channel (PAD, its value a CONST), TRANSPOSEd to NHWC, the
    same sampler payload, and the result TRANSPOSEd back and SLICEd to 3 channels."""
    image, grid, scale, zero = case["operands"]
    _, h, w, _ = image["shape"]
    _, ho, wo, _ = case["output"]["shape"]
    perms = attribute_table("TRANSPOSE")
    tensors = [
        T("x", (1, 3, h, w), "INT8"),
        T("pad_value", (1,), "INT8", data=np.zeros(1, np.int8)),
        T("padded", (1, 4, h, w), "INT8"),
        T("image", (1, h, w, 4), "INT8"),
        T("grid", grid["shape"], "INT8"),
        T("grid_scale", scale["shape"], "FP32", data=np.asarray(scale["data"], np.float32)),
        T("grid_zero_point", zero["shape"], "INT32", data=np.asarray(zero["data"], np.int32)),
        T("sampled", (1, ho, wo, 4), "INT8"),
        T("nchw", (1, 4, ho, wo), "INT8"),
        T("output", (1, 3, ho, wo), "INT8"),
    ]
    names = ["image", "grid", "grid_scale", "grid_zero_point"]
    ops = [
        Op("CONST_SHAPE", [], ["padding"]),
        Op("CONST", [], ["pad_value"]),
        Op("PAD", ["x", "padding", "pad_value"], ["padded"]),
        Op("TRANSPOSE", ["padded"], ["image"], perms, {"perms": [0, 2, 3, 1]}),
        Op("CONST", [], ["grid_scale"]),
        Op("CONST", [], ["grid_zero_point"]),
        custom(names, ["sampled"], case["operator_name"], SHADER_DOMAIN, case["payload"]),
        Op("TRANSPOSE", ["sampled"], ["nchw"], perms, {"perms": [0, 3, 1, 2]}),
        Op("CONST_SHAPE", [], ["start"]),
        Op("CONST_SHAPE", [], ["size"]),
        Op("SLICE", ["nchw", "start", "size"], ["output"]),
    ]
    shapes = [
        ("padding", 8, (0, 0, 0, 1, 0, 0, 0, 0)),
        ("start", 4, (0, 0, 0, 0)),
        ("size", 4, (1, 3, ho, wo)),
    ]
    path.write_bytes(build(tensors, ops, ["x", "grid"], ["output"], shapes=shapes))


@pytest.mark.parametrize("case", SAMPLERS, ids=[c["name"] for c in SAMPLERS])
def test_a_three_channel_image_padded_as_executorch_pads_it(
    case: dict[str, Any], tmp_path: Path, vgfc_exe: Any
) -> None:
    """ExecuTorch's C=3 int8 grid sample: graph work (PAD, TRANSPOSE, the constants written
    out) before the shader and after it (TRANSPOSE, SLICE), compiled by vgfc and run; equal
    to the oracle on the zero-padded image, and bit-identical to the reference converter's."""
    model = tmp_path / "model.tosa"
    _three_channel_model(case, model)
    rng = np.random.default_rng(11)
    _, h, w, _ = case["operands"][0]["shape"]
    arrays = {
        "x": rng.integers(-127, 128, (1, 3, h, w)).astype(np.int8),
        "grid": rng.integers(-40, 41, case["operands"][1]["shape"]).astype(np.int8),
    }
    ours = tmp_path / "vgfc.vgf"
    compiled = vgfc_exe("compile", "-q", str(model), "-o", str(ours))
    assert compiled.code == 0, compiled.err
    got = _run(vgfc_exe, ours, arrays, tmp_path / "out-vgfc")
    assert got.dtype == np.int8 and got.shape == (1, 3, *case["output"]["shape"][1:3])
    padded = np.concatenate([arrays["x"], np.zeros((1, 1, h, w), np.int8)], axis=1)
    nhwc = {"image": padded.transpose(0, 2, 3, 1), "grid": arrays["grid"]}
    want = _oracle(case, nhwc).transpose(0, 3, 1, 2)[:, :3]
    assert int(np.abs(got.astype(int) - want.astype(int)).max()) <= 1
    reference = _reference(vgfc_exe, model, arrays, tmp_path)
    assert np.array_equal(reference.view(np.int8).reshape(got.shape), got)
