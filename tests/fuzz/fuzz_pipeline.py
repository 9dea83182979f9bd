#!/usr/bin/env python3
"""Coverage-guided fuzzing of the whole vgfc pipeline with atheris (libFuzzer).

Every input is written to a file and held to the invariant of :mod:`invariant`: ``vgfc check``
and ``vgfc compile`` succeed with a VGF that decodes and validates, or fail with short
``VgfcError`` messages that name the file, agree with each other, and finish in time. Mutants
come mostly from :mod:`mutator` (one structural change to a decoded model), sometimes from
libFuzzer's byte mutations.

    python tests/fuzz/fuzz_pipeline.py --seconds 600        # a campaign (what `make fuzz` runs)
    python tests/fuzz/fuzz_pipeline.py --run FILE...         # one input through the invariant
    python tests/fuzz/fuzz_pipeline.py --minimize FILE       # shrink a finding, keep its class

``--target library`` and ``--target vgf`` fuzz the other surfaces the same way: kernel libraries
(loaded, checked by ``vgfc kernels``, used by a compile) and VGF files (``vgfc inspect`` and
``--diff``), with the invariants and mutators of :mod:`surfaces`; their work folders are
``build/fuzz-library`` and ``build/fuzz-vgf``.

A campaign seeds a work corpus (``build/fuzz/corpus``) from the samples, the real models, one
conformance test per operator and the regression corpus ``tests/data/fuzz``, then runs workers
until the time is up. A worker does not stop at a finding: it saves the first input of each
distinct finding under ``build/fuzz/findings`` (``CLASS-HASH.tosa`` and ``.txt`` with the
traceback), counts repeats, and goes on. Hangs past libFuzzer's ``-timeout`` and crashes of the
process itself end a worker (libFuzzer writes them under ``build/fuzz/artifacts``); the driver
starts another until the time is spent, then prints inputs run, coverage and findings by class.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pkgutil
import random
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

DEFAULT_WORKDIR = ROOT / "build" / "fuzz"
HANG_S = 30
"""libFuzzer's -timeout: an input running this long kills the worker (the invariant's own
deadline, reported as a finding, is shorter)."""
MAX_LEN = 2 << 20
RSS_LIMIT_MB = 8192
_SKIP_MODULES = ("vgfc.cli", "vgfc.runner", "vgfc.runner.oracle", "vgfc.runner.numeric")
_SLOW = {"glsl-macro-expansion-exceeds-timeout.tosa"}
"""Regression files that take seconds each: as seeds, every mutant of them would too."""


# --- seeds ----------------------------------------------------------------------------------------


def seed_files() -> list[Path]:
    """Real models: the samples, the converted TFLite models and their conformance subset, the
    smallest conformance test of each operator, and the regression corpus."""
    seeds = sorted((ROOT / "samples").glob("*.tosa"))
    seeds += sorted((ROOT / "tests" / "data" / "real").rglob("*.tosa"))
    smallest: dict[str, Path] = {}
    for desc in sorted((ROOT / "tests" / "data" / "conformance").glob("*/desc.json")):
        op = json.loads(desc.read_text())["test_details"]["operator"]
        model = desc.parent / "test.tosa"
        if op not in smallest or model.stat().st_size < smallest[op].stat().st_size:
            smallest[op] = model
    seeds += [smallest[op] for op in sorted(smallest)]
    seeds += [
        p for p in sorted((ROOT / "tests" / "data" / "fuzz").glob("*.tosa")) if p.name not in _SLOW
    ]
    return seeds


TARGETS = ("model", "library", "vgf")
"""What a campaign fuzzes."""
SUFFIX = {"model": ".tosa", "library": ".yaml", "vgf": ".vgf"}


def default_workdir(target: str) -> Path:
    return DEFAULT_WORKDIR if target == "model" else ROOT / "build" / f"fuzz-{target}"


def target_seeds(target: str, workdir: Path) -> list[Path]:
    """The seeds of a target: models, libraries (and the regression corpus of each), VGFs."""
    import surfaces

    corpus = ROOT / "tests" / "data" / "fuzz"
    if target == "library":
        return [*surfaces.LIBRARY_SEEDS, *sorted((corpus / "library").glob("*.yaml"))]
    if target == "vgf":
        return [*surfaces.vgf_seeds(workdir / "seeds"), *sorted((corpus / "vgf").glob("*.vgf"))]
    return seed_files()


def run_target(target: str, name: str) -> object:
    """One input of ``target`` through its invariant."""
    import invariant
    import surfaces

    if target == "library":
        return surfaces.run_library(name)
    if target == "vgf":
        return surfaces.run_vgf(name)
    return invariant.run(name)


def seed_corpus(corpus: Path, target: str = "model", workdir: Path = DEFAULT_WORKDIR) -> int:
    corpus.mkdir(parents=True, exist_ok=True)
    seeds = target_seeds(target, workdir)
    for seed in seeds:
        rel = seed.resolve().relative_to(ROOT.resolve()).with_suffix("")
        name = corpus / ("seed-" + "-".join(rel.parts) + SUFFIX[target])
        if not name.exists():
            shutil.copyfile(seed, name)
    return len(seeds)


# --- the worker (runs under libFuzzer) ------------------------------------------------------------


class Findings:
    """The first input of each distinct finding, and how often each was hit."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.index_path = folder / "index.json"
        self.index: dict[str, dict[str, Any]] = (
            json.loads(self.index_path.read_text()) if self.index_path.exists() else {}
        )
        self.unsaved = 0

    def add(
        self, kind: str, signature: str, data: bytes, report: str, suffix: str = ".tosa"
    ) -> None:
        entry = self.index.get(signature)
        if entry is None:
            digest = hashlib.sha1(signature.encode()).hexdigest()[:10]
            name = f"{kind}-{digest}"
            (self.folder / f"{name}{suffix}").write_bytes(data)
            (self.folder / f"{name}.txt").write_text(f"{signature}\n\n{report}")
            self.index[signature] = {"class": kind, "file": f"{name}{suffix}", "hits": 1}
            print(f"NEW FINDING {name}: {signature}", file=sys.stderr, flush=True)
            self.save()
            return
        entry["hits"] += 1
        self.unsaved += 1
        if self.unsaved >= 50:
            self.save()

    def save(self) -> None:
        tmp = self.index_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.index, indent=1, sort_keys=True))
        tmp.replace(self.index_path)
        self.unsaved = 0


def worker(
    workdir: Path, libfuzzer_args: list[str], raise_findings: bool, target: str = "model"
) -> None:
    import atheris

    with atheris.instrument_imports(include=["vgfc"]):
        import vgfc

        for info in pkgutil.walk_packages(vgfc.__path__, "vgfc."):
            if not info.name.startswith(_SKIP_MODULES):
                __import__(info.name)
        import invariant
    import mutator
    import surfaces

    work = workdir / "work"
    work.mkdir(parents=True, exist_ok=True)
    if target == "library":
        surfaces.library_folder(work)  # a library's shaders must sit beside it
    path = work / f"input-{os.getpid()}{SUFFIX[target]}"
    name = str(path)
    findings = Findings(workdir / "findings")

    def test_one_input(data: bytes) -> None:
        path.write_bytes(data)
        try:
            run_target(target, name)
        except Exception as e:
            kind, signature = invariant.classify(e, name)
            report = "".join(traceback.format_exception(e))
            findings.add(kind, signature, data, report, SUFFIX[target])
            if raise_findings:
                raise

    mutate = {
        "model": mutator.mutate,
        "library": surfaces.mutate_library,
        "vgf": surfaces.mutate_vgf,
    }[target]

    def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
        return mutate(data, max_size, seed, atheris.Mutate)

    def custom_crossover(data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
        if target == "model":
            return mutator.crossover(data1, data2, max_size, seed)
        return (data1 if seed % 2 else data2)[:max_size]

    atheris.Setup(
        [sys.argv[0], *libfuzzer_args],
        test_one_input,
        custom_mutator=custom_mutator,
        custom_crossover=custom_crossover,
    )
    try:
        atheris.Fuzz()
    finally:
        findings.save()


# --- the driver -----------------------------------------------------------------------------------

_STATUS = re.compile(r"^#(\d+)\s+(\w+)\s+cov: (\d+) ft: (\d+)")
_EXECUTED = re.compile(r"stat::number_of_executed_units: (\d+)")


def campaign(workdir: Path, seconds: int, extra: list[str], target: str = "model") -> int:
    corpus, artifacts, logs = workdir / "corpus", workdir / "artifacts", workdir / "logs"
    for folder in (artifacts, logs):
        folder.mkdir(parents=True, exist_ok=True)
    seeds = seed_corpus(corpus, target, workdir)
    print(f"fuzzing {target} for {seconds} s; corpus {corpus} ({seeds} seeds), work dir {workdir}")
    deadline = time.monotonic() + seconds
    executed = workers = 0
    cov = ft = 0
    ends: list[str] = []
    while (left := int(deadline - time.monotonic())) > 5:
        workers += 1
        log = logs / f"worker-{workers}.log"
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            "--target",
            target,
            "--workdir",
            str(workdir),
            "--",
            str(corpus),
            f"-max_total_time={left}",
            f"-artifact_prefix={artifacts}/",
            f"-timeout={HANG_S}",
            f"-rss_limit_mb={RSS_LIMIT_MB}",
            f"-max_len={MAX_LEN}",
            f"-seed={random.randrange(1, 2**31)}",
            "-print_final_stats=1",
            # vgfc compiles shaders in a forked worker, which inherits libFuzzer's handlers: a
            # shader that crashes glslang there would be reported (and saved) as a crash of the
            # fuzzer, with libFuzzer's statistics in vgfc's error message. Its death is vgfc's to
            # report, so libFuzzer leaves these signals alone.
            *(f"-handle_{sig}=0" for sig in ("segv", "bus", "abrt", "ill", "fpe")),
            *extra,
        ]
        last_status = ""
        run_executed = 0
        with (
            log.open("w") as out,
            subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
            ) as proc,
        ):
            assert proc.stdout is not None
            for line in proc.stdout:
                out.write(line)
                if m := _STATUS.match(line):
                    run_executed = int(m.group(1))
                    cov, ft = int(m.group(3)), int(m.group(4))
                    if m.group(2) in ("pulse", "INITED", "DONE"):
                        last_status = line.strip()
                        print(f"[worker {workers}] {last_status}", flush=True)
                elif m := _EXECUTED.search(line):
                    run_executed = int(m.group(1))
                elif line.startswith(("NEW FINDING", "==", "SUMMARY")):
                    print(f"[worker {workers}] {line.rstrip()}", flush=True)
        executed += run_executed
        ends.append(f"worker {workers}: exit {proc.returncode} after {run_executed} inputs")
        if run_executed == 0 or proc.returncode not in (0, 1, 70, 71, 77):
            print(f"worker {workers} ended early (exit {proc.returncode}); see {log}")
            break  # not a libFuzzer ending (1 deadly signal, 70 timeout, 71 oom, 77 leak)
    return summarize(workdir, executed, cov, ft, ends)


def summarize(workdir: Path, executed: int, cov: int, ft: int, ends: list[str]) -> int:
    index_path = workdir / "findings" / "index.json"
    index: dict[str, dict[str, Any]] = (
        json.loads(index_path.read_text()) if index_path.exists() else {}
    )
    by_class: dict[str, list[dict[str, Any]]] = {}
    for signature, entry in index.items():
        by_class.setdefault(entry["class"], []).append({"signature": signature, **entry})
    artifacts = sorted(p.name for p in (workdir / "artifacts").glob("*") if p.is_file())
    print()
    print(f"inputs executed: {executed}")
    print(f"coverage: cov {cov} ft {ft} (libFuzzer's edge and feature counts, vgfc only)")
    print("; ".join(ends))
    print(f"distinct findings: {len(index)} (in {workdir / 'findings'})")
    for kind in sorted(by_class):
        entries = by_class[kind]
        print(f"  {kind}: {len(entries)} distinct, {sum(e['hits'] for e in entries)} hits")
        for e in sorted(entries, key=lambda e: -e["hits"]):
            print(f"    {e['file']}  x{e['hits']}  {e['signature'][:110]}")
    if artifacts:
        kinds = sorted({name.split("-")[0] for name in artifacts})
        print(
            f"libFuzzer artifacts (hangs, out-of-memory, crashes of the fuzzing process): "
            f"{len(artifacts)} ({', '.join(kinds)}) in {workdir / 'artifacts'}"
        )
    return 0


# --- single inputs --------------------------------------------------------------------------------


def run_files(files: list[str], target: str = "model") -> int:
    import invariant

    bad = 0
    for name in files:
        try:
            outcome = run_target(target, name)
        except Exception as e:
            bad += 1
            kind, signature = invariant.classify(e, name)
            print(f"{name}: FINDING {kind}: {signature}")
            traceback.print_exception(e)
        else:
            if isinstance(outcome, invariant.Outcome):
                outcome = outcome.compile_error or f"{outcome.modules} modules"
            print(f"{name}: ok ({outcome})")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=int(os.environ.get("FUZZ_SECONDS", 600)))
    parser.add_argument("--target", choices=TARGETS, default="model", help="what to fuzz")
    parser.add_argument("--workdir", type=Path, help="default: build/fuzz[-TARGET]")
    parser.add_argument("--run", action="store_true", help="run FILEs through the invariant")
    parser.add_argument("--minimize", action="store_true", help="shrink FILE, keep its finding")
    parser.add_argument("--output", type=Path, help="where --minimize writes (default FILE.min)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--raise",
        dest="raise_findings",
        action="store_true",
        help="stop at the first finding (a libFuzzer crash), e.g. with -minimize_crash=1",
    )
    parser.add_argument("args", nargs="*", help="FILEs, or libFuzzer arguments after --")
    ns = parser.parse_args()
    workdir = ns.workdir or default_workdir(ns.target)
    if ns.run:
        return run_files(ns.args, ns.target)
    if ns.minimize:
        from minimize import minimize

        (source,) = ns.args
        return minimize(Path(source), ns.output or Path(source + ".min"))
    if ns.worker or ns.raise_findings:
        worker(workdir, ns.args, ns.raise_findings, ns.target)
        return 0
    return campaign(workdir, ns.seconds, ns.args, ns.target)


if __name__ == "__main__":
    sys.exit(main())
