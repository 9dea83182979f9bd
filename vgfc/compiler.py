"""The compile pipeline: one direction, each stage a function of the one before.

    bytes --read--> Graph --verify--> Graph --resolve--> Graph (custom ops bound)
          --partition--> Plan --lower--> one module per partition
          --layout--> vgf.Model --encode--> VGF bytes

``vgfc compile`` runs every stage and stops at the first error. ``vgfc check`` is the same
pipeline stopped after ``layout`` with ``keep_going``: every op and partition is still checked,
each one's first error is collected, and nothing is encoded or written. The two therefore never
disagree about a model. Each stage is timed; the result keeps every intermediate value so the
report and tests can look at any of them.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from vgfc.diagnostics import Diagnostic, Severity, VgfcError
from vgfc.ir import Graph
from vgfc.partition import Plan
from vgfc.shader.options import CompileOptions
from vgfc.vgf.model import Model

if TYPE_CHECKING:
    from vgfc.lower import LoweredModule
    from vgfc.resolve.library import Library

__all__ = ["STAGES", "Compilation", "Options", "compile_model"]

T = TypeVar("T")

STAGES = ("read", "verify", "resolve", "partition", "lower", "layout", "encode")
"""The stages in pipeline order; ``stop_after`` names one of them."""


@dataclass(frozen=True, slots=True)
class Options:
    """What ``vgfc compile`` can be asked to do differently."""

    shader: CompileOptions = field(default_factory=CompileOptions)
    keep_source: bool = False
    """Store GLSL/HLSL source in compute modules instead of the compiled SPIR-V."""
    target: str = "scenario-runner"
    """The runtime the VGF is for (:data:`vgfc.vgf.profiles.TARGETS`); its rules are checked
    in the layout stage."""
    libraries: tuple[Library, ...] = ()
    """Kernel libraries (``--kernels``) for custom ops that carry no shader, searched in order."""
    auto_convert: bool = True
    """Let kernel selection insert CAST/TRANSPOSE/PAD/SLICE around a custom op; off, a kernel
    that needs one is an error (``--no-auto-convert``)."""


@dataclass(frozen=True, slots=True)
class Compilation:
    """What the pipeline produced. A stage that did not run (stopped, or an earlier error with
    ``keep_going``) leaves its field ``None``."""

    graph: Graph | None = None
    """The graph after resolve (custom ops bound), else as read."""
    plan: Plan | None = None
    modules: tuple[LoweredModule | None, ...] = ()
    """One lowered module per partition (:mod:`vgfc.lower`); ``None`` where lowering failed."""
    model: Model | None = None
    bindings: dict[str, int] = field(default_factory=dict)
    """Logical binding id of every value that crosses a partition."""
    vgf: bytes | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    """Warnings, and with ``keep_going`` the errors, in pipeline order."""
    timings: tuple[tuple[str, float], ...] = ()
    """(stage, seconds) in pipeline order."""
    kernels: tuple[tuple[int, str, str], ...] = ()
    """(op index, library entry, kernel or ``compose``) for each op a kernel library bound."""

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)


class _Run:
    """Times each stage, reports it, and keeps or raises its errors."""

    def __init__(self, on_stage: Callable[[str], None] | None, keep_going: bool) -> None:
        self.on_stage = on_stage
        self.keep_going = keep_going
        self.timings: list[tuple[str, float]] = []
        self.diagnostics: list[Diagnostic] = []
        self.result = Compilation()

    def keep(self, **produced: Any) -> None:
        """Record what a stage produced, for the result."""
        self.result = dataclasses.replace(self.result, **produced)

    def __call__(self, name: str, fn: Callable[[], T]) -> T:
        if self.on_stage is not None:
            self.on_stage(name)
        start = time.perf_counter()
        try:
            return fn()
        finally:
            self.timings.append((name, time.perf_counter() - start))

    @property
    def failed(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)


def compile_model(
    path: str | os.PathLike[str],
    options: Options | None = None,
    on_stage: Callable[[str], None] | None = None,
    *,
    stop_after: str = "encode",
    keep_going: bool = False,
) -> Compilation:
    """Compile a ``.tosa`` file to VGF bytes (nothing is written).

    Raises the first :class:`VgfcError` unless ``keep_going``; then every error is in
    ``diagnostics`` and the stages after the first failing one do not run (except that resolve
    and lower check every op and partition they can). ``stop_after`` ends the pipeline after
    the named stage (see :data:`STAGES`).
    """
    if stop_after not in STAGES:
        raise ValueError(f"stop_after must be one of {', '.join(STAGES)}, not {stop_after!r}")
    last = STAGES.index(stop_after)
    options = options or Options()
    run = _Run(on_stage, keep_going)
    try:
        _pipeline(path, options, run, last)
    except VgfcError as e:
        if not keep_going:
            raise
        run.diagnostics.append(e.diagnostic)
    return dataclasses.replace(
        run.result, diagnostics=tuple(run.diagnostics), timings=tuple(run.timings)
    )


def _check_target(graph: Graph, plan: Plan, model: Model, target: str, run: _Run) -> None:
    """The rules of the runtime the file is for, each violation an error at the op (for a
    shader segment) or the segment it is about."""
    from vgfc.diagnostics import Location, UnsupportedError
    from vgfc.partition import PartitionKind
    from vgfc.vgf.profiles import violations

    for v in violations(model, target):
        where = Location(file=graph.source)
        message = v.message
        if v.segment is not None:
            segment = model.segments[v.segment]
            p = plan.partitions[v.segment]
            if p.kind is PartitionKind.SHADER:
                where = graph.operators[p.operators[0]].where(graph.source)
            message = f"segment {v.segment} '{segment.name}': {message}"
        error = UnsupportedError(message, where)
        if not run.keep_going:
            raise error
        run.diagnostics.append(error.diagnostic)


def _from_library(graph: Graph, d: Diagnostic) -> Diagnostic:
    """A shader diagnostic of a kernel-library op, pointed at the library's kernel: the
    attribute keys it would name (``shader_code``, ``output_0_binding``) are not the op's."""
    loc = d.location
    if loc.op_index is None:
        return d
    spec = next(
        (
            op.shader
            for op in graph.operators
            if op.shader is not None
            and op.shader.origin is not None
            and op.file_index == loc.op_index
            and op.op == loc.op
        ),
        None,
    )
    if spec is None or spec.origin is None:
        return d
    key = spec.origin
    if loc.key:
        # input_0_binding -> resources.x; shader_code -> shader.file
        detail = "shader.file" if loc.key == "shader_code" else loc.key
        for prefix, name in spec.operand_names:
            if loc.key.startswith(prefix + "_"):
                detail = f"resources.{name}"
        key = f"{key}: {detail}"
    return dataclasses.replace(d, location=dataclasses.replace(loc, key=key))


def _pipeline(
    path: str | os.PathLike[str],
    options: Options,
    run: _Run,
    last: int,
) -> None:
    from vgfc.partition import partition
    from vgfc.read import load
    from vgfc.resolve import resolve
    from vgfc.verify import verify

    def done(stage: str) -> bool:
        return STAGES.index(stage) >= last

    graph = run("read", lambda: load(path))
    run.keep(graph=graph)
    if done("read"):
        return
    order = run("verify", lambda: verify(graph))
    if done("verify"):
        return
    resolution = run(
        "resolve",
        lambda: resolve(
            graph,
            keep_going=run.keep_going,
            libraries=options.libraries,
            auto_convert=options.auto_convert,
        ),
    )
    run.diagnostics.extend(resolution.diagnostics)
    graph = resolution.graph
    run.keep(graph=graph, kernels=resolution.kernels)
    if resolution.renumbered:
        from vgfc.verify import topological_order

        order = tuple(op.index for op in topological_order(graph))
    if done("resolve"):
        return
    plan = run("partition", lambda: partition(graph, order))
    run.keep(plan=plan)
    if done("partition"):
        return
    from vgfc.lower import Lowered, lower
    from vgfc.vgf.layout import logical_bindings

    bindings = logical_bindings(graph, plan)
    run.keep(bindings=bindings)

    def lower_all() -> Lowered:
        try:
            return lower(
                graph,
                plan,
                bindings,
                options.shader,
                keep_going=run.keep_going,
                skip=resolution.failed,
            )
        except VgfcError as e:
            d = _from_library(graph, e.diagnostic)
            if d is e.diagnostic:
                raise
            raise type(e)(d.message, d.location, excerpt=d.excerpt) from None

    lowered = run("lower", lower_all)
    run.diagnostics.extend(_from_library(graph, d) for d in lowered.diagnostics)
    run.keep(modules=lowered.modules)
    if done("lower") or run.failed:
        return
    from vgfc.vgf.layout import layout

    modules = [m for m in lowered.modules if m is not None]

    def lay_out() -> Model:
        laid_out = layout(graph, plan, modules, bindings, keep_source=options.keep_source)
        run.keep(model=laid_out)
        _check_target(graph, plan, laid_out, options.target, run)
        return laid_out

    model = run("layout", lay_out)
    if run.failed:
        return
    if done("layout"):
        return
    from vgfc.vgf.encode import encode

    run.keep(vgf=run("encode", lambda: encode(model)))
