#!/usr/bin/env python3
"""The official TOSA 1.0 conformance suite, whole or as a seeded stratified sample, made and run
through both converters.

``scripts/make_conformance.py`` keeps the smallest test of each (operator, data type
combination). This script keeps more of the same official selection, made the same way (the
generator in-process from a fresh state per run, ``convert2conformance``, expected results from
``tosa_reference_model --precise_mode=1``):

* ``--select all``: every positive test of the chosen profiles and extensions (13,512 with all
  of them; about 20 worker-hours to make and run: a job for a big machine over night);
* ``--select sample --per-stratum K --seed S``: in every stratum (operator, generation group of
  the config, e.g. ``tosa-ext-fp8e4m3``, and whether it is a ``_dyn`` variant) ``K`` tests chosen
  by a random generator seeded with ``S`` and the stratum's name, so the sample is the same on
  every machine and every run; the seed goes into the manifest.

``--run`` then compiles every test with vgfc and the reference converter, runs both on the CPU
emulation stack, judges them with ``tosa_verify`` (``tests/support/conformance_harness.py``) and
prints a table per converter: pass, wrong (ran, not compliant), fails at run time, refused at
compile time, crash. ``--report FILE`` writes every result as JSON. Usage::

    python scripts/conformance_suite.py --out /big/suite --select all --run --jobs 32 \\
        --report /big/suite/report.json
    python scripts/conformance_suite.py --out DIR --select sample --per-stratum 2 --seed 7 --run
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_conformance as mc  # a sibling script, not a package

ALL_PROFILES = ("tosa-pro-int", "tosa-pro-fp")
ALL_EXTENSIONS = (
    "tosa-ext-int16",
    "tosa-ext-int4",
    "tosa-ext-bf16",
    "tosa-ext-fp8e4m3",
    "tosa-ext-fp8e5m2",
    "tosa-ext-fft",
    "tosa-ext-dynamic",
    "tosa-ext-controlflow",
    "tosa-ext-doubleround",
    "tosa-ext-inexactround",
    "tosa-ext-variable",
)
"""The extensions of TOSA 1.0 (the MX, int64 and shape ones belong to the 1.1 draft)."""


_FOLDERS: set[str] = set()
"""Values of --out and --work, left out of the command recorded in the manifest."""


def stratum(c: mc.Candidate) -> str:
    """Operator, generation group and dynamic or not: what a sample must cover."""
    return f"{c.batch.op}/{c.batch.group}{'/dyn' if c.name.endswith('_dyn') else ''}"


def pick(
    candidates: list[mc.Candidate], how: str, per_stratum: int, seed: int, max_elements: int
) -> list[Any]:
    """The candidates to make: all, or ``per_stratum`` from each stratum (seeded, sorted first
    so that the generator's listing order does not matter) among its tests of at most
    ``max_elements`` operand elements (the smallest one where none is that small)."""
    unique = {c.name: c for c in candidates}
    if how == "all":
        return sorted(unique.values(), key=lambda c: c.name)
    strata: dict[str, list[mc.Candidate]] = defaultdict(list)
    for c in unique.values():
        strata[stratum(c)].append(c)
    chosen = []
    for name, members in sorted(strata.items()):
        small = [c for c in members if c.elements <= max_elements]
        members = sorted(small or [min(members, key=lambda c: (c.elements, c.name))],
                         key=lambda c: c.name)  # fmt: skip
        rng = random.Random(f"{seed}:{name}")
        chosen += rng.sample(members, min(per_stratum, len(members)))
    return sorted(chosen, key=lambda c: c.name)


def make(
    args: argparse.Namespace, out: Path, work: Path, argv: Sequence[str] | None = None
) -> None:
    """List, pick, serialize, convert and describe; ``out`` is replaced at the end."""
    tools = mc.Tools.find()
    config = json.loads(tools.cts_config.read_text())
    scope = mc.Scope(tuple(args.profiles), tuple(args.extensions))
    build, stage = work / "build", work / "conformance"
    for d in (build, stage, work / "selfcheck"):
        shutil.rmtree(d, ignore_errors=True)
    stage.mkdir(parents=True)
    ops = [o.lower() for o in args.ops] if args.ops else sorted(k for k in config if k != "$schema")
    listed: list[mc.Candidate] = []
    for op in ops:
        if isinstance(config.get(op), dict):
            for batch in mc.batches(tools, config, op, build, scope):
                listed += mc.list_candidates(batch)
        mc.log(f"{op}: {len(listed)} tests listed so far")
    chosen = pick(listed, args.select, args.per_stratum, args.seed, args.max_elements)
    wanted: dict[str, set[str]] = defaultdict(set)
    by_key = {}
    for c in chosen:
        wanted[c.batch.key].add(c.name)
        by_key[c.batch.key] = c.batch
    for key in sorted(wanted):
        mc.serialize(by_key[key], wanted[key])
    kept, problems = [], []
    for c in chosen:
        where = build / c.batch.op / c.batch.group / str(c.batch.index)
        found = [p.parent for p in where.rglob("desc.json") if p.parent.name == c.name]
        dest = stage / c.name
        try:
            if not found:
                raise RuntimeError("the generator did not write it")
            mc.convert(tools, found[0], dest, c.batch.group)
            mc.expected_results(tools, dest)
        except RuntimeError as e:
            problems.append(f"{c.name}: {e}")
            shutil.rmtree(dest, ignore_errors=True)
            continue
        kept.append(mc.Kept(c, dest, [f"stratum {stratum(c)}"]))
    entries = [mc.describe(k, stage) for k in kept]
    if args.max_test_bytes:
        big = [e for e in entries if e["size_bytes"] > args.max_test_bytes]
        for e in big:
            shutil.rmtree(stage / e["name"])
            problems.append(f"{e['name']}: {e['size_bytes']} bytes, over --max-test-bytes")
        entries = [e for e in entries if e not in big]
    manifest = {
        "generated_by": "scripts/conformance_suite.py",
        "tools": {"tosa-tools": mc.importlib.metadata.version("tosa-tools")},
        "specification_version": mc.SPEC_VERSION,
        "seed": mc.SEED,
        "profiles": list(scope.profiles),
        "extensions": list(scope.extensions),
        "selection": args.select
        if args.select == "all"
        else f"sample: {args.per_stratum} per (operator, generation group, dynamic) stratum "
        f"of tests with at most {args.max_elements} operand elements, sample seed {args.seed}",
        "sample_seed": args.seed,
        "command": "python scripts/conformance_suite.py --out DIR "
        + " ".join(w for w in (argv or sys.argv[1:]) if w not in _FOLDERS),
        "not_generated": problems,
        "size_bytes": sum(e["size_bytes"] for e in entries),
        "tests": entries,
    }
    (stage / "manifest.json").write_text(mc._dumps(manifest) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(stage, out)
    mc.log(f"wrote {len(entries)} tests to {out}; {len(problems)} could not be made")


def run(out: Path, jobs: int | None, report: Path | None, record: bool) -> None:
    """Both converters over the corpus in ``out``: a table per converter, the JSON report, and
    with ``record`` the reference converter's results in ``out/reference_results.json``."""
    sys.path.insert(0, str(mc.ROOT / "tests" / "support"))
    import conformance_harness as harness

    tests = harness.load_tests(out)
    results = harness.run_all(tests, jobs=jobs)
    columns = ("pass", "wrong", "fails at run time", "refused", "crash")
    table: dict[str, dict[str, int]] = {c: dict.fromkeys(columns, 0) for c in harness.COMPILERS}
    rows = []
    for (name, compiler), r in sorted(results.items()):
        if r.passed:
            kind = "pass"
        elif r.status is harness.Status.FAIL:
            kind = "wrong"
        elif "crashed" in r.message:
            kind = "crash"
        else:
            kind = "refused" if r.stage == "compile" else "fails at run time"
        table[compiler][kind] += 1
        rows.append({"test": name, "compiler": compiler, "result": kind, "detail": r.summary()})
    print("| | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns))
    for compiler, counts in table.items():
        print(f"| {compiler} | " + " | ".join(str(counts[c]) for c in columns) + " |")
    if report is not None:
        report.write_text(json.dumps({"tests": len(tests), "table": table, "results": rows}))
    if record:
        harness.record_reference_results(
            results,
            out / "reference_results.json",
            "python scripts/conformance_suite.py --out DIR --no-make --run --record",
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the corpus folder")
    parser.add_argument("--work", type=Path, help="keep intermediate files here (default: temp)")
    parser.add_argument("--select", choices=("all", "sample"), default="sample")
    parser.add_argument("--per-stratum", type=int, default=2, help="tests per stratum (sample)")
    parser.add_argument("--seed", type=int, default=1, help="the sample's seed")
    parser.add_argument(
        "--max-elements", type=int, default=4096, help="operand elements of a sampled test"
    )
    parser.add_argument("--ops", nargs="*", help="only these operators (lower case)")
    parser.add_argument("--profiles", nargs="+", default=list(ALL_PROFILES))
    parser.add_argument("--extensions", nargs="*", default=list(ALL_EXTENSIONS))
    parser.add_argument("--max-test-bytes", type=int, help="leave out tests bigger than this")
    parser.add_argument("--no-make", action="store_true", help="use the corpus in --out as is")
    parser.add_argument("--run", action="store_true", help="run both converters over it")
    parser.add_argument("--jobs", type=int, help="tests run at the same time (--run)")
    parser.add_argument("--report", type=Path, help="write every result here as JSON (--run)")
    parser.add_argument(
        "--record", action="store_true", help="write DIR/reference_results.json (--run)"
    )
    args = parser.parse_args(argv)
    _FOLDERS.update({"--out", "--work", str(args.out), str(args.work)})
    out = args.out.resolve()
    if not args.no_make:
        with tempfile.TemporaryDirectory(prefix="conformance-suite-") as tmp:
            make(args, out, args.work.resolve() if args.work else Path(tmp), argv)
    if args.run:
        run(out, args.jobs, args.report, args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
