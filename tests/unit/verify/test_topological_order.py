"""``vgfc.verify.topological_order``: dependency order, program order among independent ops.

The usual file lists its operators in dependency order, and the function then returns that
list without its general walk; these tests hold both paths to one reference (repeatedly take
the ready operator with the smallest index), on graphs listed in order and shuffled.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vgfc.diagnostics import InputError
from vgfc.ir import DType, Graph, Operator, Tensor, Version
from vgfc.verify import topological_order


def _graph(edges: list[list[int]], listing: list[int]) -> Graph:
    """Op i reads the results of ops ``edges[i]`` (and the graph input when none); the graph
    lists the ops in ``listing`` order."""
    ops = {
        i: Operator(i, "ADD", tuple(f"t{j}" for j in deps) or ("x",), (f"t{i}",))
        for i, deps in enumerate(edges)
    }
    names = ["x", *(f"t{i}" for i in range(len(edges)))]
    tensors = {n: Tensor(n, (1,), DType.FP32) for n in names}
    return Graph(
        tensors,
        tuple(ops[i] for i in listing),
        ("x",),
        (f"t{len(edges) - 1}",),
        Version(1, 0, 0, False),
    )


def _reference(edges: list[list[int]]) -> list[int]:
    done: list[int] = []
    while len(done) < len(edges):
        ready = [i for i in range(len(edges)) if i not in done and all(d in done for d in edges[i])]
        done.append(min(ready))
    return done


@st.composite
def dags(draw: st.DrawFn) -> list[list[int]]:
    """Edges of a DAG whose indices are not a topological order: each op reads ops of a random
    earlier rank, and ranks are assigned to indices by a random permutation."""
    count = draw(st.integers(1, 12))
    rank_of = draw(st.permutations(range(count)))
    by_rank = sorted(range(count), key=lambda i: rank_of[i])
    edges: list[list[int]] = [[] for _ in range(count)]
    for r, op in enumerate(by_rank):
        if r:
            earlier = by_rank[:r]
            edges[op] = draw(st.lists(st.sampled_from(earlier), max_size=3, unique=True))
    return edges


@settings(max_examples=300, deadline=None)
@given(dags(), st.randoms(use_true_random=False))
def test_order_matches_the_reference(edges: list[list[int]], rnd: random.Random) -> None:
    listing = list(range(len(edges)))
    rnd.shuffle(listing)
    for order in (listing, sorted(listing)):
        got = [op.index for op in topological_order(_graph(edges, order))]
        assert got == _reference(edges)


def test_a_graph_in_program_order_comes_back_as_listed() -> None:
    g = _graph([[], [0], [0], [1, 2]], [0, 1, 2, 3])
    assert topological_order(g) == g.operators


def test_an_op_that_reads_a_later_op_goes_after_it() -> None:
    g = _graph([[1], [], [0]], [0, 1, 2])
    assert [op.index for op in topological_order(g)] == [1, 0, 2]


def test_a_cycle_is_named() -> None:
    g = _graph([[], [2], [1]], [0, 1, 2])
    with pytest.raises(InputError, match="op #1 ADD: tensor 't2': is part of a cycle"):
        topological_order(g)
