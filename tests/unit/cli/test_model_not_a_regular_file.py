"""A model, VGF or library path that is not a regular file (a FIFO, a device, a symlink loop, a
folder) or is missing is refused by every command and by ``vgfc.compile`` in gcc's form, naming
the file, exit code 1: never waited on, read without end, reported as an internal error or as a
usage error (exit code 2)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import vgfc
from vgfc.diagnostics import InputError


@pytest.fixture
def odd(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.tosa"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.tosa"
    os.symlink(tmp_path / "other.tosa", loop)
    os.symlink(loop, tmp_path / "other.tosa")
    folder = tmp_path / "folder.tosa"
    folder.mkdir()
    return {
        "fifo": fifo,
        "loop": loop,
        "device": Path("/dev/zero"),
        "missing": tmp_path / "nosuch.tosa",
        "folder": folder,
    }


REASONS = {
    "fifo": "a FIFO (named pipe), not a regular file",
    "loop": "a symbolic link loop (or too many links)",
    "device": "a character device, not a regular file",
    "missing": "no such file",
    "folder": "a folder, not a regular file",
}


@pytest.mark.parametrize("kind", sorted(REASONS))
@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["compile", "{}", "-o", "{out}"], "model"),
        (["check", "{}"], "model"),
        (["partition", "{}"], "model"),
        (["verify", "{}"], "model"),
        (["inspect", "{}"], "VGF file"),
        (["run", "{}"], "VGF file"),
        (["kernels", "{}"], "kernel library"),
    ],
)
def test_every_command_refuses_it_naming_the_file(
    odd: dict[str, Path], tmp_path: Path, vgfc_exe: Any, kind: str, args: list[str], what: str
) -> None:
    path = odd[kind]
    run = vgfc_exe(*(a.format(path, out=tmp_path / "out.vgf") for a in args))
    assert run.code == 1, run.err
    assert run.err.strip() == f"{path}: error: cannot read the {what}: {REASONS[kind]}", run.err
    assert not (tmp_path / "out.vgf").exists()


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_the_library_api_refuses_it_too(odd: dict[str, Path], kind: str) -> None:
    with pytest.raises(InputError) as caught:
        vgfc.compile(odd[kind])
    assert caught.value.render() == f"{odd[kind]}: cannot read the model: {REASONS[kind]}"


@pytest.mark.parametrize("kind", sorted(REASONS))
@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["run", "{vgf}", "-i", "{}"], "input file"),
        (["run", "{vgf}", "--shader", "m={}"], "shader file"),
        (["run", "{vgf}", "--push-constants", "0={}"], "push-constant file"),
        (["verify", "{model}", "-i", "x={}"], "input file"),
        (["verify", "{model}", "--expected", "y={}"], "expected file"),
    ],
)
def test_run_and_verify_refuse_it_as_an_input_array_or_file(
    odd: dict[str, Path], tmp_path: Path, vgfc_exe: Any, kind: str, args: list[str], what: str
) -> None:
    from tosa_factory import chain

    model = tmp_path / "m.tosa"
    model.write_bytes(chain(2))
    vgf = tmp_path / "m.vgf"
    assert vgfc_exe("compile", "-q", str(model), "-o", str(vgf)).code == 0
    path = odd[kind]
    run = vgfc_exe(*(a.format(path, vgf=vgf, model=model) for a in args))
    assert run.code == 1, run.err
    assert run.err.strip() == f"{path}: error: cannot read the {what}: {REASONS[kind]}", run.err
