"""Structural checks of a :class:`~vgfc.ir.Graph`.

Run after reading and, in tests, between stages. Each check names the operator (index and op) and
the tensor it is about. The checks are the ones every later stage relies on: names resolve, every
used value is defined exactly once, the graph is acyclic, element types are known, control-flow
ops refer to regions that exist.
"""

from __future__ import annotations

import heapq

from vgfc.diagnostics import InputError
from vgfc.ir import REGION_ATTRS, DType, Graph, Operator

__all__ = ["data_producers", "topological_order", "verify"]


# Constant data belongs to the CONST (CONST_SHAPE) op that produces it: every later stage finds
# constants through that op, so data without one (a CONST removed) is a broken model.
_ORPHAN_DATA = "constant data that no CONST or CONST_SHAPE operator produces"


def verify(graph: Graph) -> tuple[int, ...]:
    """Raise :class:`~vgfc.diagnostics.VgfcError` for the first structural problem found;
    return the operator indices in dependency order (:func:`topological_order`), which later
    stages take instead of computing it again."""
    where = graph.where()
    for kind, names in (("input", graph.inputs), ("output", graph.outputs)):
        for name in names:
            if name not in graph.tensors:
                raise InputError(f"graph {kind} is not a tensor of the model", where, tensor=name)
    if len(set(graph.inputs)) != len(graph.inputs):
        dup = next(n for n in graph.inputs if graph.inputs.count(n) > 1)
        raise InputError("tensor is listed twice as a graph input", where, tensor=dup)

    defined_by: dict[str, Operator | None] = dict.fromkeys(graph.inputs)
    for op in graph.operators:
        for name in (*op.inputs, *op.outputs):
            if name not in graph.tensors:
                at = graph.where(op)
                raise InputError("refers to a tensor the model does not define", at, tensor=name)
        for name in op.outputs:
            if name in defined_by:
                first = defined_by[name]
                other = f"op #{first.index} {first.op}" if first else "the graph input"
                raise InputError(
                    f"writes a tensor already written by {other}", graph.where(op), tensor=name
                )
            defined_by[name] = op
        if op.is_constant:
            if op.inputs:
                raise InputError("a constant takes no inputs", graph.where(op), tensor=op.inputs[0])
            for name in op.outputs:
                if graph.tensors[name].data is None:
                    raise InputError("constant has no data", graph.where(op), tensor=name)
        for key in REGION_ATTRS.get(op.op, ()):
            region = op.attrs.get(key)
            if not isinstance(region, str) or region not in graph.regions:
                raise InputError(
                    f"refers to region {region!r}, which the model lacks", graph.where(op), key=key
                )

    for op in graph.operators:
        for name in op.inputs:
            tensor = graph.tensors[name]
            if name in defined_by or tensor.is_variable:
                continue
            if tensor.data is not None:
                raise InputError(f"reads {_ORPHAN_DATA}", graph.where(op), tensor=name)
            raise InputError(
                "reads a tensor that is never written (not a graph input, constant or "
                "operator result)",
                graph.where(op),
                tensor=name,
            )
    for name in graph.outputs:
        if name not in defined_by:
            orphan = graph.tensors[name].data is not None
            message = (
                f"graph output is {_ORPHAN_DATA}" if orphan else "graph output is never written"
            )
            raise InputError(message, where, tensor=name)

    used = {n for op in graph.operators for n in (*op.inputs, *op.outputs)}
    for name in sorted(used | set(graph.inputs) | set(graph.outputs)):
        if graph.tensors[name].dtype is DType.UNKNOWN:
            raise InputError("tensor has no element type (UNKNOWN)", where, tensor=name)

    return tuple(op.index for op in topological_order(graph))


def data_producers(graph: Graph) -> dict[str, int]:
    """Tensor name -> index of the operator whose result it is, variables excluded."""
    return {
        out: op.index
        for op in graph.operators
        for out in op.outputs
        if not graph.tensors[out].is_variable
    }


def topological_order(graph: Graph) -> tuple[Operator, ...]:
    """The operators in dependency order, program order among independent ones.

    For a well-formed TOSA block this is program order itself. A variable (state kept across
    runs) is not a dependency: its readers see the value its writer left on the previous run.
    Raises :class:`~vgfc.diagnostics.InputError` naming an operator on a cycle.
    """
    producer = data_producers(graph)
    if _in_program_order(graph.operators, producer):
        return tuple(graph.operators)  # what the general walk below would return, at less cost
    consumers: dict[int, list[int]] = {op.index: [] for op in graph.operators}
    waiting: dict[int, int] = {}
    for op in graph.operators:
        deps = {producer[n] for n in op.inputs if n in producer}
        waiting[op.index] = len(deps)
        for d in deps:
            consumers[d].append(op.index)
    by_index = {op.index: op for op in graph.operators}
    ready = [i for i, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order: list[Operator] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(by_index[i])
        for c in consumers[i]:
            waiting[c] -= 1
            if waiting[c] == 0:
                heapq.heappush(ready, c)
    if len(order) != len(graph.operators):
        stuck = min(i for i, n in waiting.items() if n > 0)
        op = by_index[stuck]
        cycle_input = next(n for n in op.inputs if n in producer and waiting[producer[n]] > 0)
        raise InputError(
            "is part of a cycle: it depends, through its input, on its own result",
            graph.where(op),
            tensor=cycle_input,
        )
    return tuple(order)


def _in_program_order(operators: tuple[Operator, ...], producer: dict[str, int]) -> bool:
    """Whether the operators, as listed, have increasing indices and each reads only results of
    operators before it: then that list is the dependency order (the usual case)."""
    done: set[int] = set()
    last = -1
    for op in operators:
        if op.index <= last:
            return False
        for name in op.inputs:
            source = producer.get(name)
            if source is not None and source not in done:
                return False
        done.add(op.index)
        last = op.index
    return True
