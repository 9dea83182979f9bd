"""Printing user text through rich without it being read as markup: the consoles, a diagnostic
in gcc's form (``FILE:LINE:COL: error: message``), a table, and a command's text output.

rich is imported only where something is printed to a terminal: on a pipe or a file, lines are
written plain (the quick path of ``vgfc compile``, :mod:`vgfc.cli.quick`, prints through here
without loading rich or click).
"""

from __future__ import annotations

import errno
import functools
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from vgfc.diagnostics import Diagnostic, Severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console


__all__ = [
    "colour_on",
    "diagnostics_console",
    "emit",
    "escape",
    "finish_sarif",
    "is_terminal",
    "print_diagnostic",
    "print_table",
    "sarif_active",
    "set_colour",
    "start_sarif",
    "stderr_console",
    "stdout_console",
]


_colour = ["auto"]
"""The ``--color`` of this command."""


def set_colour(mode: str) -> None:
    """Take ``--color MODE`` (one of :data:`vgfc.options.COLOUR_MODES`) for what this command
    prints."""
    _colour[0] = mode


def _set(name: str) -> bool:
    value = os.environ.get(name, "")
    return value != "" and value != "0"


def colour_on(stream: Any) -> bool:
    """Whether what goes to ``stream`` is coloured, as gcc and cargo decide: ``--color always``
    or ``never`` as said; else (``auto``) never with ``NO_COLOR`` set (to anything but empty),
    always with ``FORCE_COLOR`` or ``CLICOLOR_FORCE`` set (to anything but empty or 0), and
    otherwise on a terminal only."""
    mode = _colour[0]
    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR", ""):
        return False
    if _set("FORCE_COLOR") or _set("CLICOLOR_FORCE"):
        return True
    return is_terminal(stream)


_LOG_WIDTH = 1 << 16
"""The width of a console that is not a terminal: wider than any line vgfc prints."""


def _console(stream: Any, **how: Any) -> Console:
    """A rich console on ``stream``: a terminal (progress, tables that fit) only when it is
    one, whatever rich would read from the environment; coloured only when :func:`colour_on`
    (else no escape sequence at all, not even bold)."""
    terminal = is_terminal(stream)
    coloured = colour_on(stream)
    if not terminal:
        # Off a terminal nothing is cut to a width (a log keeps whole names): rich would take
        # COLUMNS, or 80, and older versions (13.x) narrow a table's cells to it.
        how.setdefault("width", _LOG_WIDTH)
    return _console_class()(
        highlight=False,
        soft_wrap=True,
        force_terminal=terminal,
        color_system=None if not coloured else "auto" if terminal else "standard",
        no_color=False,
        **how,
    )


def stderr_console() -> Console:
    return _console(sys.stderr, stderr=True)


def stdout_console() -> Console:
    """A rich console on standard output whose broken pipe is :class:`BrokenPipeError`, for
    the caller to decide what a reader that went away means (rich's own answer is to exit 1)."""
    return _console(sys.stdout)


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console  # rich costs start-up time; only what is printed needs it

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")

    return _Console


def escape(text: str) -> str:
    """``text`` with rich's markup characters escaped (:func:`rich.markup.escape`)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def diagnostics_console() -> Console | None:
    """Where diagnostics go: a rich console on stderr when it is a terminal (progress) or is
    coloured (:func:`colour_on`), else ``None``: plain lines, and rich is not imported."""
    return stderr_console() if is_terminal(sys.stderr) or colour_on(sys.stderr) else None


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # a closed or stand-in stream
        return False


def print_diagnostic(console: Console | None, d: Diagnostic, label: str | None = None) -> None:
    """The diagnostic in gcc's form (:meth:`vgfc.diagnostics.Diagnostic.lines`:
    ``FILE:LINE:COL: error: message``, the excerpt, a note), the label coloured and the text
    printed as it is: model text (``[1, 8, 8, 4]``, ``vgfc[shaders]``) is escaped, never read as
    rich markup. ``console`` ``None``: plain lines on stderr."""
    if _SARIF is not None:
        _SARIF.append(d)
        return
    if label is None:
        label = d.severity.value
    lines = d.lines(label)
    if console is None:
        _write_line(sys.stderr, "\n".join(lines))
        return
    colour = "red" if d.severity is Severity.ERROR else "yellow"
    head = f"{label}: "
    first = lines[0]
    at = first.find(head)
    if first.startswith(head):
        at = 0
    console.print(
        f"{escape(first[:at])}[bold {colour}]{escape(head)}[/]{escape(first[at + len(head) :])}",
        highlight=False,
    )
    for line in lines[1:]:
        console.print(escape(line), highlight=False)


_SARIF: list[Diagnostic] | None = None
"""The diagnostics printed so far while ``--diagnostics-format sarif`` holds them back."""


def start_sarif() -> None:
    """From now on :func:`print_diagnostic` keeps each diagnostic for the SARIF log that
    :func:`finish_sarif` writes, instead of printing it."""
    global _SARIF
    if _SARIF is None:
        _SARIF = []


def sarif_active() -> bool:
    """Whether diagnostics are held for a SARIF log (print every one, no summary lines)."""
    return _SARIF is not None


def finish_sarif(exit_code: int) -> None:
    """Write the SARIF log of the diagnostics held (:mod:`vgfc.sarif`) to stderr, if
    ``--diagnostics-format sarif`` asked for one, as the command ends with ``exit_code``."""
    global _SARIF
    if _SARIF is None:
        return
    import json

    import vgfc
    from vgfc.sarif import sarif_log

    held, _SARIF = _SARIF, None
    log = sarif_log(held, exit_code=exit_code, version=vgfc.__version__)
    sys.stderr.write(json.dumps(log, indent=2) + "\n")
    sys.stderr.flush()


_ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")
"""A terminal escape sequence (colour, cursor movement), as click recognises one."""


def _write_line(stream: Any, text: str) -> None:
    """``text`` and a newline on ``stream``, flushed, as ``click.echo`` writes them: escape
    sequences (a model's names may hold them) are taken out where the stream is not a
    terminal."""
    if not is_terminal(stream):
        text = _ANSI.sub("", text)
    stream.write(text + "\n")
    stream.flush()


def print_table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], lines: Sequence[str]
) -> None:
    """A table of plain-text ``rows`` under ``title``, then ``lines``, on stdout: drawn by rich
    on a terminal, else as aligned plain columns (rich is not imported)."""
    if is_terminal(sys.stdout):
        from vgfc.cli.tables import word_table

        out = stdout_console()
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
