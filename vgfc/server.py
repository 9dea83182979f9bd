"""``vgfc server``: a process that keeps vgfc imported and runs commands for :mod:`vgfc.client`.

Why: vgfc's work on a small model takes 15 to 30 ms, its imports (numpy, click, vgfc) about
100 ms, and a tool that starts one compile per model (ExecuTorch runs the converter once per
delegate; a Makefile once per file) pays the imports every time. With a server started, the
``vgfc`` command is a small client (:mod:`vgfc.client`, which describes the protocol) and the
imports are paid once.

How: one process, single-threaded, listening on a Unix socket in a folder only the user can
enter, one socket per install (interpreter and vgfc package). For each connection it checks,
with short timeouts, that the peer is the same user, runs the same interpreter and vgfc package
with the same ``PYTHON*`` settings, and that no file of vgfc or of the installed packages
changed since it started (else it refuses, the client runs the command itself, and on a change
the server exits: the next ``start`` loads the new code). Then it forks, and goes straight back
to waiting. The child is the command: it takes the client's standard streams (passed as file
descriptors), folder, environment, umask, niceness, resource limits and arguments, runs the
command exactly as ``vgfc`` would, obeys the signals the client passes on (and is interrupted
when the client goes away), and sends the exit code back. Children are reaped by the kernel
(``SIGCHLD`` ignored). Every command thus starts from the same state, and one command's state
never reaches another. What a child does not take from the client: its control group and
session, and its name in ``ps`` (``vgfc server start``).

A lock file held for the server's whole life keeps one server per install; a server removes
its socket on exit only while it is still its own. Each command it ran is a line of the log
beside the socket (when, which process, the arguments, the exit code), as are its own errors.
The server ends on ``vgfc server stop``, on SIGTERM, after ``--idle-minutes`` without a
command, or when vgfc's files change. It is never started implicitly: a compiler that leaves
processes behind surprises CI systems.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from vgfc.client import (
    PROTOCOL,
    identity,
    install_id,
    peer,
    private_folder,
    same_user,
    server_dir,
    settings,
    socket_path,
)

__all__ = ["fingerprint", "running_pid", "serve", "start", "stop"]

_MAX_REQUEST = 16 << 20
"""Bytes a request line may have (arguments and environment)."""
_HANDSHAKE_TIMEOUT = 1.0
"""Seconds a connection may take to send its request and its ``go``: a stalled one holds up
the others no longer than this."""


def _file(suffix: str) -> Path:
    return Path(server_dir()) / f"server-{install_id()}.{suffix}"


def log_path() -> Path:
    return _file("log")


def fingerprint() -> tuple[object, ...]:
    """Every file of the vgfc package with its size and modification time, and the installed
    distributions of the interpreter's site-packages folders: a changed source file (an
    editable install being worked on), an upgrade of vgfc or of a package it imports makes the
    server refuse and exit."""
    package = Path(__file__).resolve().parent
    found: list[object] = []
    for folder, dirs, files in os.walk(package):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".json", ".yaml", ".comp", ".glsl", ".tosa")):
                info = os.stat(os.path.join(folder, name))
                found.append((os.path.join(folder, name), info.st_size, info.st_mtime_ns))
    for root in sorted({p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)}):
        found.extend((root, n) for n in os.listdir(root) if n.endswith(".dist-info"))
    return tuple(sorted(found, key=repr))


def running_pid() -> int | None:
    """The pid of this install's server, asked of the process behind the socket itself
    (``SO_PEERCRED``), or ``None`` when none answers."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(socket_path())
        found = peer(probe)
        return found[0] if found else None
    except OSError:
        return None
    finally:
        probe.close()


def _private_folder() -> Path:
    """The server's folder, made private to the user if it is new; an existing folder must be
    private already (it is never changed: it may hold anything)."""
    from vgfc.diagnostics import InputError

    folder = Path(server_dir())
    if not os.path.lexists(folder):
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
    why = private_folder(str(folder))
    if why is not None:
        raise InputError(
            f"the vgfc server's folder {why}: it must be a folder only you can open "
            "(set VGFC_SERVER_DIR to another)",
            file=str(folder),
        )
    return folder


def start(idle_minutes: float) -> int:
    """Start this install's server in the background; its pid once it answers. A server
    already running (or starting) is left as it is, and its pid returned."""
    from vgfc.diagnostics import InternalError

    running = running_pid()
    if running is not None:
        return running
    for fd in (0, 1, 2):  # a closed standard descriptor would be taken by the pipe or the lock
        try:
            os.fstat(fd)
        except OSError:
            os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    longest = 107  # sun_path holds 108 bytes with the terminating NUL (Linux)
    if len(os.fsencode(socket_path())) > longest:
        from vgfc.diagnostics import InputError

        raise InputError(
            f"the server's socket path would be {len(os.fsencode(socket_path()))} bytes, more "
            f"than the {longest} a Unix socket takes: set VGFC_SERVER_DIR to a shorter folder",
            file=server_dir(),
        )
    folder = _private_folder()
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the daemon; its behaviour is tested through the socket
        os.close(ready_read)
        _daemon(folder, ready_write, idle_minutes)
    os.close(ready_write)
    os.waitpid(pid, 0)
    with os.fdopen(ready_read, "rb") as ready:
        said = ready.read()
    if said not in (b"ok", b"running"):
        raise InternalError(f"the vgfc server did not start: {said.decode(errors='replace')}")
    deadline = time.monotonic() + 10.0
    while True:
        started = running_pid()
        if started is not None:
            return started
        if time.monotonic() > deadline:
            raise InternalError("the vgfc server started but does not answer")
        time.sleep(0.02)  # another start holds the lock and is still warming up


def _daemon(folder: Path, ready: int, idle_minutes: float) -> None:  # pragma: no cover
    """The server process: detach, take the lock, listen, warm up, serve. Never returns."""
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        import fcntl

        global _LOCK
        _LOCK = os.open(_file("lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(_LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.write(ready, b"running")  # another server of this install has the lock
            os._exit(0)
        _close_inherited(keep={ready, _LOCK})
        os.chdir("/")
        _daemon_stdio(log_path())
        listener, inode = _listen()
        _warm_up(folder)
        os.write(ready, b"ok")
        os.close(ready)
        serve(listener, idle_minutes * 60, inode)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.write(ready, f"failed: {type(e).__name__}: {e}".encode()[:400])
        traceback.print_exc()
        os._exit(1)
    os._exit(0)


_LOCK: int | None = None
"""The descriptor holding the server's lock; a command's process closes it first."""


def _close_inherited(keep: set[int]) -> None:
    """Close every descriptor above stderr the starting shell passed down (a pipe held open
    would keep ``( vgfc server start ) | cat`` from ending, and commands would inherit it)."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):
                os.close(fd)


def stop() -> int | None:
    """Stop this install's server; its pid, or ``None`` when none was running."""
    pid = running_pid()
    if pid is None:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and running_pid() == pid:
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


def _listen() -> tuple[socket.socket, int]:
    """Bind this install's socket (replacing one no server answers on: the lock says so)."""
    path = socket_path()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(64)
    return listener, os.stat(path).st_ino


def _warm_up(folder: Path) -> None:
    """Import what commands use and fill what they fill, once, before any fork: each command,
    a fork of the server, finds it done."""
    import rich.console
    import rich.table

    import vgfc.cli
    import vgfc.cli.model_converter
    from vgfc.cli import COMMANDS

    for where in COMMANDS.values():
        __import__(where.partition(":")[0])
    import vgfc.custom.contract  # noqa: F401 - resolving a custom op imports it on first use
    from vgfc.shader import cache
    from vgfc.spirv.grammar import core_grammar
    from vgfc.vulkan_names import formats

    core_grammar()
    formats()
    from vgfc.tosa_schema import attribute_layout, schema

    # The reader learns an attribute table's layout from its generated module on first use:
    # learnt here, no command imports one (face_detection_short_range: 11 modules, 3 ms).
    for name in schema().attribute_names.values():
        if name != "NONE":
            attribute_layout(name)
    cache._fingerprint()
    # A first compile fills what only a compile reaches (the reader's schema tables, lowering
    # tables, modules imported on first use): a small model then compiles in half the time
    # (scripts/make_warmup_model.py says what the model is: no shaders, whose compiler workers
    # belong to the commands).
    from vgfc.cli.batch import compile_to
    from vgfc.compiler import Options

    model = Path(__file__).resolve().parent / "data" / "warmup.tosa"
    vgf, report = folder / f"warmup-{os.getpid()}.vgf", folder / f"warmup-{os.getpid()}.json"
    try:
        compile_to(model, vgf, report, Options())
    finally:
        for path in (vgf, report):
            with contextlib.suppress(OSError):
                path.unlink()
    _warm_glslang()
    # The summary a compile prints: rich loads its emoji table the first time it renders markup.
    import io

    from vgfc.cli.tables import word_table

    rich.console.Console(file=io.StringIO(), width=80).print(
        word_table("warm-up: 0 bytes", ("#", "type"), [("0", "graph")], 80), "warm-up:ok"
    )
    # Everything imported and filled so far lives as long as the server: out of the collector's
    # sight, a command's collections do not walk it (nor touch, and so copy, its pages after the
    # fork). A chain of 2000 operators compiled in 54 ms in a command's process before, 40 after.
    gc.collect()
    gc.freeze()


_GLSL = """#version {}
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer B {{ float v[]; }} b;
void main() {{ b.v[gl_GlobalInvocationID.x] += 1.0; }}
"""
_HLSL = """RWStructuredBuffer<float> b : register(u0);
[numthreads(1, 1, 1)] void main(uint3 i : SV_DispatchThreadID) { b[i.x] += 1.0; }
"""
_WARM_SHADERS = (("GLSL", _GLSL.format(450)), ("GLSL", _GLSL.format(460)), ("HLSL", _HLSL))
"""Shaders of the kinds whose glslang tables the server builds: the GLSL versions Vulkan compute
shaders declare (vgfc's own kernels and ExecuTorch's say 450), and HLSL."""


def _warm_glslang() -> None:
    """Build glslang's tables of built-in functions here, once: glslang builds them on a
    process's first compile of each GLSL version and of HLSL (60 to 80 ms each), and a command's
    shader compiler workers are forked from it with the tables in place (a command's first cold
    shader took 80 ms, 6 ms now). A shader that cannot be compiled costs only the gain."""
    from vgfc.shader.glslang import CompileOptions, Language, compile_shader

    for language, source in _WARM_SHADERS:
        try:  # in this process (no worker, no deadline): the tables must end up here
            compile_shader(source, Language[language], "main", CompileOptions(timeout=0))
        except Exception as e:
            _note(f"warm-up: glslang could not compile a {language} shader: {e}")


def serve(listener: socket.socket, idle_seconds: float, inode: int) -> None:
    """Take commands until stopped, idle for ``idle_seconds``, or vgfc changes."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    stopping = False

    def on_term(_number: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        listener.close()

    signal.signal(signal.SIGTERM, on_term)
    known = fingerprint()
    me = {**identity(), "settings": settings(dict(os.environ))}
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
                try:
                    if not _take(listener, connection, known, me):
                        break  # vgfc changed: leave, the next start loads the new code
                except Exception:  # a bad request must not end the server: log it, go on
                    traceback.print_exc()
                    sys.stderr.flush()
    finally:
        with contextlib.suppress(OSError):
            if os.stat(socket_path()).st_ino == inode:  # still ours, not a newer server's
                os.unlink(socket_path())


def _receive(connection: socket.socket, deadline: float) -> tuple[bytes, list[int]]:
    """The request line and the descriptors that came with it, by ``deadline``."""
    _remaining(connection, deadline)
    data, fds, _flags, _address = socket.recv_fds(connection, 1 << 16, 3)
    if not data and not fds:
        raise _Probe
    try:
        while not data.endswith(b"\n"):
            if len(data) > _MAX_REQUEST:
                raise ValueError("request too large")
            _remaining(connection, deadline)
            more = connection.recv(1 << 16)
            if not more:
                raise ValueError("request cut short")
            data += more
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return data, fds


class _Probe(Exception):
    """A connection closed before it said anything (:func:`running_pid`)."""


def _remaining(connection: socket.socket, deadline: float) -> None:
    """Give the next read what is left of the handshake's time (one deadline for it all: a
    client that trickles bytes cannot hold the server)."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("handshake took too long")
    connection.settimeout(left)


_FIELDS: dict[str, type | tuple[type, ...]] = {
    "entry": str,
    "argv": list,
    "cwd": str,
    "env": dict,
    "umask": int,
    "nice": int,
    "limits": dict,
    "streams": list,
    "ignored": list,
}


def _malformed(request: object) -> str | None:
    """What is wrong with a request's fields, or ``None``: checked before ``ready``, so that a
    command that is accepted can be set up."""
    if not isinstance(request, dict):
        return "not a JSON object"
    for key, kind in _FIELDS.items():
        if not isinstance(request.get(key), kind):
            return f"field {key!r} missing or of the wrong type"
    if request["entry"] not in ("vgfc", "vgfc-model-converter") or not request["argv"]:
        return "unknown entry point or no arguments"
    if not all(isinstance(a, str) for a in request["argv"]):
        return "arguments that are not strings"
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in request["env"].items()):
        return "environment entries that are not strings"
    return None


def _take(
    listener: socket.socket, connection: socket.socket, known: object, me: dict[str, Any]
) -> bool:
    """Handle one connection; ``False`` when the server should stop (vgfc changed)."""
    deadline = time.monotonic() + _HANDSHAKE_TIMEOUT
    if not same_user(connection):
        return True  # another user's process: not even read
    try:
        data, fds = _receive(connection, deadline)
    except _Probe:
        return True  # a connection that only asks whether the server is there
    except (OSError, ValueError) as e:
        _note(f"dropped a connection: {e}")
        return True
    try:
        if len(fds) != 3:
            return _refuse(connection, "three descriptors expected")
        try:
            request = json.loads(data)
        except (ValueError, RecursionError):
            return _refuse(connection, "not JSON")
        wrong = _malformed(request)
        if wrong is not None:
            return _refuse(connection, wrong)
        if request.get("protocol") != PROTOCOL:
            return _refuse(connection, "another protocol")
        theirs = {**{k: request.get(k) for k in identity()}, "settings": settings(request["env"])}
        if theirs != me:
            return _refuse(connection, "another vgfc, interpreter or PYTHON* settings")
        if fingerprint() != known:
            _refuse(connection, "vgfc or its packages changed")
            return False
        if time.monotonic() > deadline:
            return _refuse(connection, "the handshake took too long")
        connection.sendall(b"ready\n")
        # The client commits with "go": it gets a window of its own, not what is left.
        _remaining(connection, time.monotonic() + _HANDSHAKE_TIMEOUT)
        if connection.makefile("rb").readline() != b"go\n":
            return True  # the client gave up, and runs the command itself
        if os.fork() == 0:  # pragma: no cover - the command; tested through the client
            listener.close()
            _child(connection, fds, request)
        return True
    except OSError:
        return True
    finally:
        for fd in fds:
            os.close(fd)


def _refuse(connection: socket.socket, why: str) -> bool:
    _note(f"refused a command: {why}")
    with contextlib.suppress(OSError):
        connection.sendall(f"refused: {why}\n".encode())
    return True


def _note(text: str) -> None:
    """A line in the server's log (its standard error)."""
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} server: {text}", file=sys.stderr, flush=True)


def _child(connection: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
    """The command, in the forked child, set up as the client's process is; the exit code goes
    back over the connection. Never returns."""
    code = 1
    try:
        import atexit

        # The server's exit handlers are not the command's; the command's run below, since this
        # process ends with os._exit (a normal exit would unwind into the server's loop).
        # atexit has no public way to do either.
        atexit._clear()
        if _LOCK is not None:
            os.close(_LOCK)  # a restarted server must not wait for this command
        # Processes the command starts (shader workers, batch workers) must not hold the
        # connection: the client learns the command ended when it closes.
        link = connection.fileno()
        ident = os.fstat(link)
        os.register_at_fork(after_in_child=lambda: _close_if_same(link, ident))
        connection.settimeout(None)
        try:
            _set_up(fds, request)
        except Exception:
            with contextlib.suppress(OSError):
                connection.sendall(b"not-started\n")  # first: the client must hear it
            with contextlib.suppress(Exception):
                traceback.print_exc()  # to the server's log, unless the streams were replaced
            return
        connection.sendall(f"started {os.getpid()}\n".encode())
        done = threading.Event()
        threading.Thread(target=_watch, args=(connection, done), daemon=True).start()
        try:
            if request["entry"] == "vgfc":
                from vgfc.cli import main as run
            else:
                from vgfc.cli.model_converter import main as run
            run()
            code = 0
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
        except BaseException:  # what an uncaught exception does to a Python process
            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            with contextlib.suppress(Exception):
                atexit._run_exitfuncs()  # the command's own exit work (shader workers)
        done.set()  # before the client can see the end: its leaving is no interruption now
        with contextlib.suppress(OSError):
            connection.sendall(f"exit {code}\n".encode())
        _log(request, code)
    finally:
        os._exit(0)


def _close_if_same(fd: int, ident: os.stat_result) -> None:
    """Close ``fd`` in a forked process if it still is the connection (in a process forked
    further down the number may have been reused by something that process needs)."""
    with contextlib.suppress(OSError):
        found = os.fstat(fd)
        if (found.st_dev, found.st_ino) == (ident.st_dev, ident.st_ino):
            os.close(fd)


def _set_up(fds: list[int], request: dict[str, Any]) -> None:
    """The client's folder, streams, environment, umask, niceness, limits, ignored signals and
    arguments. The folder first: what can fail does so before anything is replaced."""
    import resource

    os.chdir(request["cwd"])
    streams = list(request["streams"])
    while len(streams) < 3:
        streams.append(["utf-8", "surrogateescape"])
    import codecs

    for encoding, errors in streams[:3]:
        codecs.lookup(encoding)
        codecs.lookup_error(errors)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for number in request["ignored"]:
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(int(number), signal.SIG_IGN)  # nohup, a background job: as here
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.umask(int(request["umask"]))
    with contextlib.suppress(OSError, KeyError, TypeError, ValueError):
        os.setpriority(os.PRIO_PROCESS, 0, int(request["nice"]))
    for name, (soft, hard) in dict(request.get("limits", {})).items():
        with contextlib.suppress(AttributeError, OSError, ValueError):
            resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))
    wrapped = []
    for fd, (encoding, errors) in enumerate(streams[:3]):
        mode = "r" if fd == 0 else "w"
        buffering = 1 if fd == 2 or os.isatty(fd) else -1
        wrapped.append(
            open(  # noqa: SIM115 - the process's own streams, open until it ends
                fd, mode, buffering, encoding=encoding, errors=errors, closefd=False
            )
        )
    sys.stdin, sys.stdout, sys.stderr = wrapped
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])


def _watch(connection: socket.socket, done: threading.Event) -> None:
    """Obey the client: ``signal N`` lines are signals for this process; the client going away
    before the command ends interrupts it (as Ctrl-C does: its partial files are removed)."""
    reader = connection.makefile("rb")
    while True:
        try:
            line = reader.readline()
        except OSError:
            line = b""
        if not line:
            if not done.is_set():
                os.kill(os.getpid(), _interrupt())
            return
        if line.startswith(b"signal "):
            with contextlib.suppress(ValueError, OSError):
                os.kill(os.getpid(), int(line[7:]))


def _interrupt() -> int:
    """The signal that ends a command whose client went away: SIGINT (partial files are
    removed) unless the command ignores it (a background job's), then SIGTERM, then SIGKILL."""
    for number in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(number) is not signal.SIG_IGN:
            return number
    return signal.SIGKILL


def _log(request: dict[str, Any], code: int) -> None:
    """One line in the server's log per command: when, which process, what, and how it ended."""
    argv = " ".join([os.path.basename(request["argv"][0]), *request["argv"][1:]])
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    line = f"{stamp} pid {os.getpid()}: {argv} (in {request['cwd']}) -> exit {code}\n"
    with (
        contextlib.suppress(OSError),
        open(log_path(), "a", encoding="utf-8", errors="backslashreplace") as log,
    ):
        log.write(line)
