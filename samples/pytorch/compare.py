#!/usr/bin/env python3
"""Step two of the worked example (docs/pytorch.md): compile the TOSA that ``export.py`` wrote
with vgfc and with the reference converter, run every VGF on the CPU with ``vgfc run``, and
compare each output with eager PyTorch's.

Run it where ``pip install 'vgfc[run]'`` (and, for the second column, Arm's model-converter)
is installed::

    python samples/pytorch/compare.py OUT [--tolerance 1e-5]

Exit code 0 when every file matches eager PyTorch within the tolerance, 1 otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(command)} failed ({done.returncode}):\n{done.stderr.strip()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the folder export.py wrote")
    parser.add_argument("--tolerance", type=float, default=1e-5, help="largest absolute error")
    parser.add_argument(
        "--model-converter", default="model-converter", help="the reference converter's command"
    )
    args = parser.parse_args()
    out: Path = args.out
    here = str(Path(sys.executable).parent)  # this Python's own scripts first
    vgfc = shutil.which("vgfc", path=here) or "vgfc"
    files = {"executorch": out / "executorch.vgf", "vgfc": out / "vgfc.vgf"}
    _run([vgfc, "compile", "-q", str(out / "model.tosa"), "-o", str(files["vgfc"])])
    converter = shutil.which(args.model_converter, path=here) or shutil.which(args.model_converter)
    if converter is not None:
        files["model-converter"] = out / "model-converter.vgf"
        _run(
            [
                converter,
                "--input",
                str(out / "model.tosa"),
                "--output",
                str(files["model-converter"]),
            ]
        )
    else:
        print(f"({args.model_converter} not found: its column is left out)")
    eager = np.load(out / "eager.npy")
    worst = 0.0
    print(f"{'VGF':<20} {'converter':<36} {'max abs error vs eager':>22}")
    for name, vgf in files.items():
        results = out / f"run-{name}"
        _run([vgfc, "run", str(vgf), "-i", str(out / "input.npy"), "-o", str(results)])
        (output,) = sorted(results.glob("*.npy"))
        error = float(np.abs(np.load(output).astype(np.float64) - eager).max())
        worst = max(worst, error)
        made_by = {"executorch": "ExecuTorch's (MODEL_CONVERTER_PATH)"}.get(name, name)
        print(f"{vgf.name:<20} {made_by:<36} {error:>22.3g}")
    ok = worst <= args.tolerance
    print(f"{'ok' if ok else 'FAILED'}: largest error {worst:.3g}, tolerance {args.tolerance:g}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
