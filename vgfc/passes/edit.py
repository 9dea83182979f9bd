"""What every graph pass needs to take a graph apart and put it back: who reads a value, an
order to visit operators in, renaming the values operators read, and a graph rebuilt from a new
list of operators (renumbered, with the tensors nothing names any more let go).

A pass never renames a graph input or output, nor what a CUSTOM operator reads: those names are
the model's interface and a shader's binding (:func:`renamed` leaves a CUSTOM op as it is, and
the passes do not rename a value a CUSTOM op reads).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from vgfc.ir import Graph, Operator, Tensor
from vgfc.record import replace

__all__ = ["edited", "in_order", "readers", "rebuild", "renamed", "resolved"]


def readers(operators: Iterable[Operator]) -> dict[str, list[Operator]]:
    """The operators that read each value, by value name (an op reading a value twice is listed
    twice)."""
    found: dict[str, list[Operator]] = {}
    for op in operators:
        for name in op.inputs:
            found.setdefault(name, []).append(op)
    return found


def in_order(graph: Graph) -> list[Operator]:
    """The operators in an order where each comes after the producers of what it reads: the
    program order where the file keeps one (the usual case, checked in one sweep), else a
    topological order (the graph is verified: it has no cycle)."""
    # A variable is read before the op that writes its next value (which is where the file has
    # it): it orders nothing.
    variables = {name for name, t in graph.tensors.items() if t.is_variable}
    produced: set[str] = set()
    made = {name for op in graph.operators for name in op.outputs} - variables
    for op in graph.operators:
        if any(name in made and name not in produced for name in op.inputs):
            break
        produced.update(op.outputs)
    else:
        return list(graph.operators)
    producer = {n: op.index for op in graph.operators for n in op.outputs if n in made}
    waiting = [
        len({producer[n] for n in op.inputs if n in producer and producer[n] != op.index})
        for op in graph.operators
    ]
    users: dict[int, set[int]] = {}
    for op in graph.operators:
        for n in op.inputs:
            if n in producer and producer[n] != op.index:
                users.setdefault(producer[n], set()).add(op.index)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    order: list[Operator] = []
    while ready:
        i = ready.pop(0)
        order.append(graph.operators[i])
        for j in sorted(users.get(i, ())):
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.append(j)
    return order


def resolved(rename: Mapping[str, str], name: str) -> str:
    """``name`` after every renaming in ``rename`` (which may chain: a -> b -> c)."""
    while name in rename:
        name = rename[name]
    return name


def renamed(op: Operator, rename: Mapping[str, str]) -> Operator:
    """``op`` reading the values ``rename`` replaces; a CUSTOM op is never changed."""
    if not rename or op.op == "CUSTOM":
        return op
    inputs = tuple(resolved(rename, n) for n in op.inputs)
    return op if inputs == op.inputs else replace(op, inputs=inputs)


def rebuild(
    graph: Graph,
    operators: Sequence[Operator],
    tensors: Mapping[str, Tensor] | None = None,
    dropped: Iterable[str] = (),
) -> Graph:
    """``graph`` with ``operators`` in that order, renumbered (``index`` the new position,
    ``source_index`` the op of the file), over ``tensors`` (default: the graph's) less those
    of ``dropped`` that no operator, input or output names any more."""
    ops = tuple(
        op if op.index == i else replace(op, index=i, source_index=op.file_index)
        for i, op in enumerate(operators)
    )
    table = dict(graph.tensors if tensors is None else tensors)
    gone = set(dropped)
    if gone:
        named = {*graph.inputs, *graph.outputs}
        for op in ops:
            named.update(op.inputs)
            named.update(op.outputs)
        for name in gone - named:
            table.pop(name, None)
    return replace(graph, operators=ops, tensors=MappingProxyType(table))


def edited(
    graph: Graph, changed: Mapping[int, Operator | None], rename: Mapping[str, str]
) -> Graph:
    """``graph`` with the operators ``changed`` names (by index) replaced, or removed where it
    maps them to ``None`` (their results dropped), and every operand renamed by ``rename``;
    ``graph`` itself when nothing changed."""
    if not changed:
        return graph
    operators = []
    dropped: list[str] = []
    for op in graph.operators:
        new = changed.get(op.index, op)
        if new is None:
            dropped.extend(op.outputs)
        else:
            operators.append(renamed(new, rename))
    return rebuild(graph, operators, dropped=dropped)
