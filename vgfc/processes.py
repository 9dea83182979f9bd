"""Worker processes: the one way vgfc runs work in another process.

Two kinds of work need one. glslang runs through ctypes, and a ctypes call cannot be interrupted:
a preprocessor bomb (a macro that doubles at each of 28 levels) keeps it busy for minutes, an
expression bomb takes gigabytes; so :func:`vgfc.shader.glslang.compile_shader` hands each
shader to a :class:`Worker` under a limit of CPU time and a memory cap. And batch mode
(``vgfc compile -j N``, :mod:`vgfc.batch`) compiles N models at once, one per worker. A
worker is one long-lived process, forked on first use (5 to 10 ms) and reused for every call,
so a call costs a round trip over a socket pair (0.05 to 0.2 ms, most of it the two context
switches), not a process start. When a limit is passed the worker is killed and the next call
forks a fresh one.

The limit is the CPU time the call itself uses in the worker, counted from when the worker
received it (so neither its start, glslang's first-use set-up in its initializer, nor the time
it waits for a CPU on a loaded machine counts): 16 compiles at once on 2 busy cores stretch a
2 ms compile to seconds of wall time, and a wall-clock deadline failed correct shaders. A call
that uses no CPU and never ends (blocked) meets a wall-clock backstop far above the limit
(:func:`backstop`).

Every worker this process starts is in one registry: they end when this process exits (one
``atexit`` hook), a worker ends the workers it started itself before it exits, and a forked
worker drops the registry it inherited (those are its parent's). A worker also ends when its
parent dies: it sees its socket close, and a batch worker is sent SIGTERM by the kernel
(``PR_SET_PDEATHSIG``, Linux), so no worker outlives the command that started it.

This module is the parent's side: the workers, their registry and how their failures read.
What the forked worker runs, under its limits (``setrlimit``), is :mod:`vgfc.processes_worker`;
the messages between the two are framed by :mod:`vgfc.processes_framing`.

The worker is forked, not spawned, so it starts in a few milliseconds with everything imported.
Forking a process that runs other threads is safe enough here: the worker runs only its loop
(:mod:`vgfc.processes_worker`) and glslang, and glslang's lock is held across every fork (see
:mod:`vgfc.shader.glslang`); Python 3.12+ still warns about it (a ``DeprecationWarning``).
Where ``os.fork`` does not exist (Windows) the work runs in the calling process, unbounded.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import pickle
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from vgfc.diagnostics import InternalError, VgfcError
from vgfc.processes_framing import receive, send
from vgfc.processes_worker import CPU_TIME_SIGNALS, MemoryExceeded, die_with, serve
from vgfc.record import record

__all__ = ["Labels", "Worker", "backstop", "end_all", "end_together"]

_START_TIMEOUT = 300.0
"""Seconds a fresh worker may take to fork and run its initializer (loading glslang), a
backstop only: on a machine with many times more runnable processes than CPUs it takes seconds."""
_BACKSTOP_FACTOR = 10.0
_BACKSTOP_FLOOR = 60.0
_LOG_TAIL = 4096
_GRACE = 5.0
"""Seconds a graceful worker has, after SIGTERM, to end before it is killed."""


@record
class Labels:
    """How a kind of worker's failures read, and the error they raise."""

    work: str
    """What it does, for a limit passed: ``shader compilation`` (exceeded 5 s of CPU time)."""
    process: str
    """What it is, for a crash: ``shader compiler`` (crashed)."""
    deadline: str
    """The option that sets the limit of CPU time: ``--shader-timeout``."""
    error: type[VgfcError]
    """The error a limit passed, a crash or running out of memory raises."""
    memory: str = ""
    """The option that sets the memory cap, if one does: ``--shader-memory``."""


class Worker:
    """One worker process that runs ``function(*args)`` for the threads of this process, one
    call at a time; started lazily, replaced after a timeout or a crash."""

    def __init__(
        self,
        labels: Labels,
        initializer: Callable[[], object] | None = None,
        *,
        graceful: bool = False,
    ) -> None:
        """``initializer`` runs once in each new worker before the first deadline starts (its
        errors are left for the calls to meet). A ``graceful`` worker (one that writes files)
        is asked to end with SIGTERM, so that it removes its temporary files, before it is
        killed; others are killed at once."""
        self.labels = labels
        self._initializer = initializer
        self._graceful = graceful
        self._lock = threading.Lock()
        self._process: _Process | None = None
        self._retired = False

    def run(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        timeout: float,
        memory: int,
        *,
        wall: float | None = None,
    ) -> Any:
        """``function(*args)`` in the worker within ``timeout`` seconds of CPU time (``inf``:
        none) and ``memory`` more bytes of address space (0: no cap), and ``wall`` seconds of
        wall-clock time (default: :func:`backstop` of ``timeout``). Its result or exception
        comes back as it is (both must pickle; ``function`` must be a module-level function).
        Raises the labels' error when a limit is passed or the worker crashes."""
        if not hasattr(os, "fork"):
            return function(*args)
        try:
            folder: str | None = os.getcwd()  # relative include folders resolve from here
        except OSError:
            folder = None
        if wall is None:
            wall = backstop(timeout)
        request = pickle.dumps((function, args, folder, timeout, memory), pickle.HIGHEST_PROTOCOL)
        with self._lock:
            if self._retired:
                raise self.labels.error(f"the {self.labels.process} was ended")
            process = self._process
            if process is None or not process.alive():
                if process is not None:
                    process.kill()
                process = self._process = _Process(self.labels, self._initializer, self._graceful)
            try:
                kind, value = pickle.loads(process.call(request, timeout, memory, wall))
            except BaseException:
                # Timed out, crashed or interrupted: its state is unknown, so it goes.
                self._process = None
                process.kill()
                raise
        if kind == "raise":
            if isinstance(value, MemoryExceeded):
                raise self.labels.error(_out_of_memory(self.labels, value.memory))
            raise value
        return value

    def close(self) -> None:
        """End the worker, if one runs; the next call starts a fresh one. Safe from another
        thread while a call waits on the worker (that call then fails as on a crash)."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()

    def retire(self) -> _Process | None:
        """Start no process any more (a call that would start one fails), and hand over the
        one that runs, for :func:`end_together`."""
        self._retired = True
        process, self._process = self._process, None
        return process


def backstop(timeout: float) -> float:
    """The wall-clock seconds a call limited to ``timeout`` seconds of CPU time may take: far
    above it (ten times it, plus a minute), so that only a call that has stopped using the CPU
    without ending (blocked) meets it, however loaded the machine."""
    return timeout * _BACKSTOP_FACTOR + _BACKSTOP_FLOOR


def end_together(workers: list[Worker]) -> None:
    """Retire ``workers`` and end their processes at once: graceful ones are all sent SIGTERM
    first, then waited for, so that none of them goes on to finish its work (and write its
    file) while another is being waited for."""
    _end_processes([p for p in (w.retire() for w in workers) if p is not None])


def _end_processes(processes: list[_Process]) -> None:
    for process in processes:
        process.ask_to_end()
    for process in processes:
        process.kill()


_LIVE: set[_Process] = set()
"""The workers this process started and has not ended yet."""
_LIVE_LOCK = threading.Lock()


def end_all() -> None:
    """End every worker this process started: at exit, and when a worker's own loop ends."""
    with _LIVE_LOCK:
        processes = list(_LIVE)
    _end_processes(processes)


def _forget_inherited() -> None:
    """In a newly forked process: the workers in the registry are the parent's. Close this
    copy of their sockets (so each sees EOF when its parent goes), and leave them alone."""
    for process in list(_LIVE):
        process.disown()
    _LIVE.clear()


atexit.register(end_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited)


class _Process:
    """A forked worker and the parent's end of its socket pair and stderr pipe."""

    def __init__(
        self, labels: Labels, initializer: Callable[[], object] | None, graceful: bool
    ) -> None:
        self.labels = labels
        self.graceful = graceful
        self.owner = os.getpid()
        parent, child = socket.socketpair()
        log_read, log_write = os.pipe()
        try:
            self.pid = os.fork()
        except OSError as e:
            parent.close()
            child.close()
            os.close(log_read)
            os.close(log_write)
            raise InternalError(f"cannot start the {labels.process} process: {e}") from None
        if self.pid == 0:  # pragma: no cover - the worker; coverage cannot follow it
            status = 0
            try:
                if graceful:
                    die_with(self.owner, signal.SIGTERM)
                parent.close()
                os.close(log_read)
                try:
                    serve(child, log_write, initializer, graceful)
                finally:
                    end_all()  # the workers this one started
            except BaseException:
                status = 1
                with contextlib.suppress(BaseException):
                    import traceback

                    traceback.print_exc()  # into the log the parent reads
            finally:
                if graceful:  # interrupted: cleaned up, it ends by the signal, as its parent
                    from vgfc.files.interrupts import die_by_signal, received

                    signum = received()
                    if signum is not None:
                        die_by_signal(signum)
                os._exit(status)
        child.close()
        os.close(log_write)
        os.set_blocking(log_read, False)
        self.sock, self.log_fd, self.log = parent, log_read, b""
        self.status: int | None = None
        self.closed = False
        self.asked = False
        try:
            receive(self.sock, time.monotonic() + _START_TIMEOUT)
        except (EOFError, OSError):
            self.kill()
            raise InternalError(f"the {labels.process} process did not start") from None
        except BaseException:
            self.kill()
            raise
        with _LIVE_LOCK:
            _LIVE.add(self)

    def alive(self) -> bool:
        # A worker inherited from a parent process belongs to that parent.
        if self.owner != os.getpid():
            return False
        if self.status is None:
            self._reap(os.WNOHANG)
        return self.status is None

    def call(self, request: bytes, timeout: float, memory: int, wall: float) -> bytes:
        # What the worker wrote for earlier requests says nothing about this one: a crash
        # report quotes only this request's output, so check and compile report alike.
        self._drain_log()
        self.log = b""
        try:
            send(self.sock, request)
            reply = receive(self.sock, time.monotonic() + wall)
        except TimeoutError:
            labels = self.labels
            raise labels.error(
                f"{labels.work} did not end in {wall:g} s of wall time "
                f"(the backstop of {labels.deadline})"
            ) from None
        except (EOFError, OSError):
            raise self._died(memory, timeout) from None
        self._drain_log()
        return reply

    def ask_to_end(self) -> None:
        """Send a graceful worker SIGTERM (once), so that it unwinds and removes its
        temporary files; :meth:`kill` then waits for it."""
        if self.closed or not self.graceful or self.asked or self.owner != os.getpid():
            return
        self.asked = True
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        """End the worker (if this process started it) and close this end; once. A graceful
        worker gets SIGTERM and a few seconds to remove its temporary files first."""
        if self.closed:
            return
        self.closed = True
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self.owner == os.getpid() and self.status is None:
            if self.graceful:
                if not self.asked:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(self.pid, signal.SIGTERM)
                deadline = time.monotonic() + _GRACE
                while self.status is None and time.monotonic() < deadline:
                    self._reap(os.WNOHANG)
                    if self.status is None:
                        time.sleep(0.01)
            if self.status is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
                self._reap(0)
        self.sock.close()
        os.close(self.log_fd)

    def disown(self) -> None:
        """Close this process's copy of the worker's ends, in a process forked from its
        owner: the worker is the owner's to end."""
        if not self.closed:
            self.closed = True
            self.sock.close()
            with contextlib.suppress(OSError):
                os.close(self.log_fd)

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:  # reaped by someone else (SIGCHLD ignored): status unknown
            pid, status = self.pid, 0
        if pid:
            self.status = os.waitstatus_to_exitcode(status)

    def _drain_log(self) -> None:
        """Keep the tail of what the worker wrote to stderr, so the pipe never fills."""
        with contextlib.suppress(OSError):  # BlockingIOError: nothing more to read
            while chunk := os.read(self.log_fd, 65536):
                self.log = (self.log + chunk)[-_LOG_TAIL:]

    def _died(self, memory: int, timeout: float) -> VgfcError:
        self._reap(0)
        status = self.status or 0
        self._drain_log()
        log = self.log.decode(errors="replace")
        labels = self.labels
        if -status in CPU_TIME_SIGNALS and timeout < math.inf:
            return labels.error(
                f"{labels.work} exceeded {timeout:g} s of CPU time ({labels.deadline})"
            )
        if "bad_alloc" in log or "MemoryError" in log:
            return labels.error(_out_of_memory(labels, memory))
        how = f"signal {_signal_name(-status)}" if status < 0 else f"exit status {status}"
        last = next((line for line in reversed(log.splitlines()) if line.strip()), "")
        return labels.error(f"the {labels.process} crashed ({how})" + (f": {last}" if last else ""))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _out_of_memory(labels: Labels, memory: int) -> str:
    if not memory:
        return f"{labels.work} ran out of memory"
    size = f"{memory / (1 << 30):g} GiB" if memory >= 1 << 30 else f"{memory / (1 << 20):g} MiB"
    option = f", {labels.memory}" if labels.memory else ""
    return f"{labels.work} exceeded its memory limit ({size}{option})"
