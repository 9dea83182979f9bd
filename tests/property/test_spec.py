"""The specification's rules on hostile operators: any operand count, rank, element type,
constant and attribute value gives violations or nothing, never an exception of another kind
(which would be an internal error, exit 3)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from vgfc.diagnostics import VgfcError
from vgfc.ir import Data, DType, Graph, Operator, Tensor, Version
from vgfc.verify.spec import RULES, spec_errors

_TYPES = [
    DType.BOOL, DType.INT4, DType.INT8, DType.INT16, DType.INT32, DType.INT48, DType.FP16,
    DType.BF16, DType.FP32, DType.SHAPE, DType.FP8E4M3,
]  # fmt: skip
_KEYS = [
    "pad", "stride", "dilation", "kernel", "axis", "perms", "out_pad", "min_val", "max_val",
    "scale32", "per_channel", "input_unsigned", "output_unsigned", "rounding_mode",
    "then_graph", "else_graph", "cond_graph", "body_graph", "mode",
]  # fmt: skip
_VALUES = st.sampled_from(
    [None, 0, -1, 3, True, 1.5, float("nan"), "X", "DOUBLE_ROUND", (), (1,), (0, 0, 0, 0),
     (-1, 2), (2, 2, 2), (1,) * 6, (9000, 1), ("a",), b"x"]
)  # fmt: skip
_SHAPES = st.lists(st.sampled_from([0, 1, 2, 3, 5, -1, 16384]), max_size=7).map(tuple)


@st.composite
def operators(draw: Any) -> Graph:
    op = draw(st.sampled_from(sorted(RULES)))
    tensors: dict[str, Tensor] = {}
    ops: list[Operator] = []
    inputs = []
    for i in range(draw(st.integers(0, 6))):
        dtype, shape = draw(st.sampled_from(_TYPES)), draw(_SHAPES)
        data = None
        small = min(shape, default=0) >= 0 and int(np.prod(shape)) <= 32
        if small and dtype is not DType.FP8E4M3 and draw(st.booleans()):
            values = draw(st.lists(st.integers(-40000, 40000), min_size=int(np.prod(shape))))
            data = Data.of(np.asarray(values[: int(np.prod(shape))]).reshape(shape), dtype)
        name = f"i{i}"
        tensors[name] = Tensor(name, shape, dtype, data)
        inputs.append(name)
        if data is not None:
            ops.append(Operator(len(ops), "CONST", (), (name,)))
    outputs = []
    for i in range(draw(st.integers(0, 3))):
        name = f"o{i}"
        tensors[name] = Tensor(name, draw(_SHAPES), draw(st.sampled_from(_TYPES)))
        outputs.append(name)
    keys = draw(st.lists(st.sampled_from(_KEYS), max_size=6, unique=True))
    attrs = {key: draw(_VALUES) for key in keys}
    ops.append(Operator(len(ops), op, tuple(inputs), tuple(outputs), MappingProxyType(attrs)))
    return Graph(
        tensors=MappingProxyType(tensors),
        operators=tuple(ops),
        inputs=tuple(n for n in inputs if tensors[n].data is None),
        outputs=tuple(outputs),
        version=Version(1, 0, 0, False),
        source="m.tosa",
    )


@settings(max_examples=600, deadline=None)
@given(operators())
def test_rules_never_raise_anything_but_a_diagnostic(g: Graph) -> None:
    try:
        errors = spec_errors(g)
    except VgfcError:  # an operand count the instruction does not take
        return
    for error in errors:
        assert str(error).startswith("m.tosa: op #"), error
