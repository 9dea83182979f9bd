"""The ``simplify`` pass's rules that the reference converter's canonicaliser also applies: a
CLAMP that keeps every value of its type, and SLICE of CONCAT (found on int8 TFLite networks and
ExecuTorch's LSTM and GRU graphs, where they were the whole difference in operator counts)."""

from __future__ import annotations

from typing import Any

import pytest
from pass_graphs import pass_graph

from vgfc.ir import DType, Graph
from vgfc.passes import run_passes
from vgfc.verify import verify

I8, F = DType.INT8, DType.FP32
INF = float("inf")


def _kept(graph: Graph) -> list[tuple[str, tuple[str, ...]]]:
    done = run_passes(graph)
    verify(done.graph)
    return [(op.op, op.inputs) for op in done.graph.operators if not op.is_constant]


def _clamp(dtype: DType, low: float, high: float, nan_mode: str = "PROPAGATE") -> Graph:
    attrs = {"min_val": low, "max_val": high, "nan_mode": nan_mode}
    return pass_graph(
        [("CLAMP", ["x"], ["a"], attrs), ("REVERSE", ["a"], ["y"], {"axis": 0})],
        {n: ((2, 3), dtype, None) for n in "xay"},
        ["x"],
        ["y"],
    )


@pytest.mark.parametrize(
    ("dtype", "low", "high", "nan_mode"),
    [
        (I8, -128, 127, "PROPAGATE"),
        (DType.INT16, -32768, 32767, "PROPAGATE"),
        (F, -INF, INF, "PROPAGATE"),
    ],
    ids=["int8", "int16", "fp32"],
)
def test_a_clamp_over_the_whole_type_is_removed(
    dtype: DType, low: float, high: float, nan_mode: str
) -> None:
    assert _kept(_clamp(dtype, low, high, nan_mode)) == [("REVERSE", ("x",))]


@pytest.mark.parametrize(
    ("dtype", "low", "high", "nan_mode"),
    [
        (I8, -127, 127, "PROPAGATE"),  # -128 becomes -127
        (I8, -128, 126, "PROPAGATE"),
        (F, -INF, INF, "IGNORE"),  # a NaN becomes -inf
        (F, -3.4028234663852886e38, INF, "PROPAGATE"),  # -inf becomes the lowest float
    ],
    ids=["int8-low", "int8-high", "fp32-ignore", "fp32-finite"],
)
def test_a_clamp_that_changes_a_value_stays(
    dtype: DType, low: float, high: float, nan_mode: str
) -> None:
    assert [op for op, _ in _kept(_clamp(dtype, low, high, nan_mode))] == ["CLAMP", "REVERSE"]


def _slice_of_concat(start: list[int], size: list[int]) -> Graph:
    """CONCAT of a (2x3), b (1x3) and c (2x3) on axis 0 (rows 0-1, 2, 3-4), then SLICE."""
    shapes: dict[str, Any] = {
        "a": ((2, 3), F, None),
        "b": ((1, 3), F, None),
        "c": ((2, 3), F, None),
        "j": ((5, 3), F, None),
        "s": ((2,), DType.SHAPE, start),
        "n": ((2,), DType.SHAPE, size),
        "t": (tuple(size), F, None),
        "y": (tuple(size), F, None),
    }
    return pass_graph(
        [
            ("CONCAT", ["a", "b", "c"], ["j"], {"axis": 0}),
            ("SLICE", ["j", "s", "n"], ["t"], {}),
            ("ABS", ["t"], ["y"], {}),
        ],
        shapes,
        ["a", "b", "c"],
        ["y"],
    )


@pytest.mark.parametrize(
    ("start", "size", "read"),
    [([2, 0], [1, 3], "b"), ([3, 0], [2, 3], "c"), ([0, 0], [2, 3], "a")],
    ids=["middle", "last", "first"],
)
def test_a_slice_of_one_whole_concat_operand_is_that_operand(
    start: list[int], size: list[int], read: str
) -> None:
    assert _kept(_slice_of_concat(start, size)) == [("ABS", (read,))]


def test_a_slice_within_the_first_operand_slices_it() -> None:
    kept = _kept(_slice_of_concat([0, 1], [1, 2]))
    assert [(op, inputs[0]) for op, inputs in kept] == [("SLICE", "a"), ("ABS", "t")]


@pytest.mark.parametrize(
    ("start", "size"),
    [([1, 0], [2, 3]), ([3, 1], [1, 2]), ([4, 0], [1, 3])],
    ids=["across-two", "part-of-last", "end-of-last"],
)
def test_other_slices_of_a_concat_stay(start: list[int], size: list[int]) -> None:
    assert [op for op, _ in _kept(_slice_of_concat(start, size))] == ["CONCAT", "SLICE", "ABS"]
