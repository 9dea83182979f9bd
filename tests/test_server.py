"""``vgfc server``: commands handed to a running server give what they give without one.

Every test runs the installed console scripts in real processes (the client is the console
script itself) against a server in the test's own folder (``VGFC_SERVER_DIR``, set by
conftest.py). That a command really ran in the server is read from the server's log, which has
a line per command it ran; never from timing.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR

BIN = Path(sys.executable).parent


def vgfc(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "vgfc"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **env},
        timeout=120,
    )


def log_lines(folder: Path) -> list[str]:
    log = folder / "server.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def server(no_user_server: Path) -> Iterator[Path]:
    started = vgfc("server", "start", "--idle-minutes", "5")
    assert started.returncode == 0, started.stderr
    assert "vgfc server running (pid " in started.stdout
    try:
        yield no_user_server
    finally:
        vgfc("server", "stop")


def test_a_compile_through_the_server_writes_the_same_bytes(server: Path, tmp_path: Path) -> None:
    model = tmp_path / "mixed.tosa"
    model.write_bytes((SAMPLES_DIR / "mixed.tosa").read_bytes())
    served = vgfc("compile", "mixed.tosa", "-o", "served.vgf", "--report", "r.json", cwd=tmp_path)
    assert served.returncode == 0, served.stderr
    assert "served.vgf:" in served.stdout  # the summary, on this process's stdout
    (line,) = [entry for entry in log_lines(server) if " compile " in entry]
    assert f"vgfc compile mixed.tosa -o served.vgf --report r.json (in {tmp_path}) -> exit 0" in (
        line
    )
    local = vgfc("compile", "mixed.tosa", "-o", "local.vgf", cwd=tmp_path, VGFC_NO_SERVER="1")
    assert local.returncode == 0, local.stderr
    assert (tmp_path / "served.vgf").read_bytes() == (tmp_path / "local.vgf").read_bytes()
    assert (tmp_path / "r.json").exists()
    assert len([e for e in log_lines(server) if " compile " in e]) == 1  # the local one is not


def test_errors_exit_codes_and_streams_are_the_commands(server: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.tosa"
    broken.write_bytes(b"not a model")
    run = vgfc("compile", str(broken), "-o", str(tmp_path / "b.vgf"))
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.startswith(f"error: {broken}: ")
    assert not (tmp_path / "b.vgf").exists()
    usage = vgfc("compile", "--no-such-option")
    assert usage.returncode == 2 and "No such option" in usage.stderr
    assert any(line.endswith("-> exit 1") for line in log_lines(server))
    assert any(line.endswith("-> exit 2") for line in log_lines(server))


def test_the_environment_is_the_clients(server: Path, tmp_path: Path) -> None:
    cache = tmp_path / "my-cache"
    run = vgfc(
        "compile", str(SAMPLES_DIR / "mixed.tosa"), "-o", str(tmp_path / "m.vgf"), "-q",
        VGFC_CACHE_DIR=str(cache),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert list((cache / "shaders").rglob("*"))  # the shaders were cached where this one said


def test_model_converter_goes_through_the_server_too(server: Path, tmp_path: Path) -> None:
    out = tmp_path / "m.vgf"
    run = subprocess.run(
        [str(BIN / "vgfc-model-converter"), "-i", str(SAMPLES_DIR / "simple.tosa"), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert out.exists()
    assert any("vgfc-model-converter -i" in line for line in log_lines(server))


def test_a_changed_vgfc_is_never_served(server: Path, tmp_path: Path) -> None:
    """An edited source file (here: a newer modification time) makes the server refuse and
    leave; the command runs in its own process all the same."""
    from vgfc import server as server_module

    source = Path(server_module.__file__)
    kept = source.stat()
    try:
        os.utime(source, ns=(kept.st_atime_ns, kept.st_mtime_ns + 1_000_000_000))
        run = vgfc("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(tmp_path / "s.vgf"))
        assert run.returncode == 0, run.stderr
        assert not any(" compile " in line for line in log_lines(server))
        deadline = time.monotonic() + 10
        while vgfc("server", "status").returncode == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert vgfc("server", "status").returncode == 1  # it left
    finally:
        os.utime(source, ns=(kept.st_atime_ns, kept.st_mtime_ns))


def test_an_idle_server_leaves(no_user_server: Path) -> None:
    assert vgfc("server", "start", "--idle-minutes", "0.01").returncode == 0
    deadline = time.monotonic() + 20
    while (no_user_server / "server.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (no_user_server / "server.sock").exists()
    assert vgfc("server", "status").returncode == 1


def test_a_socket_nobody_answers_on_is_ignored(no_user_server: Path, tmp_path: Path) -> None:
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(no_user_server / "server.sock"))
    dead.close()  # the file stays, nothing listens
    run = vgfc("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(tmp_path / "s.vgf"), "-q")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "s.vgf").exists()
    assert vgfc("server", "status").returncode == 1


def test_start_twice_keeps_one_server_and_stop_ends_it(server: Path) -> None:
    first = (server / "server.pid").read_text()
    again = vgfc("server", "start")
    assert again.returncode == 0 and f"pid {first})" in again.stdout
    stopped = vgfc("server", "stop")
    assert stopped.stdout.strip() == f"stopped vgfc server (pid {first})"
    assert not (server / "server.sock").exists()
    assert vgfc("server", "stop").stdout.strip() == "no vgfc server was running"
