"""Properties of the partitioner over random DAGs of ML ops, shaders and constants.

Every plan keeps the partitioning rules of seed 001 (``partition_checks.check_plan``), never has
more partitions than program order, as few as any valid plan on small graphs (found by
enumeration), comes out the same every time, and passes on exactly the tensors other partitions
or the graph's outputs read: the partitioner's fast account of which tensors cross partitions (no
table of readers per tensor) is held to the plain reading of the plan.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from partition_checks import brute_force_minimum, check_plan, dags

from vgfc.ir import Graph
from vgfc.partition import partition, program_order_count
from vgfc.record import replace

# Random DAGs of placeholder operators (an ADD of any arity): the graph's structure is what the
# partitioner reads, not the specification's conditions on each operator.
from vgfc.verify.structure import verify


@settings(max_examples=400, deadline=None)
@given(dags())
def test_random_dags_satisfy_the_partitioning_rules(g: Graph) -> None:
    verify(g)
    plan = partition(g)
    check_plan(g, plan)
    shaders = sum(op.is_shader for op in g.operators)
    has_ml = any(not op.is_shader and not op.is_constant for op in g.operators)
    assert plan.program_order_count == program_order_count(g)
    # Only constants that are graph outputs and feed nothing, or that a shader reads, get a
    # partition without operators.
    assert sum(not p.operators for p in plan.partitions) <= 1
    # Never more partitions than the program-order rule; at least one per shader.
    non_orphan = [p for p in plan.partitions if p.operators]
    assert len(non_orphan) <= program_order_count(g)
    assert len(non_orphan) >= shaders + has_ml


@settings(max_examples=100, deadline=None)
@given(dags())
def test_partitioning_is_deterministic(g: Graph) -> None:
    assert partition(g) == partition(g)


@settings(max_examples=300, deadline=None)
@given(dags(max_ops=7))
def test_partition_count_is_minimal_on_small_dags(g: Graph) -> None:
    plan = partition(g)
    assert sum(bool(p.operators) for p in plan.partitions) == brute_force_minimum(g)


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
        # A shader reads its constants from an ML partition; ML partitions hold theirs.
        shader = any(op.is_shader for op in ops)
        assert p.inputs == tuple(
            n for n in read if n not in computed and (shader or n not in constant)
        )
        passed_on = [o for o in computed if o in g.outputs or o in read_elsewhere]
        read_by_shaders = {
            n
            for q in plan.partitions
            for i in q.operators
            if g.operators[i].is_shader
            for n in g.operators[i].inputs
        }
        # Then the constants the graph returns or a shader reads, each by the first partition
        # listing it: the orphans it materialises, then those it reads, in the order it reads
        # them.
        orphans = [
            c
            for c in p.constants
            if not any(n in read or n in read_elsewhere for n in g.operators[c].outputs)
            or any(n in read_by_shaders for n in g.operators[c].outputs)
        ]
        const_order = [*orphans, *(producer[n].index for n in read if n in constant)]
        returned = [
            o
            for c in dict.fromkeys(const_order)
            if listed_first[c] == p.id
            for o in g.operators[c].outputs
            if o in g.outputs or o in read_by_shaders
        ]
        assert p.outputs == (*passed_on, *returned)
