"""A command whose output cannot be written fails: ``> /dev/full``, a closed standard output
(``>&-``) and a full disk are exit 1 with one line naming ``standard output``, never a traceback
and never a silent success. Run as real processes: the guards are installed by the console
script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import SAMPLES_DIR

EXE = str(Path(sys.executable).parent / "vgfc")
MODEL = SAMPLES_DIR / "simple.tosa"


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` through bash, with ``vgfc`` the installed console script."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        ["bash", "-c", command.replace("vgfc ", f"{EXE} ", 1)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


FULL = ">/dev/full", "no space left on the device"
CLOSED = ">&-", "it is closed"


@pytest.mark.parametrize(
    ("args", "redirect", "reason"),
    [
        ("--version", *FULL),
        ("--version", *CLOSED),
        (f"partition {MODEL}", *FULL),
        (f"partition {MODEL} --json", *CLOSED),
        (f"check {MODEL}", *FULL),
        ("kernels mediapipe", *CLOSED),
    ],
)
def test_output_that_cannot_be_written_is_one_error_line(
    tmp_path: Path, args: str, redirect: str, reason: str
) -> None:
    done = shell(f"vgfc {args} {redirect}", tmp_path)
    assert done.returncode == 1
    assert done.stderr == f"standard output: error: cannot write: {reason}\n"


def test_compile_keeps_the_old_file_when_its_summary_cannot_be_printed(tmp_path: Path) -> None:
    shutil.copy(MODEL, tmp_path / "m.tosa")
    (tmp_path / "m.vgf").write_bytes(b"old")
    done = shell("vgfc compile m.tosa -o m.vgf >/dev/full", tmp_path)
    assert done.returncode == 1
    assert done.stderr == (
        "standard output: error: cannot write: no space left on the device; m.vgf was left as "
        "it was\n"
    )
    assert (tmp_path / "m.vgf").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tosa", "m.vgf"]
    assert shell("vgfc compile m.tosa -o m.vgf -q >/dev/full", tmp_path).returncode == 0


def test_a_command_that_prints_nothing_needs_no_stdout(tmp_path: Path) -> None:
    """Only printing fails on a closed standard output: a quiet compile still succeeds."""
    shutil.copy(MODEL, tmp_path / "m.tosa")
    done = shell("vgfc compile -q m.tosa -o m.vgf >&-", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.vgf").read_bytes()[:4] == b"VGF1"


def test_a_broken_pipe_is_quiet(tmp_path: Path) -> None:
    done = shell(f"vgfc partition {MODEL} --json | head -c 1", tmp_path)
    assert done.stdout == "{" and "Traceback" not in done.stderr


@pytest.mark.parametrize("args", ["--version", f"compile -q {MODEL} -o m.vgf", f"check {MODEL}"])
def test_a_closed_standard_error_is_no_error(tmp_path: Path, args: str) -> None:
    """``2>&-``: Python starts without ``sys.stderr``; the messages go nowhere, and the command
    still does its work and exits as it would."""
    done = shell(f"vgfc {args} 2>&-", tmp_path)
    assert done.returncode == 0, done.stdout


def test_escape_sequences_in_a_model_never_reach_a_log(tmp_path: Path) -> None:
    """A custom op's name and domain are printed in its error; a terminal escape sequence in
    them (colour, cursor movement) is taken out where stderr is not a terminal."""
    from tosa_factory import T, build, custom

    op = custom(["x"], ["y"], name="\x1b[31mRED\x1b[0m", domain="\x1b[32mdom")
    (tmp_path / "esc.tosa").write_bytes(build([T("x"), T("y")], [op], ["x"], ["y"]))
    done = shell("vgfc compile esc.tosa -o e.vgf", tmp_path)
    assert done.returncode == 1 and "RED" in done.stderr
    assert "\x1b" not in done.stderr
