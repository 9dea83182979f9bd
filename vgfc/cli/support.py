"""What every ``vgfc`` command shares: error reporting, exit codes, and printing user text through
rich without it being read as markup (the shared options are in :mod:`vgfc.cli.options`).

Nothing here imports click at import time: the quick path of ``vgfc compile``
(:mod:`vgfc.cli.quick`) runs a compile through :func:`call_guarded` and the process functions
without it.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path

from vgfc.diagnostics import Diagnostic, ErrorKind, Severity, VgfcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn, TypeVar

    import click
    from rich.console import Console

    F = TypeVar("F", bound=Callable[..., Any])


__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "call_guarded",
    "diagnostics_console",
    "emit",
    "escape",
    "finish_process",
    "group_diagnostics",
    "handle_errors",
    "prepare_process",
    "print_bounded",
    "print_diagnostic",
    "print_table",
    "report_interrupt",
    "run_command",
    "stderr_console",
]

EXIT_ERROR = 1
EXIT_INTERNAL = 3


def stderr_console() -> Console:
    from rich.console import (
        Console,
    )  # rich costs start-up time; only output that is printed needs it

    return Console(stderr=True, highlight=False, soft_wrap=True)


def escape(text: str) -> str:
    """``text`` with rich's markup characters escaped (:func:`rich.markup.escape`)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def diagnostics_console() -> Console | None:
    """Where diagnostics go: a rich console on stderr when it is a terminal (colour, progress),
    else ``None``: plain lines, and rich is not imported."""
    return stderr_console() if _is_terminal(sys.stderr) else None


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # a closed or stand-in stream
        return False


def print_diagnostic(console: Console | None, d: Diagnostic, label: str | None = None) -> None:
    """``error: <location>: <message>`` with the label coloured and the text printed as it is:
    model text (``[1, 8, 8, 4]``, ``vgfc[shaders]``) is escaped, never read as rich markup.
    ``console`` ``None``: plain lines on stderr."""
    if label is None:
        label = d.severity.value
    if console is None:
        _write_line(
            sys.stderr, "\n".join([f"{label}: {d.render()}", *(f"    {x}" for x in d.excerpt)])
        )
        return
    colour = "red" if d.severity is Severity.ERROR else "yellow"
    console.print(f"[bold {colour}]{escape(label)}:[/] {escape(d.render())}", highlight=False)
    for line in d.excerpt:
        console.print(f"    {escape(line)}", highlight=False)


_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")
"""A terminal escape sequence (colour, cursor movement), as click recognises one."""


def _write_line(stream: Any, text: str) -> None:
    """``text`` and a newline on ``stream``, flushed, as ``click.echo`` writes them: escape
    sequences (a model's names may hold them) are taken out where the stream is not a
    terminal."""
    if not _is_terminal(stream):
        text = _ANSI.sub("", text)
    stream.write(text + "\n")
    stream.flush()


def handle_errors(func: F) -> F:
    """Turn errors into one clear line on stderr and an exit code; tracebacks only with --debug
    (:func:`call_guarded` in a click command)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import click

        debug = bool(click.get_current_context().find_root().params.get("debug"))
        return call_guarded(func, args, kwargs, debug=debug)

    return wrapper  # type: ignore[return-value]


def _is_click_exit(e: BaseException) -> bool:
    """A click usage error or exit, which click itself reports (only where click is loaded)."""
    click = sys.modules.get("click")
    return click is not None and isinstance(e, click.exceptions.Exit | click.ClickException)


def call_guarded(
    func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], *, debug: bool
) -> Any:
    """``func(*args, **kwargs)`` with its errors as one clear line on stderr and an exit code;
    tracebacks only with ``debug``. An interrupt (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT) is one line
    too, saying which outputs were written and which were left as they were."""
    from vgfc.files.interrupts import Interrupted
    from vgfc.files.outputs import WRITES

    if not _depth:
        WRITES.clear()
    _depth.append(func)
    try:
        return func(*args, **kwargs)
    except VgfcError as e:
        if debug:
            raise
        label = "internal error" if e.kind is ErrorKind.INTERNAL else "error"
        print_diagnostic(diagnostics_console(), e.diagnostic, label)
        sys.exit(EXIT_INTERNAL if e.kind is ErrorKind.INTERNAL else EXIT_ERROR)
    except (KeyboardInterrupt, Interrupted) as e:
        if debug:
            raise
        report_interrupt(e)
        sys.exit(EXIT_ERROR)
    except BrokenPipeError:
        # The reader went away (`vgfc inspect m.vgf | head`): not an error of ours. Point
        # stdout at nothing so that the interpreter's own flush at exit stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_ERROR)
    except Exception as e:
        if debug or _is_click_exit(e):
            raise
        stderr_console().print(
            f"[bold red]internal error:[/] {escape(f'{type(e).__name__}: {e}')}\n"
            "This is a bug in vgfc; rerun with --debug for a traceback and report it.",
            highlight=False,
        )
        sys.exit(EXIT_INTERNAL)
    finally:
        _depth.pop()


_depth: list[object] = []
"""The commands wrapped by :func:`handle_errors` now running (a command's options wrap it
again): the write log starts afresh with the outermost."""


def report_interrupt(e: BaseException) -> None:
    """``error: interrupted (SIGTERM): out.vgf was left as it was`` on stderr."""
    from vgfc.files.interrupts import Interrupted
    from vgfc.files.outputs import WRITES

    how = e.name if isinstance(e, Interrupted) else "Ctrl-C"
    with contextlib.suppress(OSError, VgfcError):
        stderr_console().print(
            f"[bold red]error:[/] {escape(f'interrupted ({how}): {WRITES.outcome()}')}",
            highlight=False,
        )


# --- the process: standard streams, signals, the last flush ----------------------------------


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


def exit_process(code: int | str | None) -> NoReturn:
    """End the ``vgfc`` console script with ``code`` (an exit code, as :func:`finish_process`
    leaves it), through ``os._exit`` when nothing else is left to run: no exit handler
    registered (the shader workers register one, as do temporary folders), no other thread, no
    profiler or tracer. The interpreter's own teardown (clearing every module, a last
    collection) took 12-15 ms of a 120 ms compile on a 2-core machine, and does nothing a
    command needs once its files are written and closed and its standard streams flushed.
    :func:`vgfc.cli.main` itself raises ``SystemExit``, for programs that call it."""
    import atexit

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


def print_table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], lines: Sequence[str]
) -> None:
    """A table of plain-text ``rows`` under ``title``, then ``lines``, on stdout: drawn by rich
    on a terminal, else as aligned plain columns (rich is not imported)."""
    if _is_terminal(sys.stdout):
        from rich.console import Console

        from vgfc.cli.tables import word_table

        out = Console(highlight=False, soft_wrap=True)
        escaped = [[escape(cell) for cell in row] for row in rows]
        out.print(word_table(escape(title), columns, escaped, out.width))
        for line in lines:
            out.print(escape(line))
        return
    widths = [max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)]
    text = [title]
    for row in (columns, *rows):
        text.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    _write_line(sys.stdout, "\n".join([*text, *lines]))


def emit(text: str, output: Path | None, inputs: tuple[Path, ...] = ()) -> None:
    """Print ``text``, or write it atomically to ``output``, which must not be one of
    ``inputs`` (the files the command read)."""
    if output is None:
        import click

        click.echo(text, nl=not text.endswith("\n"))
    else:
        from vgfc.files.outputs import write_atomically

        write_atomically(output, text.encode("utf-8"), inputs=inputs)


# --- bounded reports ---------------------------------------------------------------------------


def _same_way(d: Diagnostic) -> tuple[object, ...]:
    """What two diagnostics share when they fail the same way: the message with the op's own
    names (custom name, domain, tensor) taken out, and the kind of op."""
    loc = d.location
    message = d.message
    for name in (loc.name, loc.domain, loc.tensor):
        if name:
            message = message.replace(name, "\0")
    return (d.severity, loc.file, loc.op, loc.key, loc.origin, loc.line, loc.column, message)


def group_diagnostics(diagnostics: Sequence[Diagnostic]) -> list[list[Diagnostic]]:
    """The diagnostics grouped by :func:`_same_way`, in the order each group first appears."""
    groups: dict[tuple[object, ...], list[Diagnostic]] = {}
    for d in diagnostics:
        groups.setdefault(_same_way(d), []).append(d)
    return list(groups.values())


_OTHERS_LISTED = 5
"""Ops named in the line under a group; the rest are counted."""


def _others_line(group: list[Diagnostic]) -> str:
    """``and 9 more ops the same way: op #3 'Op0', op #6 'Op0', ... (4 more)``."""
    others = group[1:]
    named = []
    for d in others[:_OTHERS_LISTED]:
        loc = d.location
        text = f"op #{loc.op_index}" if loc.op_index is not None else "another"
        if loc.name:
            text += f" '{loc.name}'"
        elif loc.tensor:
            text += f" (tensor '{loc.tensor}')"
        named.append(text)
    rest = len(others) - len(named)
    tail = f" and {rest} more" if rest else ""
    what = group[0].severity.value
    return f"the same {what} for {len(others)} more: {', '.join(named)}{tail}"


def _hidden_line(hidden: list[list[Diagnostic]], limit: int) -> str:
    counts: dict[str, int] = {}
    for group in hidden:
        what = group[0].severity.value
        counts[what] = counts.get(what, 0) + len(group)
    parts = [f"{n} more {what}{'s' if n != 1 else ''}" for what, n in counts.items()]
    return (
        f"... and {' and '.join(parts)} not shown (--max-errors {limit}; --max-errors 0 lists "
        "them all, --json keeps them all)"
    )


def print_bounded(
    console: Console, diagnostics: Sequence[Diagnostic], max_errors: int
) -> list[list[Diagnostic]]:
    """Print ``diagnostics`` as a compiler bounds its report: those that fail the same way as
    one (the first, then a line naming the others), at most ``max_errors`` of them, then a line
    saying how many more there are; ``max_errors`` 0 prints every one on its own line. Returns
    the groups."""
    groups = group_diagnostics(diagnostics)
    if max_errors == 0:
        for d in diagnostics:
            print_diagnostic(console, d)
        return groups
    shown = groups if max_errors == 0 else groups[:max_errors]
    for group in shown:
        print_diagnostic(console, group[0])
        if len(group) > 1:
            console.print(f"    {escape(_others_line(group))}", highlight=False)
    hidden = groups[len(shown) :]
    if hidden:
        console.print(escape(_hidden_line(hidden, max_errors)), highlight=False)
    return groups
