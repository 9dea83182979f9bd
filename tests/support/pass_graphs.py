"""Small verified graphs for the pass stage's tests, written as lists of operators."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from vgfc.dtypes import numpy_dtype
from vgfc.ir import Data, DType, Graph, Operator, Tensor, Version
from vgfc.verify import verify

OpSpec = tuple[str, list[str], list[str], dict[str, Any]] | tuple[str, list[str], list[str]]


def pass_graph(
    ops: list[OpSpec],
    tensors: dict[str, tuple[tuple[int, ...], DType, Any]],
    inputs: list[str],
    outputs: list[str],
) -> Graph:
    """Operators as (op, inputs, outputs[, attributes]); tensors by name as (shape, type,
    constant values or None), the values held in the type's numpy form. A constant no op of
    ``ops`` makes gets a CONST (CONST_SHAPE) first. The graph is verified."""
    made = {n for spec in ops for n in spec[2]}
    specs: list[OpSpec] = [
        ("CONST_SHAPE" if dtype is DType.SHAPE else "CONST", [], [name], {})
        for name, (_, dtype, values) in tensors.items()
        if values is not None and name not in made
    ]
    table = {}
    for name, (shape, dtype, values) in tensors.items():
        data = None
        if values is not None:
            data = Data.of(np.asarray(values, numpy_dtype(dtype)).reshape(shape), dtype)
        table[name] = Tensor(name, shape, dtype, data, is_shape=dtype is DType.SHAPE)
    operators = tuple(
        Operator(i, spec[0], tuple(spec[1]), tuple(spec[2]), MappingProxyType(_attrs(spec)))
        for i, spec in enumerate([*specs, *ops])
    )
    graph = Graph(
        MappingProxyType(table), operators, tuple(inputs), tuple(outputs), Version(1, 0, 0, False)
    )
    verify(graph)
    return graph


def _attrs(spec: OpSpec) -> dict[str, Any]:
    return spec[3] if len(spec) == 4 else {}
