"""How long reading, verifying and partitioning a big model takes.

    python benchmarks/bench_reader.py [--ops 100000] [--shader-every 1000] [--reference]

Builds a synthetic chain of ``--ops`` operators (with a shader every ``--shader-every`` ops and a
constant feeding each ADD), then times each stage over a few repetitions and prints the best
time. The read is timed twice: with its tables read in bulk (numpy, as the reader does for
tables of ``vgfc.read.reader._BULK_FROM`` entries or more) and one entry at a time (``struct``,
as it does below that): the figures the reader's docstrings quote. ``--reference`` also times
the reference converter (model-converter) on the same file when it is installed, for a
side-by-side figure.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from tosa_factory import Op, T, build, custom

import vgfc


def make_model(n_ops: int, shader_every: int) -> bytes:
    tensors = [T("x", (1, 16)), T("k", (1, 16), "FP32", np.ones((1, 16), np.float32))]
    ops = [Op("CONST", [], ["k"])]
    prev = "x"
    for i in range(n_ops - 1):
        out = f"t{i}"
        tensors.append(T(out, (1, 16)))
        if shader_every and i % shader_every == shader_every - 1:
            ops.append(custom([prev], [out], f"s{i}"))
        elif i % 2:
            ops.append(Op("ADD", [prev, "k"], [out]))
        else:
            ops.append(Op("ABS", [prev], [out]))
        prev = out
    return build(tensors, ops, ["x"], [prev])


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100_000)
    parser.add_argument("--shader-every", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference", action="store_true", help="also time model-converter")
    args = parser.parse_args()

    start = time.perf_counter()
    data = make_model(args.ops, args.shader_every)
    print(
        f"built a {args.ops}-operator model ({len(data) / 1e6:.1f} MB) "
        f"in {time.perf_counter() - start:.1f} s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.tosa"
        path.write_bytes(data)
        from vgfc.read import reader

        bulk_from = reader._BULK_FROM
        reader._BULK_FROM = 1 << 62
        t_one, _ = best_of(args.repeat, lambda: vgfc.load(path, check=False))
        reader._BULK_FROM = 0
        t_read, graph = best_of(args.repeat, lambda: vgfc.load(path, check=False))
        reader._BULK_FROM = bulk_from
        t_verify, _ = best_of(args.repeat, lambda: vgfc.verify(graph))
        t_part, plan = best_of(args.repeat, lambda: vgfc.partition(graph))
        print(f"{'stage':<12}{'best of ' + str(args.repeat):>14}")
        print(f"{'read':<12}{t_read:>12.2f} s  in bulk ({t_one:.2f} s one entry at a time)")
        print(f"{'verify':<12}{t_verify:>12.2f} s")
        print(f"{'partition':<12}{t_part:>12.2f} s  -> {len(plan.partitions)} partitions")
        print(f"{'total':<12}{t_read + t_verify + t_part:>12.2f} s")
        converter = shutil.which("model-converter")
        if args.reference:
            if converter is None:
                print(
                    "reference: model-converter not installed (pip install "
                    "ai-ml-sdk-model-converter)"
                )
                return
            start = time.perf_counter()
            proc = subprocess.run(
                [converter, "--input", str(path), "--output", str(Path(tmp) / "big.vgf")],
                capture_output=True,
                text=True,
            )
            took = time.perf_counter() - start
            status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
            print(f"{'reference':<12}{took:>12.2f} s  model-converter full conversion ({status})")


if __name__ == "__main__":
    main()
