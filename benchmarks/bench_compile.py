"""Compile time of vgfc and of the reference converter, side by side.

    python benchmarks/bench_compile.py [MODEL.tosa ...] [--repeat 3]

Without arguments: every bundled sample and every model under tests/data/real. vgfc is timed
in-process (the pipeline alone) and as a CLI subprocess (what a CI job pays, Python start-up
included); model-converter always runs as a subprocess. Best of --repeat runs.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from reference_tools import tool  # noqa: E402

from vgfc.compiler import compile_model  # noqa: E402
from vgfc.diagnostics import VgfcError  # noqa: E402


def best(repeat: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    models = args.models or sorted((ROOT / "samples").glob("*.tosa")) + sorted(
        (ROOT / "tests" / "data" / "real").rglob("*.tosa")
    )
    converter = tool("model-converter", "ai-ml-sdk-model-converter")
    vgfc_exe = Path(sys.executable).parent / "vgfc"
    print(f"{'model':<44}{'vgfc (in-process)':>18}{'vgfc (CLI)':>12}{'reference':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            name = str(model.relative_to(ROOT)) if model.is_relative_to(ROOT) else str(model)
            try:
                compile_model(model)  # warm-up: loads glslang and SPIRV-Tools once
                t_lib = best(args.repeat, lambda m=model: compile_model(m))
            except VgfcError as e:
                print(f"{name:<44}  vgfc: {e.message[:60]}")
                continue
            mine = [str(vgfc_exe), "compile", str(model), "-o", str(Path(tmp) / "m.vgf"), "-q"]
            theirs = [str(converter), "--input", str(model), "--output", str(Path(tmp) / "r.vgf")]
            t_cli = best(args.repeat, lambda cmd=mine: subprocess.run(cmd, check=True))
            t_ref = best(
                args.repeat,
                lambda cmd=theirs: subprocess.run(cmd, capture_output=True, check=True),
            )
            times = f"{t_lib * 1000:>15.1f} ms{t_cli * 1000:>9.0f} ms{t_ref * 1000:>9.0f} ms"
            print(f"{name:<44}{times}")


if __name__ == "__main__":
    main()
