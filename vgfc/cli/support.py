"""What every ``vgfc`` command shares: error reporting, exit codes, and printing user text through
rich without it being read as markup (the shared options are in :mod:`vgfc.cli.options`).

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vgfc.diagnostics import Diagnostic, ErrorKind, Severity, VgfcError

if TYPE_CHECKING:
    from rich.console import Console


__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "diagnostics_console",
    "emit",
    "escape",
    "handle_errors",
    "print_diagnostic",
    "print_table",
    "stderr_console",
]

F = TypeVar("F", bound=Callable[..., Any])

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
        click.echo(
            "\n".join([f"{label}: {d.render()}", *(f"    {x}" for x in d.excerpt)]), err=True
        )
        return
    colour = "red" if d.severity is Severity.ERROR else "yellow"
    console.print(f"[bold {colour}]{escape(label)}:[/] {escape(d.render())}", highlight=False)
    for line in d.excerpt:
        console.print(f"    {escape(line)}", highlight=False)


def handle_errors(func: F) -> F:
    """Turn errors into one clear line on stderr and an exit code; tracebacks only with --debug."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = bool(click.get_current_context().find_root().params.get("debug"))
        try:
            return func(*args, **kwargs)
        except VgfcError as e:
            if debug:
                raise
            label = "internal error" if e.kind is ErrorKind.INTERNAL else "error"
            print_diagnostic(diagnostics_console(), e.diagnostic, label)
            sys.exit(EXIT_INTERNAL if e.kind is ErrorKind.INTERNAL else EXIT_ERROR)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except BrokenPipeError:
            # The reader went away (`vgfc inspect m.vgf | head`): not an error of ours. Point
            # stdout at nothing so that the interpreter's own flush at exit stays quiet.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_ERROR)
        except Exception as e:
            if debug:
                raise
            stderr_console().print(
                f"[bold red]internal error:[/] {escape(f'{type(e).__name__}: {e}')}\n"
                "This is a bug in vgfc; rerun with --debug for a traceback and report it.",
                highlight=False,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


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
    click.echo("\n".join([*text, *lines]))


def emit(text: str, output: Path | None) -> None:
    """Print ``text``, or write it atomically to ``output``."""
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        from vgfc.files import write_atomically

        write_atomically(output, text.encode("utf-8"))
