"""TOSA conformance subset: pass counts and times of the reference converter and vgfc, per operator.

    python benchmarks/bench_conformance.py [--op ADD ...] [--jobs N] [--failures]

Runs every test of ``tests/data/conformance`` with both compilers through the harness
(``tests/support/conformance_harness.py``): compile, run on the CPU emulation stack, check with
``tosa_verify``.
Times are means per test: compile in milliseconds (model-converter is a subprocess, so its time
includes process start-up; vgfc runs in-process), run in seconds (the scenario runner on lavapipe,
start-up included). With ``--jobs`` above 1 tests overlap and each one's times grow with the load;
the default of 1 gives undisturbed times.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from statistics import fmean
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def harness_module() -> ModuleType:
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import conformance_harness

    return conformance_harness


def _mean(values: list[float]) -> float:
    return fmean(values) if values else 0.0


def table(results: dict[tuple[str, str], Any], ops: dict[str, str]) -> list[str]:
    """One line per operator, then the totals."""
    rows: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for (name, compiler), result in results.items():
        rows[ops[name]][compiler].append(result)
        rows["total"][compiler].append(result)
    header = (
        f"{'operator':<24}{'tests':>6}{'pass ref':>9}{'pass vgfc':>10}"
        f"{'compile ms ref':>16}{'vgfc':>8}{'run s ref':>11}{'vgfc':>7}"
    )
    lines = [header, "-" * len(header)]
    for op in [*sorted(k for k in rows if k != "total"), "total"]:
        if op == "total":
            lines.append("-" * len(header))
        ref, ours = rows[op]["reference"], rows[op]["vgfc"]
        count = max(len(ref), len(ours))

        compile_ms = [_mean([r.compile_seconds * 1000 for r in rs]) for rs in (ref, ours)]
        run_s = [_mean([r.run_seconds for r in rs]) for rs in (ref, ours)]
        lines.append(
            f"{op:<24}{count:>6}{sum(r.passed for r in ref):>9}{sum(r.passed for r in ours):>10}"
            f"{compile_ms[0]:>16.1f}{compile_ms[1]:>8.1f}{run_s[0]:>11.2f}{run_s[1]:>7.2f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", action="append", help="only these operators (e.g. ADD)")
    parser.add_argument("--jobs", type=int, default=1, help="tests at the same time (default 1)")
    parser.add_argument("--failures", action="store_true", help="list every test not passing")
    args = parser.parse_args()
    harness = harness_module()
    tests = [t for t in harness.load_tests() if not args.op or t.op in {o.upper() for o in args.op}]
    if tests:
        # vgfc's first compile imports and builds its tables; keep that out of the first test.
        with tempfile.TemporaryDirectory() as tmp, contextlib.suppress(harness.CompileError):
            harness.compile_vgfc(tests[0], Path(tmp) / "warm-up.vgf")
    start = time.perf_counter()
    results = harness.run_all(tests, jobs=args.jobs)
    wall = time.perf_counter() - start
    print("\n".join(table(results, {t.name: t.op for t in tests})))
    for compiler in harness.COMPILERS:
        mine = [r for r in results.values() if r.compiler == compiler]
        spent = sum(r.compile_seconds + r.run_seconds for r in mine)
        print(f"{compiler}: {sum(r.passed for r in mine)}/{len(mine)} pass, {spent:.1f} s")
    print(f"wall time {wall:.1f} s with {args.jobs} job(s)")
    if args.failures:
        for (name, compiler), result in sorted(results.items()):
            if not result.passed:
                print(f"{compiler:<9} {name}: {result.summary()}")


if __name__ == "__main__":
    main()
