"""The pass stage: graph-to-graph rewrites between verify and resolve, as data.

:data:`PASSES` is an ordered tuple of named passes. Each takes a verified graph and returns a
graph that verifies as well, with a :class:`Rewrite` for each operator it changed, which the
compile report lists (``passes``). The spine (:mod:`vgfc.compiler`) runs them with
:func:`run_passes` and verifies the result again.

- ``control-flow``: COND_IF and WHILE_LOOP written out as plain operators
  (:mod:`vgfc.control_flow`). It must run: nothing after it lowers control flow.
- ``fold``: operators whose inputs are all constants, evaluated now, exactly as the TOSA
  reference model would (:mod:`vgfc.passes.fold`, :mod:`vgfc.passes.evaluate`).
- ``type-narrowing``: FP32 values and constants made FP16 (``--type-narrowing full|partial``,
  :mod:`vgfc.passes.narrow`). It runs under ``-O0`` too, when asked for; ``none`` (the default)
  changes nothing.
- ``identities``: MUL by one, ADD or SUB of zero removed where the result keeps every bit, and
  SELECT of a LOGICAL_NOT swapped (:mod:`vgfc.passes.identities`).
- ``simplify``: operators that compute nothing (IDENTITY, a RESHAPE to the same shape, a
  TRANSPOSE by the identity, a CLAMP over its type's whole range, ...) removed, RESHAPE of
  RESHAPE and TRANSPOSE of TRANSPOSE composed, and a SLICE of CONCAT made to read the operand it
  takes (:mod:`vgfc.passes.simplify`).
- ``dedupe``: duplicate constants and duplicate operators (same op, inputs and attributes) made
  one (:mod:`vgfc.passes.dedupe`).
- ``dead-code``: operators whose results nothing reads removed (:mod:`vgfc.passes.dead`).

``-O0`` (``Options.optimize`` false) runs only the passes that must run. Each pass is given
the graph and the :class:`Settings` of the compile. No pass removes,
duplicates or changes a CUSTOM operator or renames what one reads, and graph inputs and outputs
keep their names and shapes.
"""

from __future__ import annotations

from collections.abc import Callable

from vgfc.ir import Graph
from vgfc.passes.records import Rewrite, Rewritten, Settings
from vgfc.record import record

__all__ = ["PASSES", "Pass", "Rewrite", "Rewritten", "Settings", "run_passes"]


@record
class Pass:
    """One named pass."""

    name: str
    run: Callable[[Graph, Settings], Rewritten]
    required: bool = False
    """Runs under ``-O0`` too: the stages after it cannot do without it."""


def _control_flow(graph: Graph, settings: Settings) -> Rewritten:
    from vgfc.control_flow import has_control_flow, inline_control_flow

    if len(graph.regions) == 1 or not has_control_flow(graph):
        return Rewritten(graph)
    rewrites = tuple(
        Rewrite("control-flow", op.file_index, op.op, "written out")
        for op in graph.operators
        if op.op in ("COND_IF", "WHILE_LOOP")
    )
    return Rewritten(inline_control_flow(graph), rewrites)


def _fold(graph: Graph, settings: Settings) -> Rewritten:
    from vgfc.passes.fold import fold

    return fold(graph)


def _narrow(graph: Graph, settings: Settings) -> Rewritten:
    if settings.type_narrowing == "none":
        return Rewritten(graph)
    from vgfc.passes.narrow import narrow

    return narrow(graph, settings.type_narrowing)


def _identities(graph: Graph, settings: Settings) -> Rewritten:
    from vgfc.passes.identities import identities

    return identities(graph)


def _simplify(graph: Graph, settings: Settings) -> Rewritten:
    from vgfc.passes.simplify import simplify

    return simplify(graph)


def _dedupe(graph: Graph, settings: Settings) -> Rewritten:
    from vgfc.passes.dedupe import dedupe

    return dedupe(graph)


def _dead_code(graph: Graph, settings: Settings) -> Rewritten:
    from vgfc.passes.dead import dead_code

    return dead_code(graph)


PASSES: tuple[Pass, ...] = (
    Pass("control-flow", _control_flow, required=True),
    Pass("fold", _fold),
    Pass("type-narrowing", _narrow, required=True),
    Pass("identities", _identities),
    Pass("simplify", _simplify),
    Pass("dedupe", _dedupe),
    Pass("dead-code", _dead_code),
)
"""The passes in the order they run."""


def run_passes(graph: Graph, optimize: bool = True, type_narrowing: str = "none") -> Rewritten:
    """``graph`` after every pass of :data:`PASSES` (only the required ones unless
    ``optimize``), and every rewrite in pass order."""
    settings = Settings(optimize, type_narrowing)
    rewrites: list[Rewrite] = []
    for step in PASSES:
        if not (optimize or step.required):
            continue
        done = step.run(graph, settings)
        graph = done.graph
        rewrites += done.rewrites
    return Rewritten(graph, tuple(rewrites))
