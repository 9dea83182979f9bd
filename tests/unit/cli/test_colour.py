"""Colour as gcc and cargo do it: ``--color auto|always|never``; with ``auto`` a terminal only,
``NO_COLOR`` (set, not empty) never, ``FORCE_COLOR`` or ``CLICOLOR_FORCE`` (set, not 0) always.
Without colour not one escape sequence is printed, not even bold or a progress spinner."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR

EXE = str(Path(sys.executable).parent / "vgfc")
ESC = "\x1b"
COLOUR_ENV = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM")
# A compile that runs every stage (the progress line has something to show) and then fails.
FAILING = [EXE, "compile", str(SAMPLES_DIR / "kernels" / "model.tosa"), "-o", "x.vgf"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in COLOUR_ENV}
    return {**env, "COLUMNS": "100", "TERM": "xterm-256color", **extra}


def _on_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """What ``args`` print with stdout and stderr a terminal."""
    leader, follower = pty.openpty()
    with subprocess.Popen(args, stdout=follower, stderr=follower, env=env, cwd=cwd) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
    assert proc.returncode == 1
    return b"".join(chunks).decode()


def _piped(args: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd)
    assert done.returncode == 1, done.stderr
    return done.stdout + done.stderr


def test_a_terminal_is_coloured(tmp_path: Path) -> None:
    text = _on_a_terminal(FAILING, _env(), tmp_path)
    assert f"{ESC}[1;31merror:" in text


@pytest.mark.parametrize(
    ("env", "flags"),
    [
        ({"NO_COLOR": "1"}, []),
        ({}, ["--color", "never"]),
        ({"FORCE_COLOR": "1"}, ["--color=never"]),
    ],
    ids=["NO_COLOR", "never", "never-over-FORCE_COLOR"],
)
def test_no_colour_on_a_terminal_is_no_escape_sequence_at_all(
    tmp_path: Path, env: dict[str, str], flags: list[str]
) -> None:
    text = _on_a_terminal([*FAILING, *flags], _env(**env), tmp_path)
    assert "error:" in text and ESC not in text, repr(text)


@pytest.mark.parametrize(
    ("env", "flags"),
    [
        ({"FORCE_COLOR": "1"}, []),
        ({"CLICOLOR_FORCE": "1"}, []),
        ({}, ["--color", "always"]),
        ({"NO_COLOR": "1"}, ["--color", "always"]),  # the command line wins
    ],
    ids=["FORCE_COLOR", "CLICOLOR_FORCE", "always", "always-over-NO_COLOR"],
)
def test_a_pipe_is_coloured_when_asked(
    tmp_path: Path, env: dict[str, str], flags: list[str]
) -> None:
    text = _piped([*FAILING, *flags], _env(**env), tmp_path)
    assert f"{ESC}[1;31merror: {ESC}[0m" in text


@pytest.mark.parametrize(
    "env",
    [{}, {"FORCE_COLOR": "0"}, {"FORCE_COLOR": ""}, {"CLICOLOR_FORCE": "0"}, {"NO_COLOR": ""}],
    ids=["none", "FORCE_COLOR=0", "FORCE_COLOR-empty", "CLICOLOR_FORCE=0", "NO_COLOR-empty"],
)
def test_a_pipe_is_plain_by_default(tmp_path: Path, env: dict[str, str]) -> None:
    text = _piped(FAILING, _env(**env), tmp_path)
    assert "error:" in text and ESC not in text


def test_forced_colour_keeps_a_piped_table_whole(tmp_path: Path) -> None:
    """FORCE_COLOR colours a pipe; it does not make it a terminal whose width cuts names."""
    model = tmp_path / ("m" * 60 + ".tosa")
    model.write_bytes((SAMPLES_DIR / "chain.tosa").read_bytes())
    done = subprocess.run(
        [EXE, "compile", str(model), str(SAMPLES_DIR / "dup.tosa"), "-d", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        env=_env(FORCE_COLOR="1", COLUMNS="40"),
    )
    assert done.returncode == 0, done.stderr
    assert str(model) in done.stdout and "…" not in done.stdout


@pytest.mark.parametrize("value", ["", "bogus", "ALWAYS"])
def test_a_wrong_color_is_a_usage_error(tmp_path: Path, value: str) -> None:
    done = subprocess.run(
        [*FAILING, "--color", value], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 2
    assert "Invalid value for '--color'" in done.stderr
