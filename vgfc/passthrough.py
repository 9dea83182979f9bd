"""Graph outputs that are graph inputs: give each a value of its own, made by an IDENTITY op.

A model may hand an input straight back as an output (ExecuTorch's ``unfold`` and ``fold``
tests do: ``outputs: [x, f(x, y)]``). Nothing in the graph computes such an output, and a
tensor name that is both a sequence input and a sequence output would need one binding for
two resources. So before any other stage sees the graph, each such output becomes a new tensor
written by an inserted ``IDENTITY`` of the input: lowering folds the IDENTITY away, and the
graph module sets its output to the input's value (the reference converter writes the same
graph when a model is nothing but its input). The VGF still names the output as the model
does (:attr:`vgfc.ir.Graph.output_names`).

The pass runs before the structural checks, so it leaves alone what those must refuse: a name
that is no tensor of the model.
"""

from __future__ import annotations

from types import MappingProxyType

from vgfc.ir import Graph, Operator, TensorsAdded
from vgfc.record import replace

__all__ = ["COPY_REASON", "copy_passthrough_outputs"]

COPY_REASON = "inserted to copy a graph input that is also a graph output"
"""Why the pass added an IDENTITY op (its :attr:`~vgfc.ir.Operator.inserted`)."""


def _fresh(name: str, taken: set[str]) -> str:
    """``name.output``, or ``name.output.N`` if the model already has that name."""
    fresh, n = f"{name}.output", 1
    while fresh in taken:
        fresh, n = f"{name}.output.{n}", n + 1
    taken.add(fresh)
    return fresh


def copy_passthrough_outputs(graph: Graph) -> Graph:
    """``graph`` with every graph output that is also a graph input replaced by a copy of it
    (the same graph when there is none)."""
    inputs = set(graph.inputs)
    passed = [n for n in dict.fromkeys(graph.outputs) if n in inputs and n in graph.tensors]
    if not passed:
        return graph
    taken = set(graph.tensors)
    copies = {name: _fresh(name, taken) for name in passed}
    added = {copy: replace(graph.tensors[name], name=copy) for name, copy in copies.items()}
    first = len(graph.operators)
    ops = tuple(
        Operator(
            index=first + k,
            op="IDENTITY",
            inputs=(name,),
            outputs=(copy,),
            attrs=MappingProxyType({}),
            inserted=COPY_REASON,
        )
        for k, (name, copy) in enumerate(copies.items())
    )
    return replace(
        graph,
        tensors=TensorsAdded(graph.tensors, added),
        operators=(*graph.operators, *ops),
        outputs=tuple(copies.get(n, n) for n in graph.outputs),
        output_names=graph.output_names or graph.outputs,
    )
