"""``vgfc server``: commands handed to a running server give what they give without one.

Every test runs the installed console scripts in real processes (the client is the console
script itself) against a server in the test's own folder (``VGFC_SERVER_DIR``, set by
conftest.py). That a command really ran in the server is read from the server's log, which has
a line per command it ran; never from timing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def log_lines(_folder: Path) -> list[str]:
    from vgfc.server import log_path  # VGFC_SERVER_DIR is this test's folder (conftest.py)

    log = log_path()
    return log.read_text().splitlines() if log.exists() else []


def sock() -> Path:
    from vgfc.client import socket_path

    return Path(socket_path())


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


def test_shaders_compiled_by_a_warmed_server_are_the_same(server: Path, tmp_path: Path) -> None:
    # The server builds glslang's tables once (GLSL 450, 460, HLSL), and the commands' compiler
    # workers are forked with them in place: what they compile must not change.
    from vgfc.server import running_pid

    maps = Path(f"/proc/{running_pid()}/maps").read_text()
    assert "glslang" in maps
    assert not [line for line in log_lines(server) if "warm-up" in line]
    for sample in ("hlsl.tosa", "push.tosa"):
        (tmp_path / sample).write_bytes((SAMPLES_DIR / sample).read_bytes())
        served = vgfc("compile", "-q", sample, "-o", "served.vgf", cwd=tmp_path)
        assert served.returncode == 0, served.stderr
        local = vgfc("compile", "-q", sample, "-o", "local.vgf", cwd=tmp_path, VGFC_NO_SERVER="1")
        assert local.returncode == 0, local.stderr
        assert (tmp_path / "served.vgf").read_bytes() == (tmp_path / "local.vgf").read_bytes()
    assert len([e for e in log_lines(server) if " compile " in e]) == 2


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
    while sock().exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sock().exists()
    assert vgfc("server", "status").returncode == 1


def test_a_socket_nobody_answers_on_is_ignored(no_user_server: Path, tmp_path: Path) -> None:
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(sock()))
    dead.close()  # the file stays, nothing listens
    run = vgfc("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(tmp_path / "s.vgf"), "-q")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "s.vgf").exists()
    assert vgfc("server", "status").returncode == 1


def test_start_twice_keeps_one_server_and_stop_ends_it(server: Path) -> None:
    from vgfc.server import running_pid

    first = running_pid()
    assert first is not None
    again = vgfc("server", "start")
    assert again.returncode == 0 and f"pid {first})" in again.stdout
    stopped = vgfc("server", "stop")
    assert stopped.stdout.strip() == f"stopped vgfc server (pid {first})"
    assert not sock().exists()
    assert vgfc("server", "stop").stdout.strip() == "no vgfc server was running"


def test_starts_racing_leave_one_server(no_user_server: Path) -> None:
    from vgfc.server import running_pid

    starts = [
        subprocess.Popen([str(BIN / "vgfc"), "server", "start"], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    said = {p.communicate(timeout=60)[0].strip() for p in starts}
    try:
        pid = running_pid()
        assert said == {f"vgfc server running (pid {pid}) on {sock()}"}  # all name the one
        assert vgfc("server", "stop").returncode == 0
        assert running_pid() is None
    finally:
        vgfc("server", "stop")


def test_no_command_ever_runs_twice(server: Path) -> None:
    """The command's process announces itself: a fast one (`--version`) once printed twice when
    the exit code overtook the server's own reply and the client ran it again."""
    for _ in range(60):
        run = vgfc("--version")
        assert run.returncode == 0 and run.stdout.count("version") == 1, run.stdout


def test_a_folder_others_can_open_is_never_used(no_user_server: Path, tmp_path: Path) -> None:
    from vgfc.client import socket_path

    assert vgfc("server", "start").returncode == 0
    try:
        no_user_server.chmod(0o755)  # now others could have put the socket there
        run = vgfc("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(tmp_path / "s.vgf"))
        assert run.returncode == 0, run.stderr
        assert not any(" compile " in line for line in log_lines(no_user_server))  # local
    finally:
        no_user_server.chmod(0o700)
        vgfc("server", "stop")
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)
    refused = vgfc("server", "start", VGFC_SERVER_DIR=str(shared))
    assert refused.returncode == 1
    assert "is open to other users (mode 1777)" in refused.stderr
    assert (shared.stat().st_mode & 0o7777) == 0o1777  # left as it was
    link = tmp_path / "link"
    link.symlink_to(no_user_server)
    refused = vgfc("server", "start", VGFC_SERVER_DIR=str(link))
    assert refused.returncode == 1 and "is a symbolic link" in refused.stderr
    assert not Path(socket_path()).exists()


def test_bad_requests_leave_the_server_serving(server: Path, tmp_path: Path) -> None:
    for data, fds in (
        (b"[]\n", [0, 1, 2]),
        (b"[" * 200_000 + b"\n", [0, 1, 2]),
        (b"\xff\xfe not json\n", [0, 1, 2]),
        (b'{"protocol": 2}\n', []),
        (b"no newline, then nothing", [0, 1, 2]),
    ):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bad:
            bad.settimeout(5)
            bad.connect(str(sock()))
            socket.send_fds(bad, [data], fds)
            bad.shutdown(socket.SHUT_WR)
            answer = bad.makefile("rb").readline()
        assert not answer.startswith(b"ready"), data[:20]
    run = vgfc("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(tmp_path / "s.vgf"), "-q")
    assert run.returncode == 0, run.stderr
    assert any(" compile " in line for line in log_lines(server))


def test_a_large_environment_is_served(server: Path, tmp_path: Path) -> None:
    big = {f"BIG_{i}": "x" * 100_000 for i in range(6)}  # more than one send takes
    run = vgfc(
        "compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(tmp_path / "s.vgf"), "-q", **big
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert any(" compile " in line for line in log_lines(server))


def test_a_folder_that_is_gone_runs_locally(server: Path, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); "
    script += f"os.execv({str(BIN / 'vgfc')!r}, ['vgfc', '--version'])"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0 and "version" in run.stdout, run.stderr


def test_non_utf8_arguments_and_debug_tracebacks_match_a_local_run(
    server: Path, tmp_path: Path
) -> None:
    name = os.fsencode(tmp_path) + b"/caf\xe9.tosa"
    missing = [BIN.joinpath("vgfc").as_posix().encode(), b"compile", name, b"-q"]
    broken = tmp_path / "broken.tosa"
    broken.write_bytes(b"TOSA but not a flatbuffer")
    debug = [str(BIN / "vgfc"), "--debug", "compile", str(broken), "-q"]
    for command in (missing, debug):
        results = []
        for extra in ({}, {"VGFC_NO_SERVER": "1"}):
            run = subprocess.run(command, capture_output=True, env={**os.environ, **extra})
            results.append((run.returncode, run.stdout, run.stderr.split(b"\n")[-2:]))
        assert results[0] == results[1]
    assert sum(" compile " in line for line in log_lines(server)) == 2


def test_the_umask_is_the_clients(server: Path, tmp_path: Path) -> None:
    modes = []
    for extra in ({}, {"VGFC_NO_SERVER": "1"}):
        out = tmp_path / f"u{len(modes)}.vgf"
        subprocess.run(
            [str(BIN / "vgfc"), "compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(out), "-q"],
            env={**os.environ, **extra},
            preexec_fn=lambda: os.umask(0o077),
            check=True,
        )
        modes.append(out.stat().st_mode & 0o777)
    assert modes == [0o600, 0o600]


def test_a_terminated_client_ends_like_a_local_one(server: Path, tmp_path: Path) -> None:
    """SIGTERM is passed on; the command dies of it and so does the client, as a local run
    would (exit status -15 here, not an internal error)."""
    model = tmp_path / "long.tosa"
    from tosa_factory import chain

    model.write_bytes(chain(60_000))
    client = subprocess.Popen(
        [str(BIN / "vgfc"), "compile", str(model), "-o", str(tmp_path / "l.vgf"), "-q"],
        stderr=subprocess.PIPE,
    )
    _wait_for_command()
    client.terminate()
    _, err = client.communicate(timeout=60)
    assert client.returncode == -15, err
    assert b"internal error" not in err
    assert not (tmp_path / "l.vgf").exists()


def test_a_client_that_goes_away_interrupts_its_command(server: Path, tmp_path: Path) -> None:
    model = tmp_path / "long.tosa"
    from tosa_factory import chain

    model.write_bytes(chain(60_000))
    out = tmp_path / "k.vgf"
    client = subprocess.Popen([str(BIN / "vgfc"), "compile", str(model), "-o", str(out), "-q"])
    _wait_for_command()
    client.kill()
    client.wait()
    deadline = time.monotonic() + 30
    while not any(" compile " in line for line in log_lines(server)):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    (line,) = [entry for entry in log_lines(server) if " compile " in entry]
    assert line.endswith("-> exit 1")  # interrupted, as Ctrl-C does
    assert not out.exists() and not list(tmp_path.glob(".k.vgf.*"))


def test_managing_the_server_is_never_handed_to_it(server: Path) -> None:
    assert vgfc("--debug", "server", "status").returncode == 0
    assert not any("server status" in line for line in log_lines(server))


def _wait_for_command() -> None:
    """Until the server runs a command (a process of its own for it), and a little more for it
    to be set up, so that a signal sent next reaches a running compile (a fixed sleep from the
    client's start raced a compile that got faster; a chain of 60,000 ops takes 0.5 s)."""
    from vgfc.server import running_pid

    pid = running_pid()
    assert pid is not None
    children = Path(f"/proc/{pid}/task/{pid}/children")
    deadline = time.monotonic() + 30
    while not children.read_text().split():
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.005)
    time.sleep(0.1)


def _long_compile(tmp_path: Path, name: str, **popen: Any) -> tuple[subprocess.Popen[bytes], Path]:
    from tosa_factory import chain

    model = tmp_path / f"{name}.tosa"
    if not model.exists():
        model.write_bytes(chain(60_000))
    out = tmp_path / f"{name}.vgf"
    command = [str(BIN / "vgfc"), "compile", str(model), "-o", str(out), "-q"]
    return subprocess.Popen(command, stderr=subprocess.PIPE, **popen), out


def test_a_signal_the_caller_ignores_is_ignored(server: Path, tmp_path: Path) -> None:
    """nohup: SIGHUP ignored by the client is ignored by the command too."""
    client, out = _long_compile(
        tmp_path, "nohup", preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)
    )
    _wait_for_command()
    client.send_signal(signal.SIGHUP)
    _, err = client.communicate(timeout=120)
    assert client.returncode == 0, err
    assert out.exists()


def test_ctrl_z_stops_the_client_and_the_command_runs_on(server: Path, tmp_path: Path) -> None:
    client, out = _long_compile(tmp_path, "tstp")
    _wait_for_command()
    client.send_signal(signal.SIGTSTP)
    time.sleep(0.3)
    assert Path(f"/proc/{client.pid}/stat").read_text().split()[2] == "T"  # stopped
    client.send_signal(signal.SIGCONT)
    _, err = client.communicate(timeout=120)
    assert client.returncode == 0, err
    assert out.exists()


def test_a_background_clients_command_ends_with_it(server: Path, tmp_path: Path) -> None:
    """A background job ignores SIGINT; its command must still end when the client is killed
    (it cannot be interrupted the usual way, so it is terminated)."""
    client, out = _long_compile(
        tmp_path, "bg", preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)
    )
    _wait_for_command()
    client.kill()
    client.wait()
    time.sleep(3)  # longer than the compile would take
    assert not out.exists()
    assert not any(line.endswith("-> exit 0") for line in log_lines(server))


def test_the_server_restarts_while_a_command_runs(server: Path, tmp_path: Path) -> None:
    client, out = _long_compile(tmp_path, "restart")
    _wait_for_command()
    assert vgfc("server", "stop").returncode == 0
    again = vgfc("server", "start")  # the running command holds no lock of the server's
    assert again.returncode == 0, again.stderr
    _, err = client.communicate(timeout=120)
    assert client.returncode == 0, err
    assert out.exists()


def test_start_with_closed_standard_descriptors_serves(no_user_server: Path) -> None:
    try:
        started = subprocess.run(
            ["bash", "-c", f"{BIN / 'vgfc'} server start <&- >&- 2>&-"], timeout=60
        )
        assert started.returncode == 0
        run = vgfc("--version")
        assert run.returncode == 0 and "version" in run.stdout, run.stderr
        assert any("--version" in line for line in log_lines(no_user_server))
    finally:
        vgfc("server", "stop")


def test_start_does_not_keep_the_callers_descriptors(no_user_server: Path) -> None:
    try:
        run = subprocess.run(
            ["bash", "-c", f"( {BIN / 'vgfc'} server start 3>&1 ) | cat"],
            capture_output=True,
            text=True,
            timeout=30,  # a server holding the pipe would keep cat waiting
        )
        assert run.returncode == 0 and "vgfc server running" in run.stdout
    finally:
        vgfc("server", "stop")


def _handshake(request: dict[str, Any]) -> list[bytes]:
    """Send ``request`` as the client would, say go after ready; the server's lines."""
    import json

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(sock()))
        socket.send_fds(s, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
        reader = s.makefile("rb")
        lines = [reader.readline()]
        if lines[0] == b"ready\n":
            s.sendall(b"go\n")
            lines.append(reader.readline())
        return lines


def test_a_command_that_cannot_be_set_up_is_not_started(server: Path, tmp_path: Path) -> None:
    """The client may then run it itself: the server says nothing ran."""
    from vgfc import client

    request = {
        "protocol": client.PROTOCOL,
        "entry": "vgfc",
        "argv": ["vgfc", "--version"],
        "cwd": str(tmp_path / "no such folder"),
        "env": dict(os.environ),
        "umask": 0o022,
        "nice": 0,
        "limits": {},
        "streams": [],
        "ignored": [],
        **client.identity(),
    }
    assert _handshake(request) == [b"ready\n", b"not-started\n"]
    del request["umask"]
    assert _handshake(request)[0].startswith(b"refused: field 'umask'")


def test_a_slow_connection_does_not_hold_the_others(server: Path) -> None:
    import threading

    def trickle() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(sock()))
            with contextlib.suppress(OSError):
                for _ in range(20):
                    s.send(b"{")
                    time.sleep(0.3)

    slow = threading.Thread(target=trickle)
    slow.start()
    time.sleep(0.2)
    run = vgfc("--version")
    slow.join()
    assert run.returncode == 0
    assert any("--version" in line for line in log_lines(server))  # served, not run here


def test_options_and_folders_that_cannot_work_are_refused(tmp_path: Path) -> None:
    for args in (["--idle-minutes", "nan"], ["--idle-minutes", "-1"], ["--idle-minutes", "1e300"]):
        run = vgfc("server", "start", *args)
        assert run.returncode == 2 and "--idle-minutes" in run.stderr, args
    deep = tmp_path / ("d" * 120)
    run = vgfc("server", "start", VGFC_SERVER_DIR=str(deep))
    assert run.returncode == 1
    assert "more than the 107 a Unix socket takes" in run.stderr and "Traceback" not in run.stderr
    assert not deep.exists()
    afile = tmp_path / "a file"
    afile.write_text("")
    run = vgfc("server", "start", VGFC_SERVER_DIR=str(afile))
    assert run.returncode == 1 and "is not a folder" in run.stderr
