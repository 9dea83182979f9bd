"""Operators whose results nothing reads, removed: no graph output depends on them.

Never removed: CUSTOM operators (a shader may do more than its outputs say), operators with no
results, and the operators that read or write a variable (it keeps state between runs).
"""

from __future__ import annotations

from vgfc.ir import Graph
from vgfc.passes.edit import in_order, rebuild
from vgfc.passes.records import Rewrite, Rewritten

__all__ = ["dead_code"]

_KEPT = frozenset({"CUSTOM", "VARIABLE", "VARIABLE_READ", "VARIABLE_WRITE"})


def dead_code(graph: Graph) -> Rewritten:
    """``graph`` less the operators no graph output depends on."""
    live = set(graph.outputs)
    live.update(name for name, t in graph.tensors.items() if t.is_variable)
    dead: set[int] = set()
    for op in reversed(in_order(graph)):
        if op.op in _KEPT or not op.outputs or not live.isdisjoint(op.outputs):
            live.update(op.inputs)
        else:
            dead.add(op.index)
    if not dead:
        return Rewritten(graph)
    rewrites = tuple(
        Rewrite("dead-code", op.file_index, op.op, "removed", "nothing reads its result")
        for op in graph.operators
        if op.index in dead
    )
    operators = [op for op in graph.operators if op.index not in dead]
    dropped = [n for op in graph.operators if op.index in dead for n in op.outputs]
    return Rewritten(rebuild(graph, operators, dropped=dropped), rewrites)
