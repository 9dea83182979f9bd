"""``--experimental-analysis`` (``vgfc-model-converter``) and ``vgfc check --analysis``: one line
per operator, in the reference converter's words, going on past every failure."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from commands import run_text
from paths import ROOT
from reference_tools import tool
from tosa_factory import Op, T, build, custom

BIN = Path(sys.executable).parent
SIMPLE = ROOT / "samples" / "simple.tosa"
LINE = re.compile(r"^(Successfully lowered|Failed to lower): tosa\.([a-z_0-9]+) at loc\(")
INDEX = re.compile(r"\) \(op #(\d+)")


def _analysed(text: str) -> list[tuple[str, str, int]]:
    found = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            index = INDEX.search(line)
            found.append((m.group(1), m.group(2), int(index.group(1)) if index else -1))
    return found


def _two_foreign_ops(tmp_path: Path) -> Path:
    """x -> ABS -> CUSTOM (TFL) -> ABS -> CUSTOM (TFL) -> y: two ops no converter lowers by
    default, an ABS after each."""
    names = ["x", "a", "b", "c", "y"]
    ops = [
        Op("ABS", ["x"], ["a"]),
        custom(["a"], ["b"], name="First", domain="TFL"),
        Op("ABS", ["b"], ["c"]),
        custom(["c"], ["y"], name="Second", domain="TFL"),
    ]
    model = tmp_path / "foreign.tosa"
    model.write_bytes(build([T(n) for n in names], ops, ["x"], ["y"]))
    return model


def test_names_the_operators_the_reference_names_and_writes_the_same_vgf(tmp_path: Path) -> None:
    reference = run_text(
        tool("model-converter", "ai-ml-sdk-model-converter"),
        "--experimental-analysis",
        "-i",
        SIMPLE,
        "-o",
        tmp_path / "ref.vgf",
    )
    assert reference.returncode == 0, reference.stderr
    ours = run_text(
        BIN / "vgfc-model-converter",
        "--experimental-analysis",
        "-i",
        SIMPLE,
        "-o",
        tmp_path / "a.vgf",
    )
    assert ours.returncode == 0, ours.stderr
    theirs = _analysed(reference.stderr)
    mine = _analysed(ours.stderr)
    assert theirs and all(kind == "Successfully lowered" for kind, _, _ in theirs)
    # The reference names each kind of op it lowered; vgfc names every op, in the file's order.
    assert {op for _, op, _ in theirs} == {op for _, op, _ in mine}
    assert [index for _, _, index in mine] == list(range(5))
    assert all(kind == "Successfully lowered" for kind, _, _ in mine)
    assert "(op #2 'affine' (com.arm.VulkanCustomShader), shader partition 1)" in ours.stderr
    plain = run_text(BIN / "vgfc-model-converter", "-i", SIMPLE, "-o", tmp_path / "b.vgf")
    assert plain.returncode == 0, plain.stderr
    assert (tmp_path / "a.vgf").read_bytes() == (tmp_path / "b.vgf").read_bytes()


def test_goes_on_past_the_first_failure_and_says_why(tmp_path: Path) -> None:
    model = _two_foreign_ops(tmp_path)
    reference = run_text(
        tool("model-converter", "ai-ml-sdk-model-converter"),
        "--experimental-analysis",
        "-i",
        model,
        "-o",
        tmp_path / "ref.vgf",
    )
    # The reference stops at the first op it cannot lower, with no line for it.
    assert "failed to legalize operation 'tosa.custom'" in reference.stderr
    assert not any(kind == "Failed to lower" for kind, _, _ in _analysed(reference.stderr))
    out = tmp_path / "out.vgf"
    ours = run_text(BIN / "vgfc-model-converter", "--experimental-analysis", "-i", model, "-o", out)
    assert ours.returncode == 1
    assert not out.exists()
    mine = _analysed(ours.stderr)
    assert [index for _, _, index in mine] == [0, 1, 2, 3]
    assert all(kind == "Failed to lower" for kind, _, _ in mine)
    failed = [line for line in ours.stderr.splitlines() if "no kernel for custom operator" in line]
    assert any(
        line.startswith("Failed to lower: tosa.custom") and "'First' (TFL)" in line
        for line in failed
    )
    assert any(
        line.startswith("Failed to lower: tosa.custom") and "'Second' (TFL)" in line
        for line in failed
    )
    assert "graph partition 0 was not lowered: op #1 failed" in ours.stderr
    # Then the errors, in gcc's form, as without the option.
    assert f"{model}: error: op #1 CUSTOM 'First' (TFL)" in ours.stderr
    assert "Traceback" not in ours.stderr


def test_check_prints_the_analysis_on_standard_output(tmp_path: Path) -> None:
    model = _two_foreign_ops(tmp_path)
    for flag in ("--analysis", "--experimental-analysis"):
        run = run_text(BIN / "vgfc", "check", flag, model)
        assert run.returncode == 1
        assert [index for _, _, index in _analysed(run.stdout)] == [0, 1, 2, 3]
        assert _analysed(run.stderr) == []
    plain = run_text(BIN / "vgfc", "check", model)
    assert _analysed(plain.stdout) == []


def test_check_json_carries_the_analysis() -> None:
    import json

    run = run_text(BIN / "vgfc", "check", "--json", "--analysis", SIMPLE)
    assert run.returncode == 0, run.stderr
    lines = json.loads(run.stdout)["analysis"]
    assert [index for _, _, index in _analysed("\n".join(lines))] == list(range(5))
    assert "analysis" not in json.loads(run_text(BIN / "vgfc", "check", "--json", SIMPLE).stdout)


@pytest.mark.parametrize("value", ["", "yes", "1"])
def test_takes_no_value(value: str, tmp_path: Path) -> None:
    run = run_text(
        BIN / "vgfc-model-converter",
        f"--experimental-analysis={value}",
        "-i",
        SIMPLE,
        "-o",
        tmp_path / "o.vgf",
    )
    assert run.returncode == 2
    assert "does not take a value" in run.stderr
    assert not (tmp_path / "o.vgf").exists()
