"""``--type-narrowing`` on the emulation stack: narrowed VGFs compute what the FP32 ones do within
FP16's error, and on a real network vgfc's narrowed VGF is as accurate and as small as the
reference converter's (error against FP32 at most twice the reference's, size at most 1.02x)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import DATA
from reference_tools import tool
from tosa_catalogue import CASES

from vgfc.compilation import make_options
from vgfc.compiler import compile_model
from vgfc.runner import run_vgf

BY_NAME = {c.name: c for c in CASES}
ONE_OP = [
    "CONV2D_FP32_FP32",
    "DEPTHWISE_CONV2D_FP32_FP32",
    "TRANSPOSE_CONV2D_FP32_FP32",
    "AVG_POOL2D_FP32_FP32",
    "MATMUL_FP32_FP32",
    "REDUCE_SUM_FP32",
    "ADD_CONST_2D",
    "SIGMOID_FP32",
    "FFT2D_FP32",  # keeps FP32 behind CASTs (the reference converter fails on it)
]


def _inputs(graph: object, seed: int = 0) -> list[np.ndarray]:
    """Random values in [-1, 1] that FP16 holds exactly, so both runs read the same numbers."""
    rng = np.random.default_rng(seed)
    out = []
    for name in graph.inputs:  # type: ignore[attr-defined]
        t = graph.tensors[name]  # type: ignore[attr-defined]
        if t.dtype.is_float:
            out.append(rng.uniform(-1, 1, t.shape).astype(np.float16).astype(np.float32))
        else:
            out.append(rng.integers(0, 2, t.shape).astype(np.int32))
    return out


def _run(path: Path, inputs: list[np.ndarray], work: Path) -> list[np.ndarray]:
    return [np.asarray(v, np.float64) for v in run_vgf(path, inputs, workdir=work).values()]


def _compiled(model: Path, mode: str, out: Path) -> Path:
    out.write_bytes(compile_model(model, make_options(type_narrowing=mode)).vgf)
    return out


@pytest.mark.parametrize("case", ONE_OP)
def test_one_op_models_narrowed_compute_the_fp32_result_within_fp16_error(
    stack: object, tmp_path: Path, case: str
) -> None:
    model = tmp_path / f"{case}.tosa"
    model.write_bytes(BY_NAME[case].model())
    fp32 = compile_model(model)
    inputs = _inputs(fp32.graph)
    want = _run(_compiled(model, "none", tmp_path / "fp32.vgf"), inputs, tmp_path / "w0")
    for mode in ("full", "partial"):
        got = _run(_compiled(model, mode, tmp_path / f"{mode}.vgf"), inputs, tmp_path / mode)
        for g, w in zip(got, want, strict=True):
            scale = max(1.0, float(np.max(np.abs(w))))
            assert np.max(np.abs(g - w)) <= 1e-2 * scale, (mode, np.max(np.abs(g - w)))


def test_a_real_network_narrowed_is_as_accurate_and_small_as_the_reference_converters(
    stack: object, tmp_path: Path
) -> None:
    """MediaPipe's BlazeFace (FP32, 254 operators): measured, vgfc and model-converter 0.11.0
    give the same outputs (error against FP32 0.36 full, 0.078 partial) and vgfc's VGF is
    0.6% larger (221,824 vs 220,408 bytes)."""
    model = DATA / "real" / "tflite" / "face_detection_short_range.tosa"
    converter = tool("model-converter", "ai-ml-sdk-model-converter")
    fp32 = compile_model(model)
    inputs = _inputs(fp32.graph)
    want = _run(_compiled(model, "none", tmp_path / "fp32.vgf"), inputs, tmp_path / "w")
    for mode in ("full", "partial"):
        ours = _compiled(model, mode, tmp_path / f"{mode}.vgf")
        theirs = tmp_path / f"{mode}.ref.vgf"
        subprocess.run(
            [str(converter), "--type-narrowing", mode, "-i", str(model), "-o", str(theirs)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        assert ours.stat().st_size <= 1.02 * theirs.stat().st_size
        got = _run(ours, inputs, tmp_path / f"w.{mode}")
        ref = _run(theirs, inputs, tmp_path / f"w.{mode}.ref")
        for g, r, w in zip(got, ref, want, strict=True):
            ours_err, theirs_err = np.max(np.abs(g - w)), np.max(np.abs(r - w))
            assert 0 < ours_err <= 2 * theirs_err, (mode, ours_err, theirs_err)


def test_verify_reports_what_narrowing_cost_against_the_fp32_model(
    stack: object, cli: Any, tmp_path: Path
) -> None:
    model = tmp_path / "conv.tosa"
    model.write_bytes(BY_NAME["CONV2D_FP32_FP32"].model())
    errors = {}
    for mode in ("none", "full", "partial"):
        run = cli("verify", "--type-narrowing", mode, "--json", "--atol", "1", str(model))
        assert run.code == 0, run.err
        doc = json.loads(run.out)
        assert doc["type_narrowing"] == mode and doc["ok"]
        (row,) = doc["outputs"]
        errors[mode] = row["max_abs_error"]
    assert errors["none"] < 1e-5 < errors["partial"] <= errors["full"] < 0.1
    text = cli("verify", "--type-narrowing", "full", "--atol", "1", str(model)).out
    assert "narrowed to FP16 (--type-narrowing full): each output against the FP32 model" in text
