"""``vgfc server``: a process that keeps vgfc imported and runs commands for :mod:`vgfc.client`.

Why: vgfc's work on a small model takes 15 to 30 ms, its imports (numpy, click, vgfc) about
100 ms, and a tool that starts one compile per model (ExecuTorch runs the converter once per
delegate; a Makefile once per file) pays the imports every time. With a server started, the
``vgfc`` command is a small client (:mod:`vgfc.client`) and the imports are paid once.

How: one process, single-threaded, listening on a Unix socket in a folder only the user can
enter. For each connection it checks the peer is the same user and runs the same interpreter
and vgfc package, and that no source file of vgfc changed since it started (else it refuses,
the client runs the command itself, and the server exits: the next ``start`` loads the new
code). Then it forks. The child takes the client's standard input, output and error (passed as
file descriptors), folder, environment and arguments, runs the command exactly as ``vgfc``
would, and sends the exit code back; the parent goes straight back to waiting. Children are
reaped by the kernel (``SIGCHLD`` ignored). Every command thus starts from the same state, and
one command's state never reaches another.

Each command it ran is a line of ``server.log`` beside the socket (when, which process, the
arguments, the exit code), as are the server's own errors.

The server ends on ``vgfc server stop``, on SIGTERM, or after ``--idle-minutes`` without a
command. It is never started implicitly: a compiler that leaves processes behind surprises CI
systems.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
import time
from pathlib import Path
from typing import Any

from vgfc.client import PROTOCOL, identity
from vgfc.client import server_dir as _server_dir
from vgfc.client import socket_path as _socket_path

__all__ = ["fingerprint", "running_pid", "serve", "start", "stop"]


def server_dir() -> Path:
    return Path(_server_dir())


def socket_path() -> Path:
    return Path(_socket_path())


_PID_FILE = "server.pid"
_LOG_FILE = "server.log"
_MAX_REQUEST = 4 << 20
"""Bytes a request line may have (arguments and environment)."""


def fingerprint() -> tuple[tuple[str, int, int], ...]:
    """Every file of the vgfc package with its size and modification time: a changed source
    file (an editable install being worked on, an upgrade) makes the server refuse and exit."""
    package = Path(__file__).resolve().parent
    found = []
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".json", ".yaml", ".comp", ".glsl")):
                info = os.stat(os.path.join(folder, name))
                found.append((os.path.join(folder, name), info.st_size, info.st_mtime_ns))
    return tuple(sorted(found))


def running_pid() -> int | None:
    """The pid of the server answering on the socket, or ``None``."""
    try:
        pid = int((server_dir() / _PID_FILE).read_text())
    except (OSError, ValueError):
        return None
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(str(socket_path()))
    except OSError:
        return None
    finally:
        probe.close()
    return pid


def start(idle_minutes: float) -> int:
    """Start a server in the background; its pid once it answers. A server already running
    is left as it is (its pid is returned)."""
    running = running_pid()
    if running is not None:
        return running
    folder = server_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the daemon; its behaviour is tested through the socket
        os.close(ready_read)
        try:
            os.setsid()
            if os.fork():
                os._exit(0)
            _daemon_stdio(folder / _LOG_FILE)
            listener = _listen()
            _warm_up()
            (folder / _PID_FILE).write_text(str(os.getpid()))
            os.write(ready_write, b"ok")
            os.close(ready_write)
            serve(listener, idle_minutes * 60)
        except BaseException as e:
            with contextlib.suppress(OSError):
                os.write(ready_write, f"failed: {type(e).__name__}: {e}".encode()[:400])
            os._exit(1)
        os._exit(0)
    os.close(ready_write)
    os.waitpid(pid, 0)
    with os.fdopen(ready_read, "rb") as ready:
        said = ready.read()
    if said != b"ok":
        from vgfc.diagnostics import InternalError

        raise InternalError(f"the vgfc server did not start: {said.decode(errors='replace')}")
    started = running_pid()
    if started is None:
        from vgfc.diagnostics import InternalError

        raise InternalError("the vgfc server started but does not answer")
    return started


def stop() -> int | None:
    """Stop the running server; its pid, or ``None`` when none was running."""
    pid = running_pid()
    if pid is None:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and socket_path().exists():
        time.sleep(0.02)
    return pid


def _daemon_stdio(log: Path) -> None:
    null = os.open(os.devnull, os.O_RDWR)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(null)
    os.close(out)


def _listen() -> socket.socket:
    path = socket_path()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a socket no server answers on (running_pid said so)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    listener.listen(64)
    return listener


def _warm_up() -> None:
    """Import what commands use and read the tables they read, once, before any fork."""
    import vgfc.cli
    import vgfc.cli.model_converter
    from vgfc.cli import COMMANDS

    for where in COMMANDS.values():
        __import__(where.partition(":")[0])
    import vgfc.compiler
    import vgfc.lower.graph
    import vgfc.lower.shader
    import vgfc.report
    import vgfc.vgf.encode
    import vgfc.vgf.layout  # noqa: F401
    from vgfc.shader import cache
    from vgfc.spirv.grammar import core_grammar
    from vgfc.vulkan_names import formats

    core_grammar()
    formats()
    cache._fingerprint()
    import rich.console
    import rich.table  # noqa: F401

    # A first compile fills what only a compile reaches (the reader's schema tables, lowering
    # tables, modules imported on first use): a fork of the server then finds them filled, and
    # a small model compiles in half the time (scripts/make_warmup_model.py says what it is).
    from vgfc.cli.batch import compile_to
    from vgfc.compiler import Options

    folder = server_dir()
    model = Path(__file__).resolve().parent / "data" / "warmup.tosa"
    try:
        compile_to(model, folder / "warmup.vgf", folder / "warmup.report.json", Options())
    finally:
        for name in ("warmup.vgf", "warmup.report.json"):
            with contextlib.suppress(OSError):
                (folder / name).unlink()


def serve(listener: socket.socket, idle_seconds: float) -> None:
    """Take commands until stopped, idle for ``idle_seconds``, or the sources change."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    stopping = False

    def on_term(_number: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        listener.close()

    signal.signal(signal.SIGTERM, on_term)
    known = fingerprint()
    me = identity()
    listener.settimeout(idle_seconds if idle_seconds > 0 else None)
    try:
        while not stopping:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                break  # idle
            except OSError:
                if stopping:
                    break
                raise
            with connection:
                if not _take(listener, connection, known, me):
                    break  # vgfc changed: leave, the next start loads the new code
    finally:
        with contextlib.suppress(OSError):
            socket_path().unlink()
        with contextlib.suppress(OSError):
            (server_dir() / _PID_FILE).unlink()


def _take(
    listener: socket.socket, connection: socket.socket, known: object, me: dict[str, str]
) -> bool:
    """Handle one connection; ``False`` when the server should stop (vgfc changed)."""
    connection.settimeout(5.0)
    try:
        data, fds, _flags, _address = socket.recv_fds(connection, _MAX_REQUEST, 3)
        while not data.endswith(b"\n") and len(data) < _MAX_REQUEST:
            more = connection.recv(_MAX_REQUEST - len(data))
            if not more:
                break
            data += more
    except OSError:
        return True
    try:
        if not _same_user(connection) or len(fds) != 3:
            connection.sendall(b"refused: not this user's\n")
            return True
        request: dict[str, Any] = json.loads(data)
        if request.get("protocol") != PROTOCOL or any(request.get(k) != v for k, v in me.items()):
            connection.sendall(b"refused: another vgfc\n")
            return True
        if fingerprint() != known:
            connection.sendall(b"refused: vgfc changed\n")
            return False
        connection.sendall(b"ready\n")
        if connection.makefile("rb").readline() != b"go\n":
            return True  # the client gave up and runs the command itself
        child = os.fork()
        if child == 0:  # pragma: no cover - runs the command; tested through the client
            listener.close()
            _child(connection, fds, request)
        connection.sendall(f"pid {child}\n".encode())
        return True
    except (OSError, ValueError):
        return True
    finally:
        for fd in fds:
            os.close(fd)


def _same_user(connection: socket.socket) -> bool:
    if not hasattr(socket, "SO_PEERCRED"):
        return True  # the socket's folder is private to the user where this cannot be asked
    creds = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return bool(uid == os.getuid())


def _child(connection: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
    """The command, in the forked child: the client's stdio, folder, environment and arguments;
    the exit code goes back over the connection. Never returns."""
    code = 3
    try:
        import atexit

        # The server's own exit handlers are not the command's; the command's run below, since
        # this process ends with os._exit (a normal exit would unwind into the server's loop).
        # atexit has no public way to do either.
        atexit._clear()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            os.close(fd)
        sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        sys.stdout = open(  # noqa: SIM115
            1,
            "w",
            encoding="utf-8",
            errors="backslashreplace",
            closefd=False,
            buffering=1 if os.isatty(1) else -1,
        )
        sys.stderr = open(  # noqa: SIM115
            2,
            "w",
            encoding="utf-8",
            errors="backslashreplace",
            closefd=False,
            buffering=1,
        )
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        try:
            if request["entry"] == "vgfc":
                from vgfc.cli import main as run
            else:
                from vgfc.cli.model_converter import main as run
            run()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
        except KeyboardInterrupt:
            code = 130
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            with contextlib.suppress(Exception):
                atexit._run_exitfuncs()  # the command's own exit work (shader workers)
        _log(request, code)
        connection.sendall(f"exit {code}\n".encode())
    finally:
        os._exit(0)


def _log(request: dict[str, Any], code: int) -> None:
    """One line in the server's log per command: when, which process, what, and how it ended."""
    argv = " ".join([Path(request["argv"][0]).name, *request["argv"][1:]])
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    line = f"{stamp} pid {os.getpid()}: {argv} (in {request['cwd']}) -> exit {code}\n"
    with contextlib.suppress(OSError), open(server_dir() / _LOG_FILE, "a") as log:
        log.write(line)
