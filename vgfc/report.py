"""Machine-readable views of a partition plan (``vgfc partition --json``)."""

from __future__ import annotations

from vgfc.ir import Graph
from vgfc.partition import Plan
from vgfc.schema import load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.compiler import Compilation

__all__ = ["compile_report", "kernel_lines", "load_schema", "partition_json", "summarize_ops"]

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
    if op.source_index is not None:
        out["source_index"] = op.source_index
    if op.inserted is not None:
        out["inserted"] = op.inserted
    return out


def kernel_lines(c: Compilation) -> list[str]:
    """One line per custom op a kernel library bound and per op vgfc added, for terminals."""
    graph = c.graph
    if graph is None:
        return []
    lines = []
    for index, entry, kernel in c.kernels:
        op = graph.operators[index]
        how = "expanded into built-ins" if kernel == "compose" else f"kernel '{kernel}'"
        lines.append(f"op #{op.file_index} {entry}: {how}")
    for op in graph.operators:
        if op.inserted is not None and op.inserted.startswith("inserted"):
            lines.append(f"  {op.label()}")
    return lines


REPORT_FORMAT = "vgfc.report/2"


def compile_report(
    c: Compilation, output: str | None, written: tuple[int, str] | None = None
) -> dict[str, Any]:
    """What ``vgfc compile --report`` writes, documented by ``schemas/report.schema.json``. Its
    ``vgf`` section is the ``vgfc inspect --json`` document of the file, with provenance.

    ``written`` is (size, SHA-256) of a VGF file that was streamed to disk
    (:func:`vgfc.vgf.encode.encode_to`) rather than held in ``c.vgf``."""
    import hashlib
    import json

    from vgfc.lower.shader import ShaderModule
    from vgfc.vgf.decode import format_version
    from vgfc.vgf.encode import FORMAT_VERSION
    from vgfc.vgf.model import model_json

    graph, plan, model, vgf = c.graph, c.plan, c.model, c.vgf
    if graph is None or plan is None or model is None or (vgf is None and written is None):
        raise ValueError("a report needs a finished compilation")
    shaders = []
    for m in c.modules:
        if not isinstance(m, ShaderModule):
            continue
        shaders.append(
            {
                "op": m.op.index,
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
                "metadata": {k: json.loads(v) for k, v in m.spec.metadata},
            }
        )
    file_json = model_json(model)
    if vgf is not None:
        file_json["version"] = format_version(vgf)
        size, sha256 = len(vgf), hashlib.sha256(vgf).hexdigest()
    else:
        assert written is not None
        file_json["version"] = FORMAT_VERSION
        size, sha256 = written
    return {
        "format": REPORT_FORMAT,
        "model": graph.source,
        "output": output,
        "tosa_version": str(graph.version),
        "vgf_bytes": size,
        "vgf_sha256": sha256,
        "partitions": partition_json(graph, plan)["partitions"],
        "vgf": file_json,
        "bindings": dict(c.bindings),
        "shaders": shaders,
        "kernels": [
            {
                "op": i,
                "source_index": graph.operators[i].file_index,
                "entry": entry,
                "kernel": kernel,
            }
            for i, entry, kernel in c.kernels
        ],
        "inserted": [
            {"op": op.index, "source_index": op.file_index, "kind": op.op, "why": op.inserted}
            for op in graph.operators
            if op.inserted is not None
        ],
        "passes": [
            {"pass": r.pass_name, "op": r.op, "kind": r.kind, "action": r.action, "why": r.why}
            for r in c.rewrites
        ],
        "warnings": [d.as_dict() for d in c.warnings],
        "timings": {name: round(seconds, 6) for name, seconds in c.timings},
    }
