"""The worker's side of :mod:`vgfc.processes`: what a forked worker runs until its parent closes
its end: the loop that answers requests under limits, and the tie to its parent's life.

Limits inside the worker (``setrlimit``, set again before each request):

- ``RLIMIT_AS``: the address space it has once started (glslang loaded) plus the request's
  memory limit (Linux, where ``/proc/self/statm`` tells the start); glslang's ``new`` then
  throws ``bad_alloc`` and the process aborts, which the parent reports as out of memory.
- ``ITIMER_PROF``: the call's limit of CPU time, counted from when the request arrives; the
  kernel sends SIGPROF when it is used up, which ends the process (its default action, left in
  place: a handler could not run while glslang's ctypes call holds the interpreter), and the
  parent reports the limit passed. Nothing before the request counts: the worker's start and its
  initializer (glslang's first-use set-up) are done before it says it is ready.
- ``RLIMIT_CPU``: the limit plus a second of CPU time (SIGXCPU), a second line should the timer
  be lost; it also ends a worker whose parent died (SIGKILL) in the middle of a bomb.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import math
import os
import pickle
import signal
import sys

from vgfc.diagnostics import InternalError
from vgfc.processes_framing import LONGEST_WAIT, receive, send

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from typing import Any

__all__ = ["CPU_TIME_SIGNALS", "MemoryExceeded", "die_with", "serve"]

CPU_TIME_SIGNALS = frozenset(
    getattr(signal, name) for name in ("SIGPROF", "SIGXCPU") if hasattr(signal, name)
)
"""The signals that end a worker whose call used up its CPU time."""

_READY = b"ready"
_PR_SET_PDEATHSIG = 1


def die_with(parent: int, how: int) -> None:
    """Have the kernel send this (forked) process ``how`` when its parent dies (Linux); if the
    parent is already gone, end now.

    The kernel sends it when the *thread* that forked the worker ends, so only a worker whose
    thread lives as long as it has work (a batch worker, fed by a thread of its own) asks for
    it; a shader compiler worker, forked by whichever thread needed it first and reused by
    others, ends when it sees its socket close instead, or at its CPU-time limit."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(how), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


class MemoryExceeded(Exception):
    """The call ran out of memory in the worker (the caller raises its labels' error)."""

    def __init__(self, memory: int) -> None:
        super().__init__(memory)
        self.memory = memory


def serve(
    sock: socket.socket,
    log_fd: int,
    initializer: Callable[[], object] | None,
    graceful: bool,
) -> None:
    """Answer requests on ``sock`` until the parent closes its end (or dies): run each call
    under its limits and send back its result or exception. ``log_fd`` becomes stderr."""
    import resource

    # A graceful worker (one that writes files) unwinds on SIGTERM, SIGHUP and SIGQUIT as a
    # command does, removing its temporary files (vgfc.files.interrupts.interrupt_on_signals,
    # which also keeps a signal from landing between creating a temporary file and recording
    # it); others just end. Ctrl-C is the parent's to handle.
    if graceful:
        from vgfc.files.interrupts import interrupt_on_signals

        interrupt_on_signals()
    else:
        for name in ("SIGTERM", "SIGHUP", "SIGQUIT"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for number in CPU_TIME_SIGNALS:
        signal.signal(number, signal.SIG_DFL)  # end the process (see the module's docstring)
    faulthandler.disable()  # a crash here is reported by the parent, not dumped on its stderr
    # Hold none of the caller's standard streams (a pipe would not see its end while the worker
    # lives); C++ runtime messages (bad_alloc) go to the parent, not to the terminal.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(log_fd, 2)
    os.close(null)
    os.close(log_fd)
    _set_limit(resource.RLIMIT_CORE, 0)  # SIGXCPU and SIGABRT leave no core files
    if initializer is not None:
        with contextlib.suppress(Exception):
            initializer()
    start = _address_space()  # the cap counts what compiling adds, not the loaded libraries
    send(sock, _READY)
    while True:
        try:
            request = receive(sock, None)
        except EOFError:
            return
        function, args, folder, timeout, memory = pickle.loads(request)
        with contextlib.suppress(OSError):
            if folder is not None and folder != os.getcwd():
                os.chdir(folder)
        if start is not None:
            _set_limit(resource.RLIMIT_AS, start + memory if memory else None)
        used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
        _set_limit(resource.RLIMIT_CPU, math.ceil(used + min(timeout, LONGEST_WAIT)) + 1)
        timed = hasattr(signal, "setitimer") and 0 < timeout <= LONGEST_WAIT
        try:
            if timed:
                signal.setitimer(signal.ITIMER_PROF, timeout)
            reply: tuple[str, Any] = ("ok", function(*args))
        except MemoryError:
            reply = ("raise", MemoryExceeded(memory))
        except Exception as e:
            reply = ("raise", e)
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_PROF, 0)
        try:
            data = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception as e:
            what = type(reply[1]).__name__
            data = pickle.dumps(("raise", InternalError(f"worker: cannot return {what}: {e}")))
        send(sock, data)


def _set_limit(which: int, soft: int | None) -> None:
    """Set a soft limit (``None``: none), never above the hard limit."""
    import resource

    hard = resource.getrlimit(which)[1]
    if soft is None or (hard != resource.RLIM_INFINITY and soft > hard):
        soft = hard
    resource.setrlimit(which, (soft, hard))


def _address_space() -> int | None:
    """This process's address space in bytes, where the system tells (Linux)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
