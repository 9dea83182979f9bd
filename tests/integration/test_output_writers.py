"""Writers of one output, and writers that die: as real processes.

A report found beside a VGF always describes it (its SHA-256 is the file's), whether two
compiles of different models write the same ``-o X.vgf --report X.json`` at once or a compile
is killed between renaming the two; a compile killed mid-write leaves a temporary file named
after its pid, and the next compile into that folder removes it, never one whose writer is
alive. Where a kill must land at a given point, the child process stops there itself (a hook
in its own script) and says so on a pipe: no sleeps, no timing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from paths import ROOT, SAMPLES_DIR

EXE = str(Path(sys.executable).parent / "vgfc")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def describes(vgf: Path, report: Path) -> bool:
    """The report names the VGF's SHA-256."""
    digest = hashlib.sha256(vgf.read_bytes()).hexdigest()
    return digest in json.dumps(json.loads(report.read_text()))


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def child(script: str, cwd: Path) -> subprocess.Popen[str]:
    """A Python process running ``script``, which says ``ready`` on stdout when it stops at
    its hook (and waits for its stdin to close)."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=ENV,
    )


def wait_ready(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name in ("mixed", "simple"):
        shutil.copy(SAMPLES_DIR / f"{name}.tosa", tmp_path / f"{name}.tosa")
    return tmp_path


STOP_MID_WRITE = """
import sys
from vgfc.files.outputs import write_atomically

def write(f):
    f.write(b"half a VGF")
    print("ready", flush=True)
    sys.stdin.read()
    f.write(b" and the rest")

write_atomically("out/x.vgf", write)
"""


def compile_quietly(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "compile", "-q", *args], capture_output=True, text=True, cwd=work, env=ENV
    )


def test_a_killed_writers_temporary_file_goes_with_the_next_compile(work: Path) -> None:
    (work / "out").mkdir()
    proc = child(STOP_MID_WRITE, work)
    wait_ready(proc)
    (left,) = temporaries(work / "out")
    assert left.startswith(f".x.vgf.{proc.pid}.")  # its writer's identity
    proc.kill()
    proc.wait()
    done = compile_quietly(work, "simple.tosa", "-o", "out/simple.vgf")
    assert done.returncode == 0, done.stderr
    assert temporaries(work / "out") == []
    assert sorted(p.name for p in (work / "out").iterdir()) == ["simple.vgf"]


def test_a_live_writers_temporary_file_is_left_alone(work: Path) -> None:
    (work / "out").mkdir()
    proc = child(STOP_MID_WRITE, work)
    wait_ready(proc)
    (left,) = temporaries(work / "out")
    done = compile_quietly(work, "simple.tosa", "-o", "out/simple.vgf")
    assert done.returncode == 0, done.stderr
    assert temporaries(work / "out") == [left]
    proc.communicate("")  # let it finish its write
    assert proc.returncode == 0
    assert (work / "out" / "x.vgf").read_bytes() == b"half a VGF and the rest"
    assert temporaries(work / "out") == []


STOP_BETWEEN_RENAMES = """
import os, sys
from vgfc import compile

real = os.replace
def replace(src, dst):
    real(src, dst)
    if str(dst).endswith(".vgf"):  # the VGF is in place; the report is not yet
        print("ready", flush=True)
        sys.stdin.read()
os.replace = replace
compile("simple.tosa", "x.vgf", report="x.json")
"""


def test_a_kill_between_the_renames_never_leaves_a_report_of_another_vgf(work: Path) -> None:
    assert compile_quietly(work, "mixed.tosa", "-o", "x.vgf", "--report", "x.json").returncode == 0
    assert describes(work / "x.vgf", work / "x.json")
    proc = child(STOP_BETWEEN_RENAMES, work)
    wait_ready(proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # The new VGF is in place, the old report is gone: no report disagrees with the VGF.
    assert not (work / "x.json").exists()
    fresh = compile_quietly(work, "simple.tosa", "-o", "y.vgf")
    assert fresh.returncode == 0, fresh.stderr
    assert (work / "x.vgf").read_bytes() == (work / "y.vgf").read_bytes()
    assert temporaries(work) == []  # the report's temporary file went with the compile


def test_concurrent_writers_of_one_vgf_and_report_never_disagree(work: Path) -> None:
    rounds = 6
    for _ in range(rounds):
        procs = [
            subprocess.Popen(
                [EXE, "compile", "-q", model, "-o", "x.vgf", "--report", "x.json"],
                cwd=work,
                env=ENV,
                stderr=subprocess.PIPE,
            )
            for model in ("mixed.tosa", "simple.tosa", "mixed.tosa", "simple.tosa")
        ]
        for proc in procs:
            _, err = proc.communicate()
            assert proc.returncode == 0, err
        assert describes(work / "x.vgf", work / "x.json")
        assert temporaries(work) == []
