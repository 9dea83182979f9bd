"""How a ``vgfc`` command fails: an error becomes one clear line on stderr and an exit code,
an interrupt one line saying which outputs were written; tracebacks only with ``--debug``.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).

Nothing here imports click at import time: the quick path of ``vgfc compile``
(:mod:`vgfc.cli.quick`) runs a compile through :func:`call_guarded` without it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from functools import wraps

from vgfc.cli.console import (
    diagnostics_console,
    escape,
    finish_sarif,
    print_diagnostic,
    sarif_active,
    stderr_console,
)
from vgfc.diagnostics import ErrorKind, VgfcError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    F = TypeVar("F", bound=Callable[..., Any])


__all__ = ["EXIT_ERROR", "EXIT_INTERNAL", "call_guarded", "handle_errors", "report_interrupt"]

EXIT_ERROR = 1
EXIT_INTERNAL = 3


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
    from vgfc.files.outputs import WRITES

    if not _depth:
        WRITES.clear()
    _depth.append(func)
    code: object = EXIT_INTERNAL
    try:
        result = _reported(func, args, kwargs, debug=debug)
        code = 0
        return result
    except SystemExit as e:
        code = e.code
        raise
    except Exception as e:  # a click exit or usage error (or, with --debug, any error)
        code = getattr(e, "exit_code", EXIT_INTERNAL)
        raise
    finally:
        _depth.pop()
        if not _depth:
            finish_sarif(code if isinstance(code, int) else EXIT_ERROR)


def _reported(
    func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], *, debug: bool
) -> Any:
    """``func(*args, **kwargs)``, its errors reported and turned into exit codes."""
    from vgfc.files.interrupts import Interrupted

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
        if sarif_active():
            from vgfc.diagnostics import Diagnostic, Severity

            text = f"{type(e).__name__}: {e} (a bug in vgfc; rerun with --debug and report it)"
            print_diagnostic(None, Diagnostic(Severity.ERROR, text), "internal error")
            sys.exit(EXIT_INTERNAL)
        stderr_console().print(
            f"[bold red]internal error:[/] {escape(f'{type(e).__name__}: {e}')}\n"
            "This is a bug in vgfc; rerun with --debug for a traceback and report it.",
            highlight=False,
        )
        sys.exit(EXIT_INTERNAL)


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
