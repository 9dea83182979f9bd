"""``vgfc compile -MD/-MF/-MT/-MP`` (vgfc/deps.py): a dependency file in gcc's Make syntax that
names every file the compile read, written with the VGF or not at all, and every way of asking
for one wrongly refused before any work. Real make, ninja and CMake read these files in
tests/integration/test_build_systems.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from paths import SAMPLES_DIR
from shader_models import COPY, attrs, model

import vgfc
from vgfc.cli.quick import parse_compile
from vgfc.deps import escape

INCLUDING = COPY.replace("#version 450\n", '#version 450\n#include "scale.glsl"\n').replace(
    "x[i] * 2.0", "x[i] * SCALE"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working folder: m.tosa, whose shader includes inc/scale.glsl."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "scale.glsl").write_text("#define SCALE 2.0\n")
    model(tmp_path, attrs(INCLUDING))
    return tmp_path


def test_md_writes_the_rule_next_to_the_vgf(cli, project: Path) -> None:
    (project / "out").mkdir()
    run = cli("compile", "m.tosa", "-o", "out/m.vgf", "-I", "inc", "-MD", "-q")
    assert run.code == 0, run.err
    assert (project / "out/m.d").read_text() == "out/m.vgf: \\\n  m.tosa \\\n  inc/scale.glsl\n"


def test_without_o_the_vgf_and_the_rule_go_next_to_the_model(cli, project: Path) -> None:
    assert cli("compile", "m.tosa", "-I", "inc", "-MD", "-q").code == 0
    assert (project / "m.d").read_text().startswith("m.vgf: \\\n  m.tosa \\\n")


def test_mf_mt_and_mp(cli, project: Path) -> None:
    run = cli(
        "compile", "m.tosa", "-o", "m.vgf", "-I", "inc", "-MF", "deps.txt", "-MT", "all $(X)", "-MP"
    )
    assert run.code == 0, run.err
    assert not (project / "m.d").exists()
    # -MT is written as given; -MP adds an empty rule for every file but the model.
    assert (project / "deps.txt").read_text() == (
        "all $(X): \\\n  m.tosa \\\n  inc/scale.glsl\n\ninc/scale.glsl:\n"
    )


def test_names_are_escaped_as_gcc_escapes_them(cli, project: Path) -> None:
    odd = project / "in c$#"
    (project / "inc").rename(odd)
    run = cli("compile", "m.tosa", "-o", "o u$t#.vgf", "-I", "in c$#", "-MD", "-q")
    assert run.code == 0, run.err
    assert (project / "o u$t#.d").read_text() == (
        "o\\ u$$t\\#.vgf: \\\n  m.tosa \\\n  in\\ c$$\\#/scale.glsl\n"
    )


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("plain/file.glsl", "plain/file.glsl"),
        ("a b", "a\\ b"),
        ("a\tb", "a\\\tb"),
        ("a\\ b", "a\\\\\\ b"),  # 2N+1 backslashes before a space: N backslashes, then the space
        ("a\\b", "a\\b"),  # a backslash elsewhere is left alone
        ("$HOME#1", "$$HOME\\#1"),
        ("dir/", "dir/"),
    ],
)
def test_escape(name: str, written: str) -> None:
    assert escape(name) == written


def test_a_library_its_shader_file_and_the_model(cli, tmp_path: Path) -> None:
    for name in ("model.tosa", "example_ops.yaml", "channel_scale.comp"):
        shutil.copy(SAMPLES_DIR / "kernels" / name, tmp_path / name)
    out, lib = tmp_path / "model.vgf", tmp_path / "example_ops.yaml"
    run = cli("compile", str(tmp_path / "model.tosa"), "--kernels", str(lib), "-MD", "-q")
    assert run.code == 0, run.err
    lines = (tmp_path / "model.d").read_text().splitlines()
    assert lines == [
        f"{out}: \\",
        f"  {tmp_path / 'model.tosa'} \\",
        f"  {lib} \\",
        f"  {tmp_path / 'channel_scale.comp'}",
    ]


def test_files_are_named_as_the_user_named_their_folders(cli, project: Path) -> None:
    """As gcc does: the shader file beside the library as the library was named, and a nested
    include under the -I folder as given, relative where that was relative."""
    shutil.copytree(SAMPLES_DIR / "kernels", "kernels")
    shader = Path("kernels/channel_scale.comp")
    shader.write_text(shader.read_text().replace("void main", '#include "a.glsl"\nvoid main', 1))
    (project / "inc" / "sub").mkdir()
    (project / "inc" / "a.glsl").write_text('#include "sub/b.glsl"\n')
    (project / "inc" / "sub" / "b.glsl").write_text("// nothing\n")
    args = ("kernels/model.tosa", "--kernels", "kernels/example_ops.yaml", "-I", "inc")
    run = cli("compile", *args, "-o", "out.vgf", "-MD", "-q")
    assert run.code == 0, run.err
    assert Path("out.d").read_text().splitlines() == [
        "out.vgf: \\",
        "  kernels/model.tosa \\",
        "  kernels/example_ops.yaml \\",
        "  kernels/channel_scale.comp \\",
        "  inc/a.glsl \\",
        "  inc/sub/b.glsl",
    ]


def test_batch_mode_writes_one_rule_per_model(cli, project: Path) -> None:
    shutil.copy(project / "m.tosa", project / "n.tosa")
    run = cli("compile", "m.tosa", "n.tosa", "-d", "out", "-I", "inc", "-MD", "-MP", "-j", "2")
    assert run.code == 0, run.err
    for stem in ("m", "n"):
        text = (project / "out" / f"{stem}.d").read_text()
        assert text.startswith(f"out/{stem}.vgf: \\\n  {stem}.tosa \\\n  inc/scale.glsl\n")


def test_a_failed_compile_writes_no_rule_and_leaves_the_old_one(cli, project: Path) -> None:
    (project / "m.d").write_text("old\n")
    (project / "inc" / "scale.glsl").write_text("#define SCALE undefined_thing\n")
    run = cli("compile", "m.tosa", "-I", "inc", "-MD")
    assert run.code == 1
    assert (project / "m.d").read_text() == "old\n"
    assert not (project / "m.vgf").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-MT", "x"], "-MT says how to write a dependency file: give -MD, -MF or -M"),
        (["-MP"], "-MP says how to write a dependency file: give -MD, -MF or -M"),
        (["-MD", "-MT", ""], "-MT '' is not a target"),
        (["-MD", "-MT", "a\nb"], "is not a target: a name on one line"),
        (["-MF", "inc"], "'inc' is a directory"),
        (["-o", "a\nb.vgf", "-MD"], "the VGF's name holds a line break"),
        (["-MF", "m.vgf"], "the dependency file and the VGF would both be written to m.vgf"),
        (["-MF", "r.json", "--report", "r.json"], "the dependency file and the report would"),
        (["-MF", "m.tosa"], "writing m.tosa would replace the model m.tosa"),
        (["-o", "-", "-MD"], "with -o - the VGF has no file name"),
        (["-o", "-", "-MF", "x.d"], "give -MF FILE and -MT TARGET"),
    ],
)
def test_usage_errors_before_any_work(cli, project: Path, args: list[str], message: str) -> None:
    run = cli("compile", "m.tosa", "-I", "inc", *args)
    assert run.code == 2, run.err
    assert message in run.err
    assert sorted(p.name for p in project.iterdir()) == ["inc", "m.tosa"]


def test_several_models_and_one_mf_or_mt(cli, project: Path) -> None:
    shutil.copy(project / "m.tosa", project / "n.tosa")
    run = cli("compile", "m.tosa", "n.tosa", "-d", "out", "-MF", "x.d")
    assert run.code == 2 and "-MF x.d names one file, and 2 models were given" in run.err
    run = cli("compile", "m.tosa", "n.tosa", "-d", "out", "-MD", "-MT", "t")
    assert run.code == 2 and "-MT names the target of one model's rule" in run.err
    assert not (project / "out").exists()


@pytest.mark.parametrize(
    ("depfile", "message"),
    [
        ("/dev/full", "it is a character device"),
        ("missing/m.d", "missing does not exist"),
        ("m.tosa/m.d", "a part of the path is a file"),
    ],
)
def test_a_depfile_that_cannot_be_written(cli, project: Path, depfile: str, message: str) -> None:
    run = cli("compile", "m.tosa", "-I", "inc", "-MF", depfile)
    assert run.code == 1, run.err
    assert message in run.err and run.err.count("\n") == 1
    assert not (project / "m.vgf").exists()


@pytest.mark.parametrize("kind", ["fifo", "loop"])
def test_a_depfile_path_that_is_no_regular_file(cli, project: Path, kind: str) -> None:
    path = project / "m.d"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(path)
    run = cli("compile", "m.tosa", "-I", "inc", "-MD")
    assert run.code == 1, run.err
    assert "m.d: error: cannot write output file" in run.err and run.err.count("\n") == 1
    assert not (project / "m.vgf").exists()
    assert path.is_symlink() if kind == "loop" else path.is_fifo()


def test_a_depfile_never_replaces_an_include(cli, project: Path) -> None:
    """Which files a shader includes is known only once it is compiled: the refusal comes then,
    and the VGF is not written either."""
    before = (project / "inc" / "scale.glsl").read_bytes()
    run = cli("compile", "m.tosa", "-I", "inc", "-MF", "inc/scale.glsl", "-q")
    assert run.code == 1
    assert "an input of this command" in run.err
    assert (project / "inc" / "scale.glsl").read_bytes() == before
    assert not (project / "m.vgf").exists()


def test_a_file_name_make_cannot_hold_is_an_error_not_a_broken_rule(cli, project: Path) -> None:
    (project / "m.tosa").rename(project / "m\n.tosa")
    run = cli("compile", "m\n.tosa", "-o", "m.vgf", "-I", "inc", "-MD", "-q")
    assert run.code == 1
    assert "holds a line break, which a Make rule cannot hold" in run.err
    assert not (project / "m.vgf").exists() and not (project / "m.d").exists()


def test_the_quick_path_takes_the_depfile_options(project: Path) -> None:
    params = parse_compile(["m.tosa", "-MD", "-MF", "x.d", "-MT", "out", "-MP"])
    assert params is not None
    assert params["deps"] and params["deps_phony"]
    assert params["depfile"] == Path("x.d") and params["deps_target"] == "out"


def test_the_api(project: Path) -> None:
    vgfc.compile("m.tosa", "a.vgf", include_dirs=["inc"], deps=True)
    assert (project / "a.d").read_text().startswith("a.vgf: \\\n  m.tosa \\\n")
    vgfc.compile("m.tosa", "b.vgf", include_dirs=["inc"], depfile="b.deps", deps_phony=True)
    assert (project / "b.deps").read_text().endswith("\ninc/scale.glsl:\n")
    with pytest.raises(ValueError, match="a dependency file needs an output file"):
        vgfc.compile("m.tosa", include_dirs=["inc"], deps=True)
    with pytest.raises(ValueError, match="deps must be True or False"):
        vgfc.compile("m.tosa", "c.vgf", deps="yes")
    with pytest.raises(ValueError, match="depfile must be a file name"):
        vgfc.compile("m.tosa", "c.vgf", depfile=3)
    with pytest.raises(ValueError, match="deps_target must be a string"):
        vgfc.compile("m.tosa", "c.vgf", deps=True, deps_target=["a"])
    assert not (project / "c.vgf").exists()


@pytest.mark.parametrize("piped", [False, True])
def test_with_o_dash_the_rule_is_written_too(project: Path, piped: bool) -> None:
    """`-o - -MF FILE -MT TARGET`: the VGF goes to standard output and the rule to FILE (a model
    read from standard input is no file to depend on, so it is left out)."""
    import subprocess
    import sys

    model_arg = "-" if piped else "m.tosa"
    exe = str(Path(sys.executable).parent / "vgfc")
    deps = ["-MF", "deps.d", "-MT", "m.vgf", "-MP"]
    run = subprocess.run(
        [exe, "compile", model_arg, "-o", "-", "-I", "inc", *deps],
        input=(project / "m.tosa").read_bytes() if piped else None,
        capture_output=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == vgfc.compile("m.tosa", include_dirs=["inc"]).vgf
    first = "" if piped else "  m.tosa \\\n"
    assert (project / "deps.d").read_text() == (
        f"m.vgf: \\\n{first}  inc/scale.glsl\n\ninc/scale.glsl:\n"
    )
