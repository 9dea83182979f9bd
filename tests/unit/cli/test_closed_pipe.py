"""A reader that goes away (``vgfc compile ... | true``, ``| head``) costs nothing but the rest
of the summary: the VGF and its report are written, the exit status is the compile's, and a
note on stderr says what happened. Run as real processes (the console script installs the
stream guards), with standard output a pipe whose reading end is closed before vgfc starts, so
that its first write meets a broken pipe every time (``| true`` races with ``true``'s exit)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import SAMPLES_DIR

EXE = str(Path(sys.executable).parent / "vgfc")
NOTE = "note: the reader of the output went away (a closed pipe); the rest was not printed"


def run_into_closed_pipe(
    args: list[str], cwd: Path, *, stderr_too: bool = False
) -> tuple[int, str]:
    """``vgfc ARGS`` with standard output (and with ``stderr_too`` standard error) a pipe
    nobody reads; the exit code and what reached stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [EXE, *args],
            stdout=write,
            stderr=write if stderr_too else subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "120"},
            timeout=300,
        )
    finally:
        os.close(write)
    return done.returncode, (done.stderr or b"").decode()


@pytest.fixture
def models(tmp_path: Path) -> Path:
    for name in ("mixed", "simple"):
        shutil.copy(SAMPLES_DIR / f"{name}.tosa", tmp_path / f"{name}.tosa")
    return tmp_path


def assert_report_describes(vgf: Path, report: Path) -> None:
    import hashlib

    doc = json.loads(report.read_text())
    text = json.dumps(doc)
    assert hashlib.sha256(vgf.read_bytes()).hexdigest() in text


@pytest.mark.parametrize(
    "prefix",
    [[], ["--debug"]],  # the quick path, and click's (a group option before the command)
    ids=["quick", "click"],
)
def test_a_closed_pipe_keeps_the_files_of_a_compile(models: Path, prefix: list[str]) -> None:
    code, err = run_into_closed_pipe(
        [*prefix, "compile", "mixed.tosa", "-o", "p.vgf", "--report", "p.json"], models
    )
    assert code == 0, err
    assert err == f"{NOTE}; p.vgf was written; p.json was written\n"
    assert (models / "p.vgf").read_bytes()[:4] == b"VGF1"
    assert_report_describes(models / "p.vgf", models / "p.json")
    assert sorted(p.name for p in models.iterdir()) == [
        "mixed.tosa",
        "p.json",
        "p.vgf",
        "simple.tosa",
    ]


def test_a_closed_pipe_on_both_streams_still_succeeds(models: Path) -> None:
    """``2>&1 | true``: the note cannot be read either; the files and the status say it."""
    code, _ = run_into_closed_pipe(
        ["compile", "mixed.tosa", "-o", "p.vgf", "--report", "p.json"], models, stderr_too=True
    )
    assert code == 0
    assert_report_describes(models / "p.vgf", models / "p.json")


@pytest.mark.parametrize("extra", [[], ["-j", "2"], ["--json"]])
def test_a_batch_into_a_closed_pipe_writes_every_model(models: Path, extra: list[str]) -> None:
    code, err = run_into_closed_pipe(
        ["compile", "mixed.tosa", "simple.tosa", "-d", "out", "--report", *extra], models
    )
    assert code == 0, err
    assert err == f"{NOTE}; 2 of 2 models compiled and written\n"
    for name in ("mixed", "simple"):
        assert_report_describes(
            models / "out" / f"{name}.vgf", models / "out" / f"{name}.report.json"
        )


def test_a_failed_model_in_a_batch_still_fails_into_a_closed_pipe(models: Path) -> None:
    (models / "bad.tosa").write_bytes(b"not a model")
    code, err = run_into_closed_pipe(["compile", "mixed.tosa", "bad.tosa", "-d", "out"], models)
    assert code == 1
    assert "bad.tosa" in err and "1 of 2 models compiled and written" in err
    assert (models / "out" / "mixed.vgf").exists() and not (models / "out" / "bad.vgf").exists()


def test_a_full_standard_output_in_a_batch_says_the_files_were_written(models: Path) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [EXE, "compile", "mixed.tosa", "simple.tosa", "-d", "out"],
            stdout=full,
            stderr=subprocess.PIPE,
            cwd=models,
            timeout=300,
        )
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "standard output: error: cannot write: no space left on the device; 2 of 2 models "
        "compiled and written\n"
    )
