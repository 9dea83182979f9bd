"""The identities pass: x*1, x+0, x-0 removed only where every bit stays; SELECT of NOT swapped."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from pass_graphs import pass_graph

from vgfc.ir import DType, Graph, Operator
from vgfc.passes import run_passes
from vgfc.passes.identities import identities
from vgfc.verify import verify

F = DType.FP32


def _graph(
    ops: list[tuple[str, list[str], list[str]]],
    tensors: Mapping[str, tuple[tuple[int, ...], DType, Any]],
    outputs: list[str],
) -> Graph:
    return pass_graph(list(ops), dict(tensors), ["x"], outputs)


def _left(graph: Graph) -> list[str]:
    return [op.op for op in run_passes(graph).graph.operators if op.op not in ("CONST",)]


def _arith(op: str, constant: float, dtype: DType = F, read_by: str = "ABS") -> Graph:
    """x -> ABS -> ``op`` with a constant splat -> ``read_by`` -> y."""
    shift = [("shift", ((1,), DType.INT8, [0]))] if op == "MUL" else []
    tensors = {
        "x": ((2, 3), dtype, None),
        "a": ((2, 3), dtype, None),
        "c": ((1, 1), dtype, [constant]),
        **dict(shift),
        "b": ((2, 3), dtype, None),
        "y": ((2, 3), dtype, None),
    }
    inputs = ["a", "c", "shift"] if op == "MUL" else ["a", "c"]
    return _graph(
        [("ABS", ["x"], ["a"]), (op, inputs, ["b"]), (read_by, ["b"], ["y"])], tensors, ["y"]
    )


@pytest.mark.parametrize(
    ("op", "constant", "dtype"),
    [
        ("MUL", 1.0, F),
        ("MUL", 1, DType.INT32),
        ("ADD", -0.0, F),
        ("ADD", 0, DType.INT32),
        ("SUB", 0.0, F),
        ("SUB", 0, DType.INT32),
    ],
)
def test_an_identity_that_keeps_every_bit_is_removed(
    op: str, constant: float, dtype: DType
) -> None:
    assert _left(_arith(op, constant, dtype)) == ["ABS", "ABS"]


@pytest.mark.parametrize(
    ("op", "constant"), [("MUL", 2.0), ("ADD", 0.0), ("SUB", -0.0), ("ADD", 1.0), ("MUL", -1.0)]
)
def test_one_that_could_change_a_bit_stays(op: str, constant: float) -> None:
    # x + (+0.0) turns -0.0 into +0.0, and ABS's reader here would see it (negate: no conv)
    assert op in _left(_arith(op, constant))


def test_adding_plus_zero_goes_where_only_a_convolution_reads_it() -> None:
    def conv_graph(bias: float) -> Graph:
        tensors = {
            "x": ((1, 2, 2, 3), F, None),
            "a": ((1, 2, 2, 3), F, None),
            "z": ((1, 1, 1, 3), F, [0.0, 0.0, 0.0]),
            "b": ((1, 2, 2, 3), F, None),
            "w": ((4, 1, 1, 3), F, np.ones(12)),
            "bias": ((4,), F, [bias] * 4),
            "zp": ((1,), F, [0.0]),
            "y": ((1, 2, 2, 4), F, None),
        }
        graph = _graph(
            [
                ("ABS", ["x"], ["a"]),
                ("ADD", ["a", "z"], ["b"]),
                ("CONV2D", ["b", "w", "bias", "zp", "zp"], ["y"]),
            ],
            tensors,
            ["y"],
        )
        attrs: Mapping[str, Any] = MappingProxyType(
            {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "acc_type": F}
        )
        ops = tuple(
            Operator(op.index, op.op, op.inputs, op.outputs, attrs) if op.op == "CONV2D" else op
            for op in graph.operators
        )
        return Graph(graph.tensors, ops, graph.inputs, graph.outputs, graph.version)

    assert "ADD" not in [op.op for op in identities(conv_graph(0.5)).graph.operators]
    # a bias of -0.0 would let the sum of zeros keep the input's sign: the ADD stays
    assert "ADD" in [op.op for op in identities(conv_graph(-0.0)).graph.operators]


def test_a_graph_input_times_one_stays_a_signalling_nan_would_be_quieted() -> None:
    tensors = {
        "x": ((2,), F, None),
        "c": ((2,), F, [1.0, 1.0]),
        "shift": ((1,), DType.INT8, [0]),
        "b": ((2,), F, None),
        "y": ((2,), F, None),
    }
    graph = _graph([("MUL", ["x", "c", "shift"], ["b"]), ("ABS", ["b"], ["y"])], tensors, ["y"])
    assert "MUL" in _left(graph)


def test_select_of_a_negation_selects_the_other_way() -> None:
    tensors = {
        "x": ((3,), DType.BOOL, None),
        "n": ((3,), DType.BOOL, None),
        "p": ((3,), DType.INT32, [1, 2, 3]),
        "q": ((3,), DType.INT32, [4, 5, 6]),
        "s": ((3,), DType.INT32, None),
        "y": ((3,), DType.INT32, None),
    }
    graph = _graph(
        [("LOGICAL_NOT", ["x"], ["n"]), ("SELECT", ["n", "p", "q"], ["s"]), ("ABS", ["s"], ["y"])],
        tensors,
        ["y"],
    )
    done = run_passes(graph)
    verify(done.graph)
    select = next(op for op in done.graph.operators if op.op == "SELECT")
    assert select.inputs == ("x", "q", "p")
    assert "LOGICAL_NOT" not in [op.op for op in done.graph.operators]
