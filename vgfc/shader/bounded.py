"""Run shader compilation in a worker process, under a deadline and a memory cap.

glslang runs through ctypes, and a ctypes call cannot be interrupted: a preprocessor bomb (a
macro that doubles at each of 28 levels) keeps it busy for minutes, an expression bomb takes
gigabytes. So :func:`vgfc.shader.glslang.compile_shader` hands the work to a :class:`Worker`:
one long-lived process, forked on first use (5 to 10 ms) and reused for every shader, so a
shader costs a round trip over a socket pair (0.05 to 0.2 ms, most of it the two context
switches), not a process start. When the deadline passes the worker is killed and the next
shader forks a fresh one.

Limits inside the worker (``setrlimit``, set again before each request):

- ``RLIMIT_AS``: the address space it has once started (glslang loaded) plus the request's
  memory limit (Linux, where ``/proc/self/statm`` tells the start); glslang's ``new`` then
  throws ``bad_alloc`` and the process aborts, which the parent reports as out of memory.
- ``RLIMIT_CPU``: the deadline plus a second of CPU time, a backstop that ends a worker whose
  parent died (SIGKILL) in the middle of a bomb; the parent's wall-clock deadline comes first.

The worker is forked, not spawned, so it starts in a few milliseconds with everything imported.
Forking a process that runs other threads is safe enough here: the worker runs only this
module's loop and glslang, and glslang's lock is held across every fork (see
:mod:`vgfc.shader.glslang`); Python 3.12+ still warns about it (a ``DeprecationWarning``).
Where ``os.fork`` does not exist (Windows) the work runs in the calling process, unbounded.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import math
import os
import pickle
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from vgfc.diagnostics import InternalError, ShaderError

__all__ = ["Worker"]

_HEADER = struct.Struct("<Q")
_READY = b"ready"
_START_TIMEOUT = 60.0
"""Seconds a fresh worker may take to fork and run its initializer (loading glslang)."""
_LOG_TAIL = 4096
_LONGEST_WAIT = 3600.0
"""Seconds one socket wait may last (``settimeout`` refuses huge values); longer deadlines loop."""


class Worker:
    """One worker process that runs ``function(*args)`` for the threads of this process, one
    call at a time; started lazily, replaced after a timeout or a crash."""

    def __init__(self, initializer: Callable[[], object] | None = None) -> None:
        """``initializer`` runs once in each new worker before the first deadline starts (its
        errors are left for the calls to meet)."""
        self._initializer = initializer
        self._lock = threading.Lock()
        self._process: _Process | None = None
        self._closes_at_exit = False

    def run(
        self, function: Callable[..., Any], args: tuple[Any, ...], timeout: float, memory: int
    ) -> Any:
        """``function(*args)`` in the worker within ``timeout`` seconds and ``memory`` more bytes
        of address space (0: no cap). Its result or exception comes back as it is (both must
        pickle; ``function`` must be a module-level function). Raises :class:`ShaderError`
        when the time or memory is exceeded or the worker crashes."""
        if not hasattr(os, "fork"):
            return function(*args)
        try:
            folder: str | None = os.getcwd()  # relative include folders resolve from here
        except OSError:
            folder = None
        request = pickle.dumps((function, args, folder, timeout, memory), pickle.HIGHEST_PROTOCOL)
        with self._lock:
            process = self._process
            if process is None or not process.alive():
                if process is not None:
                    process.kill()
                process = self._process = _Process(self._initializer)
                if not self._closes_at_exit:
                    # Until the worker is gone, each page this process writes for the first
                    # time since the fork is copied (about 3 us a page here); after, it is
                    # only unprotected. Interpreter shutdown writes to most of them.
                    atexit.register(self._close_at_exit)
                    self._closes_at_exit = True
            try:
                kind, value = pickle.loads(process.call(request, timeout, memory))
            except BaseException:
                # Timed out, crashed or interrupted: its state is unknown, so it goes.
                self._process = None
                process.kill()
                raise
        if kind == "raise":
            raise value
        return value

    def close(self) -> None:
        """End the worker, if one runs; the next call starts a fresh one."""
        with self._lock:
            if self._process is not None:
                self._process.kill()
                self._process = None

    def _close_at_exit(self) -> None:
        # Without the lock: a daemon thread may hold it, waiting out a deadline.
        process, self._process = self._process, None
        if process is not None:
            process.kill()


class _Process:
    """A forked worker and the parent's end of its socket pair and stderr pipe."""

    def __init__(self, initializer: Callable[[], object] | None) -> None:
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
            raise InternalError(f"cannot start the shader compiler process: {e}") from None
        if self.pid == 0:  # pragma: no cover - the worker; coverage cannot follow it
            status = 0
            try:
                parent.close()
                os.close(log_read)
                _serve(child, log_write, initializer)
            except BaseException:
                status = 1
                with contextlib.suppress(BaseException):
                    import traceback

                    traceback.print_exc()  # into the log the parent reads
            finally:
                os._exit(status)
        child.close()
        os.close(log_write)
        os.set_blocking(log_read, False)
        self.sock, self.log_fd, self.log = parent, log_read, b""
        self.status: int | None = None
        self.closed = False
        try:
            _receive(self.sock, time.monotonic() + _START_TIMEOUT)
        except (EOFError, OSError):
            self.kill()
            raise InternalError("the shader compiler process did not start") from None
        except BaseException:
            self.kill()
            raise

    def alive(self) -> bool:
        # A worker inherited from a parent process belongs to that parent.
        if self.owner != os.getpid():
            return False
        if self.status is None:
            self._reap(os.WNOHANG)
        return self.status is None

    def call(self, request: bytes, timeout: float, memory: int) -> bytes:
        # What the worker wrote for earlier requests says nothing about this one: a crash
        # report quotes only this request's output, so check and compile report alike.
        self._drain_log()
        self.log = b""
        try:
            _send(self.sock, request)
            reply = _receive(self.sock, time.monotonic() + timeout)
        except TimeoutError:
            raise ShaderError(
                f"shader compilation exceeded {timeout:g} s (--shader-timeout)"
            ) from None
        except (EOFError, OSError):
            raise self._died(memory) from None
        self._drain_log()
        return reply

    def kill(self) -> None:
        """End the worker (if this process started it) and close this end; once."""
        if self.closed:
            return
        self.closed = True
        if self.owner == os.getpid() and self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._reap(0)
        self.sock.close()
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

    def _died(self, memory: int) -> ShaderError:
        self._reap(0)
        status = self.status or 0
        self._drain_log()
        log = self.log.decode(errors="replace")
        if "bad_alloc" in log or "MemoryError" in log:
            return ShaderError(_out_of_memory(memory))
        how = f"signal {_signal_name(-status)}" if status < 0 else f"exit status {status}"
        last = next((line for line in reversed(log.splitlines()) if line.strip()), "")
        return ShaderError(f"the shader compiler crashed ({how})" + (f": {last}" if last else ""))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _out_of_memory(memory: int) -> str:
    if not memory:
        return "shader compilation ran out of memory"
    size = f"{memory / (1 << 30):g} GiB" if memory >= 1 << 30 else f"{memory / (1 << 20):g} MiB"
    return f"shader compilation exceeded its memory limit ({size})"


# --- the worker's side -----------------------------------------------------------------------


def _serve(sock: socket.socket, log_fd: int, initializer: Callable[[], object] | None) -> None:
    """Answer requests until the parent closes its end (or dies)."""
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
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
    _send(sock, _READY)
    while True:
        try:
            request = _receive(sock, None)
        except EOFError:
            return
        function, args, folder, timeout, memory = pickle.loads(request)
        with contextlib.suppress(OSError):
            if folder is not None and folder != os.getcwd():
                os.chdir(folder)
        if start is not None:
            _set_limit(resource.RLIMIT_AS, start + memory if memory else None)
        used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
        _set_limit(resource.RLIMIT_CPU, math.ceil(used + min(timeout, _LONGEST_WAIT)) + 1)
        try:
            reply: tuple[str, Any] = ("ok", function(*args))
        except MemoryError:
            reply = ("raise", ShaderError(_out_of_memory(memory)))
        except Exception as e:
            reply = ("raise", e)
        try:
            data = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception as e:
            what = type(reply[1]).__name__
            data = pickle.dumps(
                ("raise", InternalError(f"shader worker: cannot return {what}: {e}"))
            )
        _send(sock, data)


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


# --- framing: a length, then the bytes --------------------------------------------------------


def _send(sock: socket.socket, data: bytes) -> None:
    sock.settimeout(None)
    sock.sendall(_HEADER.pack(len(data)) + data)


def _receive(sock: socket.socket, deadline: float | None) -> bytes:
    """One message; raises :class:`TimeoutError` at ``deadline`` and :class:`EOFError` when the
    other end is closed."""
    (size,) = _HEADER.unpack(_receive_exactly(sock, _HEADER.size, deadline))
    return _receive_exactly(sock, size, deadline)


def _receive_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(min(left, _LONGEST_WAIT))
        try:
            got = sock.recv_into(view[done:])
        except TimeoutError:
            continue  # the loop tells whether the deadline has passed
        if not got:
            raise EOFError
        done += got
    return bytes(buffer)
