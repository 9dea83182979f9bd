"""Warnings governed as a compiler's: each has a name from the one table, printed as
``[-Wname]``; ``-Wno-NAME``, ``-Werror[=NAME]``, ``-Wno-error=NAME`` and ``-w`` act on the click
command, the quick path and ``vgfc.compile(warnings=...)`` alike; broken ``-W`` values are usage
errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from shader_models import attrs, model

import vgfc
from vgfc.diagnostics import Diagnostic, Location, Severity
from vgfc.options import UsageError
from vgfc.warning_names import WARNINGS, parse, spec_problem

DOCS = Path(__file__).resolve().parents[3] / "docs" / "commands.md"


def test_the_docs_table_is_the_code_table() -> None:
    text = DOCS.read_text()
    start = text.index("| name | warns about |")
    rows = re.findall(r"^\| `([a-z-]+)` \| (.*) \|$", text[start:].split("\n\n")[0], re.M)
    assert rows == list(WARNINGS.items())


def test_a_warning_without_a_name_cannot_be_made() -> None:
    with pytest.raises(AssertionError, match="without a name"):
        Diagnostic(Severity.WARNING, "x", Location())
    with pytest.raises(AssertionError, match="not in"):
        Diagnostic(Severity.WARNING, "x", Location(), name="no-such-warning")
    shown = Diagnostic(Severity.WARNING, "x", Location(file="m.tosa"), name="short-dispatch")
    assert shown.render() == "m.tosa: x [-Wshort-dispatch]"
    assert shown.as_dict()["name"] == "short-dispatch"


@pytest.mark.parametrize(
    ("specs", "hidden", "verdict"),
    [
        ((), False, "warning"),
        (("no-short-dispatch",), False, "off"),
        (("no-short-dispatch", "short-dispatch"), False, "warning"),
        (("error",), False, "error"),
        (("error", "no-error"), False, "warning"),
        (("error=short-dispatch",), False, "error"),
        (("error=unused-binding",), False, "warning"),
        (("no-short-dispatch", "error=short-dispatch"), False, "error"),  # last wins
        (("error=short-dispatch", "no-short-dispatch"), False, "off"),
        (("no-error=short-dispatch", "error"), False, "warning"),  # the named one wins
        (("error", "no-error=short-dispatch", "error=short-dispatch"), False, "error"),
        (("error",), True, "off"),  # -w
    ],
)
def test_flags_read_as_gcc_reads_them(specs: tuple[str, ...], hidden: bool, verdict: str) -> None:
    assert parse(specs, hidden=hidden).verdict("short-dispatch") == verdict


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("", "needs a warning name"),
        ("error=", "needs a warning name after it"),
        ("no-", "needs a warning name after it"),
        ("no-error=", "needs a warning name after it"),
        ("short-dispach", "did you mean -Wshort-dispatch?"),
        ("error=short-dispach", "did you mean -Werror=short-dispatch?"),
        ("x" * 5000, "characters)"),
        ("bad\nname", "bad\\nname"),
    ],
)
def test_a_broken_value_is_named(spec: str, says: str) -> None:
    problem = spec_problem(spec)
    assert problem is not None and says in problem and len(problem) < 400


@pytest.fixture
def warns(tmp_path: Path) -> Path:
    """m.tosa, whose shader op dispatches 16 invocations for 64 elements: -Wshort-dispatch."""
    model(tmp_path, attrs(workgroup_sizes=[1, 1, 1]))
    return tmp_path


TAG = "[-Wshort-dispatch]"


@pytest.mark.parametrize("quick", [True, False])
def test_werror_fails_and_writes_nothing(vgfc_exe, warns: Path, quick: bool) -> None:
    (warns / "m.vgf").write_bytes(b"old")
    # --json goes through click's batch mode; the plain line takes the quick path.
    extra = [] if quick else ["--keep-source"]
    run = vgfc_exe("compile", "m.tosa", "-q", "--report", "r.json", "-Werror", *extra, cwd=warns)
    assert run.code == 1
    first = run.err.splitlines()[0]
    assert first.startswith("m.tosa:") and "error:" in first
    assert first.endswith("[-Werror=short-dispatch]")
    assert (warns / "m.vgf").read_bytes() == b"old"
    assert not (warns / "r.json").exists()


def test_werror_in_batch_mode_fails_the_model(vgfc_exe, warns: Path) -> None:
    run = vgfc_exe("compile", "m.tosa", "-d", "out", "-Werror=short-dispatch", cwd=warns)
    assert run.code == 1 and "[-Werror=short-dispatch]" in run.err
    assert not (warns / "out" / "m.vgf").exists()


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        ([], True),
        (["-Wno-short-dispatch"], False),
        (["-W", "no-short-dispatch"], False),
        (["-w"], False),
        (["--no-warnings", "-Werror"], False),
        (["-Wno-short-dispatch", "-Wshort-dispatch"], True),
        (["-Werror", "-Wno-error=short-dispatch"], True),
        (["-Wno-unused-binding"], True),
    ],
)
def test_flags_on_the_quick_path(vgfc_exe, warns: Path, flags: list[str], shown: bool) -> None:
    run = vgfc_exe("compile", "m.tosa", "-q", *flags, cwd=warns)
    assert run.code == 0, run.err
    assert (TAG in run.err) == shown
    assert (warns / "m.vgf").exists()


@pytest.mark.parametrize("command", ["check", "partition", "verify"])
def test_other_compiling_commands_take_the_flags(cli, warns: Path, command: str) -> None:
    path = str(warns / "m.tosa")
    run = cli(command, path, "-Wbogus")
    assert run.code == 2 and "-Wbogus: unknown warning" in run.err
    if command != "check":  # partition stops before lowering; verify needs the runner
        return
    assert TAG in cli(command, path).err
    assert TAG not in cli(command, path, "-Wno-short-dispatch").err
    assert cli(command, path, "-Werror").code == 1


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["-Wshort-dispach"], "did you mean -Wshort-dispatch?"),
        (["-Werror="], "-Werror= needs a warning name"),
        (["-W"], "requires an argument"),
        (["-W", ""], "needs a warning name"),
        (["-Wno-"], "-Wno- needs a warning name"),
        (["-Werror=nothing", "-Werror"], "-Werror=nothing: unknown warning"),
    ],
)
def test_broken_flags_are_usage_errors(vgfc_exe, warns: Path, flags: list[str], says: str) -> None:
    run = vgfc_exe("compile", "m.tosa", *flags, cwd=warns)
    assert run.code == 2, run.err
    assert says in run.err and "Traceback" not in run.err
    assert not (warns / "m.vgf").exists()


def test_the_api_takes_the_same_values(warns: Path) -> None:
    path = warns / "m.tosa"
    assert [d.name for d in vgfc.compile(path).warnings] == ["short-dispatch"]
    assert vgfc.compile(path, warnings=["no-short-dispatch"]).warnings == ()
    assert vgfc.compile(path, warnings="no-short-dispatch").warnings == ()
    assert vgfc.compile(path, hide_warnings=True).warnings == ()
    with pytest.raises(vgfc.VgfcError) as caught:
        vgfc.compile(path, warnings=["error"])
    assert caught.value.diagnostic.name == "short-dispatch"
    assert caught.value.render().endswith("[-Werror=short-dispatch]")
    for bad in (["nope"], [3], ["error="]):
        with pytest.raises(UsageError):
            vgfc.compile(path, warnings=bad)


def test_check_keeps_going_past_a_warning_made_an_error(cli, warns: Path) -> None:
    run = cli("check", str(warns / "m.tosa"), "-Werror", "--json")
    assert run.code == 1
    assert '"name": "short-dispatch"' in run.out
