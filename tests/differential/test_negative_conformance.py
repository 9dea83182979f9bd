"""The official conformance suite's negative half: every invalid graph is refused.

tosa-tools' own generator (``tosa_verif_conformance_generator --test-type negative``) makes the
570 graphs of TOSA 1.0.2 that a conforming implementation must reject, one or more per
``ERROR_IF`` kind and operator, in about a minute; ``tosa_reference_model`` reports ERROR on
them. vgfc must compile none of them into a VGF, ``vgfc check`` must agree with ``vgfc compile``
on each, nothing may crash, and the first error must name the condition the test is about
(its ``ERRORIF`` kind, which the message carries in brackets), apart from the kinds that break
the graph's structure (an operator's input or output list), which the structural checks find
first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError

STRUCTURAL = {"WrongInputList", "WrongOutputList"}
"""Kinds whose graphs the structural checks refuse (an operand missing, an output never
written) before the specification's conditions are read."""


@pytest.fixture(scope="module")
def negative_suite(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path]]:
    """(ERRORIF kind, test folder) of every test the official generator makes."""
    out = tmp_path_factory.mktemp("negative")
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [
            str(bin_dir / "tosa_verif_conformance_generator"),
            "--tosa-version", "1.0.2", "--profile", "all", "--extension", "all",
            "--test-type", "negative", "--output-type", "binary",
            "--output-directory", str(out / "suite"), "--build-directory", str(out / "build"),
        ],
        check=True, cwd=out, env=env, capture_output=True,
    )  # fmt: skip
    tests = []
    for desc in sorted((out / "suite").rglob("desc.json")):
        data: dict[str, Any] = json.loads(desc.read_text())
        assert data["expected_failure"] is True
        tests.append((data["test_details"]["ERRORIF"], desc.parent))
    assert len(tests) >= 500, f"the generator made only {len(tests)} negative tests"
    return tests


def test_every_invalid_graph_is_refused_naming_its_condition(
    negative_suite: list[tuple[str, Path]],
) -> None:
    unnamed: dict[str, list[str]] = defaultdict(list)
    for kind, folder in negative_suite:
        model = folder / "test.tosa"
        try:
            compile_model(model)
        except VgfcError as e:
            first, refusal = str(e), e.diagnostic
        else:
            pytest.fail(f"{folder.name}: compiled into a VGF")
        checked = compile_model(model, stop_after="layout", keep_going=True)
        assert checked.errors, f"{folder.name}: check finds nothing, compile refuses"
        assert checked.errors[0] == refusal, f"{folder.name}: check's first error is another"
        if f"[{kind}]" not in first:
            unnamed[kind].append(f"{folder.name}: {first}")
    assert set(unnamed) <= STRUCTURAL, {k: v[:2] for k, v in unnamed.items() if k not in STRUCTURAL}


def test_the_commands_refuse_them_with_exit_1_and_nothing_written(
    negative_suite: list[tuple[str, Path]], tmp_path: Path
) -> None:
    """One test of each kind through the commands a user runs: ``vgfc compile`` (a batch)
    writes no VGF and exits 1 with one error per model; ``vgfc check`` exits 1 on each."""
    one_per_kind = {kind: folder for kind, folder in negative_suite}
    models = []
    for kind, folder in sorted(one_per_kind.items()):
        link = tmp_path / "models" / f"{kind}.tosa"
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(folder / "test.tosa")
        models.append(str(link))
    vgfc = str(Path(sys.executable).parent / "vgfc")
    out = tmp_path / "out"
    done = subprocess.run(
        [vgfc, "compile", *models, "-d", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert not list(out.glob("*.vgf")) if out.exists() else True
    for model in models:
        kind = Path(model).stem
        lines = [line for line in done.stderr.splitlines() if line.startswith(f"{model}: error:")]
        assert len(lines) == 1, (model, done.stderr[-3000:])
        assert kind in STRUCTURAL or f"[{kind}]" in lines[0], lines[0]
    for model in models[:: max(1, len(models) // 12)]:
        checked = subprocess.run([vgfc, "check", model], capture_output=True, text=True)
        assert checked.returncode == 1, checked.stdout + checked.stderr
        assert "Traceback" not in checked.stderr
        assert 1 <= len(checked.stderr.splitlines()) <= 25
