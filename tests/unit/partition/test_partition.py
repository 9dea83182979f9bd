"""The partitioner: the rules of seed 001, and vgfc's earliest-partition placement."""

from __future__ import annotations

from graphs import make_graph

from vgfc.partition import PartitionKind, Plan, partition, program_order_count

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
    # ML partitions hold the constant; the shader cannot, so it reads it from the first one.
    assert [p.constants for p in plan.partitions] == [(0,), (), (0,)]
    p0, p1, p2 = plan.partitions
    assert p0.outputs == ("a", "k") and p1.inputs == ("a", "k") and p1.depends_on == (0,)
    assert "k" not in p2.inputs
    assert all(0 not in p.operators for p in plan.partitions)


def test_a_constant_a_leading_shader_reads_opens_an_ml_partition_before_it() -> None:
    """The reference converter's layout: a graph segment of its own emits the constant."""
    g = make_graph(
        [
            ("C", [], ["k"]),
            ("S", ["x", "k"], ["a"]),
            ("ML", ["a", "a"], ["b"]),
            ("S", ["b", "k"], ["y"]),
        ],
        ["x"],
        ["y"],
    )
    plan = partition(g)
    assert kinds(plan) == [ML, SH, ML, SH]
    p0, p1, p2, p3 = plan.partitions
    assert (p0.operators, p0.constants, p0.outputs) == ((), (0,), ("k",))
    assert "shaders read" in p0.reason
    assert p1.inputs == ("x", "k") and p1.depends_on == (0,)
    assert p3.inputs == ("b", "k") and p3.depends_on == (0, 2)
    assert p2.constants == ()


def test_a_shader_after_the_first_ml_partition_reads_its_constant_from_it() -> None:
    g = make_graph(
        [("ML", ["x", "x"], ["a"]), ("C", [], ["k"]), ("S", ["a", "k"], ["y"])], ["x"], ["y"]
    )
    plan = partition(g)
    assert kinds(plan) == [ML, SH]
    assert plan.partitions[0].outputs == ("a", "k") and plan.partitions[0].constants == (1,)


def test_a_constant_graph_output_is_materialised_once() -> None:
    g = make_graph([("C", [], ["k"]), ("S", ["x"], ["y"])], ["x"], ["y", "k"])
    plan = partition(g)
    assert kinds(plan) == [ML, SH]
    assert plan.partitions[0].constants == (0,)
    assert plan.partitions[0].outputs == ("k",)


def test_other_custom_domains_are_not_shaders() -> None:
    from types import MappingProxyType

    from vgfc.record import replace

    g = make_graph([("S", ["x"], ["y"])], ["x"], ["y"])
    op = g.operators[0]
    other = replace(op, attrs=MappingProxyType({**op.attrs, "domain_name": "com.example.Other"}))
    plan = partition(replace(g, operators=(other,)))
    assert kinds(plan) == [ML]
