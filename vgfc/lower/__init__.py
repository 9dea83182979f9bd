"""Lowering: one module per partition, in partition order.

An ML partition becomes a SPIR-V graph module (:mod:`vgfc.lower.graph`), a shader partition a
compiled and checked compute module (:mod:`vgfc.lower.shader`). Module ``i`` of the result runs
partition ``i`` and becomes segment ``i`` of the VGF, so later stages never map between operator
indices, partition ids and segment indices.

The shaders of all shader partitions start building first (:class:`vgfc.shader.build.ShaderBuilds`:
each distinct shader once, cached ones from the shader cache, the rest compiled in parallel in the
background), the graph partitions are lowered meanwhile, and then the results are taken in
partition order, each error met where lowering one partition after another would meet it: what is
reported, and in which order, does not change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from vgfc.diagnostics import Diagnostic, InternalError, Severity, UnsupportedError, VgfcError
from vgfc.ir import Graph
from vgfc.partition import Partition, PartitionKind, Plan
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    from vgfc.lower.graph import GraphModule
    from vgfc.lower.shader import ShaderModule
    from vgfc.shader.build import ShaderBuilds, ShaderRequest
    from vgfc.shader.options import CompileOptions

    LoweredModule: TypeAlias = GraphModule | ShaderModule
    """What one partition lowers to (for type checkers only: a ``Union`` of two forward
    references costs 2 ms to build at import)."""

__all__ = ["Lowered", "lower"]


@record
class Lowered:
    """The modules of a plan, and what went wrong with ``keep_going``."""

    modules: tuple[LoweredModule | None, ...]
    """One per partition; ``None`` only where lowering failed or was skipped (``keep_going``)."""
    diagnostics: tuple[Diagnostic, ...]
    """Warnings, in partition order; with ``keep_going`` also each failed partition's error."""
    includes: tuple[str, ...] = ()
    """The files the shaders' ``#include`` directives opened, in partition order."""


def lower(
    graph: Graph,
    plan: Plan,
    bindings: Mapping[str, int],
    options: CompileOptions | None = None,
    *,
    keep_going: bool = False,
    skip: frozenset[int] = frozenset(),
    on_shader: Callable[[int, int], None] | None = None,
    debug_info: bool = False,
    replicated_composites: bool = True,
) -> Lowered:
    """Lower every partition of ``plan``. ``bindings`` are the logical binding ids of the values
    that cross partitions; ``skip`` holds operator indices that failed an earlier stage (their
    partitions are left out, so one broken op is reported once). Raises the first
    :class:`VgfcError` unless ``keep_going``. ``on_shader(done, total)`` is told as each
    shader partition is lowered (a terminal's progress line). ``debug_info``: graph modules
    carry NonSemantic.Graph.DebugInfo.1 instructions (:mod:`vgfc.lower.debug_info`);
    ``replicated_composites`` off: they spell constants of equal elements out."""
    requests = _shader_requests(graph, plan, options, skip)
    builds = None
    if requests:
        from vgfc.shader.build import ShaderBuilds

        builds = ShaderBuilds(requests)
    try:
        graphs = _lower_graphs(
            graph, plan, bindings, keep_going, skip, options, debug_info, replicated_composites
        )
        modules: list[LoweredModule | None] = []
        diagnostics: list[Diagnostic] = []
        includes: list[str] = []
        shaders = sum(p.kind is PartitionKind.SHADER for p in plan.partitions)
        shaders_done = 0
        if on_shader is not None and shaders:
            on_shader(0, shaders)  # what the first shader's compile is waited for under
        for i, p in enumerate(plan.partitions):
            if skip.intersection(p.operators):
                modules.append(None)
                continue
            module: LoweredModule
            try:
                if p.kind is PartitionKind.ML:
                    lowered = graphs[i]
                    if isinstance(lowered, Exception):
                        raise lowered
                    module = lowered
                else:
                    module = _lower_shader(graph, p, options, builds)
                    includes.extend(module.includes)
                    shaders_done += 1
                    if on_shader is not None:
                        on_shader(shaders_done, shaders)
            except VgfcError as e:
                if not keep_going:
                    raise
                diagnostics.append(e.diagnostic)
                modules.append(None)
                continue
            modules.append(module)
            diagnostics.extend(module.warnings)
    finally:
        if builds is not None:
            builds.close()
    if builds is not None and builds.cache_problem is not None:
        diagnostics.insert(0, _cache_warning(builds.cache_problem))
    return Lowered(tuple(modules), tuple(diagnostics), tuple(includes))


def _cache_warning(problem: str) -> Diagnostic:
    """The one warning of a compile whose shader cache cannot be used."""
    return Diagnostic(
        Severity.WARNING,
        f"the shader cache cannot be used: {problem}; every shader is compiled afresh",
        name="unusable-cache",
    )


def _lower_graphs(
    graph: Graph,
    plan: Plan,
    bindings: Mapping[str, int],
    keep_going: bool,
    skip: frozenset[int],
    options: CompileOptions | None = None,
    debug_info: bool = False,
    replicated_composites: bool = True,
) -> dict[int, GraphModule | Exception]:
    """The graph module (or the error) of each ML partition, by partition index. They need
    nothing from the shaders, so they go first, while the shaders build; without ``keep_going``
    they stop at the first error, past which :func:`lower` never looks."""
    from vgfc.lower.graph import graph_constant_ids, lower_partition

    if not any(p.kind is PartitionKind.ML for p in plan.partitions):
        return {}
    constant_ids = graph_constant_ids(graph)
    graphs: dict[int, GraphModule | Exception] = {}
    for i, p in enumerate(plan.partitions):
        if p.kind is not PartitionKind.ML or skip.intersection(p.operators):
            continue
        try:
            version = _graph_version(graph, p, options)
            graphs[i] = lower_partition(
                graph,
                p,
                bindings,
                constant_ids=constant_ids,
                spirv_version=version,
                debug_info=debug_info,
                replicated_composites=replicated_composites,
            )
        except Exception as e:  # raised by lower() in partition order
            graphs[i] = e
            if not keep_going:
                break
    return graphs


def _graph_version(graph: Graph, p: Partition, options: CompileOptions | None) -> tuple[int, int]:
    """The SPIR-V version of the graph module of ML partition ``p`` for the target environment;
    refused where the environment holds no graph module."""
    from vgfc.environments import GRAPH_MIN_SPIRV, GRAPH_SPIRV, SPIRV_VERSIONS

    env = options.target_env if options is not None else None
    newest = SPIRV_VERSIONS.get(env or "", GRAPH_SPIRV)
    if newest >= GRAPH_MIN_SPIRV:
        return min(newest, GRAPH_SPIRV)
    newer = [name for name, v in SPIRV_VERSIONS.items() if v >= GRAPH_MIN_SPIRV]
    op = graph.operators[p.operators[0]]
    raise UnsupportedError(
        "its ML partition becomes a SPIR-V graph module, which needs SPIR-V "
        f"{GRAPH_MIN_SPIRV[0]}.{GRAPH_MIN_SPIRV[1]} (the Vulkan memory model); {env} accepts "
        f"SPIR-V up to {newest[0]}.{newest[1]}: use --target-env {newer[0]} or newer",
        graph.where(op),
    )


def _lower_shader(
    graph: Graph, p: Partition, options: CompileOptions | None, builds: ShaderBuilds | None
) -> ShaderModule:
    from vgfc.lower.shader import lower_shader

    op = graph.operators[p.operators[0]]
    if op.shader is None:
        raise InternalError(
            "a shader partition holds an op that was never resolved", graph.where(op)
        )
    if builds is None:
        return lower_shader(op.shader, op, graph, options)
    return lower_shader(op.shader, op, graph, options, build=builds.get)


def _shader_requests(
    graph: Graph, plan: Plan, options: CompileOptions | None, skip: frozenset[int]
) -> list[ShaderRequest]:
    """What building the shaders of every shader partition lowering will reach takes."""
    if not any(p.kind is PartitionKind.SHADER for p in plan.partitions):
        return []  # nor import the shader tooling
    from vgfc.lower.shader import shader_request
    from vgfc.shader.options import CompileOptions

    options = options or CompileOptions()
    requests = []
    for p in plan.partitions:
        if p.kind is not PartitionKind.SHADER or skip.intersection(p.operators):
            continue
        op = graph.operators[p.operators[0]]
        request = shader_request(op.shader, options) if op.shader is not None else None
        if request is not None:
            requests.append(request)
    return requests
