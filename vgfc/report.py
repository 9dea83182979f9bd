"""Machine-readable views of a partition plan (``vgfc partition --json``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vgfc.ir import Graph
from vgfc.partition import Plan
from vgfc.schema import load_schema

if TYPE_CHECKING:
    from vgfc.compiler import Compilation

__all__ = ["compile_report", "load_schema", "partition_json", "summarize_ops"]

PARTITION_FORMAT = "vgfc.partition/1"


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


REPORT_FORMAT = "vgfc.report/1"


def compile_report(c: Compilation, output: str | None) -> dict[str, Any]:
    """What ``vgfc compile --report`` writes, documented by ``schemas/report.schema.json``."""
    import hashlib

    from vgfc.resources import logical_bindings

    program = c.program
    binding_of = logical_bindings(c.graph, c.plan)
    shaders = []
    for index, m in sorted(c.resolved.shaders.items()):
        shaders.append(
            {
                "op": index,
                "name": m.spec.name,
                "language": m.spec.language,
                "entry_point": m.spec.entry_point,
                "spirv_bytes": len(m.spirv) if m.spirv is not None else None,
                "local_size": list(m.info.local_size) if m.info and m.info.local_size else None,
                "dispatch": list(m.dispatch),
                "push_constant_bytes": m.spec.push_constant_size,
                "bindings": [
                    {
                        "key": r.key,
                        "tensor": r.tensor,
                        "set": r.set,
                        "binding": r.binding,
                        "descriptor_type": r.descriptor_type,
                        "format": r.format,
                    }
                    for r in m.spec.resources
                ],
            }
        )
    return {
        "format": REPORT_FORMAT,
        "model": c.graph.source,
        "output": output,
        "tosa_version": str(c.graph.version),
        "vgf_bytes": len(c.vgf),
        "vgf_sha256": hashlib.sha256(c.vgf).hexdigest(),
        "partitions": partition_json(c.graph, c.plan)["partitions"],
        "modules": [
            {
                "index": i,
                "type": m.kind,
                "name": m.name,
                "entry_point": m.entry_point,
                "code": "SPIR-V" if m.spirv is not None else (m.language or "none"),
                "code_bytes": len(m.spirv) if m.spirv is not None else len(m.source or ""),
            }
            for i, m in enumerate(program.modules)
        ],
        "segments": [
            {
                "index": s.index,
                "type": s.kind,
                "name": s.name,
                "module": s.module,
                "partition": s.partition,
                "dispatch": list(s.dispatch),
                "push_constant_ranges": [
                    {"stage_flags": r.stage_flags, "offset": r.offset, "size": r.size}
                    for r in s.push_constant_ranges
                ],
                "descriptor_sets": [
                    {"set": d.set, "bindings": [[x.binding, x.resource] for x in d.slots]}
                    for d in s.descriptor_sets
                ],
                "inputs": [[x.binding, x.resource] for x in s.inputs],
                "outputs": [[x.binding, x.resource] for x in s.outputs],
                "constant_bindings": [list(b) for b in s.constant_bindings],
            }
            for s in program.segments
        ],
        "resources": [
            {
                "index": r.index,
                "category": r.category.value,
                "tensor": r.tensor,
                "binding": binding_of.get(r.tensor) if r.category.value != "constant" else None,
                "descriptor_type": r.descriptor_type,
                "format": r.format,
                "shape": list(r.shape),
                "alias_group": r.alias_group,
                "sampler": None if r.sampler is None else list(r.sampler.values()),
            }
            for r in program.resources
        ],
        "constants": [
            {"index": i, "resource": res, "bytes": len(data)}
            for i, (res, data) in enumerate(program.constants)
        ],
        "shaders": shaders,
        "inputs": [
            {"name": n, "binding": s.binding, "resource": s.resource} for n, s in program.inputs
        ],
        "outputs": [
            {"name": n, "binding": s.binding, "resource": s.resource} for n, s in program.outputs
        ],
        "warnings": [d.as_dict() for d in c.warnings],
        "timings": {name: round(seconds, 6) for name, seconds in c.timings},
    }
