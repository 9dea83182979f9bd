"""A ``vgfc`` command as a process: standard streams that exist and whose write errors are one
line naming standard output, signals that unwind like Ctrl-C, the last flush, and the exit.

Nothing here imports click at import time: the quick path of ``vgfc compile``
(:mod:`vgfc.cli.quick`) prepares and finishes its process through here without it.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys

from vgfc.cli.console import diagnostics_console, print_diagnostic
from vgfc.cli.errors import EXIT_ERROR, report_interrupt
from vgfc.diagnostics import VgfcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    import click


__all__ = [
    "die_if_interrupted",
    "exit_process",
    "finish_process",
    "prepare_process",
    "reader_gone",
    "run_command",
]


class _ClosedStream(io.RawIOBase):
    """Standard output that was closed when vgfc started (``vgfc ... >&-``): every write
    fails, so a printing command cannot seem to succeed."""

    failing = True
    """Off once the error is reported: what is still buffered then goes nowhere quietly."""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        if _ClosedStream.failing:
            raise OSError(errno.EBADF, "standard output is closed")
        return len(memoryview(data))


def _stream_error(e: OSError) -> VgfcError:
    from vgfc.diagnostics import InputError
    from vgfc.files.outputs import _write_reason

    reason = "it is closed" if e.errno == errno.EBADF else _write_reason(e)
    _stdout_failed.append(reason)
    return InputError(f"cannot write: {reason}", file="standard output")


_stdout_failed: list[str] = []
"""Write errors on standard output so far (the first is reported once)."""


class _GuardedBinary:
    """``sys.stdout.buffer`` whose write errors are :class:`VgfcError` naming standard output
    (a broken pipe stays :class:`BrokenPipeError`: the reader went away, not an error)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, data: Any) -> int:
        try:
            return int(self._inner.write(data))
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _stream_error(e) from None

    def flush(self) -> None:
        try:
            self._inner.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise _stream_error(e) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _GuardedText(_GuardedBinary):
    """``sys.stdout`` with the same guard, and a guarded ``buffer``."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.buffer = _GuardedBinary(inner.buffer)
        self.encoding = inner.encoding
        self.errors = inner.errors

    def write(self, data: Any) -> int:
        if not isinstance(data, str):
            raise TypeError(f"write() argument must be str, not {type(data).__name__}")
        return super().write(data)


def _to_null(fd: int) -> None:
    """Point ``fd`` at /dev/null: what is still buffered for it then goes nowhere quietly."""
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)


def reader_gone(written: str | None = None) -> None:
    """The reader of standard output (or error) went away (``| head``, ``| true``): it asked for
    no more, which is no failure of the command. Both streams that lead to it are pointed at
    nothing, and a note on stderr, where it can still be read, says what was written."""
    _to_null(1)
    note = "note: the reader of the output went away (a closed pipe); the rest was not printed"
    try:
        sys.stderr.write(note + (f"; {written}" if written else "") + "\n")
        sys.stderr.flush()
    except OSError:
        _to_null(2)


def prepare_process() -> None:
    """Set up a command's process: standard streams that exist (a closed one is pointed at
    ``/dev/null``, so no file vgfc opens takes its number, and a closed standard output fails
    every write), write errors on standard output that are one line naming it, and SIGTERM,
    SIGHUP, SIGQUIT that unwind like Ctrl-C (:func:`vgfc.files.interrupts.interrupt_on_signals`)."""
    from vgfc.files.interrupts import interrupt_on_signals

    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            closed.append(fd)
    if 1 in closed:
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(_ClosedStream()), encoding="utf-8")
    if sys.stderr is None:  # closed when Python started (2>&-): messages go to /dev/null
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), errors="backslashreplace")
    if sys.stdout is not None:
        sys.stdout = _GuardedText(sys.stdout)
    interrupt_on_signals()


def finish_process(code: object) -> NoReturn:
    """Exit with ``code`` after flushing standard output: output that cannot be written is an
    error (exit 1, one line naming standard output), never a traceback or a silent success."""
    status = code if isinstance(code, int) else (0 if code is None else EXIT_ERROR)
    if isinstance(code, str):
        with contextlib.suppress(OSError):
            print(code, file=sys.stderr)
    reported = bool(_stdout_failed)
    failed = reported
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        failed = True
        status = status or EXIT_ERROR
    except VgfcError as e:
        failed = True
        if not reported:
            with contextlib.suppress(OSError, VgfcError):
                print_diagnostic(diagnostics_console(), e.diagnostic, "error")
        status = status or EXIT_ERROR
    if failed:
        # Whatever is still buffered would be flushed again at exit, with a traceback.
        _ClosedStream.failing = False
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
    try:
        sys.stderr.flush()
    except OSError:
        status = status or EXIT_ERROR
    sys.exit(status)


def die_if_interrupted() -> None:
    """If a signal interrupted the command (which has cleaned up and said what it wrote by
    now), end the process by that signal, so that the caller sees it: a shell loop over models
    stops, make prints "Interrupt". The exit handlers (ending workers, removing temporary
    folders) run first."""
    import atexit

    from vgfc.files.interrupts import die_by_signal, received

    signum = received()
    if signum is None:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    die_by_signal(signum)


def exit_process(code: int | str | None) -> NoReturn:
    """End the ``vgfc`` console script with ``code`` (an exit code, as :func:`finish_process`
    leaves it), through ``os._exit`` when nothing else is left to run: no exit handler
    registered (the shader workers register one, as do temporary folders), no other thread, no
    profiler or tracer. The interpreter's own teardown (clearing every module, a last
    collection) took 12-15 ms of a 120 ms compile on a 2-core machine, and does nothing a
    command needs once its files are written and closed and its standard streams flushed.
    :func:`vgfc.cli.main` itself raises ``SystemExit``, for programs that call it. A command
    that a signal interrupted ends by that signal (:func:`vgfc.files.interrupts.die_by_signal`)."""
    import atexit

    die_if_interrupted()
    threading = sys.modules.get("threading")
    alone = threading is None or threading.active_count() == 1
    watched = sys.getprofile() is not None or sys.gettrace() is not None
    if isinstance(code, int) and alone and not watched and atexit._ncallbacks() == 0:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.flush()
        os._exit(code)
    sys.exit(code)


def run_command(command: click.Command, *, prepared: bool = False, **kwargs: Any) -> NoReturn:
    """Run a click command as a process: :func:`prepare_process` (unless the quick path did it
    already: ``prepared``), the command, errors outside it (an interrupt while the arguments are
    parsed, ``--version`` to a full disk) as one line, :func:`finish_process`."""
    from vgfc.files.interrupts import Interrupted

    if not prepared:
        prepare_process()
    code: object = 0
    try:
        command.main(**kwargs)
    except SystemExit as e:
        code = e.code
    except Interrupted as e:
        report_interrupt(e)
        code = EXIT_ERROR
    except VgfcError as e:
        with contextlib.suppress(OSError, VgfcError):
            print_diagnostic(diagnostics_console(), e.diagnostic, "error")
        code = EXIT_ERROR
    finish_process(code)
