#!/usr/bin/env python3
"""ExecuTorch's own Arm VGF tests, run unchanged with vgfc as their converter, then every TOSA file
they handed the converter compiled by both converters and checked on the CPU emulation stack.

Two steps, each in the environment it needs (``make test-executorch-suite`` runs both)::

    # in the ExecuTorch venv (build/venv-executorch): its tests, vgfc behind them
    python scripts/executorch_suite.py run OUT [--sample N --seed S] [--models] [--only PART]
                                               [-k EXPR]
    # in vgfc's venv (it has model-converter and tosa_reference_model)
    python scripts/executorch_suite.py compare OUT [--results FILE.json] [--table FILE.md]

``run`` collects the ``vgf`` tests of the installed wheel's ``backends/arm/test/ops`` (and
``models`` with ``--models`` or without ``--sample``; ``--only ops|models`` takes one of them),
picks the sample (every operator file once, then seeded picks up to N), and runs pytest on them
with ``MODEL_CONVERTER_PATH`` at ``scripts/executorch_suite_converter.py``, which keeps each
converter input in ``OUT/keep/<test>/``, and with ``scripts/executorch_suite_offline.py``, which
builds the models whose tests would download weights with seeded random ones instead and lists
each such change in ``OUT/replaced.json``. A test module that does not import (a package the
venv lacks) is listed in ``OUT/pytest.json`` with its error. The tests stop after the
converter, at the run stage: the wheel has no VGF runtime. ``compare`` then judges every kept
file (``scripts/_executorch_suite_compare.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _executorch_suite_shards as shards  # sibling modules, not a package
import executorch_suite_converter as wrapper

WRAPPER = Path(__file__).resolve().parent / "executorch_suite_converter.py"
SUITE = "executorch/backends/arm/test"
SELECTED = "selected.txt"
PYTEST_XML = "pytest.xml"
PYTEST_OUTCOMES = "pytest.json"
REPLACED = "replaced.json"
RESULTS = "results.json"
OFFLINE_PLUGIN = "executorch_suite_offline"
PARTS = {"ops": ["ops"], "models": ["models"], "all": ["ops", "models"]}
# What every VGF test of the wheel ends with once the converter ran: no runtime to run the .pte.
NO_RUNTIME = "Did not find build arm_executor_runner"
NOT_IMPORTED = "not-imported.json"


def site_packages() -> Path:
    """The folder the installed ``executorch`` package is in (pytest runs from there, so that
    the suite's own conftest.py applies)."""
    import executorch

    return Path(next(iter(executorch.__path__))).resolve().parent


def pytest(root: Path, out: Path) -> list[str]:
    """pytest in ``root`` with an empty configuration of ours: the settings of a project
    folder above the venv (vgfc's own ``--strict-markers``) must not apply, and ExecuTorch's
    own ``pytest.ini`` (which declares its markers) is not in the wheel."""
    ini = out / "pytest.ini"
    ini.write_text("[pytest]\n")
    flags = ["-q", "-p", "no:cacheprovider", "-c", str(ini), f"--rootdir={root}"]
    flags += ["-p", OFFLINE_PLUGIN, "--continue-on-collection-errors"]
    return [sys.executable, "-m", "pytest", *flags]


def environment(**extra: str) -> dict[str, str]:
    """This environment, with this folder on the path (pytest loads the offline plugin from
    it) and ``extra``."""
    path = os.pathsep.join(filter(None, [str(WRAPPER.parent), os.environ.get("PYTHONPATH")]))
    return dict(os.environ, PYTHONPATH=path, HF_HUB_OFFLINE="1", **extra)


def collect(root: Path, out: Path, folders: Sequence[str], keyword: str | None = None) -> list[str]:
    """Node ids of the ``vgf`` tests under ``folders`` (relative to the suite)."""
    run = subprocess.run(
        [
            *pytest(root, out),
            "--collect-only",
            "-k",
            f"vgf and ({keyword})" if keyword else "vgf",
            *(f"{SUITE}/{f}" for f in folders),
        ],
        cwd=root,
        env=environment(),
        capture_output=True,
        text=True,
    )
    nodes = [line.strip() for line in run.stdout.splitlines() if "::" in line]
    (out / NOT_IMPORTED).write_text(json.dumps(import_errors(run.stdout), indent=1) + "\n")
    if not nodes:
        raise SystemExit(f"pytest collected no vgf test:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return nodes


def import_errors(stdout: str) -> dict[str, str]:
    """The test modules pytest could not import, from its collection report: file -> the
    error's last line (``ModuleNotFoundError: No module named 'transformers'``)."""
    found: dict[str, str] = {}
    module = None
    for line in stdout.splitlines():
        if line.startswith("_") and " ERROR collecting " in line:
            module = line.split(" ERROR collecting ", 1)[1].rstrip(" _")
        elif module and line.startswith("E   "):
            found[module] = line[4:].strip()
    return found


def sample(nodes: Sequence[str], size: int, seed: int) -> list[str]:
    """One test of every file (chosen with ``seed``), then seeded picks up to ``size`` in all;
    the same list on every machine for the same collection."""
    rng = random.Random(seed)
    by_file: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        by_file[node.split("::", 1)[0]].append(node)
    chosen = [rng.choice(by_file[f]) for f in sorted(by_file)]
    rest = sorted(set(nodes) - set(chosen))
    chosen += rng.sample(rest, max(0, min(len(rest), size - len(chosen))))
    return sorted(chosen)


def outcomes(xml: Path) -> dict[str, dict[str, str]]:
    """pytest's verdict per test folder name: ``converted`` where the test stopped for want of
    a runtime only, else pytest's outcome and the first line of its message."""
    found: dict[str, dict[str, str]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        folder = wrapper.folder_name(f"{module}.py::{case.get('name', '')}")
        problem = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        if problem is None:
            found[folder] = {"outcome": "passed", "message": ""}
            continue
        message = (problem.get("message") or problem.text or "").strip()
        outcome = "converted" if NO_RUNTIME in f"{message}\n{problem.text}" else problem.tag
        found[folder] = {
            "outcome": outcome,
            "message": message.splitlines()[0][:300] if message else "",
        }
    return found


def run(
    out: Path,
    size: int | None,
    seed: int,
    models: bool,
    only: str | None = None,
    keyword: str | None = None,
    shard: tuple[int, int] | None = None,
) -> int:
    root = site_packages()
    if only is not None:
        folders = PARTS[only]
    else:
        folders = ["ops", "models"] if models or size is None else ["ops"]
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    nodes = collect(root, out, folders, keyword)
    chosen = nodes if size is None else sample(nodes, size, seed)
    if shard is not None:
        chosen = shards.select(chosen, *shard)
    keep = out / "keep"
    shutil.rmtree(keep, ignore_errors=True)
    keep.mkdir(parents=True)
    (out / SELECTED).write_text("".join(f"{n}\n" for n in chosen))
    converter = shutil.which("vgfc-model-converter", path=str(Path(sys.executable).parent))
    env = environment(
        MODEL_CONVERTER_PATH=str(WRAPPER),
        VGFC_SUITE_KEEP=str(keep),
        VGFC_SUITE_CONVERTER=converter or "vgfc-model-converter",
        VGFC_SUITE_REPLACED=str(out / REPLACED),
    )
    print(
        f"{len(chosen)} of {len(nodes)} vgf tests ({', '.join(folders)}), seed {seed}", flush=True
    )
    subprocess.run(
        [*pytest(root, out), "--tb=line", f"--junitxml={out / PYTEST_XML}", f"@{out / SELECTED}"],
        cwd=root,
        env=env,
    )
    # pytest writes its report at the end: none where it was killed (every call is still kept)
    found = outcomes(out / PYTEST_XML) if (out / PYTEST_XML).is_file() else {}
    meta = {
        "collected": len(nodes),
        "selected": len(chosen),
        "seed": seed,
        "sample": size,
        "folders": folders,
        "keyword": keyword,
        "shard": None if shard is None else f"{shard[0]}/{shard[1]}",
        "not_imported": json.loads((out / NOT_IMPORTED).read_text()),
    }
    (out / PYTEST_OUTCOMES).write_text(json.dumps({"run": meta, "tests": found}, indent=1) + "\n")
    return 0


def merge(out: Path, folder: Path, table: Path, summary: Any) -> int:
    """Keep the results of the shard run in ``out`` as its shard file in ``folder``, then write
    the whole-suite table from every shard file there (:mod:`_executorch_suite_shards`)."""
    results_path = out / RESULTS
    if not results_path.is_file():
        raise SystemExit(f"{results_path}: no results: run compare --results first")
    results = json.loads(results_path.read_text())
    said = results.get("run", {}).get("shard")
    if not said:
        raise SystemExit(f"{results_path}: not the results of a shard run (run --shard K/N)")
    path = shards.write_shard(folder, *shards.parse(said), results)
    tests = shards.merged(folder)[0]
    table.write_text(shards.whole_markdown(folder, summary(tests)))
    print(f"kept {path}; wrote {table}", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run ExecuTorch's vgf tests, keeping each converter input")
    r.add_argument("out", type=Path)
    r.add_argument("--sample", type=int, help="this many tests (every operator file once)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--models", action="store_true", help="sample the model tests too")
    r.add_argument("-k", dest="keyword", help="only the vgf tests this pytest -k expression takes")
    r.add_argument(
        "--only", choices=sorted(PARTS), help="the operator tests or the model tests only"
    )
    r.add_argument(
        "--shard", metavar="K/N", help="shard K of N of the tests (the whole suite in N runs)"
    )
    c = sub.add_parser("compare", help="compile every kept file with both converters and run them")
    c.add_argument("out", type=Path)
    c.add_argument("--results", type=Path, help="write the results as JSON")
    c.add_argument("--table", type=Path, help="write the tables as Markdown")
    c.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    c.add_argument(
        "--section", choices=sorted(PARTS), help="write the tables as this part's section of FILE"
    )
    m = sub.add_parser(
        "merge", help="keep a shard's results and write the whole-suite table from every shard"
    )
    m.add_argument("out", type=Path, help="the shard run's folder (compare --results in it)")
    m.add_argument("--shards", type=Path, required=True, help="the folder of shard files")
    m.add_argument("--table", type=Path, required=True, help="the whole-suite Markdown")
    args = parser.parse_args(argv)
    if args.command == "run":
        shard = None
        if args.shard is not None:
            try:
                shard = shards.parse(args.shard)
            except ValueError as e:
                parser.error(f"--shard: {e}")
            if args.sample is not None:
                parser.error("--shard and --sample do not go together")
        if args.sample is not None and args.sample < 1:
            parser.error("--sample must be at least 1")
        if args.keyword is not None and not args.keyword.strip():
            parser.error("-k must be a pytest keyword expression")
        return run(args.out, args.sample, args.seed, args.models, args.only, args.keyword, shard)
    import _executorch_suite_compare as compare  # vgfc's venv only

    if args.command == "merge":
        return merge(args.out, args.shards, args.table, compare.summary)

    return compare.main(args.out, args.results, args.table, args.seed, args.section)


if __name__ == "__main__":
    sys.exit(main())
