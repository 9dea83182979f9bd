"""TOSA MLIR in (text and bytecode, from a file or standard input), through the real tosa-opt.

The MLIR of a model is made from its flatbuffer by tosa-opt ``--tosa-deserialize``; the parity
held is the reference converter's own: a model given as MLIR compiles to the bytes of the
flatbuffer tosa-opt serialises from that MLIR, and the reference converter's VGF of the same
MLIR computes the same outputs as vgfc's (``vgfc verify --against reference`` runs both).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import SAMPLES_DIR

import vgfc
from vgfc.diagnostics import InputError
from vgfc.read.mlir import FLATBUFFER, MLIR_BYTECODE, MLIR_TEXT, form, translator

BIN = Path(sys.executable).parent
VGFC = str(BIN / "vgfc")
CONVERTER = str(BIN / "vgfc-model-converter")
SAMPLES = ("simple", "chain", "mixed")


def _tosa_opt(*args: str | Path, cwd: Path) -> None:
    done = subprocess.run(
        [str(translator()), *map(str, args)], capture_output=True, cwd=cwd, timeout=120
    )
    assert done.returncode == 0, done.stderr


def _run(
    *args: str | Path, cwd: Path, stdin: Any = subprocess.DEVNULL
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*map(str, args)],
        stdin=stdin,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "TMPDIR": str(cwd / "tmp")},
        timeout=300,
    )


@pytest.fixture(scope="module")
def forms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each sample as MLIR text (m.mlir), bytecode (m.mlirbc) and the flatbuffer tosa-opt
    serialises from that MLIR, keeping its input and output names (m.tosa)."""
    work = tmp_path_factory.mktemp("mlir")
    (work / "tmp").mkdir()
    (work / "empty.mlir").write_text("")
    for name in SAMPLES:
        flatbuffer = SAMPLES_DIR / f"{name}.tosa"
        _tosa_opt(
            "empty.mlir",
            "--tosa-deserialize",
            f"--tosa-deserialize-filename={flatbuffer}",
            "-o",
            f"{name}.mlir",
            cwd=work,
        )
        _tosa_opt(f"{name}.mlir", "--emit-bytecode", "-o", f"{name}.mlirbc", cwd=work)
        _tosa_opt(
            f"{name}.mlir",
            "--tosa-serialize=retain-graph-input-output-names=true",
            f"--tosa-flatbuffer-filename={name}.tosa",
            "-o",
            os.devnull,
            cwd=work,
        )
    return work


def test_the_form_is_told_by_content_not_by_name(forms: Path) -> None:
    assert form((forms / "simple.tosa").read_bytes()) == FLATBUFFER
    assert form((forms / "simple.mlirbc").read_bytes()) == MLIR_BYTECODE
    assert form((forms / "simple.mlir").read_bytes()) == MLIR_TEXT
    assert form(b"\x10\0\0\0ONNX") is None
    # A flatbuffer named .mlir is read as the flatbuffer it is.
    (forms / "named-wrong.mlir").write_bytes((forms / "simple.tosa").read_bytes())
    read, expected = vgfc.load(forms / "named-wrong.mlir"), vgfc.load(forms / "simple.tosa")
    assert (read.operators, read.tensors) == (expected.operators, expected.tensors)


@pytest.mark.parametrize("name", SAMPLES)
def test_mlir_compiles_to_the_bytes_of_its_flatbuffer(forms: Path, name: str) -> None:
    """Text, bytecode, standard input and vgfc-model-converter all give the VGF of the flatbuffer
    the MLIR was printed from, its input and output names included."""
    out = forms / name
    out.mkdir(exist_ok=True)
    expected = vgfc.compile(SAMPLES_DIR / f"{name}.tosa").vgf
    assert vgfc.compile(forms / f"{name}.mlir").vgf == expected
    assert vgfc.compile(forms / f"{name}.mlirbc").vgf == expected
    for source in (f"{name}.mlir", f"{name}.mlirbc"):
        with (forms / source).open("rb") as stdin:
            piped = _run(VGFC, "compile", "-", "-o", "-", cwd=forms, stdin=stdin)
        assert piped.returncode == 0, piped.stderr
        assert piped.stdout == expected
        converted = _run(CONVERTER, "-i", source, "-o", out / "mc.vgf", cwd=forms)
        assert converted.returncode == 0, converted.stderr
        assert (out / "mc.vgf").read_bytes() == expected
    assert list((forms / "tmp").iterdir()) == []  # no temporary file left behind


def test_the_reference_converter_on_the_same_mlir_computes_the_same_outputs(forms: Path) -> None:
    done = _run(VGFC, "verify", "simple.mlir", "--against", "reference", "--json", cwd=forms)
    assert done.returncode in (0, 4), done.stderr  # 4: the custom shader has no oracle but itself
    verdict = json.loads(done.stdout)
    assert verdict["outputs"] and all(o["ok"] for o in verdict["outputs"])
    assert all(o["max_abs_error"] == 0 for o in verdict["outputs"])


@pytest.mark.parametrize("command", ["check", "partition"])
def test_every_command_that_reads_a_model_reads_mlir(forms: Path, command: str) -> None:
    from_mlir = _run(VGFC, command, "mixed.mlirbc", "--json", cwd=forms)
    from_tosa = _run(VGFC, command, "mixed.tosa", "--json", cwd=forms)
    assert from_mlir.returncode == from_tosa.returncode == 0, from_mlir.stderr
    assert from_mlir.stdout.replace(b"mixed.mlirbc", b"M") == from_tosa.stdout.replace(
        b"mixed.tosa", b"M"
    )


def test_the_depfile_names_the_mlir(forms: Path) -> None:
    done = _run(VGFC, "compile", "-q", "simple.mlir", "-o", "d.vgf", "-MD", cwd=forms)
    assert done.returncode == 0, done.stderr
    assert (forms / "d.d").read_text().replace("\\", "").split() == ["d.vgf:", "simple.mlir"]


BROKEN = [
    ("garbage.mlir", b"garbage here\n", "garbage.mlir:1:1: error: custom op 'garbage' is unknown"),
    (
        "types.mlir",
        b"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        b"  %0 = tosa.add %a, %a : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
        b"  return %0 : tensor<2xf32>\n}\n",
        "types.mlir:2:21: error: use of value '%a' expects different type than prior uses",
    ),
    (
        "no-graph.mlir",
        b"module {}\n",
        "no-graph.mlir: error: the MLIR holds no TOSA graph to read",
    ),
    (
        "not-tosa.mlir",
        b"func.func @main(%a: f32) -> f32 {\n  %0 = arith.addf %a, %a : f32\n"
        b"  return %0 : f32\n}\n",
        "not-tosa.mlir:2:8: error: Dialect `arith' not found for custom op 'arith.addf'",
    ),
    (
        "bytecode.mlirbc",
        b"ML\xefR\x00\x01\x02garbage",
        "bytecode.mlirbc: error: bytecode version",
    ),
    ("empty.mlir", b"", "empty.mlir: error: file is empty, expected a TOSA flatbuffer or TOSA"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "message"), BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_mlir_is_one_line_in_gcc_form_and_no_file(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    (tmp_path / "tmp").mkdir()
    (tmp_path / name).write_bytes(data)
    for command in (
        [VGFC, "compile", name, "-o", "out.vgf"],
        [CONVERTER, "-i", name, "-o", "out.vgf"],
    ):
        done = _run(*command, cwd=tmp_path)
        assert done.returncode == 1
        err = done.stderr.decode()
        assert err.startswith(message), err
        assert "Traceback" not in err
        assert err.count("\n") == 1 or (command[0] == VGFC and "1 error" not in err)
        assert not (tmp_path / "out.vgf").exists()
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_location_the_module_declares_is_the_place(tmp_path: Path) -> None:
    """MLIR's own ``loc(...)``: the error points there, the model is named in a note."""
    (tmp_path / "m.mlir").write_text(
        "func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
        "  %0 = tosa.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>"
        ' loc("net.py":7:3)\n'
        "  return %0 : tensor<2xf32>\n}\n"
    )
    done = _run(VGFC, "check", "m.mlir", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.decode().splitlines() == [
        "net.py:7:3: error: 'tosa.add' op operands don't have broadcast-compatible shapes",
        "note: in m.mlir",
    ]


def test_a_folder_and_a_fifo_are_refused_before_the_translator_runs(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.mlir")
    (tmp_path / "folder.mlir").mkdir()
    with pytest.raises(InputError, match="a FIFO"):
        vgfc.load(tmp_path / "fifo.mlir")
    with pytest.raises(InputError, match="a folder"):
        vgfc.load(tmp_path / "folder.mlir")


def test_mlir_over_its_limit_is_refused_before_the_translator_runs(tmp_path: Path) -> None:
    from vgfc.limits import LIMITS

    huge = tmp_path / "huge.mlir"
    with huge.open("wb") as f:
        f.write(b" " * 8192)  # text, then a hole: a sparse file, no disk used
        f.truncate(LIMITS.mlir_bytes_max + 1)
    with pytest.raises(InputError, match=r"more than the \d+ a model given as MLIR may have"):
        vgfc.load(huge)


_NAMED = """func.func @main(%a: tensor<1x4xf32> {tosa.tensor_name = "image"},
    %b: tensor<1x4xf32>{B}) -> (tensor<1x4xf32>{OUT}) {
  %0 = tosa.add %a, %b : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
"""


@pytest.mark.parametrize(
    ("b", "out", "inputs", "outputs"),
    [
        (' {tosa.tensor_name = "bias"}', ' {tosa.tensor_name = "sum"}', ["image", "bias"], ["sum"]),
        ("", "", ["image", "TosaInput_0"], ["TosaOutput_0"]),
    ],
    ids=["all-named", "partly-named"],
)
def test_the_graph_keeps_the_names_the_module_gives(
    tmp_path: Path, b: str, out: str, inputs: list[str], outputs: list[str]
) -> None:
    """``tosa.tensor_name`` names the VGF's inputs and outputs (as a flatbuffer's tensor names
    do); tosa-opt's ``TosaInput_N`` (N counting the unnamed) names the rest."""
    from vgfc.vgf.decode import read_vgf

    (tmp_path / "m.mlir").write_text(_NAMED.replace("{B}", b).replace("{OUT}", out))
    written = vgfc.compile(tmp_path / "m.mlir").vgf
    assert written is not None
    (tmp_path / "m.vgf").write_bytes(written)
    read = read_vgf(tmp_path / "m.vgf")
    assert [x.name for x in read.inputs] == inputs
    assert [x.name for x in read.outputs] == outputs
