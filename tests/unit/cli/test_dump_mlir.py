"""``--dump-mlir`` (``vgfc compile``, ``vgfc-model-converter``): the module read, printed by
tosa-opt, under the reference converter's headers, and what each pass changed.

The oracles are the real tools: tosa-opt reads the printed module again, and the module compiles
(with vgfc and with the reference converter) to the same VGF as the model it was printed from.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

from vgfc.read.mlir import translator

SAMPLES = ROOT / "samples"
BIN = Path(sys.executable).parent
HEADER = "// -----// IR Dump "


def run(*args: str | Path, stdin: bytes | None = None, tmp: Path | None = None) -> tuple[int, str]:
    env = {**os.environ, "NO_COLOR": "1"}
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    p = subprocess.run(
        [*map(str, args)], input=stdin, capture_output=True, env=env, timeout=300, check=False
    )
    return p.returncode, p.stderr.decode()


def first_block(err: str) -> str:
    """The module under the first header."""
    lines = err.splitlines()
    assert lines[0].startswith(f"{HEADER}Before control-flow "), lines[0]
    block = []
    for line in lines[1:]:
        if line.startswith(HEADER):
            break
        block.append(line)
    return "\n".join(block) + "\n"


def serialise(mlir: Path, out: Path) -> None:
    """The flatbuffer tosa-opt makes of ``mlir``, keeping the graph's input and output names."""
    subprocess.run(
        [
            str(translator()),
            str(mlir),
            f"--tosa-serialize=retain-graph-input-output-names=true tosa-flatbuffer-filename={out}",
            "-o",
            os.devnull,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


def test_model_converter_prints_the_module_read(tmp_path: Path) -> None:
    model = SAMPLES / "simple.tosa"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code, err = run(
        BIN / "vgfc-model-converter",
        "--dump-mlir",
        "-i",
        model,
        "-o",
        tmp_path / "d.vgf",
        tmp=scratch,
    )
    assert code == 0, err
    assert list(scratch.iterdir()) == []  # no temporary file survives
    module = tmp_path / "dumped.mlir"
    module.write_text(first_block(err))
    assert "tosa.custom" in module.read_text()
    # The VGF is the one written without --dump-mlir.
    code, err = run(BIN / "vgfc", "compile", "-q", model, "-o", tmp_path / "plain.vgf")
    assert code == 0, err
    assert (tmp_path / "d.vgf").read_bytes() == (tmp_path / "plain.vgf").read_bytes()
    # tosa-opt reads the module again; its flatbuffer compiles to the same VGF.
    serialise(module, tmp_path / "again.tosa")
    code, err = run(
        BIN / "vgfc", "compile", "-q", tmp_path / "again.tosa", "-o", tmp_path / "a.vgf"
    )
    assert code == 0, err
    assert (tmp_path / "a.vgf").read_bytes() == (tmp_path / "plain.vgf").read_bytes()
    # The reference converter, given the module as MLIR, writes its VGF of the model.
    reference = BIN / "model-converter"
    for source, out in ((module, "ref_mlir.vgf"), (model, "ref_tosa.vgf")):
        code, err = run(reference, "-i", source, "-o", tmp_path / out)
        assert code == 0, err
    assert (tmp_path / "ref_mlir.vgf").read_bytes() == (tmp_path / "ref_tosa.vgf").read_bytes()


def test_compile_prints_what_each_pass_changed(tmp_path: Path) -> None:
    code, err = run(
        BIN / "vgfc",
        "compile",
        "-q",
        "--dump-mlir",
        SAMPLES / "mixed.tosa",
        "-o",
        tmp_path / "m.vgf",
    )
    assert code == 0, err
    headers = [line for line in err.splitlines() if line.startswith(HEADER)]
    assert headers == [
        "// -----// IR Dump Before control-flow ('builtin.module' operation) //----- //",
        "// -----// IR Dump After dedupe ('builtin.module' operation) //----- //",
        "// -----// IR Dump After dead-code ('builtin.module' operation) //----- //",
    ]
    assert "// op #7 CONST: replaced (the same as #6 CONST)" in err
    assert "// op #7 CONST: removed (nothing reads its result)" in err
    # All of it is one MLIR file: the module and comments.
    whole = tmp_path / "whole.mlir"
    whole.write_text(err)
    serialise(whole, tmp_path / "whole.tosa")


def test_mlir_from_standard_input_is_read_once(tmp_path: Path) -> None:
    mlir = tmp_path / "m.mlir"
    code, err = run(
        BIN / "vgfc-model-converter",
        "--dump-mlir",
        "-i",
        SAMPLES / "simple.tosa",
        "-o",
        tmp_path / "x.vgf",
    )
    assert code == 0, err
    mlir.write_text(first_block(err))
    code, err = run(
        BIN / "vgfc-model-converter",
        "--dump-mlir",
        "-o",
        tmp_path / "s.vgf",
        stdin=mlir.read_bytes(),
    )
    assert code == 0, err
    assert "tosa.custom" in first_block(err)
    assert (tmp_path / "s.vgf").stat().st_size > 0


def test_without_the_option_nothing_is_printed(tmp_path: Path) -> None:
    code, err = run(
        BIN / "vgfc-model-converter", "-i", SAMPLES / "mixed.tosa", "-o", tmp_path / "m.vgf"
    )
    assert (code, err) == (0, "")


def test_a_model_vgfc_refuses_is_refused_before_anything_is_printed(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tosa"
    bad.write_bytes(b"\x08\0\0\0TOSA" + b"\0" * 8)
    code, err = run(
        BIN / "vgfc-model-converter", "--dump-mlir", "-i", bad, "-o", tmp_path / "b.vgf"
    )
    assert code == 1
    assert HEADER not in err
    assert err.startswith(f"{bad}: error: ")
    assert not (tmp_path / "b.vgf").exists()


@pytest.mark.parametrize("optimize", [[], ["-O0"]], ids=["O1", "O0"])
def test_the_api_takes_it(
    tmp_path: Path, optimize: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    import vgfc

    vgfc.compile(
        SAMPLES / "simple.tosa", tmp_path / "api.vgf", dump_mlir=True, optimize=not optimize
    )
    assert capfd.readouterr().err.startswith(f"{HEADER}Before control-flow ")
