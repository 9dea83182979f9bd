"""The kernel-library sample (samples/kernels/): up to date, compiles, runs, matches numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from click.testing import CliRunner
from paths import ROOT

from vgfc.cli import cli
from vgfc.runner import run_vgf

SAMPLE = ROOT / "samples" / "kernels"


def test_sample_model_is_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(SAMPLE / "build_sample.py"), "--check"], capture_output=True
    )
    assert done.returncode == 0, done.stderr


def test_sample_library_checks_clean() -> None:
    result = CliRunner().invoke(cli, ["kernels", str(SAMPLE / "example_ops.yaml")])
    assert result.exit_code == 0, result.output
    assert "2 kernel(s), 0 error(s)" in result.output


def test_sample_without_library_names_the_op_and_the_way_out(tmp_path: Path) -> None:
    out = tmp_path / "m.vgf"
    result = CliRunner().invoke(cli, ["compile", str(SAMPLE / "model.tosa"), "-o", str(out)])
    assert result.exit_code == 1
    assert "op #0 CUSTOM 'ChannelScale' (com.example)" in result.output
    assert "--kernels" in result.output
    assert not out.exists()


def _numpy_oracle(x: np.ndarray) -> np.ndarray:
    """The sample's semantics, written from build_sample.py's description, in fp16 steps."""
    x32 = x.astype(np.float32)
    channel = np.arange(x.shape[1], dtype=np.float32).reshape(1, -1, 1, 1)
    scaled = (x32 * (0.5 + 0.25 * channel)).astype(np.float16).astype(np.float32)
    swished = (scaled * np.clip(scaled + 3.0, 0.0, 6.0) / 6.0).astype(np.float16)
    return (swished.astype(np.float32) + x32).astype(np.float16)


def test_sample_compiles_with_conversions_and_matches_numpy(tmp_path: Path) -> None:
    out = tmp_path / "m.vgf"
    result = CliRunner().invoke(
        cli,
        [
            "compile",
            str(SAMPLE / "model.tosa"),
            "-o",
            str(out),
            "--kernels",
            str(SAMPLE / "example_ops.yaml"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "CAST (inserted by kernel selection: FP16->FP32 for 'x')" in result.output
    assert "TRANSPOSE (inserted by kernel selection: NCHW->NHWC for 'x')" in result.output
    assert "com.example/HardSwish: expanded into built-ins" in result.output
    x = np.random.default_rng(7).standard_normal((1, 3, 8, 8)).astype(np.float16)
    (got,) = run_vgf(out, [x], validate=True).values()
    want = _numpy_oracle(x)
    err = np.abs(got.astype(np.float32) - want.astype(np.float32))
    # fp16 results: within two units in the last place of values up to 8.
    assert err.max() <= 2 * 2**-8 * 4, err.max()
