"""Random graphs for the partitioner, and what every plan must satisfy.

``dags`` draws DAGs of ML ops, shaders and constants (through :func:`graphs.make_graph`);
``check_plan`` asserts the partitioning rules of seed 001 on a plan; ``brute_force_minimum``
counts the fewest partitions any valid plan has, by enumeration, for small graphs. The
partitioner's own properties and the kernel-binding properties (graphs with expanded and inserted
ops) both hold plans to these.
"""

from __future__ import annotations

import itertools

from graphs import make_graph
from hypothesis import strategies as st

from vgfc.ir import Graph
from vgfc.partition import PartitionKind, Plan
from vgfc.verify import topological_order

SH = PartitionKind.SHADER


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


def check_plan(g: Graph, plan: Plan) -> None:
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
            if prod.is_constant and op.is_shader:
                # A shader holds no constant: an earlier ML partition passes it on.
                home = next(q for q in plan.partitions if prod.index in q.constants)
                assert home.kind is PartitionKind.ML and home.id < part[op.index].id
                assert name in home.outputs and name in part[op.index].inputs
                assert home.id in part[op.index].depends_on
            elif prod.is_constant:
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


def brute_force_minimum(g: Graph) -> int:
    """The fewest partitions any valid plan has, by trying every kind sequence and shader order.

    Given the kinds of positions and where each shader sits, putting every ML op into the earliest
    ML position after its producers is optimal, so only those choices need enumerating.
    """
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
