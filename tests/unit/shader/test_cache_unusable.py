"""A shader cache that cannot work says so: one named warning per compile
(``[-Wunusable-cache]``, silenced by ``-Wno-unusable-cache`` or ``-w``), the compile goes on
cold, and ``vgfc cache`` says the same as an error. ``~`` in VGFC_CACHE_DIR is the home folder;
a relative VGFC_CACHE_DIR is refused, never a folder that moves with each command's working
folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR

EXE = str(Path(sys.executable).parent / "vgfc")
MODEL = str(SAMPLES_DIR / "chain.tosa")


def _vgfc(*args: str, cache: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "VGFC_CACHE_DIR": cache, "NO_COLOR": "1", **env}
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=environ, cwd=cwd)


def _unusable(kind: str, tmp_path: Path) -> tuple[str, str]:
    """A VGFC_CACHE_DIR that cannot be used, and what the warning says of it."""
    if kind == "file":
        (tmp_path / "file").write_text("x")
        shaders = tmp_path / "file" / "shaders" / "v1"
        return str(tmp_path / "file"), f"cannot make the folder {shaders}"
    if kind == "under-a-fifo":
        os.mkfifo(tmp_path / "fifo")
        return str(tmp_path / "fifo"), "cannot make the folder"
    return "relative/cache", "VGFC_CACHE_DIR 'relative/cache' is a relative path"


KINDS = ["file", "under-a-fifo", "relative"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_compile_warns_once_and_goes_on(tmp_path: Path, kind: str) -> None:
    cache, reason = _unusable(kind, tmp_path)
    done = _vgfc("compile", "-q", MODEL, "-o", "out.vgf", cache=cache, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("warning: the shader cache cannot be used: ")
    assert reason in lines[0] and lines[0].endswith(" [-Wunusable-cache]")
    assert (tmp_path / "out.vgf").stat().st_size > 0
    assert not (tmp_path / "relative").exists()  # nothing written under the working folder


@pytest.mark.parametrize("flag", ["-Wno-unusable-cache", "-w", "--no-cache"])
def test_the_warning_is_silenced(tmp_path: Path, flag: str) -> None:
    cache, _ = _unusable("file", tmp_path)
    done = _vgfc("compile", "-q", MODEL, "-o", "out.vgf", flag, cache=cache, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""


def test_werror_makes_it_an_error(tmp_path: Path) -> None:
    cache, _ = _unusable("file", tmp_path)
    done = _vgfc("compile", "-q", MODEL, "-o", "out.vgf", "-Werror", cache=cache, cwd=tmp_path)
    assert done.returncode == 1 and "[-Werror=unusable-cache]" in done.stderr
    assert not (tmp_path / "out.vgf").exists()


def test_a_usable_cache_is_quiet(tmp_path: Path) -> None:
    done = _vgfc("compile", "-q", MODEL, "-o", "out.vgf", cache=str(tmp_path / "c"), cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert list((tmp_path / "c" / "shaders").rglob("*"))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [["cache"], ["cache", "--json"], ["cache", "clear"]])
def test_vgfc_cache_says_the_same(tmp_path: Path, kind: str, args: list[str]) -> None:
    cache, reason = _unusable(kind, tmp_path)
    done = _vgfc(*args, cache=cache, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: the shader cache cannot be used: ")
    assert reason in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_tilde_is_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = _vgfc("cache", cache="~/ci-cache", cwd=tmp_path, HOME=str(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"shader cache: {home / 'ci-cache' / 'shaders'}\n")
    assert not (tmp_path / "~").exists()
