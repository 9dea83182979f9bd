"""``-`` is standard input for a model (compile, check, partition, verify) or a VGF (inspect), and
standard output for ``-o`` and ``--report``: the same bytes as a file, refused where it cannot
work (a terminal, two outputs on one stream, batch mode), and tried broken (stdin closed, empty,
a folder, a device; stdout full, closed, a pipe nobody reads). Real processes: the stream guards
are the console script's."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import SAMPLES_DIR

EXE = str(Path(sys.executable).parent / "vgfc")
MODEL = SAMPLES_DIR / "mixed.tosa"


def vgfc(
    args: list[str], cwd: Path, *, stdin: object = subprocess.DEVNULL, stdout: object = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [EXE, *args],
        stdin=stdin,  # type: ignore[arg-type]
        stdout=subprocess.PIPE if stdout is None else stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=300,
    )


def piped(args: list[str], cwd: Path, data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([EXE, *args], input=data, capture_output=True, cwd=cwd, timeout=300)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copy(MODEL, tmp_path / "m.tosa")
    done = vgfc(["compile", "-q", "m.tosa", "-o", "file.vgf", "--report", "file.json"], tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path


def test_dash_o_writes_the_bytes_dash_o_file_writes(work: Path) -> None:
    done = vgfc(["compile", "m.tosa", "-o", "-"], work)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (work / "file.vgf").read_bytes()
    assert sorted(p.name for p in work.iterdir()) == ["file.json", "file.vgf", "m.tosa"]


def test_a_model_from_a_pipe_to_standard_output(work: Path) -> None:
    done = piped(["compile", "-", "-o", "-", "--report", "r.json"], work, MODEL.read_bytes())
    assert done.returncode == 0, done.stderr
    assert done.stdout == (work / "file.vgf").read_bytes()
    report = json.loads((work / "r.json").read_text())
    assert hashlib.sha256(done.stdout).hexdigest() in json.dumps(report)


def test_report_to_standard_output_describes_the_file_written(work: Path) -> None:
    with open(MODEL, "rb") as model:  # a regular file redirected in
        done = vgfc(["compile", "-", "-o", "x.vgf", "--report", "-"], work, stdin=model)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert hashlib.sha256((work / "x.vgf").read_bytes()).hexdigest() in json.dumps(report)


@pytest.mark.parametrize("command", [["check"], ["partition", "--json"], ["verify"]])
def test_commands_that_read_a_model_read_standard_input(work: Path, command: list[str]) -> None:
    from_file = vgfc([*command, "m.tosa"], work)
    from_pipe = piped([*command, "-"], work, MODEL.read_bytes())
    assert from_pipe.returncode == from_file.returncode
    assert from_pipe.returncode in (0, 4), from_pipe.stderr  # verify: a custom shader unverified
    if command[0] == "partition":
        assert (
            json.loads(from_pipe.stdout)["partitions"] == json.loads(from_file.stdout)["partitions"]
        )


def test_inspect_reads_a_vgf_from_standard_input(work: Path) -> None:
    from_pipe = piped(["inspect", "--json", "-"], work, (work / "file.vgf").read_bytes())
    assert from_pipe.returncode == 0, from_pipe.stderr
    assert from_pipe.stdout == vgfc(["inspect", "--json", "file.vgf"], work).stdout


@pytest.mark.parametrize(
    ("stdin", "reason"),
    [
        ("devnull", "standard input: file is empty"),
        ("closed", "standard input: file is empty"),
        ("folder", None),  # Python itself refuses to start: no file, no success
        ("zero", "standard input: cannot read the model: a character device"),
        # Text is read as TOSA MLIR: the translator's complaint, at its line and column.
        ("junk", "standard input:1:1: custom op 'abc' is unknown"),
    ],
)
def test_standard_input_tried_broken(work: Path, stdin: str, reason: str | None) -> None:
    shells = {
        "devnull": "< /dev/null",
        "closed": "<&-",
        "folder": "< .",
        "zero": "< /dev/zero",
        "junk": "<<< abc",
    }
    done = subprocess.run(
        ["bash", "-c", f"{EXE} compile - -o out.vgf {shells[stdin]}"],
        capture_output=True,
        text=True,
        cwd=work,
        timeout=300,
    )
    assert done.returncode != 0
    if reason is not None:
        assert done.returncode == 1
        place, _, rest = reason.partition(": ")  # gcc's form: the place first
        assert done.stderr.startswith(f"{place}: error: {rest}"), done.stderr
        assert done.stderr.count("\n") == 1
    assert not (work / "out.vgf").exists()


def test_a_terminal_as_standard_input_is_refused(work: Path) -> None:
    parent, child = pty.openpty()
    try:
        done = vgfc(["check", "-"], work, stdin=child)
    finally:
        os.close(parent)
        os.close(child)
    assert done.returncode == 1
    assert b"standard input: error: cannot read the model: it is a terminal" in done.stderr


def test_a_vgf_is_never_written_to_a_terminal(work: Path) -> None:
    parent, child = pty.openpty()
    try:
        done = vgfc(["compile", "m.tosa", "-o", "-"], work, stdout=child)
    finally:
        os.close(parent)
        os.close(child)
    assert done.returncode == 1
    assert b"a VGF file is binary and standard output is a terminal" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["m.tosa", "-o", "-", "--report", "-"], "would both write to standard output"),
        (["m.tosa", "-o", "-", "--report"], "-o - writes no file: give --report FILE"),
        (["-"], "give -o FILE, or -o - to write the VGF to standard output"),
        (["-", "m.tosa", "-d", "out"], "- (standard input) is one model"),
        (["m.tosa", "-d", "-"], "-d - : standard output holds one file"),
        (["m.tosa", "-o", "-", "--json"], "batch mode (--json, -d, several models)"),
        (["-", "-o", "x.vgf", "--json"], "batch mode (--json, -d, several models)"),
    ],
)
def test_what_cannot_be_done_with_dash_is_a_usage_error(
    work: Path, args: list[str], message: str
) -> None:
    done = vgfc(["compile", *args], work)
    assert done.returncode == 2
    assert message in done.stderr.decode()
    assert sorted(p.name for p in work.iterdir()) == ["file.json", "file.vgf", "m.tosa"]


def test_standard_output_tried_broken(work: Path) -> None:
    with open("/dev/full", "wb") as full:
        done = vgfc(["compile", "m.tosa", "-o", "-"], work, stdout=full)
    assert done.returncode == 1
    assert done.stderr == b"standard output: error: cannot write: no space left on the device\n"
    read, write = os.pipe()
    os.close(read)
    try:
        done = vgfc(["compile", "m.tosa", "-o", "-", "--report", "r.json"], work, stdout=write)
    finally:
        os.close(write)
    assert done.returncode == 1
    assert b"cannot write the VGF: the reader went away (a closed pipe)" in done.stderr
    assert not (work / "r.json").exists()  # no report of a VGF that never arrived
    done = subprocess.run(
        ["bash", "-c", f"{EXE} compile m.tosa -o - >&-"], capture_output=True, cwd=work
    )
    assert done.returncode == 1
    assert b"standard output: error: cannot write: it is closed" in done.stderr


@pytest.mark.parametrize("where", ["output", "report"])
def test_the_api_refuses_dash_for_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``vgfc.compile`` writes files or returns bytes: ``-`` never becomes a file called -."""
    import vgfc

    monkeypatch.chdir(tmp_path)
    args = {"output": "-"} if where == "output" else {"output": "x.vgf", "report": "-"}
    with pytest.raises(ValueError, match=f"{where}='-': standard output is the command line's"):
        vgfc.compile(MODEL, **args)
    assert list(tmp_path.iterdir()) == []


def test_a_report_that_cannot_go_out_says_the_vgf_was_written(work: Path) -> None:
    with open("/dev/full", "wb") as full:
        done = vgfc(["compile", "m.tosa", "-o", "x.vgf", "--report", "-"], work, stdout=full)
    assert done.returncode == 1
    assert done.stderr == (
        b"standard output: error: cannot write: no space left on the device; x.vgf was written\n"
    )
    assert (work / "x.vgf").read_bytes() == (work / "file.vgf").read_bytes()
