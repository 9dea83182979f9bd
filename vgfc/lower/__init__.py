"""Lowering: one module per partition, in partition order.

An ML partition becomes a SPIR-V graph module (:mod:`vgfc.lower.graph`), a shader partition a
compiled and checked compute module (:mod:`vgfc.lower.shader`). Module ``i`` of the result runs
partition ``i`` and becomes segment ``i`` of the VGF, so later stages never map between operator
indices, partition ids and segment indices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from vgfc.diagnostics import Diagnostic, InternalError, VgfcError
from vgfc.ir import Graph
from vgfc.partition import Partition, PartitionKind, Plan

if TYPE_CHECKING:
    from vgfc.lower.graph import GraphModule
    from vgfc.lower.shader import ShaderModule
    from vgfc.shader.glslang import CompileOptions

__all__ = ["Lowered", "LoweredModule", "lower"]

LoweredModule = Union["GraphModule", "ShaderModule"]
"""What one partition lowers to."""


@dataclass(frozen=True, slots=True)
class Lowered:
    """The modules of a plan, and what went wrong with ``keep_going``."""

    modules: tuple[LoweredModule | None, ...]
    """One per partition; ``None`` only where lowering failed or was skipped (``keep_going``)."""
    diagnostics: tuple[Diagnostic, ...]
    """Warnings, in partition order; with ``keep_going`` also each failed partition's error."""


def lower(
    graph: Graph,
    plan: Plan,
    bindings: Mapping[str, int],
    options: CompileOptions | None = None,
    *,
    keep_going: bool = False,
    skip: frozenset[int] = frozenset(),
) -> Lowered:
    """Lower every partition of ``plan``. ``bindings`` are the logical binding ids of the values
    that cross partitions; ``skip`` holds operator indices that failed an earlier stage (their
    partitions are left out, so one broken op is reported once). Raises the first
    :class:`VgfcError` unless ``keep_going``."""
    from vgfc.lower.graph import graph_constant_ids

    has_ml = any(p.kind is PartitionKind.ML for p in plan.partitions)
    constant_ids = graph_constant_ids(graph) if has_ml else {}
    modules: list[LoweredModule | None] = []
    diagnostics: list[Diagnostic] = []
    for p in plan.partitions:
        if skip.intersection(p.operators):
            modules.append(None)
            continue
        try:
            module = _lower_one(graph, p, bindings, constant_ids, options)
        except VgfcError as e:
            if not keep_going:
                raise
            diagnostics.append(e.diagnostic)
            modules.append(None)
            continue
        modules.append(module)
        diagnostics.extend(module.warnings)
    return Lowered(tuple(modules), tuple(diagnostics))


def _lower_one(
    graph: Graph,
    p: Partition,
    bindings: Mapping[str, int],
    constant_ids: Mapping[str, int],
    options: CompileOptions | None,
) -> LoweredModule:
    if p.kind is PartitionKind.ML:
        from vgfc.lower.graph import lower_partition

        return lower_partition(graph, p, bindings, constant_ids=constant_ids)
    from vgfc.lower.shader import lower_shader

    op = graph.operators[p.operators[0]]
    if op.shader is None:
        raise InternalError(
            "a shader partition holds an op that was never resolved", graph.where(op)
        )
    return lower_shader(op.shader, op, graph, options)
