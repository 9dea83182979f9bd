"""The spine: the compile pipeline as data, one direction, each stage a function of the one before.

    bytes --read--> Graph --verify--> Graph --resolve--> Graph (custom ops bound)
          --partition--> Plan --lower--> one module per partition
          --layout--> vgf.Model --encode--> VGF bytes, a file or a stream (+ report)

:data:`PIPELINE` is a tuple of named stages. Every command runs it through :func:`compile_model`:
``vgfc compile`` (one model or a batch) and ``vgfc-model-converter`` to the end with a file or
stream :class:`Sink`, ``vgfc check`` stopped after ``layout`` (or ``--stop-after STAGE``) with
``keep_going``, ``vgfc partition --kernels`` after ``partition``, ``vgfc verify`` and the library
API (:func:`vgfc.compile`) with bytes. So no two commands can disagree about a model, and the
time of every stage, encode included, is measured in one place. The result keeps every
intermediate value, so the report and the tests can look at any of them.

With ``keep_going`` each stage collects its errors instead of raising the first: resolve and
lower check every op and partition they can, and the stages after the first one that failed do
not run. ``vgfc check`` reports one error per broken op that way, and its first error is always
the one ``vgfc compile`` stops at.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from vgfc.diagnostics import Diagnostic, Severity, VgfcError
from vgfc.ir import Graph
from vgfc.partition import Plan
from vgfc.record import field, record, replace
from vgfc.shader.options import CompileOptions
from vgfc.vgf.model import Model

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from vgfc.lower import Lowered, LoweredModule
    from vgfc.resolve import Resolution
    from vgfc.resolve.library import Library

__all__ = [
    "PIPELINE",
    "STAGES",
    "Compilation",
    "Options",
    "Sink",
    "Stage",
    "ToBytes",
    "ToFile",
    "ToStream",
    "compile",
    "compile_model",
    "compile_to",
    "input_files",
    "make_options",
]


@record
class Options:
    """What a compile can be asked to do differently (the command line's compile options)."""

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
    replicated_composites: bool = True
    """Allow modules that need VK_EXT_shader_replicated_composites; off, such a module is an
    error (``vgfc-model-converter --disable-replicated-composites``)."""


# -- where the encoded VGF goes ----------------------------------------------------------------


@record
class ToBytes:
    """Keep the VGF in :attr:`Compilation.vgf`."""


@record
class ToFile:
    """Stream the VGF to ``path`` atomically (constants go from the mapped input to disk without
    a copy in memory), and write the JSON report to ``report`` first: on any error, neither the
    VGF nor the report replaces what was there."""

    path: Path
    report: Path | None = None
    hold: list[Any] | None = field(default=None, compare=False)
    """Where to leave the written files instead of renaming them into place: a list that gets
    the :class:`vgfc.files.Staged` outputs, for :func:`vgfc.files.commit` (or
    :func:`vgfc.files.discard`) once the caller knows it wants them (``vgfc compile`` prints
    its summary first, so that output it cannot print leaves the old files)."""


@record
class ToStream:
    """Write the VGF to an open binary stream (``vgfc-model-converter -o -``)."""

    stream: BinaryIO


Sink = ToBytes | ToFile | ToStream
"""Where the encode stage puts the VGF."""


@record
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
    """The VGF, when the sink was :class:`ToBytes`."""
    size: int | None = None
    """Bytes of the VGF encoded (to any sink)."""
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

    @property
    def notes(self) -> tuple[Diagnostic, ...]:
        """Idioms vgfc recognised and accepted (a shader reading raw bits), worth a line."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.NOTE)


class _Run:
    """One pass through the pipeline: what the stages produced so far, their diagnostics and
    timings, and whether errors are raised or kept."""

    def __init__(
        self,
        source: str | os.PathLike[str],
        options: Options,
        sink: Sink,
        keep_going: bool,
    ) -> None:
        self.source = source
        self.options = options
        self.sink = sink
        self.keep_going = keep_going
        self.timings: list[tuple[str, float]] = []
        self.diagnostics: list[Diagnostic] = []
        self.result = Compilation()
        # Between stages, beside what the result keeps:
        self.order: tuple[int, ...] = ()
        self.resolution: Resolution | None = None
        self.stage_started = 0.0

    def keep(self, **produced: Any) -> None:
        """Record what a stage produced, for the result."""
        self.result = replace(self.result, **produced)

    def fail(self, error: VgfcError) -> None:
        """An error of a stage that can go on past it: raised, or kept with ``keep_going``."""
        if not self.keep_going:
            raise error
        self.diagnostics.append(error.diagnostic)

    @property
    def failed(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def finished(self) -> Compilation:
        return replace(
            self.result, diagnostics=tuple(self.diagnostics), timings=tuple(self.timings)
        )


# -- the stages --------------------------------------------------------------------------------


def _read(run: _Run) -> bool:
    from vgfc.read import load

    run.keep(graph=load(run.source))
    return True


def _verify(run: _Run) -> bool:
    from vgfc.verify import verify

    assert run.result.graph is not None
    run.order = verify(run.result.graph)
    return True


def _resolve(run: _Run) -> bool:
    assert run.result.graph is not None
    if not any(op.op == "CUSTOM" for op in run.result.graph.operators):
        return True  # nothing to bind (and the resolve package need not load)
    from vgfc.resolve import resolve

    resolution = resolve(
        run.result.graph,
        run.order,
        keep_going=run.keep_going,
        libraries=run.options.libraries,
        auto_convert=run.options.auto_convert,
    )
    run.resolution = resolution
    run.order = resolution.order
    run.diagnostics.extend(resolution.diagnostics)
    run.keep(graph=resolution.graph, kernels=resolution.kernels)
    return True


def _partition(run: _Run) -> bool:
    from vgfc.partition import partition

    assert run.result.graph is not None
    run.keep(plan=partition(run.result.graph, run.order))
    return True


def _lower(run: _Run) -> bool:
    from vgfc.lower import lower
    from vgfc.vgf.layout import logical_bindings

    graph, plan = run.result.graph, run.result.plan
    assert graph is not None and plan is not None
    bindings = logical_bindings(graph, plan)
    run.keep(bindings=bindings)
    # An op a kernel library made carries its origin into the diagnostics raised at it.
    failed = run.resolution.failed if run.resolution is not None else frozenset[int]()
    lowered: Lowered = lower(
        graph, plan, bindings, run.options.shader, keep_going=run.keep_going, skip=failed
    )
    run.diagnostics.extend(lowered.diagnostics)
    run.keep(modules=lowered.modules)
    return not run.failed


def _layout(run: _Run) -> bool:
    from vgfc.vgf.layout import layout

    graph, plan = run.result.graph, run.result.plan
    assert graph is not None and plan is not None
    modules = [m for m in run.result.modules if m is not None]
    model = layout(graph, plan, modules, run.result.bindings, keep_source=run.options.keep_source)
    run.keep(model=model)
    if run.options.target != "scenario-runner" or not run.options.replicated_composites:
        # The scenario runner takes every file vgfc writes: its profile has no rules to load.
        from vgfc.vgf.profiles import replicated_composites_errors, target_errors

        for error in target_errors(graph, plan, model, run.options.target):
            run.fail(error)
        if not run.options.replicated_composites:
            for error in replicated_composites_errors(model, os.fspath(run.source)):
                run.fail(error)
    return not run.failed


def _encode(run: _Run) -> bool:
    from vgfc.vgf.encode import encode, encode_to

    model, sink = run.result.model, run.sink
    assert model is not None
    if isinstance(sink, ToBytes):
        data = encode(model)
        run.keep(vgf=data, size=len(data))
    elif isinstance(sink, ToStream):
        run.keep(size=encode_to(model, sink.stream))
    else:
        _write(run, model, sink)
    return True


def _write(run: _Run, model: Model, sink: ToFile) -> None:
    """Stream the VGF to ``sink.path``; the report, which records the file's size, SHA-256 and
    the time of every stage up to here, is written before the VGF takes its place."""
    from vgfc.files import Staged, stage, write_atomically
    from vgfc.vgf.encode import encode_to

    inputs = input_files(run.source, run.options)
    together: list[Staged] = []

    def write(file: BinaryIO) -> None:
        digest = None
        if sink.report is not None:
            import hashlib

            digest = hashlib.sha256()
        size = encode_to(model, file, digest)
        run.keep(size=size)
        if sink.report is not None and digest is not None:
            import json

            from vgfc.report import compile_report

            elapsed = ("encode", time.perf_counter() - run.stage_started)
            done = replace(run.finished(), timings=(*run.timings, elapsed))
            doc = compile_report(done, str(sink.path), written=(size, digest.hexdigest()))
            text = (json.dumps(doc, indent=2) + "\n").encode("utf-8")
            together.append(stage(sink.report, text, inputs=(*inputs, sink.path)))

    # The report and the VGF are renamed into place together: an interrupt leaves both old or
    # both new.
    write_atomically(sink.path, write, inputs=inputs, together=together, hold=sink.hold)


def input_files(source: str | os.PathLike[str], options: Options) -> tuple[Path, ...]:
    """Every file a compile of ``source`` reads that a user names: the model, the kernel
    libraries and their shaders. No output may replace one of them."""
    files = [Path(source)]
    for library in options.libraries:
        files.append(library.path)
        files.extend(
            kernel.shader.path for entry in library.entries.values() for kernel in entry.kernels
        )
    return tuple(files)


@record
class Stage:
    """One stage of the pipeline: its name and what it does to the run. ``run`` returns False
    when the stages after it must not run (an error kept with ``keep_going``)."""

    name: str
    run: Callable[[_Run], bool]


PIPELINE: tuple[Stage, ...] = (
    Stage("read", _read),
    Stage("verify", _verify),
    Stage("resolve", _resolve),
    Stage("partition", _partition),
    Stage("lower", _lower),
    Stage("layout", _layout),
    Stage("encode", _encode),
)
"""The stages in pipeline order."""

STAGES = tuple(stage.name for stage in PIPELINE)
"""The stages' names, in order; ``stop_after`` (``--stop-after``) names one of them."""


def compile_model(
    source: str | os.PathLike[str],
    options: Options | None = None,
    on_stage: Callable[[str], None] | None = None,
    *,
    stop_after: str = "encode",
    keep_going: bool = False,
    sink: Sink | None = None,
) -> Compilation:
    """Run the pipeline on the ``.tosa`` file ``source``, up to and including ``stop_after``
    (see :data:`STAGES`); the encode stage puts the VGF where ``sink`` says (by default, in
    :attr:`Compilation.vgf`). ``on_stage`` is told each stage's name as it starts.

    Raises the first :class:`VgfcError` unless ``keep_going``; then every error is in
    ``diagnostics``, and the stages after the first failing one do not run.
    """
    if stop_after not in STAGES:
        raise ValueError(f"stop_after must be one of {', '.join(STAGES)}, not {stop_after!r}")
    run = _Run(source, options or Options(), sink or ToBytes(), keep_going)
    for stage in PIPELINE[: STAGES.index(stop_after) + 1]:
        if on_stage is not None:
            on_stage(stage.name)
        run.stage_started = time.perf_counter()
        try:
            go_on = stage.run(run)
        except VgfcError as e:
            if not keep_going:
                raise
            run.diagnostics.append(e.diagnostic)
            go_on = False
        finally:
            run.timings.append((stage.name, time.perf_counter() - run.stage_started))
        if not go_on:
            break
    return run.finished()


def compile_to(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    report: str | os.PathLike[str] | None = None,
    options: Options | None = None,
    on_stage: Callable[[str], None] | None = None,
) -> Compilation:
    """Compile ``source`` and write the VGF to ``output`` (and the JSON report to ``report``),
    each atomically. Raises the first :class:`VgfcError`; then no file has been written, and
    existing ones are left as they were."""
    sink = ToFile(Path(output), Path(report) if report is not None else None)
    return compile_model(source, options, on_stage, sink=sink)


TARGET_NAMES = ("scenario-runner", "executorch")
"""The runtimes a VGF can be for (``--target``): the profiles of :mod:`vgfc.vgf.profiles`,
named here so that choosing one does not load their rules (a test keeps the two equal)."""

TARGET_ENVS = ("vulkan1.1", "vulkan1.2", "vulkan1.3")
"""The Vulkan environments shaders can be compiled and validated for (``--target-env``)."""


def make_options(
    *,
    kernels: Iterable[str | os.PathLike[str]] = (),
    target: str = "scenario-runner",
    include_dirs: Iterable[str | os.PathLike[str]] = (),
    defines: Mapping[str, str] | Iterable[str] = (),
    target_env: str = "vulkan1.3",
    shader_timeout: float | None = None,
    cache: bool = True,
    keep_source: bool = False,
    auto_convert: bool = True,
) -> Options:
    """:class:`Options` from the values the command line takes, checked as it checks them:
    ``kernels`` (``--kernels``: files or bundled names, read and checked here), ``target``,
    ``include_dirs`` (``-I``), ``defines`` (``-D``: ``NAME=VALUE`` strings or a mapping),
    ``target_env``, ``shader_timeout`` (seconds, 0 for none; default 5), ``cache``
    (``--no-cache`` is False), ``keep_source``, ``auto_convert`` (``--no-auto-convert`` is
    False). Raises ValueError for a value the command line would refuse as a usage error, and
    :class:`VgfcError` for a kernel library that is wrong."""
    import math

    from vgfc.shader.options import DEFAULT_TIMEOUT

    if target not in TARGET_NAMES:
        raise ValueError(f"target must be one of {', '.join(TARGET_NAMES)}, not {target!r}")
    if target_env not in TARGET_ENVS:
        raise ValueError(f"target_env must be one of {', '.join(TARGET_ENVS)}, not {target_env!r}")
    timeout = DEFAULT_TIMEOUT if shader_timeout is None else float(shader_timeout)
    if math.isnan(timeout) or timeout < 0:
        raise ValueError(f"shader_timeout must be 0 or more seconds, not {shader_timeout!r}")
    items = (
        defines.items()
        if isinstance(defines, Mapping)
        else ((d.partition("=")[0], d.partition("=")[2]) for d in defines)
    )
    pairs = []
    for name, value in items:
        if not name.isidentifier():
            raise ValueError(f"'{name}={value}' is not NAME or NAME=VALUE")
        pairs.append((name, value or "1"))
    libraries: tuple[Library, ...] = ()
    include_dirs = tuple(include_dirs)
    names = tuple(kernels)
    if names:
        from vgfc.resolve.library import load_libraries

        # A library's shader files and include folders may also lie in the -I folders.
        libraries = load_libraries(names, include_dirs=tuple(include_dirs))
    shader = CompileOptions(
        target_env=target_env,
        include_dirs=tuple(os.fspath(p) for p in include_dirs),
        defines=tuple(pairs),
        timeout=timeout,
        cache=cache,
    )
    return Options(shader, keep_source, target, libraries, auto_convert)


def compile(  # vgfc.compile, as the command is vgfc compile
    model: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    report: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Compilation:
    """``vgfc compile`` in this process, for tools that are Python already.

    Compiles ``model``; with ``output`` writes the VGF there (atomically, and the JSON report to
    ``report``), else keeps it in :attr:`Compilation.vgf`. ``options`` are those of
    :func:`make_options` (``kernels``, ``target``, ``include_dirs``, ``defines``,
    ``target_env``, ``shader_timeout``, ``cache``, ``keep_source``, ``auto_convert``). Raises
    :class:`VgfcError` for the errors the command exits 1 with (the same messages), ValueError
    for a usage error. Warnings are in :attr:`Compilation.warnings`."""
    settings = make_options(**options)
    if output is None:
        if report is not None:
            raise ValueError("a report needs an output file")
        return compile_model(model, settings)
    return compile_to(model, output, report, settings)
