"""Tables that wrap cells between words only, so names never break (``graph_partition_`` / ``0``).

rich shrinks a column below its longest word when the terminal is narrow, and then folds the word.
Here each column is at least as wide as the longest word it holds; when that cannot fit the
terminal with rich's default borders, the table drops to a compact border style, and past that
lines run long rather than cut a name: a name is what a user copies into the next command.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table
from rich.text import Text

__all__ = ["word_table"]


def _longest_word(markup: str) -> int:
    return max((len(word) for word in Text.from_markup(markup).plain.split()), default=0)


def word_table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], width: int
) -> Table:
    """A table of ``rows`` (cells are rich markup: escape user text) for a terminal ``width``
    characters wide."""
    widths = [
        max([_longest_word(header), *(_longest_word(row[i]) for row in rows)])
        for i, header in enumerate(columns)
    ]
    # Default style: a border and one space of padding on each side of every cell.
    roomy = sum(widths) + 3 * len(widths) + 1 <= width
    table = Table(
        title=title,
        box=box.HEAVY_HEAD if roomy else box.SIMPLE_HEAD,
        padding=(0, 1) if roomy else (0, 0),
        collapse_padding=not roomy,
        pad_edge=roomy,
    )
    for header, minimum in zip(columns, widths, strict=True):
        table.add_column(header, min_width=minimum, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table
