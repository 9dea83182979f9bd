"""Small IR graphs built directly, for the pure stages (no flatbuffer round trip)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import MappingProxyType

import numpy as np

from vgfc.ir import CUSTOM_SHADER_DOMAIN, DType, Graph, Operator, Tensor, Version


def make_graph(
    ops: Sequence[tuple[str, Sequence[str], Sequence[str]]],
    inputs: Sequence[str],
    outputs: Sequence[str],
) -> Graph:
    """``ops`` are ``(kind, inputs, outputs)``: kind ``S`` is a shader, ``C`` a constant,
    anything else a TOSA op name (``ML`` is read as ``ADD``)."""
    tensors: dict[str, Tensor] = {}
    operators = []
    for name in inputs:
        tensors[name] = Tensor(name, (1, 4), DType.FP32)
    for i, (kind, ins, outs) in enumerate(ops):
        attrs: dict[str, object] = {}
        op = {"S": "CUSTOM", "C": "CONST", "ML": "ADD"}.get(kind, kind)
        if kind == "S":
            attrs = {
                "operator_name": f"shader{i}",
                "domain_name": CUSTOM_SHADER_DOMAIN,
                "implementation_attrs": json.dumps({}).encode(),
            }
        for out in outs:
            data = np.zeros((1, 4), np.float32) if kind == "C" else None
            tensors[out] = Tensor(out, (1, 4), DType.FP32, data)
        operators.append(Operator(i, op, tuple(ins), tuple(outs), MappingProxyType(attrs)))
    return Graph(
        tensors=MappingProxyType(tensors),
        operators=tuple(operators),
        inputs=tuple(inputs),
        outputs=tuple(outputs),
        version=Version(1, 0, 0, False),
        source="test.tosa",
    )
