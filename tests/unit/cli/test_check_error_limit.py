"""``vgfc check`` bounds its report: at most ``--max-errors`` errors (20), ops that fail the same
way on one error with the others' numbers, how many more there are, and a summary line also
when there are errors; ``--json`` keeps every diagnostic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tosa_factory import T, build, custom


def no_kernel_model(tmp_path: Path, count: int, kinds: int) -> Path:
    """``count`` custom ops of ``kinds`` names in a chain; no library gives them a kernel."""
    names = ["x"] + [f"t{i}" for i in range(count)]
    ops = [
        custom([names[i]], [names[i + 1]], f"Op{i % kinds}", domain=f"D{i % kinds}")
        for i in range(count)
    ]
    path = tmp_path / "m.tosa"
    path.write_bytes(build([T(n, (1, 4)) for n in names], ops, ["x"], [names[-1]]))
    return path


def test_ops_that_fail_the_same_way_are_one_error(cli, tmp_path: Path) -> None:
    path = no_kernel_model(tmp_path, 500, 500)  # 500 different names, one way to fail
    run = cli("check", str(path))
    assert run.code == 1
    lines = run.err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{path}: error: op #0 CUSTOM 'Op0' (D0): no kernel for")
    assert lines[1] == (
        "    the same error for 499 more: op #1 'Op1', op #2 'Op2', op #3 'Op3', op #4 'Op4', "
        "op #5 'Op5' and 494 more"
    )
    assert run.out == f"{path}: 500 errors (1 distinct); 500 operators, 1 partition\n"


def test_the_error_limit_and_what_it_leaves_out(cli, tmp_path: Path) -> None:
    path = tmp_path / "two.tosa"  # two ops that fail in different ways
    names = ["x", "a", "b"]
    ops = [
        custom(["x"], ["a"], "A", domain="D"),
        custom(["a"], ["b"], "B", domain="com.arm.VulkanCustomShader", attrs={"bad": 1}),
    ]
    path.write_bytes(build([T(n, (1, 4)) for n in names], ops, ["x"], ["b"]))
    run = cli("check", str(path), "--max-errors", "1")
    assert run.code == 1
    lines = run.err.splitlines()
    assert len(lines) == 2 and ": error: " in lines[0]
    assert lines[1] == (
        "... and 1 more error not shown (--max-errors 1; --max-errors 0 lists them all, --json "
        "keeps them all)"
    )
    assert run.out == f"{path}: 2 errors; 2 operators, 2 partitions\n"
    assert cli("check", str(path), "--max-errors", "0").err.count(": error: ") == 2


def test_json_keeps_every_diagnostic(cli, tmp_path: Path) -> None:
    path = no_kernel_model(tmp_path, 40, 2)
    doc = json.loads(cli("check", str(path), "--json", "--max-errors", "1").out)
    assert doc["errors"] == 40 and len(doc["diagnostics"]) == 40


@pytest.mark.parametrize("value", ["-1", "x", ""])
def test_a_bad_limit_is_a_usage_error(cli, tmp_path: Path, value: str) -> None:
    assert cli("check", str(no_kernel_model(tmp_path, 1, 1)), "--max-errors", value).code == 2
