"""The partitioner: the rules of seed 001, and vgfc's earliest-partition placement."""

from __future__ import annotations

from graphs import make_graph
from hypothesis import given, settings
from hypothesis import strategies as st

from vgfc.ir import Graph
from vgfc.partition import PartitionKind, Plan, partition, program_order_count
from vgfc.verify import verify

ML, SH = PartitionKind.ML, PartitionKind.SHADER


def kinds(plan: Plan) -> list[PartitionKind]:
    return [p.kind for p in plan.partitions]


def test_ml_shader_ml() -> None:
    g = make_graph(
        [("ML", ["x", "x"], ["a"]), ("S", ["a"], ["b"]), ("ML", ["b", "x"], ["y"])], ["x"], ["y"]
    )
    plan = partition(g)
    assert kinds(plan) == [ML, SH, ML]
    p0, p1, p2 = plan.partitions
    assert (p0.operators, p1.operators, p2.operators) == ((0,), (1,), (2,))
    assert p0.inputs == ("x",) and p0.outputs == ("a",)
    assert p1.inputs == ("a",) and p1.outputs == ("b",)
    assert p2.inputs == ("b", "x") and p2.outputs == ("y",)
    assert p2.depends_on == (1,)
    assert "reads 'b' from shader partition 1" in p2.reason


def test_independent_ml_after_a_shader_joins_the_earlier_partition() -> None:
    """Program order: ML, shader, ML(x only), ML(shader result): 3 partitions by the reference
    rule; the independent op joins partition 0, but the total stays 3 and it moves."""
    g = make_graph(
        [
            ("ML", ["x", "x"], ["a"]),
            ("S", ["a"], ["b"]),
            ("ABS", ["x"], ["c"]),  # independent of the shader
            ("ML", ["b", "b"], ["y"]),
        ],
        ["x"],
        ["y", "c"],
    )
    plan = partition(g)
    assert kinds(plan) == [ML, SH, ML]
    assert plan.partitions[0].operators == (0, 2)
    assert plan.partitions[0].outputs == ("a", "c")
    assert plan.partitions[2].operators == (3,)


def test_independent_branch_saves_partitions_over_program_order() -> None:
    """ML, S1, ML (independent), S2 (reads the independent ML), ML: program order makes 5;
    the independent ML op and its shader move ahead, leaving ML, S1, S2, ML = 4."""
    g = make_graph(
        [
            ("ML", ["x", "x"], ["a"]),
            ("S", ["a"], ["b"]),
            ("ABS", ["x"], ["c"]),
            ("S", ["c"], ["d"]),
            ("ML", ["b", "d"], ["y"]),
        ],
        ["x"],
        ["y"],
    )
    plan = partition(g)
    assert program_order_count(g) == 5
    assert kinds(plan) == [ML, SH, SH, ML]
    assert plan.partitions[0].operators == (0, 2)
    assert plan.partitions[3].depends_on == (1, 2)


def test_independent_shaders_keep_program_order() -> None:
    g = make_graph(
        [("S", ["x"], ["a"]), ("S", ["x"], ["b"]), ("ML", ["a", "b"], ["y"])], ["x"], ["y"]
    )
    plan = partition(g)
    assert kinds(plan) == [SH, SH, ML]
    assert [p.operators for p in plan.partitions] == [(0,), (1,), (2,)]
    assert plan.partitions[0].reason.startswith("shader #0 CUSTOM 'shader0'")


def test_shader_chain_needs_no_ml_partition() -> None:
    g = make_graph([("S", ["x"], ["a"]), ("S", ["a"], ["y"])], ["x"], ["y"])
    plan = partition(g)
    assert kinds(plan) == [SH, SH]
    assert plan.partitions[1].depends_on == (0,)


def test_constants_go_with_every_partition_that_reads_them() -> None:
    g = make_graph(
        [
            ("C", [], ["k"]),
            ("ML", ["x", "k"], ["a"]),
            ("S", ["a", "k"], ["b"]),
            ("ML", ["b", "k"], ["y"]),
        ],
        ["x"],
        ["y"],
    )
    plan = partition(g)
    assert [p.constants for p in plan.partitions] == [(0,), (0,), (0,)]
    assert all("k" not in p.inputs for p in plan.partitions)
    assert all(0 not in p.operators for p in plan.partitions)


def test_a_constant_graph_output_is_materialised_once() -> None:
    g = make_graph([("C", [], ["k"]), ("S", ["x"], ["y"])], ["x"], ["y", "k"])
    plan = partition(g)
    assert kinds(plan) == [ML, SH]
    assert plan.partitions[0].constants == (0,)
    assert plan.partitions[0].outputs == ("k",)


def test_other_custom_domains_are_not_shaders() -> None:
    from dataclasses import replace
    from types import MappingProxyType

    g = make_graph([("S", ["x"], ["y"])], ["x"], ["y"])
    op = g.operators[0]
    other = replace(op, attrs=MappingProxyType({**op.attrs, "domain_name": "com.example.Other"}))
    plan = partition(replace(g, operators=(other,)))
    assert kinds(plan) == [ML]


# Property tests over random DAGs ---------------------------------------------------------------


@st.composite
def dags(draw: st.DrawFn, max_ops: int = 14) -> Graph:
    n = draw(st.integers(1, max_ops))
    available = ["x0", "x1"]
    ops = []
    for i in range(n):
        kind = draw(st.sampled_from(["ML", "ML", "S", "C"]))
        if kind == "C":
            ops.append(("C", [], [f"t{i}"]))
        else:
            ins = draw(st.lists(st.sampled_from(available), min_size=1, max_size=3))
            ops.append((kind, ins, [f"t{i}"]))
        available.append(f"t{i}")
    produced = [f"t{i}" for i in range(n)]
    read = {t for _, ins, _ in ops for t in ins}
    outputs = [t for t in produced if t not in read] or [produced[-1]]
    return make_graph(ops, ["x0", "x1"], outputs)


def _check_plan(g: Graph, plan: Plan) -> None:
    placed = [i for p in plan.partitions for i in p.operators]
    non_const = [op.index for op in g.operators if not op.is_constant]
    # Every non-constant op in exactly one partition.
    assert sorted(placed) == sorted(non_const)
    assert len(placed) == len(set(placed))
    part = {i: p for p in plan.partitions for i in p.operators}
    for p in plan.partitions:
        assert p.id == plan.partitions.index(p)
        assert p.operators or p.constants
        # No mixed kinds; a shader is alone.
        if p.kind is SH:
            assert len(p.operators) == 1 and g.operators[p.operators[0]].is_shader
        else:
            assert not any(g.operators[i].is_shader for i in p.operators)
        assert all(d < p.id for d in p.depends_on)
    producer = {o: op for op in g.operators for o in op.outputs}
    for op in g.operators:
        if op.is_constant:
            continue
        for name in op.inputs:
            prod = producer.get(name)
            if prod is None:
                continue
            if prod.is_constant:
                assert prod.index in part[op.index].constants
            else:
                # Dependencies respected: the producer runs first (or in the same ML partition).
                assert part[prod.index].id <= part[op.index].id
                if part[prod.index] is not part[op.index]:
                    assert name in part[op.index].inputs
                    assert name in part[prod.index].outputs
                    assert part[prod.index].id in part[op.index].depends_on
    # Every partition input is a graph input or an earlier partition's output.
    for p in plan.partitions:
        for name in p.inputs:
            assert name in g.inputs or any(name in q.outputs for q in plan.partitions[: p.id]), (
                name,
                p,
            )
    # Every graph output is written by some partition (or is a graph input).
    written = {o for p in plan.partitions for o in p.outputs}
    assert all(o in written or o in g.inputs for o in g.outputs)


@settings(max_examples=400, deadline=None)
@given(dags())
def test_random_dags_satisfy_the_partitioning_rules(g: Graph) -> None:
    verify(g)
    plan = partition(g)
    _check_plan(g, plan)
    shaders = sum(op.is_shader for op in g.operators)
    has_ml = any(not op.is_shader and not op.is_constant for op in g.operators)
    assert plan.program_order_count == program_order_count(g)
    # Only constants that are graph outputs and feed nothing get a partition without operators.
    assert sum(not p.operators for p in plan.partitions) <= 1
    # Never more partitions than the program-order rule; at least one per shader.
    non_orphan = [p for p in plan.partitions if p.operators]
    assert len(non_orphan) <= program_order_count(g)
    assert len(non_orphan) >= shaders + has_ml


@settings(max_examples=100, deadline=None)
@given(dags())
def test_partitioning_is_deterministic(g: Graph) -> None:
    assert partition(g) == partition(g)


def _brute_force_minimum(g: Graph) -> int:
    """The fewest partitions any valid plan has, by trying every kind sequence and shader order.

    Given the kinds of positions and where each shader sits, putting every ML op into the earliest
    ML position after its producers is optimal, so only those choices need enumerating.
    """
    import itertools

    from vgfc.verify import topological_order

    order = [op for op in topological_order(g) if not op.is_constant]
    shaders = [op for op in order if op.is_shader]
    n_ml = len(order) - len(shaders)
    producer = {o: op for op in g.operators for o in op.outputs if not op.is_constant}
    for total in range(len(shaders) + (n_ml > 0), len(order) + 1):
        for ml_slots in itertools.combinations(range(total), total - len(shaders)):
            shader_slots = [i for i in range(total) if i not in ml_slots]
            for perm in itertools.permutations(shader_slots):
                pos = {s.index: p for s, p in zip(shaders, perm, strict=True)}
                ok = True
                for op in order:
                    lower = max(
                        (
                            pos[producer[n].index] + (op.is_shader or producer[n].is_shader)
                            for n in op.inputs
                            if n in producer
                        ),
                        default=0,
                    )
                    if op.is_shader:
                        ok = pos[op.index] >= lower
                    else:
                        slot = next((m for m in ml_slots if m >= lower), None)
                        ok = slot is not None
                        pos[op.index] = slot if slot is not None else -1
                    if not ok:
                        break
                if ok:
                    return total
    raise AssertionError("no plan found")


@settings(max_examples=300, deadline=None)
@given(dags(max_ops=7))
def test_partition_count_is_minimal_on_small_dags(g: Graph) -> None:
    plan = partition(g)
    assert sum(bool(p.operators) for p in plan.partitions) == _brute_force_minimum(g)
