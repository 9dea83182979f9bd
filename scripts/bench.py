"""vgfc against the reference converter (model-converter), side by side: as commands and in-process.

    python scripts/bench.py [--runs 5] [--only NAME ...] [--baseline PATH] [--json FILE]
                            [--no-scaling] [--huge]

What a user or a CI job pays: each compile is a fresh process, timed from start to exit, with its
peak resident memory from ``os.wait4`` (a vgfc compile's shader workers included, as they are its
children). Runs are interleaved (model by model, the converters in turn, the order rotating each
run) and the table shows the median of ``--runs``. Beside it, the **in-process** column: the same
compile through the library API (``vgfc.compile(model, out)``) in one Python process that has
imported vgfc once, what a tool that is already Python (ExecuTorch's export, a build script) pays
per model; its ratio is against the reference converter's subprocess, which such a tool would
otherwise start. ``--baseline`` adds another vgfc (another checkout's) to the same runs.

vgfc is timed as a regular install is: this checkout is installed (not in editable mode) into a
virtual environment of its own, ``build/bench/venv``, and byte-compiled, as ``pip install`` leaves
it. The floor under every vgfc figure, an interpreter of that environment starting and exiting
(``python -c pass``), is printed with the table.

The rows: the generated models of ``scripts/make_bench_models.py`` (a 2000-op chain, 40 MB of
constants, 100 GLSL shaders with the shader cache cold and warm), every real network under
``tests/data`` (TFLite and MediaPipe networks, those with custom ops compiled with ``--kernels
mediapipe``; the networks ExecuTorch exported), ExecuTorch's big model tests (inception_v3,
deit_tiny, deeplab v3, conformer, NSS, ...: the TOSA files ``make test-executorch-suite
SUITE_PART=models`` kept under build/, ``scripts/_bench_executorch.py``; those not kept are
named), the ExecuTorch rows with ``vgfc-model-converter --input X --output Y``, the command
ExecuTorch runs, where the others use ``vgfc compile``; two batch rows (twenty models in one ``vgfc
compile -d`` run with one and two workers, against a shell loop that runs the reference converter
once per model), a table of how compile time grows with the number of operators (1k, 10k,
100k), and one of how it grows with the number of kernel-library ops (1k and 4k HardSwish ops
that ``samples/kernels/example_ops.yaml`` expands; vgfc only: the reference converter has no
kernel libraries). ``--huge`` adds a model with 4 GiB of constants stored after the flatbuffer
(peak memory is the figure to read). vgfc never touches the user's shader cache: each row has
a cache folder of its own (``VGFC_CACHE_DIR``), filled by an untimed compile before the first
run, except the ``cache cold`` row, whose folder is emptied before every run.

Linux counts the memory a process had when it was forked in its children's peak RSS, so this
script keeps itself small (the models are made by a separate process) and prints its own peak.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "scripts"))

from _bench_executorch import SOURCE, kept_models  # noqa: E402
from reference_tools import tool  # noqa: E402

MAIN = ("chain2000", "constants", "shaders100", "chain100k")
"""Generated models of the main table, in its order."""
SCALING = {"chain1k": 1_000, "chain10k": 10_000, "chain100k": 100_000}
"""The models of the scaling table (scripts/make_bench_models.py names them) and their sizes."""
LIBRARY_OPS = {"hardswish1k": 1_000, "hardswish4k": 4_000}
"""The models of the library-op table and their numbers of library ops."""
EXAMPLE_OPS = ROOT / "samples" / "kernels" / "example_ops.yaml"
REAL = ("real/tflite", "real/mediapipe", "executorch")
"""Folders of tests/data that hold real networks."""
KERNELS = {"mediapipe": ("--kernels", "mediapipe")}
"""vgfc's arguments for the real networks of a folder: the kernel library their custom ops need."""
LABELS = {"mc": "model-converter", "vgfc": "vgfc", "base": "baseline vgfc"}
VENV = ROOT / "build" / "bench" / "venv"


@dataclass(eq=False)
class Case:
    """One row: a model, how vgfc is run on it, and what the runs measured."""

    name: str
    model: Path
    cold: bool = False
    """Empty the shader cache before every run (else it is filled before the first)."""
    vgfc_args: tuple[str, ...] = ()
    batch: tuple[Path, ...] = ()
    """A batch row: these models in one ``vgfc compile -d`` run, against one reference converter
    process per model in a shell loop (what a CI job without a batch mode runs)."""
    real: bool = False
    """A real network (the summary line gives their median and worst ratio)."""
    vgfc_only: bool = False
    """Not run with the reference converter (it cannot compile the model)."""
    converter: bool = False
    """vgfc run as ExecuTorch runs its converter: ``vgfc-model-converter`` (beside ``vgfc``)
    with the reference converter's command line, not ``vgfc compile``."""
    times: dict[str, list[float]] = field(default_factory=dict)
    rss: dict[str, list[int]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    in_process: float | None = None
    """Median seconds of ``vgfc.compile`` in a warm process."""

    def seconds(self, tool_name: str) -> float | None:
        return _median(self.times.get(tool_name, []))

    def peak(self, tool_name: str) -> float | None:
        return _median(self.rss.get(tool_name, []))


def measure(command: list[str], env: dict[str, str]) -> tuple[float, int, int, str]:
    """Run ``command``: (wall seconds, peak RSS in bytes, exit code, last line of stderr)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = code = os.waitstatus_to_exitcode(status)
        err.seek(0)
        lines = [line for line in err.read().decode(errors="replace").splitlines() if line]
    kib = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return wall, usage.ru_maxrss * kib, code, lines[-1] if lines else ""


def install() -> Path:
    """This checkout, installed as a user installs it, into :data:`VENV`; its ``vgfc``."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT)], check=True)
    else:  # the dependencies are there: only vgfc itself, afresh
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--force-reinstall",
                str(ROOT),
            ],
            check=True,
        )
    code = "import compileall, os, vgfc; compileall.compile_dir(os.path.dirname(vgfc.__file__))"
    subprocess.run([str(python), "-c", code], check=True, stdout=subprocess.DEVNULL)
    return VENV / "bin" / "vgfc"


class Bench:
    """Runs one tool on one case and records what it measured."""

    def __init__(self, tools: dict[str, Path], work: Path) -> None:
        self.tools, self.work = tools, work
        self.env = {**os.environ, "NO_COLOR": "1"}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    def cache(self, case: Case, tool_name: str) -> Path:
        return self.work / "cache" / tool_name / case.name.replace("/", "_")

    def command(self, case: Case, tool_name: str) -> tuple[list[str], dict[str, str]]:
        exe, out = str(self.tools[tool_name]), str(self.work / f"out.{tool_name}.vgf")
        if tool_name == "mc":
            if case.batch:
                loop = 'for m in "$@"; do "$0" --input "$m" --output "$m.vgf" || exit 1; done'
                return ["/bin/sh", "-c", loop, exe, *map(str, case.batch)], self.env
            return [exe, "--input", str(case.model), "--output", out], self.env
        folder = self.cache(case, tool_name)
        if case.cold:
            shutil.rmtree(folder, ignore_errors=True)
        if case.converter:
            converter = str(Path(exe).with_name("vgfc-model-converter"))
            command = [converter, "--input", str(case.model), "--output", out]
        elif case.batch:
            outputs = str(self.work / f"batch.{tool_name}")
            command = [exe, "compile", *map(str, case.batch), "-d", outputs, "-q", *case.vgfc_args]
        else:
            command = [exe, "compile", str(case.model), "-o", out, "-q", *case.vgfc_args]
        return command, {**self.env, "VGFC_CACHE_DIR": str(folder)}

    def prepare(self, case: Case) -> None:
        """Fill the shader caches of a warm case."""
        for tool_name in self.tools:
            if tool_name != "mc" and not case.cold:
                measure(*self.command(case, tool_name))

    def run(self, case: Case, tool_name: str) -> None:
        if tool_name in case.failed or (case.vgfc_only and tool_name == "mc"):
            return
        wall, rss, code, last = measure(*self.command(case, tool_name))
        if code:
            case.failed[tool_name] = f"exit {code}: {last[:120]}"
            return
        case.times.setdefault(tool_name, []).append(wall)
        case.rss.setdefault(tool_name, []).append(rss)

    def in_process(self, cases: list[Case], runs: int) -> None:
        """Each case's ``vgfc.compile`` in one warm process of the bench environment."""
        spec = [
            {
                "model": str(c.model),
                "kernels": list(c.vgfc_args[1:2]) if c.vgfc_args[:1] == ("--kernels",) else [],
                "cache": str(self.cache(c, "inproc")),
                "cold": c.cold,
            }
            for c in cases
        ]
        python = Path(self.tools["vgfc"]).parent / "python"
        done = subprocess.run(
            [str(python), __file__, "--worker", json.dumps(spec), "--runs", str(runs)],
            capture_output=True,
            text=True,
            env=self.env,
            check=True,
        )
        for case, seconds in zip(cases, json.loads(done.stdout), strict=True):
            case.in_process = seconds

    def floor(self, runs: int) -> float:
        """Median wall time of the bench environment's interpreter starting and exiting."""
        python = str(Path(self.tools["vgfc"]).parent / "python")
        return statistics.median(measure([python, "-c", "pass"], self.env)[0] for _ in range(runs))


def worker(spec: list[dict[str, object]], runs: int) -> None:
    """``--worker``: time ``vgfc.compile`` on each model of ``spec`` in this process; print the
    medians as JSON. The first compile of each model is not counted (it fills the cache)."""
    import vgfc

    medians: list[float | None] = []
    with tempfile.TemporaryDirectory(prefix="vgfc-bench-") as tmp:
        out = Path(tmp) / "out.vgf"
        for case in spec:
            os.environ["VGFC_CACHE_DIR"] = str(case["cache"])
            kernels = list(case["kernels"])  # type: ignore[call-overload]
            try:
                vgfc.compile(str(case["model"]), out, kernels=kernels)
            except vgfc.VgfcError:
                medians.append(None)
                continue
            times = []
            for _ in range(runs):
                if case["cold"]:
                    shutil.rmtree(str(case["cache"]), ignore_errors=True)
                start = time.perf_counter()
                vgfc.compile(str(case["model"]), out, kernels=kernels)
                times.append(time.perf_counter() - start)
            medians.append(statistics.median(times))
    print(json.dumps(medians))


def _median(values: list[float] | list[int]) -> float | None:
    return statistics.median(values) if values else None


def seconds(value: float | None) -> str:
    if value is None:
        return "failed"
    return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value:.2f} s"


def mib(value: float | None) -> str:
    return "-" if value is None else f"{value / (1 << 20):.0f} MiB"


def ratio(mine: float | None, theirs: float | None) -> str:
    return "-" if mine is None or theirs is None or not theirs else f"{mine / theirs:.2f}x"


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def cases_of(models: Path, huge: bool) -> tuple[list[Case], list[Case], list[Case]]:
    """The rows of the main table, of the scaling table (a model in both is one case) and of
    the library-op table."""
    names = list(dict.fromkeys([*MAIN, *SCALING, *LIBRARY_OPS]))
    maker = [sys.executable, str(ROOT / "scripts" / "make_bench_models.py"), "--out"]
    subprocess.run([*maker, str(models), "--only", *names], check=True)
    paths = {name: models / f"{name}.tosa" for name in names}
    cases = []
    for name in MAIN:
        if name == "shaders100":
            cases.append(Case("shaders100 (cache cold)", paths[name], cold=True))
            cases.append(Case("shaders100 (cache warm)", paths[name]))
        else:
            cases.append(Case(name, paths[name]))
    if huge:
        path = models / "external4g.tosa"
        if not path.exists():
            script = str(ROOT / "scripts" / "bench_models.py")
            subprocess.run(
                [sys.executable, script, "external", str(path), "--gib", "4"], check=True
            )
        cases.append(Case("4 GiB of constants", path))
    data = ROOT / "tests" / "data"
    for folder in REAL:
        for model in sorted((data / folder).glob("*.tosa")):
            name = str(model.relative_to(data).with_suffix(""))
            args = KERNELS.get(model.parent.name, ())
            converter = folder == "executorch"
            cases.append(Case(name, model, vgfc_args=args, real=True, converter=converter))
    kept = kept_models(ROOT / "build")[0]
    cases += [Case(name, model, real=True, converter=True) for name, model in kept.items()]
    # The batch rows: every model above that both converters compile, four times over under
    # names of their own, as a CI job that builds a folder of models would meet them.
    both = [paths["chain2000"], paths["constants"], paths["shaders100"], paths["chain1k"]]
    both += [data / "real" / "tflite" / "face_detection_short_range.tosa"]
    copies = models / "batch"
    copies.mkdir(parents=True, exist_ok=True)
    batch = []
    for n in range(4):
        for model in both:
            copy = copies / f"{model.stem}_{n}.tosa"
            if not copy.exists() or copy.stat().st_size != model.stat().st_size:
                shutil.copyfile(model, copy)
            batch.append(copy)
    label = f"batch of {len(batch)} models"
    cases.append(Case(label, batch[0], batch=tuple(batch)))
    cases.append(Case(f"{label} (-j 2)", batch[0], vgfc_args=("-j", "2"), batch=tuple(batch)))
    known = {c.name: c for c in cases}
    kernels = ("--kernels", str(EXAMPLE_OPS))
    library = [Case(n, paths[n], vgfc_args=kernels, vgfc_only=True) for n in LIBRARY_OPS]
    return cases, [known.get(n) or Case(n, paths[n]) for n in SCALING], library


def report(
    args: argparse.Namespace, tools: dict[str, Path], cases: list[Case], floor: float
) -> None:
    if not cases:  # --only chose rows of the other tables only
        return
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        f"\nvgfc vs model-converter, median of {args.runs} interleaved runs (wall time, peak RSS). "
        f"Floor: {seconds(floor)} for the bench environment's `python -c pass`; this script's own "
        f"{mib(own)} is the floor under each RSS.\n"
    )
    headers = ["model", "model-converter", "vgfc", "ratio", "in-process", "in-process ratio"]
    if args.baseline:
        headers += ["baseline vgfc", "baseline ratio"]
    headers += ["model-converter RSS", "vgfc RSS", "RSS ratio"]
    rows = []
    for c in cases:
        mc, mine = c.seconds("mc"), c.seconds("vgfc")
        row = [c.name, seconds(mc), seconds(mine), ratio(mine, mc)]
        if c.batch:
            row += ["-", "-"]
        else:
            row += [seconds(c.in_process), ratio(c.in_process, mc)]
        if args.baseline:
            row += [seconds(c.seconds("base")), ratio(c.seconds("base"), mc)]
        row += [mib(c.peak("mc")), mib(c.peak("vgfc")), ratio(c.peak("vgfc"), c.peak("mc"))]
        rows.append(row)
    print(table(headers, rows))
    real = [
        (c.seconds("vgfc") or 0) / (c.seconds("mc") or 1)
        for c in cases
        if c.real and c.seconds("vgfc") and c.seconds("mc")
    ]
    if real:
        print(
            f"\nreal networks: {len(real)}; ratio median {statistics.median(real):.2f}x, "
            f"worst {max(real):.2f}x"
        )
    rss = [
        (c.peak("vgfc") or 0) / (c.peak("mc") or 1)
        for c in cases
        if not c.batch and c.peak("vgfc") and c.peak("mc")
    ]
    if rss:
        print(f"peak RSS ratio: worst {max(rss):.2f}x")


def _growth_cells(ops: int, t: float | None, base: tuple[int, float] | None) -> list[str]:
    """A size table's first cells: the op count, vgfc's time, its time per op, and its growth
    against the ``base`` row (ops, seconds)."""
    per_op = "-" if t is None else f"{t / ops * 1e6:.0f} us"
    growth = "-"
    if base is not None and t is not None:
        growth = f"{t / base[1]:.1f}x for {ops // base[0]}x ops"
    return [f"{ops:,}", seconds(t), per_op, growth]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 5)))
    parser.add_argument("--only", nargs="+", metavar="NAME", help="rows whose name contains one")
    parser.add_argument("--baseline", type=Path, help="another vgfc to measure in the same runs")
    parser.add_argument("--models", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--no-scaling", action="store_true", help="leave out the scaling table")
    parser.add_argument("--huge", action="store_true", help="add a model of 4 GiB of constants")
    parser.add_argument("--json", type=Path, help="also write the medians as JSON")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker), args.runs)
        return

    cases, scaling, library = cases_of(args.models, args.huge)
    if args.no_scaling:
        scaling = library = []
    if args.only:
        cases = [c for c in cases if any(o in c.name for o in args.only)]
        scaling = [c for c in scaling if any(o in c.name for o in args.only)]
        library = [c for c in library if any(o in c.name for o in args.only)]
    tools = {"mc": tool("model-converter", "ai-ml-sdk-model-converter"), "vgfc": install()}
    if args.baseline:
        tools["base"] = args.baseline
    everything = list(dict.fromkeys(cases + scaling + library))
    with tempfile.TemporaryDirectory(prefix="vgfc-bench-") as tmp:
        bench = Bench(tools, Path(tmp))
        for case in everything:
            bench.prepare(case)
        names = list(tools)
        for run in range(args.runs):
            print(f"run {run + 1} of {args.runs}", file=sys.stderr)
            order = names[run % len(names) :] + names[: run % len(names)]
            for case in everything:
                for tool_name in order:
                    bench.run(case, tool_name)
        print("in-process runs", file=sys.stderr)
        bench.in_process([c for c in cases + library if not c.batch], args.runs)
        floor = bench.floor(args.runs)

    report(args, tools, cases, floor)
    missing = kept_models(ROOT / "build")[1]
    if missing:
        print(f"\nnot timed, no TOSA file kept by `{SOURCE}`: {', '.join(missing)}")
    if scaling:
        print("\ncompile time by model size (elementwise chain on [1, 16] fp32)\n")
        rows = []
        previous: tuple[int, float] | None = None
        for c in scaling:
            ops, t = SCALING[c.model.stem], c.seconds("vgfc")
            mc = c.seconds("mc")
            rows.append([*_growth_cells(ops, t, previous), seconds(mc), ratio(t, mc)])
            previous = (ops, t) if t is not None else None
        headers = ["ops", "vgfc", "vgfc per op", "growth", "model-converter", "ratio"]
        print(table(headers, rows))
    if library:
        print(f"\ncompile time by number of kernel-library ops (HardSwish, {EXAMPLE_OPS.name})\n")
        rows = []
        first: tuple[int, float] | None = None
        for c in library:
            ops, t = LIBRARY_OPS[c.model.stem], c.seconds("vgfc")
            rows.append([*_growth_cells(ops, t, first), seconds(c.in_process)])
            first = first or ((ops, t) if t is not None else None)
        print(table(["library ops", "vgfc", "vgfc per op", "growth", "in-process"], rows))
    failures = [(c.name, t, why) for c in everything for t, why in c.failed.items()]
    if failures:
        print()
        for name, tool_name, why in failures:
            print(f"{name}: {LABELS[tool_name]} failed ({why})")
    if args.json:
        document = {
            "runs": args.runs,
            "floor": floor,
            "rows": [
                {
                    "model": c.name,
                    "seconds": {t: c.seconds(t) for t in tools},
                    "in_process": c.in_process,
                    "peak_rss": {t: c.peak(t) for t in tools},
                    "failed": c.failed,
                }
                for c in everything
            ],
        }
        args.json.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
