"""Machine-readable views of a partition plan (``vgfc partition --json``)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from vgfc.ir import Graph
from vgfc.partition import Plan

__all__ = ["load_schema", "partition_json", "summarize_ops"]

PARTITION_FORMAT = "vgfc.partition/1"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A JSON schema shipped in ``vgfc/schemas`` (``schemas/`` at the top of the repository)."""
    text = resources.files("vgfc").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def summarize_ops(graph: Graph, indices: tuple[int, ...]) -> str:
    """``CONV2D x2, ADD`` for ML work, ``CUSTOM 'blur'`` for a shader."""
    counts: dict[str, int] = {}
    for i in indices:
        op = graph.operators[i]
        label = f"CUSTOM '{op.custom_name}'" if op.custom_name else op.op
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(k if n == 1 else f"{k} x{n}" for k, n in counts.items())


def partition_json(graph: Graph, plan: Plan) -> dict[str, Any]:
    """The plan as plain JSON data, documented by ``schemas/partition.schema.json``."""
    kinds = [p.kind.value for p in plan.partitions]
    return {
        "format": PARTITION_FORMAT,
        "model": graph.source,
        "tosa_version": str(graph.version),
        "inputs": list(plan.inputs),
        "outputs": list(plan.outputs),
        "partitions": [
            {
                "id": p.id,
                "kind": p.kind.value,
                "operators": list(p.operators),
                "constants": list(p.constants),
                "ops": [_op_json(graph, i) for i in p.operators],
                "inputs": list(p.inputs),
                "outputs": list(p.outputs),
                "depends_on": list(p.depends_on),
                "reason": p.reason,
            }
            for p in plan.partitions
        ],
        "summary": {
            "partitions": len(plan.partitions),
            "ml": kinds.count("ml"),
            "shader": kinds.count("shader"),
            "operators": len(graph.operators),
            "program_order_partitions": plan.program_order_count,
        },
    }


def _op_json(graph: Graph, index: int) -> dict[str, Any]:
    op = graph.operators[index]
    out: dict[str, Any] = {"index": op.index, "op": op.op}
    if op.custom_name is not None:
        out["name"] = op.custom_name
        out["domain"] = op.domain
    return out
