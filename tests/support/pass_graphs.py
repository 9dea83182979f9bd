"""Small verified graphs for the pass stage's tests, written as lists of operators."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from vgfc.ir import Data, DType, Graph, Operator, Tensor, Version
from vgfc.verify import verify

OpSpec = tuple[str, list[str], list[str], dict[str, Any]]


def pass_graph(
    ops: list[OpSpec],
    tensors: dict[str, tuple[tuple[int, ...], DType, Any]],
    inputs: list[str],
    outputs: list[str],
) -> Graph:
    """Tensors by name: (shape, type, constant values or None); a constant no op of ``ops``
    makes gets a CONST (CONST_SHAPE) first. The graph is verified."""
    made = {n for _, _, outs, _ in ops for n in outs}
    ops = [
        ("CONST_SHAPE" if dtype is DType.SHAPE else "CONST", [], [name], {})
        for name, (_, dtype, values) in tensors.items()
        if values is not None and name not in made
    ] + ops
    table = {}
    for name, (shape, dtype, values) in tensors.items():
        data = None if values is None else Data.of(np.asarray(values).reshape(shape), dtype)
        table[name] = Tensor(name, shape, dtype, data, is_shape=dtype is DType.SHAPE)
    operators = tuple(
        Operator(i, op, tuple(ins), tuple(outs), MappingProxyType(attrs))
        for i, (op, ins, outs, attrs) in enumerate(ops)
    )
    graph = Graph(
        MappingProxyType(table), operators, tuple(inputs), tuple(outputs), Version(1, 0, 0, False)
    )
    verify(graph)
    return graph
