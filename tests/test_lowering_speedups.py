"""What the faster partitioner and graph lowering rely on, checked directly.

The plans and modules themselves are pinned by ``test_partition``, ``test_tosa_lowering`` and the
byte-for-byte comparisons with the reference converter; these tests cover the mechanisms behind
the speed: a module built on a copy of a shared prologue, the graph body's deferred range check,
and the partitioner's account of which tensors cross partitions (no table of readers per tensor).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_partition import dags
from test_spirv_builder import graph_module

from vgfc.diagnostics import InternalError
from vgfc.ir import Graph
from vgfc.partition import partition
from vgfc.spirv.builder import ModuleBuilder
from vgfc.spirv.tensors import BASE_CAPABILITIES, BASE_EXTENSIONS
from vgfc.verify import verify


def test_a_copy_goes_on_as_the_original_would_and_leaves_it_alone() -> None:
    prologue = ModuleBuilder()
    prologue.capability(*BASE_CAPABILITIES)
    prologue.extension(*BASE_EXTENSIONS)
    before = prologue.to_bytes()

    assert graph_module(prologue.copy()).to_bytes() == graph_module().to_bytes()
    other = prologue.copy()
    other.capability("Int16")
    other.type_int(16)
    other.constant_u32(7)
    assert prologue.to_bytes() == before
    # Ids continue from the copy's own count, not the original's.
    assert prologue.copy().new_id() == other.new_id() - 3


@pytest.mark.parametrize("word", [1 << 32, -1])
def test_a_graph_body_operand_out_of_range_is_an_internal_error(word: int) -> None:
    b = graph_module()
    b.ext_inst(word, 1, 0, [])
    with pytest.raises(InternalError, match="does not fit in a 32-bit word"):
        b.to_bytes()


@settings(max_examples=300, deadline=None)
@given(dags(max_ops=16), st.data())
def test_partitions_pass_on_exactly_what_others_read(g: Graph, data: st.DataObject) -> None:
    names = [o for op in g.operators for o in op.outputs]
    outputs = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=5, unique=True))
    g = replace(g, outputs=tuple(outputs))
    verify(g)
    plan = partition(g)
    producer = {o: op for op in g.operators for o in op.outputs}
    constant = {o for o, op in producer.items() if op.is_constant}
    listed_first: dict[int, int] = {}  # constant op -> the first partition listing it
    for p in plan.partitions:
        for c in p.constants:
            listed_first.setdefault(c, p.id)
    for p in plan.partitions:
        ops = [g.operators[i] for i in p.operators]
        computed = [o for op in ops for o in op.outputs]
        read = list(dict.fromkeys(n for op in ops for n in op.inputs))
        read_elsewhere = {
            n
            for q in plan.partitions
            if q.id != p.id
            for i in q.operators
            for n in g.operators[i].inputs
        }
        assert p.inputs == tuple(n for n in read if n not in computed and n not in constant)
        passed_on = [o for o in computed if o in g.outputs or o in read_elsewhere]
        # Then the constants the graph returns, each by the first partition listing it: the
        # orphans it materialises, then those it reads, in the order it reads them.
        orphans = [c for c in p.constants if not any(n in read for n in g.operators[c].outputs)]
        const_order = [*orphans, *(producer[n].index for n in read if n in constant)]
        returned = [
            o
            for c in dict.fromkeys(const_order)
            if listed_first[c] == p.id
            for o in g.operators[c].outputs
            if o in g.outputs
        ]
        assert p.outputs == (*passed_on, *returned)
