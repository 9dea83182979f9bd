"""The ``vgfc`` and ``vgfc-model-converter`` entry points: hand the command to a running
``vgfc server`` when there is one, else run it here.

A compile of a small model does 15 to 30 ms of work, but a fresh Python process first spends
about 100 ms importing numpy, click and vgfc itself. ``vgfc server start`` keeps a process with
all of that imported; this module, which imports only the standard library's socket, signal
and json modules, connects to it, passes its standard input, output and error (the file
descriptors themselves, ``SCM_RIGHTS``), its arguments, folder, environment, umask, niceness and
resource limits, and waits for the exit code. The server forks a child per command, so every
command starts from the same imported state and writes straight to this process's terminal or
pipes (colours, widths and ``isatty`` see what they would see here).

Trust: the socket's folder must be a real directory owned by this user and closed to everyone
else, and the process behind the socket must run as this user (``SO_PEERCRED``); otherwise the
command runs here. Each install (interpreter and vgfc package) has a socket of its own.

Protocol, one line each: the request (JSON, with the three descriptors); the server answers
``ready`` (or refuses: the command then runs here); the client says ``go`` and is committed:
from then on the command runs in the server or not at all, never twice. The command's process
says ``started <pid>`` (or ``not-started`` when it could not be set up: nothing ran, and the
command runs here); signals the client receives go to it as ``signal N`` lines (a client that
goes away interrupts it); it ends with ``exit N``.

Nothing changes without a server: no socket, ``VGFC_NO_SERVER=1``, a server that refuses (another
vgfc, changed files, different ``PYTHON*`` settings) or does not answer in time, and the command
runs in this process as it always has. ``vgfc server ...`` always runs here.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import sys

from vgfc import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["main", "model_converter", "server_dir", "socket_path"]

PROTOCOL = 2
"""Version of the lines below; the server refuses another."""
ANSWER_TIMEOUT = 2.0
"""Seconds to wait for the server to accept the command; past them the command runs here."""
START_TIMEOUT = 30.0
"""Seconds to wait, once committed, for the command's process to say it started."""
SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
"""Signals passed on to the command while it runs (unless this process ignores them: then the
command ignores them too). Ctrl-Z stops this process only: the command runs on, and what it
prints appears as it goes (stopping a process in another session safely would need the server
to watch every client; see the README)."""
_SETTINGS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "LD_PRELOAD")
"""Variables read when modules are imported, beside every ``PYTHON*`` one: a server imported
them with its own values, so a client whose values differ runs its command itself."""


def server_dir() -> str:
    """The folder of the server's socket: ``$VGFC_SERVER_DIR``, else ``vgfc`` in the user's
    runtime folder (``$XDG_RUNTIME_DIR``), else ``$TMPDIR/vgfc-<uid>`` (``$TMPDIR``: ``/tmp``
    when unset); private to the user.
    (Strings, not pathlib: this module is imported by every command, and pathlib costs 5 ms.)"""
    explicit = os.environ.get("VGFC_SERVER_DIR")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "vgfc")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"vgfc-{os.getuid()}")


def identity() -> dict[str, str]:
    """What a server must share with this process to run its commands: the interpreter and the
    vgfc package it imports (the server also checks that no file changed since it started)."""
    import vgfc

    return {"python": sys.executable, "vgfc": os.path.dirname(os.path.realpath(vgfc.__file__))}


def install_id() -> str:
    """A short name for this install: each has a socket of its own (the server still checks the
    whole identity). CRC-32, not hashlib: hashlib costs 4 ms to import."""
    import zlib

    text = "\n".join(identity().values())
    return f"{zlib.crc32(text.encode(errors='surrogateescape')):08x}"


def socket_path() -> str:
    return os.path.join(server_dir(), f"server-{install_id()}.sock")


def settings(environment: dict[str, str]) -> dict[str, str]:
    """The environment variables that decide how modules are loaded (:data:`_SETTINGS`)."""
    return {k: v for k, v in environment.items() if k.startswith("PYTHON") or k in _SETTINGS}


def private_folder(path: str) -> str | None:
    """Why ``path`` is not a folder only this user can use, or ``None`` when it is."""
    try:
        info = os.lstat(path)
    except OSError as e:
        return e.strerror or "cannot be read"
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    if info.st_uid != os.getuid():
        return f"belongs to user {info.st_uid}"
    if info.st_mode & 0o077:
        return f"is open to other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def peer(connection: socket.socket) -> tuple[int, int] | None:
    """The pid and user id of the process at the other end of a Unix socket (Linux's
    ``SO_PEERCRED``), else ``None``."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    import struct

    raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", raw)
    return int(pid), int(uid)


def same_user(connection: socket.socket) -> bool:
    """Whether the other end runs as this user (true where the system cannot tell: the socket's
    folder is private to the user there)."""
    found = peer(connection)
    return found is None or found[1] == os.getuid()


class _Unavailable(Exception):
    """No server could take the command: it runs in this process instead."""


def main() -> None:
    """``vgfc``."""
    _run("vgfc")


def model_converter() -> None:
    """``vgfc-model-converter``."""
    _run("vgfc-model-converter")


def _run(entry: str) -> None:
    if _wanted(entry):
        try:  # noqa: SIM105 - a try costs less than importing contextlib here
            sys.exit(_remote(entry))
        except _Unavailable:
            pass
    _local(entry)


def _wanted(entry: str) -> bool:
    if os.environ.get("VGFC_NO_SERVER", "") not in ("", "0"):
        return False
    if entry == "vgfc":
        command = next((a for a in sys.argv[1:] if not a.startswith("-")), None)
        if command == "server":
            return False  # managing the server is never handed to it
    if not hasattr(socket, "AF_UNIX") or not hasattr(socket, "send_fds"):
        return False
    return os.path.exists(socket_path())


def _local(entry: str) -> None:
    import gc

    # A command is one short run that keeps most of what it makes until it ends, and the
    # collector's default (a pass per 700 new objects) walks that again and again: importing
    # vgfc took 7 ms longer, and reading and lowering 100,000 operators 12% longer. Cycles are
    # still collected, in fewer and larger passes.
    gc.set_threshold(100_000, 50, 100)
    if entry == "vgfc":
        from vgfc.cli import main as run
    else:
        from vgfc.cli.model_converter import main as run
    run()


def _request(entry: str) -> bytes:
    try:
        cwd = os.getcwd()
    except OSError:
        raise _Unavailable from None  # a folder that is gone: as the command would see it here
    mask = os.umask(0o022)
    os.umask(mask)
    import resource

    limits = {
        name: resource.getrlimit(getattr(resource, name))
        for name in ("RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_NOFILE", "RLIMIT_CORE")
        if hasattr(resource, name)
    }
    request = {
        "protocol": PROTOCOL,
        "entry": entry,
        "argv": sys.argv,
        "cwd": cwd,
        "env": dict(os.environ),
        "umask": mask,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "limits": limits,
        "streams": [
            [s.encoding, s.errors] if s is not None else ["utf-8", "surrogateescape"]
            for s in (sys.stdin, sys.stdout, sys.stderr)
        ],
        "ignored": [
            number
            for name in SIGNALS
            if (number := getattr(signal, name, None)) is not None
            and signal.getsignal(number) is signal.SIG_IGN
        ],
        **identity(),
    }
    # ASCII JSON: argument or variable bytes that are not UTF-8 travel as escaped surrogates.
    return json.dumps(request).encode() + b"\n"


def _remote(entry: str) -> int:
    """Run the command in the server; its exit code. :class:`_Unavailable` before it is handed
    over; once it is, the command runs there or not at all."""
    if private_folder(server_dir()) is not None:
        raise _Unavailable  # someone else's folder: nothing is sent there
    data = _request(entry)
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(ANSWER_TIMEOUT)
        try:
            connection.connect(socket_path())
            if not same_user(connection):
                raise _Unavailable  # a socket of another user's process
            sent = socket.send_fds(connection, [data], [0, 1, 2])
            connection.sendall(data[sent:])
            reader = connection.makefile("rb")
            if reader.readline() != b"ready\n":
                raise _Unavailable  # refused: another vgfc, changed files, other settings
            connection.sendall(b"go\n")
        except OSError:
            raise _Unavailable from None
        return _follow(connection, reader)
    finally:
        connection.close()


def _follow(connection: socket.socket, reader: object) -> int:
    """Committed: wait for the command, pass signals on, and return its exit code. Only a
    ``not-started`` answer (the command's process could not be set up: nothing ran) lets the
    command run here after all."""
    readline = reader.readline  # type: ignore[attr-defined]
    forwarded: list[int] = []
    try:
        connection.settimeout(START_TIMEOUT)
        first = readline()
    except TimeoutError:
        first = b"timeout"
    except OSError:
        first = b""
    if first in (b"not-started\n", b""):
        # Nothing ran: the command's process says "started" before anything else, so a
        # connection that ends without it (the server gave up on the handshake) is safe here.
        raise _Unavailable
    if not first.startswith(b"started "):
        print(
            "vgfc: internal error: the vgfc server took the command but did not start it; "
            "run `vgfc server stop`, then run the command again",
            file=sys.stderr,
        )
        return 3
    connection.settimeout(None)  # the command may take as long as it takes

    def tell(number: int) -> None:
        try:  # noqa: SIM105 - a try costs less than importing contextlib here
            connection.sendall(f"signal {number}\n".encode())
        except OSError:
            pass  # the command has ended already

    def forward(number: int, _frame: object) -> None:
        forwarded.append(number)
        tell(number)

    kept: dict[int, Any] = {}
    for name in SIGNALS:
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            kept[number] = signal.signal(number, forward)
    try:
        try:
            last = readline()
        except OSError:
            last = b""
    finally:
        for number, previous in kept.items():
            signal.signal(number, previous)
    if last.startswith(b"exit "):
        return int(last[5:])
    if forwarded:
        # The command died of the signal passed on: end the same way, as a local run would.
        signal.signal(forwarded[-1], signal.SIG_DFL)
        os.kill(os.getpid(), forwarded[-1])
    print(
        "vgfc: internal error: the command's process in the vgfc server ended without an exit "
        "code; rerun it with VGFC_NO_SERVER=1 and --debug, and report it",
        file=sys.stderr,
    )
    return 3
