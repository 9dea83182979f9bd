"""The whole ExecuTorch suite in shards (scripts/_executorch_suite_shards.py, ``run --shard``,
``merge``): the split covers every test once and stays put, a shard file keeps what the tables
need, and the whole-suite page is made from every shard kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import _executorch_suite_compare as compare
import _executorch_suite_shards as shards

SCRIPT = str(ROOT / "scripts" / "executorch_suite.py")
NODES = [f"ops/test_{op}.py::test_{op}_vgf[case{i}]" for op in "abcdefg" for i in range(40)]


def test_the_shards_cover_every_test_once_and_a_new_test_moves_no_other() -> None:
    split = [shards.select(NODES, k, 7) for k in range(1, 8)]
    assert sorted(n for s in split for n in s) == sorted(NODES)
    assert all(split)  # 280 tests in 7 shards: none empty
    grown = [*NODES, "ops/test_new.py::test_new_vgf[x]"]
    for k in range(1, 8):
        assert set(split[k - 1]) <= set(shards.select(grown, k, 7))


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", "", "-1/3", "1/3/5"])
def test_a_bad_shard_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="K/N"):
        shards.parse(text)
    done = subprocess.run(
        [sys.executable, SCRIPT, "run", "x", "--shard", text], capture_output=True, text=True
    )
    assert done.returncode == 2 and "--shard" in done.stderr


def test_a_shard_and_a_sample_do_not_go_together() -> None:
    args = ["run", "x", "--shard", "1/2", "--sample", "3"]
    done = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)
    assert done.returncode == 2 and "--sample" in done.stderr


def _results(shard: str, names: list[str], vgfc: str = "pass") -> dict[str, Any]:
    tests: dict[str, Any] = {}
    for name in names:
        call: dict[str, Any] = {
            "call": "call-0",
            "oracle": "ok",
            "vgfc": {"class": vgfc, "error": "" if vgfc == "pass" else "x" * 500},
            "reference": {"class": "pass", "error": ""},
        }
        if vgfc == "pass":
            call["same"] = True
        tests[name] = {"pytest": {"outcome": "converted", "message": "m"}, "calls": [call]}
    tests["test_z__none"] = {"pytest": {"outcome": "skipped", "message": "s"}, "calls": []}
    run = {"collected": 100, "selected": len(tests), "shard": shard}
    return {"run": run, "input_seed": 0, "tests": tests, "summary": compare.summary(tests)}


def test_a_shard_file_keeps_what_the_summary_reads(tmp_path: Path) -> None:
    results = _results("1/2", ["test_a__t[1]", "test_b__t[2]"], vgfc="refused")
    path = shards.write_shard(tmp_path, 1, 2, results)
    assert path.name == "shard-1-of-2.json"
    tests = shards.merged(tmp_path)[0]
    assert compare.summary(tests) == results["summary"]
    kept = json.loads(path.read_text())
    assert all(len(row[2]) == shards.MESSAGE for _, rows in kept["tests"].values() for row in rows)


def _merge(out: Path, folder: Path, table: Path) -> subprocess.CompletedProcess[str]:
    args = ["merge", str(out), "--shards", str(folder), "--table", str(table)]
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def test_merge_keeps_each_shard_and_writes_the_whole_suite_from_all(tmp_path: Path) -> None:
    folder, table = tmp_path / "shards", tmp_path / "whole.md"
    for k, names, vgfc in ((1, ["test_a__t[1]"], "pass"), (2, ["test_b__t[2]"], "refused")):
        out = tmp_path / f"run{k}"
        out.mkdir()
        (out / "results.json").write_text(json.dumps(_results(f"{k}/2", names, vgfc)))
        done = _merge(out, folder, table)
        assert done.returncode == 0, done.stderr
    text = table.read_text()
    assert "Shards 1, 2 of 2: 3 of 100 vgf tests" in text
    assert "vgfc is worse than the reference on 1 calls" in text
    assert "| `test_a` | 1 | pass 1 | pass 1 |" in text
    assert "| `test_b__t[2]` | call-0 | refused: " in text  # a call that is not a pass
    assert "test_a__t[1]` | call-0" not in text  # a pass for both is only counted


def test_merge_refuses_what_it_cannot_place(tmp_path: Path) -> None:
    out, folder, table = tmp_path / "run", tmp_path / "shards", tmp_path / "whole.md"
    out.mkdir()
    done = _merge(out, folder, table)
    assert done.returncode == 1 and "no results" in done.stderr
    results = _results("1/2", ["test_a__t[1]"])
    results["run"]["shard"] = None
    (out / "results.json").write_text(json.dumps(results))
    done = _merge(out, folder, table)
    assert done.returncode == 1 and "not the results of a shard run" in done.stderr
    shards.write_shard(folder, 1, 3, _results("1/3", ["test_a__t[1]"]))
    (out / "results.json").write_text(json.dumps(_results("2/2", ["test_b__t[1]"])))
    done = _merge(out, folder, table)
    assert done.returncode == 1 and "several splits" in done.stderr
    assert not table.exists() and not (folder / "shard-2-of-2.json").exists()
