"""The whole ExecuTorch suite in shards: a fixed split of its tests, one shard run at a time, each
shard's results kept in the repository, and the whole-suite table made from every shard kept.

The suite's 3,804 tests take five to six hours of this project's two cores (ExecuTorch's
export of each test, then both converters and the emulation stack), more than one CI run or one
working session. So ``make test-executorch-suite SUITE_SHARD=K/N`` runs shard K of N (the tests
whose CRC-32 of the node id is K - 1 modulo N: the same split on every machine, and a test added
to the suite leaves the others in their shards), writes its results to
``docs/executorch-suite/shard-K-of-N.json`` (compact: one row per converter call) and then
rewrites ``docs/executorch-suite-whole.md`` from every shard file there: how many of the suite's
tests the shards cover, both converters' classes per operator file, and every call where the
converters differ or either does not pass.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _executorch_suite_table import CONVERTERS, TITLE, _cell, class_table

SHARD = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")
FILE = re.compile(r"^shard-([0-9]+)-of-([0-9]+)\.json$")
MESSAGE = 200


def parse(text: str) -> tuple[int, int]:
    """``K/N`` as (K, N), 1 <= K <= N; :class:`ValueError` otherwise."""
    found = SHARD.match(text.strip())
    if found is None or not 1 <= int(found[1]) <= int(found[2]):
        raise ValueError(f"shard must be K/N with 1 <= K <= N, not {text!r}")
    return int(found[1]), int(found[2])


def select(nodes: Sequence[str], shard: int, count: int) -> list[str]:
    """The node ids of shard ``shard`` of ``count``."""
    return [n for n in nodes if zlib.crc32(n.encode()) % count == shard - 1]


def file_name(shard: int, count: int) -> str:
    return f"shard-{shard}-of-{count}.json"


def compact(results: dict[str, Any]) -> dict[str, Any]:
    """``compare``'s results as a shard file keeps them: per test, pytest's outcome and one row
    per call: [call, vgfc class, its error, reference class, its error, same bits or null]."""
    tests = {}
    for name, t in results["tests"].items():
        rows = []
        for c in t["calls"]:
            v, r = c["vgfc"], c["reference"]
            rows.append(
                [
                    c["call"],
                    v["class"],
                    v["error"][:MESSAGE],
                    r["class"],
                    r["error"][:MESSAGE],
                    c.get("same"),
                ]
            )
        tests[name] = [t.get("pytest", {}).get("outcome", ""), rows]
    return {"run": results.get("run", {}), "input_seed": results["input_seed"], "tests": tests}


def expand(kept: dict[str, Any]) -> dict[str, Any]:
    """A shard file's tests in ``compare``'s form (what :func:`summary` reads)."""
    tests = {}
    for name, (outcome, rows) in kept["tests"].items():
        calls = []
        for call, vc, ve, rc, re_, same in rows:
            entry: dict[str, Any] = {
                "call": call,
                "vgfc": {"class": vc, "error": ve},
                "reference": {"class": rc, "error": re_},
            }
            if same is not None:
                entry["same"] = same
            calls.append(entry)
        tests[name] = {"pytest": {"outcome": outcome}, "calls": calls}
    return tests


def write_shard(folder: Path, shard: int, count: int, results: dict[str, Any]) -> Path:
    """Keep ``results`` as shard ``shard`` of ``count`` in ``folder``; refused (nothing written)
    where the folder holds shards of another split."""
    others = {m[2] for p in folder.glob("shard-*.json") if (m := FILE.match(p.name))}
    if others - {str(count)}:
        raise SystemExit(
            f"{folder}: shard files of several splits: {sorted(others | {str(count)})}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name(shard, count)
    text = json.dumps(compact(results), separators=(",", ":"), sort_keys=True)
    path.write_text(text + "\n")
    return path


def merged(folder: Path) -> tuple[dict[str, Any], list[int], int, int]:
    """Every shard file of ``folder`` (one split only: a mix of counts is an error): the tests,
    the shards present, their count and the suite's size."""
    found: dict[int, list[tuple[int, Path]]] = defaultdict(list)
    for path in sorted(folder.glob("shard-*.json")):
        match = FILE.match(path.name)
        if match:
            found[int(match[2])].append((int(match[1]), path))
    if not found:
        raise SystemExit(f"{folder}: no shard-K-of-N.json file")
    if len(found) > 1:
        raise SystemExit(f"{folder}: shard files of several splits: {sorted(found)}")
    ((count, files),) = found.items()
    tests: dict[str, Any] = {}
    collected = 0
    for _, path in sorted(files):
        kept = json.loads(path.read_text())
        tests.update(expand(kept))
        collected = max(collected, int(kept.get("run", {}).get("collected", 0)))
    return tests, sorted(k for k, _ in files), count, collected


def whole_markdown(folder: Path, summary: dict[str, Any]) -> str:
    """The whole-suite page from the shard files of ``folder``; ``summary`` is
    :func:`_executorch_suite_compare.summary` of the merged tests."""
    tests, shards, count, collected = merged(folder)
    s = summary
    lines = [
        TITLE + ": the whole suite",
        "",
        "Written by `make test-executorch-suite SUITE_SHARD=K/N` (scripts/executorch_suite.py,"
        " scripts/_executorch_suite_shards.py) from the shard files in `docs/executorch-suite/`;"
        " see [executorch.md](executorch.md#executorchs-own-vgf-tests).",
        "",
        f"Shards {', '.join(map(str, shards))} of {count}: {len(tests)} of {collected} vgf tests;"
        f" {s['converter_calls']} converter calls from"
        f" {s['tests'] - s['tests_without_converter_call']} tests. Where both converters ran,"
        f" {s['bit_identical']} of {s['both_ran']} calls gave bit-identical outputs. vgfc is"
        f" worse than the reference on {len(s['vgfc_worse'])} calls.",
        "",
        *class_table(s),
    ]
    lines += [
        "",
        "## Per operator file",
        "",
        "| file | tests | vgfc | reference |",
        "|---|---|---|---|",
    ]
    by_file: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, t in tests.items():
        by_file[name.split("__", 1)[0]].append(t)
    for module, group in sorted(by_file.items()):
        cells = []
        for n in CONVERTERS:
            counts = Counter(c[n]["class"] for t in group for c in t["calls"])
            cells.append(", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "no call")
        lines.append(f"| `{_cell(module)}` | {len(group)} | {cells[0]} | {cells[1]} |")
    lines += [
        "",
        "## Every call that is not a pass for both",
        "",
        "| test | call | vgfc | reference |",
        "|---|---|---|---|",
    ]
    for name, t in sorted(tests.items()):
        for c in t["calls"]:
            v, r = c["vgfc"], c["reference"]
            if v["class"] == r["class"] == "pass" and c.get("same") is not False:
                continue
            cell = [x["class"] + (f": {_cell(x['error'])}" if x["error"] else "") for x in (v, r)]
            lines.append(f"| `{_cell(name)}` | {c['call']} | {cell[0]} | {cell[1]} |")
    return "\n".join(lines) + "\n"
