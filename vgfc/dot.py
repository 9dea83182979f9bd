"""Graphviz view of a partition plan (``vgfc partition --dot``).

One cluster per partition; shader partitions are drawn as orange boxes, ML partitions as blue
clusters; edges that cross partitions carry the tensor's name. Constants are left out: they are
listed in the JSON view and would only clutter the picture.
"""

from __future__ import annotations

from vgfc.ir import Graph
from vgfc.partition import PartitionKind, Plan

__all__ = ["plan_to_dot"]

_STYLE = {
    PartitionKind.ML: 'style="rounded,filled"; fillcolor="#e8f0fe"; color="#4a76c9"',
    PartitionKind.SHADER: 'style="filled,bold"; fillcolor="#fff1e0"; color="#d9822b"',
}


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def plan_to_dot(graph: Graph, plan: Plan) -> str:
    """A ``digraph`` that ``dot -Tsvg`` renders."""
    lines = [
        "digraph vgfc_partitions {",
        "  rankdir=TB;",
        '  node [fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    node_of: dict[str, str] = {}
    for name in plan.inputs:
        node = f"in_{len(node_of)}"
        node_of[name] = node
        lines.append(f"  {node} [label={_q(name)}, shape=invhouse];")
    for p in plan.partitions:
        title = f"partition {p.id}: {p.kind.value}"
        lines.append(f"  subgraph cluster_p{p.id} {{")
        lines.append(f"    label={_q(title)}; {_STYLE[p.kind]};")
        for i in p.operators:
            op = graph.operators[i]
            shape = "box3d" if p.kind is PartitionKind.SHADER else "box"
            lines.append(f"    op{i} [label={_q(op.label())}, shape={shape}];")
            for out in op.outputs:
                node_of[out] = f"op{i}"
        lines.append("  }")
    part_of_node = {f"op{i}": p.id for p in plan.partitions for i in p.operators}
    edges: dict[tuple[str, str], list[str]] = {}
    for p in plan.partitions:
        for i in p.operators:
            for name in dict.fromkeys(graph.operators[i].inputs):
                src = node_of.get(name)
                if src is not None:
                    edges.setdefault((src, f"op{i}"), []).append(name)
    for n, name in enumerate(plan.outputs):
        sink = f"out_{n}"
        lines.append(f"  {sink} [label={_q(name)}, shape=house];")
        if name in node_of:
            edges.setdefault((node_of[name], sink), []).append(name)
    for (src, dst), names in edges.items():
        crossing = part_of_node.get(src) != part_of_node.get(dst)
        label = f" [label={_q(', '.join(names))}]" if crossing else ""
        lines.append(f"  {src} -> {dst}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"
