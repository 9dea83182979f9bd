"""The worked example of docs/pytorch.md, from the files its export step writes: a PyTorch model
with two custom ops of samples/pytorch/my_ops.yaml, exported through ExecuTorch's Arm VGF
backend (``samples/pytorch/export.py``), then compiled with both converters, run on lavapipe
and compared with eager PyTorch (``samples/pytorch/compare.py``, as the guide runs it).

``tests/data/pytorch_sample/`` holds one export (ExecuTorch 1.5.1, torch 2.13.0 CPU); with
``VGFC_PYTORCH_SAMPLE=DIR`` the same checks run on a fresh one (``make test-executorch``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("VGFC_PYTORCH_SAMPLE") or ROOT / "tests" / "data" / "pytorch_sample")
FILES = ("model.tosa", "executorch.vgf", "input.npy", "eager.npy")


def test_the_exported_file_is_what_vgfc_compiles(tmp_path: Path, vgfc_exe: Any) -> None:
    """ExecuTorch ran ``vgfc-model-converter`` on the TOSA file it wrote: the delegate is the
    file ``vgfc compile`` writes for that TOSA, byte for byte."""
    out = tmp_path / "model.vgf"
    run = vgfc_exe("compile", "-q", str(DATA / "model.tosa"), "-o", str(out))
    assert run.code == 0 and run.err == "", run.err
    assert out.read_bytes() == (DATA / "executorch.vgf").read_bytes()


def test_both_converters_match_eager_pytorch_as_the_guide_runs_them(tmp_path: Path) -> None:
    from reference_tools import tool

    folder = tmp_path / "out"
    folder.mkdir()
    for name in FILES:
        shutil.copyfile(DATA / name, folder / name)
    converter = tool("model-converter", "ai-ml-sdk-model-converter")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "samples" / "pytorch" / "compare.py"),
            str(folder),
            "--model-converter",
            str(converter),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split()[0]: float(line.split()[-1]) for line in done.stdout.splitlines()[1:-1]}
    assert set(rows) == {"executorch.vgf", "vgfc.vgf", "model-converter.vgf"}, done.stdout
    assert max(rows.values()) <= 1e-5, done.stdout
    # compare.py's own figures, checked here apart from it.
    eager = np.load(folder / "eager.npy")
    for run in ("run-vgfc", "run-model-converter"):
        (output,) = (folder / run).glob("*.npy")
        got = np.load(output)
        assert got.shape == eager.shape == (1, 2, 22, 18)
        assert float(np.abs(got.astype(np.float64) - eager).max()) <= 1e-5


def test_the_sample_library_checks_clean(vgfc_exe: Any) -> None:
    run = vgfc_exe("kernels", str(ROOT / "samples" / "pytorch" / "my_ops.yaml"))
    assert run.code == 0, run.err
    assert "2 kernel(s), 0 error(s)" in run.out


def test_verify_finds_each_exported_ops_entry_and_holds_it_to_the_reference(vgfc_exe: Any) -> None:
    """The exported payloads name their entry (``kernel_library_entry``): ``vgfc verify
    --kernels`` runs each op's Python reference, through the NHWC permutes of the image op, and
    the built-in pieces on the TOSA reference model, CONSTs ExecuTorch wrote first included."""
    library = ROOT / "samples" / "pytorch" / "my_ops.yaml"
    run = vgfc_exe("verify", str(DATA / "model.tosa"), "--kernels", str(library))
    assert run.code == 0, run.out + run.err
    assert "python reference my_ops_ref:upsample2x" in run.out
    assert run.out.count("python reference my_ops_ref:swish") == 2
    assert "every output agrees, all 19 ops checked" in run.out
