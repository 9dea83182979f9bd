"""Cutting a TOSA file into pieces for the reference model (vgfc/runner/subgraph.py): the pieces
read back as the operators asked for, and the reference model computes on them what it computes
on the whole file (the oracle: the uncut file run by tosa_reference_model)."""

from __future__ import annotations

import numpy as np
from tosa_factory import Op, T, build

from vgfc.read import loads
from vgfc.runner.numeric import run_reference_model
from vgfc.runner.subgraph import cut

C = np.array([[1.0, -2.0, 3.0, -4.0]], np.float32)


def model() -> bytes:
    tensors = [T("x"), T("c", data=C), T("a"), T("b"), T("y")]
    ops = [
        Op("CONST", [], ["c"]),
        Op("ADD", ["x", "c"], ["a"]),
        Op("ABS", ["a"], ["b"]),
        Op("ABS", ["b"], ["y"]),
    ]
    return build(tensors, ops, ["x"], ["y"])


def test_a_piece_holds_only_its_operators_and_tensors() -> None:
    piece = cut(model(), [0, 1], ["x"], ["a"])
    graph = loads(piece.data)
    assert [(o.op, o.inputs, o.outputs) for o in graph.operators] == [
        ("CONST", (), ("c",)),
        ("ADD", ("x", "c"), ("a",)),
    ]
    assert graph.inputs == ("x",) and graph.outputs == ("a",)
    assert set(graph.tensors) == {"x", "c", "a"}
    data = graph.tensors["c"].data
    assert data is not None and np.array_equal(data, C)  # the original bytes, unchanged


def test_pieces_compute_what_the_whole_file_computes() -> None:
    data = model()
    graph = loads(data)
    x = np.array([[-3.0, 0.5, -1.0, 9.0]], np.float32)
    whole = run_reference_model(data, graph, {"x": x}, ["y"])["y"]
    first = run_reference_model(cut(data, [0, 1], ["x"], ["a"]).data, graph, {"x": x}, ["a"])
    second = run_reference_model(cut(data, [2, 3], ["a"], ["y"]).data, graph, first, ["y"])
    np.testing.assert_array_equal(second["y"], whole)
    np.testing.assert_array_equal(whole, np.abs(x + C))
