"""What every ``vgfc`` command shares: error reporting, exit codes, and printing user text through
rich without it being read as markup (the shared options are in :mod:`vgfc.cli.options`).

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
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
    "emit",
    "escape",
    "handle_errors",
    "print_diagnostic",
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


def print_diagnostic(console: Console, d: Diagnostic, label: str | None = None) -> None:
    """``error: <location>: <message>`` with the label coloured and the text printed as it is:
    model text (``[1, 8, 8, 4]``, ``vgfc[shaders]``) is escaped, never read as rich markup."""
    if label is None:
        label = d.severity.value
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
            print_diagnostic(stderr_console(), e.diagnostic, label)
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


def emit(text: str, output: Path | None) -> None:
    """Print ``text``, or write it atomically to ``output``."""
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        from vgfc.files import write_atomically

        write_atomically(output, text.encode("utf-8"))
