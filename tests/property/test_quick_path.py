"""The quick paths of ``vgfc compile`` and ``vgfc-model-converter`` (vgfc.cli.quick) against
click, the oracle: for generated command lines, the quick parser either leaves the line to click
or gives exactly the parameters click's own parse of the line gives (``make_context``), defaults
included."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tosa_factory import chain

from vgfc.cli.compile import compile_command
from vgfc.cli.model_converter_command import model_converter
from vgfc.cli.quick import parse_compile, parse_model_converter


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A working folder with a model, a library, an include folder and a symlink loop."""
    root = tmp_path_factory.mktemp("quick")
    (root / "m.tosa").write_bytes(chain(2))
    (root / "lib.yaml").write_text("ops: {}\n")
    (root / "inc").mkdir()
    (root / "loop").symlink_to(root / "loop")
    here = Path.cwd()
    os.chdir(root)
    try:
        yield root
    finally:
        os.chdir(here)


PATHS = ["m.tosa", "missing.tosa", "inc", "loop", "", "out.vgf", "r.json", "-", "lib.yaml"]
GROUPS = st.one_of(
    st.sampled_from(PATHS).map(lambda p: [p]),
    st.sampled_from(
        [
            "-q",
            "--quiet",
            "--keep-source",
            "--no-auto-convert",
            "--no-cache",
            "--json",
            "--help",
            "--debug",
            "--",
            "-qo",
            "-oout.vgf",
            "-Iinc",
            "-DX=1",
            "-w",
            "--no-warnings",
            "-Werror",
            "-Wno-short-dispatch",
            "-Werror=short-dispatch",
            "-Wno-error=bogus",
            "-W=x",
            "-W-q",
            "-wq",
            "--unknown",
            "-j",
            "--quiet=1",
            "--report",
            "-MD",
            "-MP",
            "-M",
        ]
    ).map(lambda f: [f]),
    st.tuples(
        st.sampled_from(
            [
                "-o",
                "--output",
                "--report",
                "-d",
                "--kernels",
                "-I",
                "--include-dir",
                "-D",
                "--define",
                "--target",
                "--target-env",
                "--shader-timeout",
                "--shader-memory",
                "-j",
                "-MF",
                "-MT",
                "-W",
            ]
        ),
        st.sampled_from(
            [
                *PATHS,
                "executorch",
                "scenario-runner",
                "vulkan1.3",
                "vulkan1.0",
                "bogus",
                "1.5",
                "inf",
                "nan",
                "-1",
                "1_0",
                " 2",
                "X=1",
                "-q",
                "0",
                "1073741825",
                "99999999999999999999",
                "0012",
                "error",
                "no-short-dispatch",
                "error=unused-binding",
            ]
        ),
    ).flatmap(lambda pair: st.sampled_from([list(pair), [f"{pair[0]}={pair[1]}"]])),
)
lines = st.lists(GROUPS, max_size=6).map(lambda groups: [t for g in groups for t in g])


def _click_params(
    args: list[str], command: click.Command = compile_command
) -> dict[str, object] | None:
    """What click's parse of ``vgfc compile ARGS`` (or another ``command``'s) gives the command,
    or ``None`` where click refuses the line (a usage error) or answers it itself (``--help``)."""
    try:
        with command.make_context(command.name or "", list(args)) as ctx:
            return dict(ctx.params)
    except (click.exceptions.Exit, click.ClickException):
        return None


@settings(max_examples=400, deadline=None)
@given(lines)
def test_the_quick_parse_is_clicks_or_none(folder: Path, args: list[str]) -> None:
    quick = parse_compile(args)
    if quick is not None:
        assert quick == _click_params(args), args


@pytest.mark.parametrize(
    "args",
    [
        ["m.tosa"],
        ["m.tosa", "-o", "out.vgf"],
        ["-q", "m.tosa", "-o", "out.vgf"],
        ["m.tosa", "--output=out.vgf", "--report", "r.json"],
        ["m.tosa", "-o", "out.vgf", "--report"],
        ["m.tosa", "--report", "-q"],
        ["m.tosa", "--kernels", "lib.yaml", "--kernels", "mediapipe", "--target", "executorch"],
        ["m.tosa", "-I", "inc", "-D", "N=4", "--target-env", "vulkan1.3", "--no-cache"],
        ["m.tosa", "--shader-timeout", "0", "--keep-source", "--no-auto-convert"],
        ["m.tosa", "-o", "out.vgf", "-MD", "-MP"],
        ["m.tosa", "-o", "out.vgf", "-MF", "out.vgf.d", "-MT", "out.vgf"],
        ["-", "-o", "-"],
        ["m.tosa", "-o", "out.vgf", "--report", "-"],
        ["-", "--output=-", "--report", "r.json"],
        ["m.tosa", "-Wno-short-dispatch", "-Werror", "-W", "error=unused-binding", "-w"],
        ["m.tosa", "-Iinc", "-DN=4", "-oout.vgf"],
        ["missing.tosa"],  # the compile says so, as for a folder or a FIFO
        ["inc"],
    ],
)
def test_the_usual_command_lines_take_the_quick_path(folder: Path, args: list[str]) -> None:
    quick = parse_compile(args)
    assert quick is not None
    assert quick == _click_params(args)


@pytest.mark.parametrize(
    "args",
    [
        ["m.tosa", "n.tosa"],  # batch mode
        ["m.tosa", "-d", "out"],
        ["m.tosa", "--json"],
        ["m.tosa", "-j", "2"],
        ["m.tosa", "--help"],
        ["m.tosa", "-qo", "out.vgf"],  # short options run together
        ["m.tosa", "-o", "-q"],  # click takes -q as the file name
        ["m.tosa", "-o", "a.vgf", "-o", "b.vgf"],
        ["m.tosa", "-o", "inc"],  # a directory: click's error
        ["m.tosa", "--target", "bogus"],
        ["m.tosa", "--shader-timeout", "nan"],
        ["m.tosa", "--", "x"],
    ],
)
def test_what_the_quick_path_is_not_sure_of_goes_to_click(folder: Path, args: list[str]) -> None:
    assert parse_compile(args) is None


CONVERTER_GROUPS = st.one_of(
    st.sampled_from(PATHS).map(lambda p: [p]),
    st.sampled_from(
        [
            "--require-static-shape",
            "--tosa-flatbuffer",
            "--analysis",
            "--experimental-analysis",
            "--emit-debug-info",
            "--enable-bespoke",
            "--dump-mlir",
            "--disable-replicated-composites",
            "-O0",
            "-w",
            "--debug",
            "--version",
            "-h",
            "--",
            "-iom.tosa",
            "-im.tosa",
            "-oout.vgf",
            "-Werror",
            "--unknown",
        ]
    ).map(lambda f: [f]),
    st.tuples(
        st.sampled_from(
            [
                "-i",
                "--input",
                "-o",
                "--output",
                "--tosa-flatbuffer-schema",
                "--target",
                "--type-narrowing",
                "--kernels",
                "--custom-op-domain-to-opcode",
                "--shader-timeout",
                "-W",
            ]
        ),
        st.sampled_from(
            [*PATHS, "executorch", "bogus", "full", "none", "1.5", "-q", "com.x=1", "error"]
        ),
    ).flatmap(lambda pair: st.sampled_from([list(pair), [f"{pair[0]}={pair[1]}"]])),
)
converter_lines = st.lists(CONVERTER_GROUPS, max_size=6).map(
    lambda groups: [t for g in groups for t in g]
)


@settings(max_examples=400, deadline=None)
@given(converter_lines)
def test_the_model_converters_quick_parse_is_clicks_or_none(folder: Path, args: list[str]) -> None:
    quick = parse_model_converter(args)
    if quick is not None:
        assert quick == _click_params(args, model_converter), args


@pytest.mark.parametrize(
    "args",
    [
        ["-i", "m.tosa", "-o", "out.vgf"],  # what ExecuTorch runs
        ["-o", "out.vgf", "-i", "m.tosa"],
        ["--input=m.tosa", "--output", "-"],
        ["-i", "-", "-o", "-"],
        [],  # standard input to standard output
        ["--require-static-shape", "-i", "m.tosa", "-o", "out.vgf"],
        ["-i", "m.tosa", "-o", "out.vgf", "--type-narrowing", "full", "-O0"],
        ["-i", "m.tosa", "-o", "out.vgf", "--disable-replicated-composites", "--emit-debug-info"],
        ["-i", "m.tosa", "-o", "out.tosa", "--tosa-flatbuffer"],
        ["-i", "m.tosa", "--experimental-analysis", "-o", "out.vgf"],
        ["-im.tosa", "-oout.vgf"],
        ["-i", "missing.tosa", "-o", "out.vgf"],  # the compile says so
    ],
)
def test_the_usual_converter_lines_take_the_quick_path(folder: Path, args: list[str]) -> None:
    quick = parse_model_converter(args)
    assert quick is not None
    assert quick == _click_params(args, model_converter)


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["-h"],
        ["m.tosa"],  # a word no option takes: click's usage error
        ["-i", "m.tosa", "-o", "out.vgf", "--debug"],
        ["-i", "m.tosa", "-i", "n.tosa"],
        ["-i", "m.tosa", "-o", "-q"],  # click takes -q as the file name
        ["-i", ""],
        ["-i", "m.tosa", "--target", "bogus"],
        ["-i", "m.tosa", "--unknown"],
    ],
)
def test_what_the_converters_quick_path_is_not_sure_of_goes_to_click(
    folder: Path, args: list[str]
) -> None:
    assert parse_model_converter(args) is None
