"""The compile pipeline: one direction, each stage a function of the one before.

    bytes --read/verify--> Graph --partition--> Plan --resolve--> shader modules
          --lower--> graph modules --plan resources--> Program --encode--> VGF bytes

Each stage is timed; the result keeps every intermediate value so the report and tests can look
at any of them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from vgfc.diagnostics import Diagnostic
from vgfc.ir import Graph
from vgfc.partition import PartitionKind, Plan, partition
from vgfc.resolve import Resolved, resolve
from vgfc.resources import Program, logical_bindings, plan_program
from vgfc.shader.glslang import CompileOptions
from vgfc.tosa_reader import load
from vgfc.verify import verify
from vgfc.vgf_writer import encode

if TYPE_CHECKING:
    from vgfc.lower_graph import GraphModule

__all__ = ["Compilation", "Options", "compile_model"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Options:
    """What ``vgfc compile`` can be asked to do differently."""

    shader: CompileOptions = field(default_factory=CompileOptions)
    keep_source: bool = False
    """Store GLSL/HLSL source in compute modules instead of the compiled SPIR-V."""


@dataclass(frozen=True, slots=True)
class Compilation:
    graph: Graph
    plan: Plan
    resolved: Resolved
    graph_modules: dict[int, GraphModule]
    """Lowered graph modules by ML partition id."""
    program: Program
    vgf: bytes
    timings: tuple[tuple[str, float], ...]
    """(stage, seconds) in pipeline order."""

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return self.resolved.warnings


def compile_model(
    path: str | os.PathLike[str],
    options: Options | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> Compilation:
    """Compile a ``.tosa`` file to VGF bytes (nothing is written). Raises VgfcError."""
    options = options or Options()
    timings: list[tuple[str, float]] = []

    @contextmanager
    def stage(name: str) -> Iterator[None]:
        if on_stage is not None:
            on_stage(name)
        start = time.perf_counter()
        yield
        timings.append((name, time.perf_counter() - start))

    def run(name: str, fn: Callable[[], T]) -> T:
        with stage(name):
            return fn()

    graph = run("read", lambda: load(path))
    run("verify", lambda: verify(graph))
    plan = run("partition", lambda: partition(graph))
    resolved = run("shaders", lambda: resolve(graph, options.shader))
    bindings = logical_bindings(graph, plan)

    def lower_graphs() -> dict[int, GraphModule]:
        ml = [p for p in plan.partitions if p.kind is PartitionKind.ML]
        if not ml:
            return {}
        from vgfc.lower_graph import lower_partition

        return {p.id: lower_partition(graph, p, bindings) for p in ml}

    graph_modules = run("lower", lower_graphs)
    program = run(
        "resources",
        lambda: plan_program(
            graph,
            plan,
            resolved.shaders,
            graph_modules,
            keep_source=options.keep_source,
        ),
    )
    vgf = run("emit", lambda: encode(program))
    return Compilation(graph, plan, resolved, graph_modules, program, vgf, tuple(timings))
