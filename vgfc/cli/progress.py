"""What a command is doing while it works: one status line on a terminal, nothing elsewhere.

A cold compile of hundreds of shaders, or ``run``/``verify`` starting the emulation stack, takes
seconds; on a terminal a spinner says which stage runs and how far it is (``lower: 120/400
shaders``). The line is drawn on standard error, and only when standard error is a terminal: a
pipe or a CI log gets no progress at all (no control characters, no lines to filter out), and
rich is not even imported there. With colour off (``NO_COLOR``, ``--color never``) there is no
status line either: it is drawn with escape sequences.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from vgfc.cli.console import colour_on, diagnostics_console, escape

__all__ = ["progress"]


@contextlib.contextmanager
def progress(first: str) -> Iterator[Callable[[str], None]]:
    """A status line showing ``first``, then whatever the yielded function is given; on a
    terminal only (else the function does nothing). The line goes when the block ends."""
    console = diagnostics_console()
    if console is None or not console.is_terminal or not colour_on(sys.stderr):
        # Not a terminal, or colour off (NO_COLOR, --color never): no escape sequence at all.
        yield _nothing
        return
    with console.status(f"{escape(first)}...", spinner=_SPINNER) as status:

        def show(text: str) -> None:
            # Naming the spinner makes rich draw the line now, not at its next tick (a stage
            # shorter than a tick would never be seen).
            status.update(f"{escape(text)}...", spinner=_SPINNER)

        show(first)
        yield show


_SPINNER = "dots"
"""rich's spinner for the status line (its default)."""


def _nothing(_text: str) -> None:
    """No terminal, no progress."""
