"""The ``vgfc`` and ``vgfc-model-converter`` entry points: hand the command to a running
``vgfc server`` when there is one, else run it here.

A compile of a small model does 15 to 30 ms of work, but a fresh Python process first spends
about 100 ms importing numpy, click and vgfc itself. ``vgfc server start`` keeps a process with
all of that imported; this module, which imports nothing but the standard library's socket and
signal modules, connects to it, passes its standard input, output and error (the file
descriptors themselves, ``SCM_RIGHTS``), its arguments, folder and environment, and waits for
the exit code. The server forks a child per command, so every command starts from the same
imported state and writes straight to this process's terminal or pipes (colours, widths and
``isatty`` see what they would see here).

Nothing changes without a server: no socket, ``VGFC_NO_SERVER=1``, a server of another vgfc
(another install, changed source files) or one that does not answer in time, and the command
runs in this process as it always has. ``vgfc server ...`` itself always runs here.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["main", "model_converter", "server_dir", "socket_path"]

PROTOCOL = 1
"""Version of the request and reply lines below; the server refuses another."""
CONNECT_TIMEOUT = 2.0
"""Seconds to wait for the server to take the connection and accept the command; past them
the command runs in this process."""


def server_dir() -> str:
    """The folder of the server's socket: ``$VGFC_SERVER_DIR``, else ``vgfc`` in the user's
    runtime folder (``$XDG_RUNTIME_DIR``), else ``/tmp/vgfc-<uid>``; private to the user.
    (Strings, not pathlib: this module is imported by every command, and pathlib costs 5 ms.)"""
    explicit = os.environ.get("VGFC_SERVER_DIR")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "vgfc")
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"vgfc-{uid}")


def socket_path() -> str:
    return os.path.join(server_dir(), "server.sock")


def identity() -> dict[str, str]:
    """What a server must share with this process to run its commands: the interpreter and
    the vgfc package it imports (the server also checks that no source file changed)."""
    import vgfc

    return {"python": sys.executable, "vgfc": os.path.dirname(os.path.realpath(vgfc.__file__))}


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
        with contextlib.suppress(_Unavailable):
            sys.exit(_remote(entry))
    _local(entry)


def _wanted(entry: str) -> bool:
    if os.environ.get("VGFC_NO_SERVER", "") not in ("", "0"):
        return False
    if entry == "vgfc" and len(sys.argv) > 1 and sys.argv[1] == "server":
        return False  # managing the server is never handed to it
    if not hasattr(socket, "AF_UNIX") or not hasattr(socket, "send_fds"):
        return False
    return os.path.exists(socket_path())


def _local(entry: str) -> None:
    if entry == "vgfc":
        from vgfc.cli import main as run
    else:
        from vgfc.cli.model_converter import main as run
    run()


def _remote(entry: str) -> int:
    """Run the command in the server; its exit code. :class:`_Unavailable` before it starts."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(CONNECT_TIMEOUT)
        request = {
            "protocol": PROTOCOL,
            "entry": entry,
            "argv": sys.argv,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            **identity(),
        }
        data = json.dumps(request).encode() + b"\n"
        try:
            connection.connect(socket_path())
            socket.send_fds(connection, [data], [0, 1, 2])
            reader = connection.makefile("rb")
            answer = reader.readline()
            if answer != b"ready\n":
                raise _Unavailable  # refused: another vgfc, changed sources, another protocol
            # Committed from here: the server starts the command only once it reads "go", so a
            # client that gave up before (and runs the command itself) never runs it twice.
            connection.settimeout(None)  # the command may take as long as it takes
            connection.sendall(b"go\n")
            first = reader.readline()
        except OSError:
            raise _Unavailable from None
        if not first.startswith(b"pid "):
            raise _Unavailable
        pid = int(first[4:])
        forward = _forward_signals(pid)
        try:
            last = reader.readline()
        finally:
            forward()
        if last.startswith(b"exit "):
            return int(last[5:])
        print(
            "vgfc: internal error: the vgfc server's process ended without an exit code "
            "(a crash); rerun with VGFC_NO_SERVER=1 and --debug, and report it",
            file=sys.stderr,
        )
        return 3
    finally:
        connection.close()


def _forward_signals(pid: int) -> Callable[[], None]:
    """Send Ctrl-C (and a polite SIGTERM or SIGHUP) to the command's process while it runs;
    returns the function that puts the previous handlers back."""
    kept: dict[int, Any] = {}

    def handler(number: int, _frame: object) -> None:
        with contextlib.suppress(OSError):
            os.kill(pid, number)

    for number in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if number is not None:
            kept[number] = signal.signal(number, handler)

    def restore() -> None:
        for number, previous in kept.items():
            signal.signal(number, previous)

    return restore
