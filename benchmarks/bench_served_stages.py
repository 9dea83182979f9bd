"""A compile's stage times in a process forked from a warmed-up one, as ``vgfc server`` runs
commands: what is left once start-up is paid, stage by stage.

    python benchmarks/bench_served_stages.py MODEL.tosa [MODEL.tosa ...] [--runs 5] [--cold]
                                             [-- VGFC_COMPILE_ARGS ...]

This process warms up as the server does (``vgfc.server``'s warm-up: imports, tables, a first
compile, glslang's tables, a frozen heap), then forks one process per run, which runs
``vgfc compile`` through the CLI and reports its wall time and the stage times of the summary
line (so not with ``-q``, which prints none). Each model's first run fills a shader cache of its
own and is not counted, unless ``--cold``, where every run starts from an empty cache. Medians
of ``--runs``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

_STAGE = re.compile(r"([a-z]+) ([0-9.]+) ms")


def _run_forked(args: list[str], cache: str) -> tuple[float, dict[str, float]]:
    """One compile in a forked process: its wall time (ms) and stage times (ms)."""
    from vgfc.cli import cli

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        os.environ["VGFC_CACHE_DIR"] = cache
        out = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            cli.main(args, prog_name="vgfc", standalone_mode=False)
        total = (time.perf_counter() - start) * 1000
        last = (out.getvalue().strip().splitlines() or [""])[-1]
        os.write(write, f"{total}\n{last}".encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        total_text, _, summary = pipe.read().decode().partition("\n")
    os.waitpid(pid, 0)
    stages = {name: float(ms) for name, ms in _STAGE.findall(summary.partition(";")[2])}
    return float(total_text), stages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="an empty shader cache every run")
    own, extra = sys.argv[1:], []
    if "--" in own:
        own, extra = own[: own.index("--")], own[own.index("--") + 1 :]
    options = parser.parse_args(own)

    gc.set_threshold(100_000, 50, 100)  # as a command's process has it (vgfc.client)
    from vgfc import server

    with tempfile.TemporaryDirectory() as work:
        server._warm_up(Path(work))
        gc.collect()
        gc.freeze()
        for model in options.models:
            args = ["compile", str(model), "-o", os.path.join(work, "out.vgf"), *extra]
            totals: list[float] = []
            stages: dict[str, list[float]] = {}
            for run in range(options.runs + (0 if options.cold else 1)):
                cache = os.path.join(work, f"cache-{run}" if options.cold else "cache")
                total, found = _run_forked(args, cache)
                if run == 0 and not options.cold:
                    continue  # filled the cache
                totals.append(total)
                for name, ms in found.items():
                    stages.setdefault(name, []).append(ms)
            shown = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in stages.items())
            print(f"{model}: {statistics.median(totals):.1f} ms in all; {shown} (ms, medians)")


if __name__ == "__main__":
    main()
