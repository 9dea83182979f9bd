"""What every ``vgfc`` command shares: error reporting, exit codes, atomic writes.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from vgfc.diagnostics import ErrorKind, InputError, VgfcError

__all__ = ["EXIT_ERROR", "EXIT_INTERNAL", "handle_errors", "stderr_console", "write_atomically"]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_ERROR = 1
EXIT_INTERNAL = 3


def stderr_console() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


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
            stderr_console().print(
                f"[bold red]{label}:[/] {e.render()}", markup=True, highlight=False
            )
            sys.exit(EXIT_INTERNAL if e.kind is ErrorKind.INTERNAL else EXIT_ERROR)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except Exception as e:
            if debug:
                raise
            stderr_console().print(
                f"[bold red]internal error:[/] {type(e).__name__}: {e}\n"
                "This is a bug in vgfc; rerun with --debug for a traceback and report it.",
                markup=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never a partial file."""
    target = path.resolve()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise InputError(f"cannot write output file: {e.strerror}", file=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
