"""Tables that fit the terminal: one line per row, long cells shortened with an ellipsis.

Each column is as wide as its longest cell. When the table fits the width with rich's borders it
is drawn with them; else it drops to borderless columns two spaces apart; and when those do not
fit either, the widest columns give up characters, one at a time, down to their header's width
(at least 4), and every cell longer than its column keeps its start and its end with ``…``
between them (``graph_par…ition_0``): the end of a name is what tells ``graph_partition_0``
from ``graph_partition_2``. A row never wraps, so a name is never cut across lines; the whole
names are in each command's ``--json``. Past the minimum widths lines run long.

Off a terminal (a CI log, a pipe, a file) nothing is shortened: ``width`` is ``None``
(:func:`table_width`), every cell is whole and lines are as long as they need to be, so that a
log tells every model and path apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["ELLIPSIS", "fit_widths", "shorten", "table_width", "word_table"]

ELLIPSIS = "…"
_MIN_WIDTH = 4
_GAP = 2
"""Spaces between borderless columns."""


def table_width(console: Console) -> int | None:
    """The width a table may take on ``console``: its width on a terminal, else ``None`` (no
    limit: a log keeps every cell whole)."""
    return console.width if console.is_terminal else None


def shorten(text: Text, width: int) -> Text:
    """``text`` in at most ``width`` cells: its start, ``…`` and its end when it is longer."""
    if text.cell_len <= width:
        return text
    if width <= 1:
        return Text(ELLIPSIS[:width])
    tail = (width - 1) // 2
    head = width - 1 - tail
    shortened = text[:head]
    shortened.append(ELLIPSIS)
    if tail:
        shortened.append_text(text[len(text) - tail :])
    return shortened


def fit_widths(natural: Sequence[int], minimum: Sequence[int], budget: int) -> list[int]:
    """Column widths summing to at most ``budget``: the ``natural`` ones, the widest narrowed
    first, none below its ``minimum`` (so the sum may stay over ``budget``)."""
    widths = list(natural)
    excess = sum(widths) - budget
    while excess > 0:
        narrowable = [i for i, w in enumerate(widths) if w > minimum[i]]
        if not narrowable:
            break
        widest = max(narrowable, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    return widths


def word_table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], width: int | None
) -> Table:
    """A table of ``rows`` (cells are rich markup: escape user text) for a terminal ``width``
    characters wide, or, with ``width`` ``None``, for a log: borderless, every cell whole."""
    cells = [[Text.from_markup(cell) for cell in row] for row in rows]
    natural = [
        max([len(header), *(row[i].cell_len for row in cells)]) for i, header in enumerate(columns)
    ]
    if width is None:
        # No width at all: each column as wide as its widest cell (rich 13.x counted a
        # column's padding into a fixed width, and cut its last character).
        table = Table(
            title=title, box=None, padding=(0, _GAP // 2), pad_edge=False, show_edge=False
        )
        for header, w in zip(columns, natural, strict=True):
            table.add_column(header, min_width=w, no_wrap=True)
        for row in cells:
            table.add_row(*row)
        return table
    # Default style: a border and one space of padding on each side of every cell.
    if sum(natural) + 3 * len(natural) + 1 <= width:
        table = Table(title=title, box=box.HEAVY_HEAD)
        for header, w in zip(columns, natural, strict=True):
            table.add_column(header, min_width=w, no_wrap=True)
        for row in cells:
            table.add_row(*row)
        return table
    pairs = zip(columns, natural, strict=True)
    minimum = [min(n, max(len(header), _MIN_WIDTH)) for header, n in pairs]
    widths = fit_widths(natural, minimum, width - _GAP * (len(columns) - 1))
    table = Table(title=title, box=None, padding=(0, _GAP // 2), pad_edge=False, show_edge=False)
    for header, w in zip(columns, widths, strict=True):
        table.add_column(header, width=w, no_wrap=True, overflow="ellipsis")
    for row in cells:
        table.add_row(*(shorten(cell, w) for cell, w in zip(row, widths, strict=True)))
    return table
