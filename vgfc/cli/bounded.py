"""Long lists of diagnostics bounded as a compiler bounds its report (``vgfc check``,
``vgfc kernels``): those that fail the same way printed as one, at most ``--max-errors`` of them,
then a line saying how many more there are."""

from __future__ import annotations

from collections.abc import Sequence

from vgfc.cli.console import escape, print_diagnostic
from vgfc.diagnostics import Diagnostic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rich.console import Console


__all__ = ["group_diagnostics", "print_bounded"]


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
    from vgfc.cli.console import sarif_active

    groups = group_diagnostics(diagnostics)
    if max_errors == 0 or sarif_active():  # a SARIF log holds every one
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
