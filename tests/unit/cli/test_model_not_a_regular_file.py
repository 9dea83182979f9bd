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


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["compile", "", "-o", "{out}"], "MODEL..."),
        (["check", ""], "MODEL"),
        (["partition", ""], "MODEL"),
        (["verify", ""], "MODEL"),
        (["inspect", ""], "VGF"),
        (["run", ""], "VGF"),
        (["kernels", ""], "LIB..."),
    ],
)
def test_an_empty_path_is_a_usage_error_not_the_current_folder(
    tmp_path: Path, vgfc_exe: Any, args: list[str], name: str
) -> None:
    # Path("") is "."; read as that, the message was ".: error: ... a folder".
    run = vgfc_exe(*(a.format(out=tmp_path / "out.vgf") for a in args), cwd=tmp_path)
    assert run.code == 2, run.err
    assert f"Invalid value for '{name}': an empty path names no file" in run.err
    assert not (tmp_path / "out.vgf").exists()


def test_the_model_converter_says_so_too(tmp_path: Path) -> None:
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "vgfc-model-converter"
    run = subprocess.run(
        [exe, "-i", "", "-o", tmp_path / "out.vgf"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 2
    assert run.stderr == (
        "error: Invalid value for '-i' / '--input': an empty path names no file"
        " (see vgfc-model-converter --help)\n"
    )
    assert not (tmp_path / "out.vgf").exists()
