"""``vgfc translate`` and ``vgfc-model-converter --tosa-flatbuffer``: the flatbuffer of what was
read, which both converters compile (the real tosa-opt, the real reference converter)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import SAMPLES_DIR
from reference_tools import tool

from vgfc.read.mlir import translator

BIN = Path(sys.executable).parent
VGFC = str(BIN / "vgfc")
CONVERTER = str(BIN / "vgfc-model-converter")


def _run(
    *args: str | Path, cwd: Path, stdin: Any = subprocess.DEVNULL
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*map(str, args)],
        stdin=stdin,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=300,
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "empty.mlir").write_text("")
    shutil.copy(SAMPLES_DIR / "mixed.tosa", tmp_path / "m.tosa")
    done = _run(
        translator(),
        "empty.mlir",
        "--tosa-deserialize",
        "--tosa-deserialize-filename=m.tosa",
        "-o",
        "m.mlir",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_both_converters_compile_what_translate_writes(work: Path) -> None:
    done = _run(VGFC, "translate", "m.mlir", "-o", "t.tosa", cwd=work)
    assert done.returncode == 0, done.stderr
    assert (work / "t.tosa").read_bytes()[4:8] == b"TOSA"
    for model, vgf in (("t.tosa", "t.vgf"), ("m.mlir", "m.vgf")):
        assert _run(VGFC, "compile", "-q", model, "-o", vgf, cwd=work).returncode == 0
    assert (work / "t.vgf").read_bytes() == (work / "m.vgf").read_bytes()
    reference = tool("model-converter", "ai-ml-sdk-model-converter")
    for model, vgf in (("t.tosa", "rt.vgf"), ("m.mlir", "rm.vgf")):
        ran = _run(reference, "-i", model, "-o", vgf, cwd=work)
        assert ran.returncode == 0, ran.stderr
    assert (work / "rt.vgf").read_bytes() == (work / "rm.vgf").read_bytes()


def test_the_model_converter_option_writes_the_same_bytes(work: Path) -> None:
    assert _run(VGFC, "translate", "m.mlir", cwd=work).returncode == 0  # m.tosa replaced
    expected = (work / "m.tosa").read_bytes()
    done = _run(CONVERTER, "-i", "m.mlir", "--tosa-flatbuffer", "-o", "c.tosa", cwd=work)
    assert done.returncode == 0, done.stderr
    assert (work / "c.tosa").read_bytes() == expected
    with (work / "m.mlir").open("rb") as stdin:
        piped = _run(CONVERTER, "--tosa-flatbuffer", cwd=work, stdin=stdin)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == expected
    # A flatbuffer is written as it is.
    assert _run(VGFC, "translate", "m.tosa", "-o", "same.tosa", cwd=work).returncode == 0
    assert (work / "same.tosa").read_bytes() == expected


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["translate", "bad.mlir", "-o", "out.tosa"], 1, "bad.mlir:1:1: error: custom op"),
        (["translate", "-"], 2, "a model from standard input needs -o"),
        (["translate", "m.mlir", "-o", "folder"], 2, "'folder' is a directory"),
        (["translate", "m.mlir", "-o", "m.mlir"], 1, "m.mlir"),
        (
            ["translate", "missing.mlir"],
            1,
            "missing.mlir: error: cannot read the model: no such file",
        ),
        (["translate", "fifo", "-o", "out.tosa"], 1, "a FIFO"),
    ],
    ids=["garbage", "stdin-without-o", "folder", "onto-the-model", "missing", "fifo"],
)
def test_translate_tried_broken(work: Path, args: list[str], code: int, message: str) -> None:
    (work / "bad.mlir").write_text("garbage\n")
    (work / "folder").mkdir()
    os.mkfifo(work / "fifo")
    before = (work / "m.mlir").read_bytes()
    done = _run(VGFC, *args, cwd=work)
    assert done.returncode == code
    assert message in done.stderr.decode()
    assert "Traceback" not in done.stderr.decode()
    assert not (work / "out.tosa").exists()
    assert (work / "m.mlir").read_bytes() == before
    converted = _run(CONVERTER, "-i", "bad.mlir", "--tosa-flatbuffer", "-o", "out.tosa", cwd=work)
    assert converted.returncode == 1 and not (work / "out.tosa").exists()
