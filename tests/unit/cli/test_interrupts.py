"""Interrupts during a large write: SIGINT, SIGTERM, SIGHUP and SIGQUIT leave either the old
file or the new one, never a temporary file, and say which, and the command then dies by the
signal; in batch mode the workers end with their parent and write nothing after it.

No test here waits for a time: the command is stopped (SIGSTOP) once its temporary output file
exists, signalled, and continued, so the signal lands in the middle of the write whatever the
machine's speed; then the end state is checked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from paths import ROOT

EXE = str(Path(sys.executable).parent / "vgfc")
DEADLINE = 120.0


@pytest.fixture(scope="module")
def big_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model with 100 MB of constants: its VGF takes a while to write."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_models import constants_model

    path = tmp_path_factory.mktemp("big") / "big.tosa"
    path.write_bytes(constants_model(count=2, elements=12_500_000, n_ops=6))
    return path


def temporaries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob(".*.tmp"))


def wait_until(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> bool:
    """Wait, in steps of waiting on the process, until ``ready()`` or the process ends."""
    steps = int(DEADLINE / 0.005)
    for _ in range(steps):
        if ready():
            return True
        try:
            proc.wait(timeout=0.005)
        except subprocess.TimeoutExpired:
            continue
        return ready()
    return False


def stop_signal_continue(proc: subprocess.Popen[bytes], folder: Path, sig: int) -> list[int]:
    """Once a temporary file exists: stop the process, note its children, send ``sig``,
    continue it. Returns the children."""
    assert wait_until(proc, lambda: bool(temporaries(folder))), "no temporary file appeared"
    proc.send_signal(signal.SIGSTOP)
    children = _children(proc.pid)
    assert temporaries(folder), "the write ended before the process was stopped"
    proc.send_signal(sig)
    proc.send_signal(signal.SIGCONT)
    return children


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"\nPPid:\t{pid}\n" in status.read_text():
                found.append(int(status.parent.name))
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT])
def test_an_interrupted_compile_leaves_the_old_file_and_says_so(
    tmp_path: Path, big_model: Path, sig: signal.Signals
) -> None:
    out = tmp_path / "out.vgf"
    out.write_bytes(b"old")
    proc = subprocess.Popen(
        [EXE, "compile", "-q", str(big_model), "-o", str(out)], stderr=subprocess.PIPE
    )
    stop_signal_continue(proc, tmp_path, sig)
    _, err = proc.communicate(timeout=DEADLINE)
    how = "Ctrl-C" if sig == signal.SIGINT else sig.name
    assert proc.returncode == -sig
    assert err.decode() == f"error: interrupted ({how}): {out} was left as it was\n"
    assert out.read_bytes() == b"old" and temporaries(tmp_path) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_an_interrupted_batch_leaves_no_worker_and_no_temporary_file(
    tmp_path: Path, big_model: Path
) -> None:
    models = [tmp_path / f"m{i}.tosa" for i in range(3)]
    for model in models:
        try:
            os.link(big_model, model)
        except OSError:  # another file system
            model.write_bytes(big_model.read_bytes())
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [EXE, "compile", "-q", *map(str, models), "-d", str(out), "-j", "2"],
        stderr=subprocess.PIPE,
    )
    workers = stop_signal_continue(proc, tmp_path, signal.SIGTERM)
    _, err = proc.communicate(timeout=DEADLINE)
    assert len(workers) == 2
    assert proc.returncode == -signal.SIGTERM
    written = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert err.decode().startswith(f"error: interrupted (SIGTERM): {len(written)} of 3 models")
    assert temporaries(tmp_path) == []
    # The parent ended its workers before it exited: none is left to finish a file later.
    assert not any(_alive(w) for w in workers)
    assert sorted(p.name for p in out.iterdir()) == written
