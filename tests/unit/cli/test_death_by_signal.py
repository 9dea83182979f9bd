"""An interrupted command cleans up, says what it wrote, and then dies by the signal it received
(as compilers do), so that the caller sees it: a shell loop over models stops, make prints
"Interrupt". Old outputs stay; no temporary file is left.

No test here waits for a time. A single compile is signalled while it reads its model from a
pipe the test holds open (the test's write returns only once the compiler reads). A batch is
signalled while every worker waits for the output folder's lock, which the test holds: each has
written its temporary file and cannot rename it.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

EXE = str(Path(sys.executable).parent / "vgfc")
DEADLINE = 120.0
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _how(sig: int) -> str:
    return "Ctrl-C" if sig == signal.SIGINT else signal.Signals(sig).name


@pytest.mark.parametrize("sig", [*SIGNALS, signal.SIGQUIT])
def test_a_compile_reading_its_model_dies_by_the_signal(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "out.vgf"
    out.write_bytes(b"old")
    proc = subprocess.Popen(
        [EXE, "compile", "-q", "-", "-o", str(out)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert proc.stdin is not None
    # More than a pipe holds (64 KiB): the write returns only once the compiler has read from
    # standard input, after its handlers were set up; it then waits for the rest.
    proc.stdin.write(b"\0" * (1 << 18))
    proc.stdin.flush()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == -sig, err
    assert err.decode() == f"error: interrupted ({_how(sig)}): no file was written\n"
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.vgf"]  # no core file either


def _temporaries(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*.tmp"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_batch_with_workers_dies_by_the_signal(tmp_path: Path, sig: int) -> None:
    models = [tmp_path / f"{name}.tosa" for name in ("a", "b")]
    for model, sample in zip(models, ("chain", "dup"), strict=True):
        model.write_bytes((ROOT / "samples" / f"{sample}.tosa").read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.vgf").write_bytes(b"old")
    lock = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        proc = subprocess.Popen(
            [EXE, "compile", "-q", *map(str, models), "-d", str(out), "-j", "2"],
            stderr=subprocess.PIPE,
        )
        # Both workers have compiled and wait for the lock with their temporary files written.
        for _ in range(int(DEADLINE / 0.01)):
            if len(_temporaries(out)) == 2:
                break
            try:
                proc.wait(timeout=0.01)
            except subprocess.TimeoutExpired:
                continue
            break
        assert len(_temporaries(out)) == 2, proc.stderr.read() if proc.stderr else ""
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=DEADLINE)
    finally:
        os.close(lock)
    assert proc.returncode == -sig, err
    assert err.decode() == (
        f"error: interrupted ({_how(sig)}): 0 of 2 models written; "
        "the others' files were left as they were\n"
    )
    assert sorted(p.name for p in out.iterdir()) == ["a.vgf"]
    assert (out / "a.vgf").read_bytes() == b"old"
