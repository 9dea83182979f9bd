"""``vgfc compile -M`` / ``-MM`` (vgfc/cli/rules.py): gcc's dependency rule printed, or written to
``-MF``, and nothing else written; every wrong way of asking refused. A Makefile whose rules come
from ``-M`` is built by real make in tests/integration/test_build_systems.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from shader_models import COPY, attrs, model

from vgfc.cli.quick import parse_compile, run_quick

INCLUDING = COPY.replace("#version 450\n", '#version 450\n#include "scale.glsl"\n').replace(
    "x[i] * 2.0", "x[i] * SCALE"
)
RULE = "m.vgf: \\\n  m.tosa \\\n  inc/scale.glsl\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder: m.tosa, whose shader includes inc/scale.glsl."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.glsl").write_text("#define SCALE 2.0\n")
    model(tmp_path, attrs(INCLUDING))
    return tmp_path


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("flag", ["-M", "-MM"])
def test_the_rule_is_printed_and_nothing_written(cli, project: Path, flag: str) -> None:
    before = files(project)
    run = cli("compile", "m.tosa", "-I", "inc", flag)
    assert run.code == 0, run.err
    assert run.out == RULE
    assert run.err == ""
    assert files(project) == before


def test_the_rule_is_the_one_md_writes(cli, project: Path) -> None:
    (project / "out").mkdir()
    args = ("m.tosa", "-o", "out/m.vgf", "-I", "inc", "-MP")
    printed = cli("compile", *args, "-M")
    assert printed.code == 0, printed.err
    assert not (project / "out" / "m.vgf").exists()
    assert cli("compile", *args, "-MD", "-q").code == 0
    assert printed.out == (project / "out" / "m.d").read_text()
    assert printed.out.startswith("out/m.vgf: \\\n  m.tosa \\\n  inc/scale.glsl\n")


def test_mmd_is_md(cli, project: Path) -> None:
    assert cli("compile", "m.tosa", "-I", "inc", "-MMD", "-q").code == 0
    assert (project / "m.d").read_text() == RULE


def test_mf_mt_and_mp(cli, project: Path) -> None:
    run = cli("compile", "m.tosa", "-I", "inc", "-M", "-MF", "m.deps", "-MT", "t $@", "-MP")
    assert run.code == 0, run.err
    assert run.out == ""
    assert (project / "m.deps").read_text() == (
        "t $@: \\\n  m.tosa \\\n  inc/scale.glsl\n\ninc/scale.glsl:\n"
    )
    assert not (project / "m.vgf").exists()


def test_several_models_print_one_rule_each_in_order(cli, project: Path) -> None:
    shutil.copy(project / "m.tosa", project / "n.tosa")
    run = cli("compile", "n.tosa", "m.tosa", "-d", "out", "-I", "inc", "-M", "-j", "2")
    assert run.code == 0, run.err
    assert run.out == (
        "out/n.vgf: \\\n  n.tosa \\\n  inc/scale.glsl\n"
        "out/m.vgf: \\\n  m.tosa \\\n  inc/scale.glsl\n"
    )
    assert not (project / "out").exists()  # -d makes its folder only to write into it


def test_the_model_from_standard_input_is_left_out(project: Path) -> None:
    exe = str(Path(sys.executable).parent / "vgfc")
    run = subprocess.run(
        [exe, "compile", "-", "-o", "x.vgf", "-I", "inc", "-M"],
        input=(project / "m.tosa").read_bytes(),
        capture_output=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == b"x.vgf: \\\n  inc/scale.glsl\n"


def test_an_error_prints_no_rule(cli, project: Path) -> None:
    shutil.copy(project / "m.tosa", project / "n.tosa")
    (project / "m.deps").write_text("old\n")
    (project / "inc" / "scale.glsl").write_text("#define SCALE undefined_thing\n")
    run = cli("compile", "n.tosa", "-I", "inc", "-M", "-MF", "m.deps")
    assert run.code == 1
    assert (project / "m.deps").read_text() == "old\n"
    (project / "inc" / "scale.glsl").unlink()
    run = cli("compile", "n.tosa", "m.tosa", "-I", "inc", "-M")
    assert run.code == 1 and run.out == ""
    assert "scale.glsl" in run.err


def test_a_missing_model(cli, project: Path) -> None:
    run = cli("compile", "nosuch.tosa", "-M")
    assert run.code == 1 and run.out == ""
    assert run.err.startswith("nosuch.tosa: error: cannot read the model")


def test_a_warning_goes_to_standard_error_and_werror_fails(cli, project: Path) -> None:
    """-M runs the compile's checks up to the shaders: their warnings too, -Werror included."""
    model(project, attrs(INCLUDING, workgroup_sizes=[2, 1, 1]))  # 32 of 64 elements
    run = cli("compile", "m.tosa", "-I", "inc", "-M")
    assert run.code == 0 and run.out == RULE
    assert "[-Wshort-dispatch]" in run.err
    run = cli("compile", "m.tosa", "-I", "inc", "-M", "-Werror")
    assert run.code == 1 and run.out == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-MD"], "-M prints the dependency rule instead of compiling, -MD writes it"),
        (["--report"], "-M prints the dependency rule and writes nothing else: --report"),
        (["--report", "r.json"], "--report has nothing to describe"),
        (["--json"], "--json has nothing to describe"),
        (["-o", "-"], "with -o - the VGF has no file name for the rule: give -MT TARGET"),
        (["-MF", "inc"], "'inc' is a directory"),
        (["-MF", "m.tosa"], "writing m.tosa would replace the model m.tosa"),
        (["-MT", ""], "-MT '' is not a target"),
    ],
)
def test_usage_errors(cli, project: Path, args: list[str], message: str) -> None:
    before = files(project)
    run = cli("compile", "m.tosa", "-I", "inc", "-M", *args)
    assert run.code == 2, run.err
    assert message in run.err
    assert files(project) == before


def test_one_mf_for_several_models(cli, project: Path) -> None:
    shutil.copy(project / "m.tosa", project / "n.tosa")
    run = cli("compile", "m.tosa", "n.tosa", "-M", "-MF", "x.d")
    assert run.code == 2
    assert "leave it out and -M prints every model's rule" in run.err


@pytest.mark.parametrize(
    ("depfile", "message"),
    [
        ("/dev/full", "it is a character device"),
        ("missing/m.d", "missing does not exist"),
        ("fifo", "it is a FIFO"),
        ("inc/scale.glsl", "an input of this command"),
    ],
)
def test_an_mf_that_cannot_be_written(cli, project: Path, depfile: str, message: str) -> None:
    os.mkfifo(project / "fifo")
    before = (project / "inc" / "scale.glsl").read_bytes()
    run = cli("compile", "m.tosa", "-I", "inc", "-M", "-MF", depfile)
    assert run.code == 1, run.err
    assert message in run.err and run.err.count("\n") == 1
    assert run.out == ""
    assert (project / "inc" / "scale.glsl").read_bytes() == before


def test_standard_output_full_is_an_error(project: Path) -> None:
    exe = str(Path(sys.executable).parent / "vgfc")
    with open("/dev/full", "wb") as full:
        run = subprocess.run(
            [exe, "compile", "m.tosa", "-I", "inc", "-M"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert run.returncode == 1
    assert run.stderr.startswith("standard output: error: cannot write")


def test_the_quick_path_leaves_m_to_click(project: Path) -> None:
    params = parse_compile(["m.tosa", "-M"])
    assert params is not None and params["deps_only"] is True
    assert run_quick(["compile", "m.tosa", "-M"]) is False
