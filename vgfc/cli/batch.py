"""How ``vgfc compile`` shows a batch: each model's errors, a summary table or line, and the
``--json`` list (:mod:`vgfc.batch` runs the jobs).

Importing this module is cheap: rich is imported by the functions that use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vgfc.record import replace

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from vgfc.batch import Outcome
    from vgfc.diagnostics import Diagnostic

__all__ = ["outcomes_json", "print_outcome", "summary_line", "summary_table"]


def _attributed(d: Diagnostic, model: Path) -> Diagnostic:
    """``d`` as it is when it names the model; else with the model's name in front, so that in
    a batch every line says which model it is about."""
    from vgfc.diagnostics import Location

    if d.location.file == str(model):
        return d
    text = d.location.render()
    message = f"{text}: {d.message}" if text else d.message
    return replace(d, message=message, location=Location(file=str(model)))


def print_outcome(console: Console, outcome: Outcome, *, debug: bool = False) -> None:
    """The warnings and the error of one model on ``console``, in the lines single-model
    compile prints, each naming the model."""
    from vgfc.cli.console import print_diagnostic
    from vgfc.diagnostics import Severity

    for d in outcome.diagnostics:
        label = None
        if d.severity is Severity.ERROR and outcome.internal:
            label = "internal error"
            if debug and outcome.traceback:
                console.out(outcome.traceback, end="", highlight=False)
        print_diagnostic(console, _attributed(d, outcome.job.model), label)


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def summary_table(outcomes: Sequence[Outcome], width: int | None) -> Table:
    """One row per model: its result, operators, compile time and the file written."""
    from rich.markup import escape

    from vgfc.cli.tables import word_table

    rows = [
        (
            escape(str(o.job.model)),
            o.result if o.ok else f"[bold red]{o.result}[/]",
            "" if o.operators is None else str(o.operators),
            _duration(o.seconds),
            escape(str(o.job.output)) if o.ok else "",
            "" if o.size is None else str(o.size),
        )
        for o in outcomes
    ]
    columns = ("model", "result", "ops", "time", "output", "bytes")
    return word_table("", columns, rows, width)


def summary_line(outcomes: Sequence[Outcome], seconds: float, workers: int) -> str:
    """``3 models: 2 compiled, 1 failed; 0.41 s, 2 workers``."""
    failed = sum(not o.ok for o in outcomes)
    internal = sum(o.internal for o in outcomes)
    parts = [f"{len(outcomes) - failed} compiled"]
    if failed:
        parts.append(f"{failed} failed" + (f" ({internal} internal errors)" if internal else ""))
    count = f"{len(outcomes)} model" + ("" if len(outcomes) == 1 else "s")
    how = f"{workers} worker processes" if workers > 1 else "in one process"
    return f"{count}: {', '.join(parts)}; {_duration(seconds)}, {how}"


def outcomes_json(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """The outcomes as plain JSON data, documented by ``schemas/compile.schema.json``."""
    from vgfc.diagnostics import Severity

    docs = []
    for o in outcomes:
        errors = sum(d.severity is Severity.ERROR for d in o.diagnostics)
        docs.append(
            {
                "model": str(o.job.model),
                "ok": o.ok,
                "result": o.result,
                "output": str(o.job.output) if o.ok else None,
                "report": str(o.job.report) if o.ok and o.job.report is not None else None,
                "operators": o.operators,
                "segments": o.segments,
                "bytes": o.size,
                "seconds": round(o.seconds, 6),
                "errors": errors,
                "warnings": len(o.diagnostics) - errors,
                "diagnostics": [d.as_dict() for d in o.diagnostics],
            }
        )
    return docs
