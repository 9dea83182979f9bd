"""The spine: the compile pipeline as data, one direction, each stage a function of the one before.

    bytes --read--> Graph --verify--> Graph --passes--> Graph (control flow written out,
          folded, simplified) --resolve--> Graph (custom ops bound)
          --partition--> Plan --lower--> one module per partition
          --layout--> vgf.Model --encode--> VGF bytes, a file or a stream (+ report)

:data:`PIPELINE` is a tuple of named stages. A stage is a function from the
:class:`~vgfc.compilation.Compilation` so far (and the :class:`Request`: source, options, sink)
to the fields it produces; nothing passes between stages but those fields. Every command runs
the pipeline through :func:`compile_model`: ``vgfc compile`` (one model or a batch) and
``vgfc-model-converter`` to the end with a file or stream sink, ``vgfc check`` stopped after
``layout`` (or ``--stop-after STAGE``) with ``keep_going``, ``vgfc partition`` after
``partition``, ``vgfc verify`` and the library API (:func:`vgfc.compile`) with bytes. So no two
commands can disagree about a model, and the time of every stage, encode included, is measured
in one place. The result keeps every intermediate value, so the report and the tests can look
at any of them.

With ``keep_going`` each stage collects its errors instead of raising the first: resolve and
lower check every op and partition they can, and the stages after the first one that failed do
not run. ``vgfc check`` reports one error per broken op that way, and its first error is always
the one ``vgfc compile`` stops at.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from vgfc.compilation import Compilation, Options, Sink, ToBytes, ToFile, ToStream
from vgfc.diagnostics import Diagnostic, InputError, Severity, VgfcError
from vgfc.jobs import input_files
from vgfc.options import UsageError
from vgfc.record import record, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from vgfc.deps import Depfile
    from vgfc.files.outputs import Staged
    from vgfc.resolve.library.records import Library
    from vgfc.warning_names import WarningFlags

__all__ = [
    "PIPELINE",
    "STAGES",
    "Compilation",
    "Options",
    "Request",
    "Sink",
    "Stage",
    "ToBytes",
    "ToFile",
    "ToStream",
    "compile",
    "compile_model",
    "compile_to",
]


@record
class Request:
    """What a run of the pipeline is given: the model, the options and where the VGF goes."""

    source: str | os.PathLike[str]
    options: Options
    sink: Sink
    keep_going: bool = False
    on_stage: Callable[[str], None] | None = None
    """Told each stage's name as it starts, and how far a long stage is (``lower: 3/40
    shaders``): what a terminal's status line shows."""


Produced = dict[str, "Any"]
"""Fields of :class:`Compilation` a stage produced; ``diagnostics`` are added to those so far."""


def _errors_or_raise(errors: list[VgfcError], keep_going: bool) -> tuple[Diagnostic, ...]:
    """Errors of a stage that can go on past them: the first raised, or all kept with
    ``keep_going``."""
    if errors and not keep_going:
        raise errors[0]
    return tuple(e.diagnostic for e in errors)


# -- the stages --------------------------------------------------------------------------------


def _read(done: Compilation, request: Request) -> Produced:
    reads = (os.fspath(request.source),)
    if not request.options.dump_mlir:
        from vgfc.read import load

        return {"graph": load(request.source), "reads": reads}
    from vgfc.dump import dump_read
    from vgfc.read.reader import load_with_flatbuffer

    graph, flatbuffer = load_with_flatbuffer(request.source)
    dump_read(flatbuffer, graph.source or reads[0], request.options.optimize)
    return {"graph": graph, "reads": reads}


def _verify(done: Compilation, request: Request) -> Produced:
    from vgfc.passthrough import copy_passthrough_outputs
    from vgfc.verify.spec import spec_errors
    from vgfc.verify.structure import verify

    assert done.graph is not None
    # An output that is an input gets a value of its own before anything else looks.
    graph = copy_passthrough_outputs(done.graph)
    order = verify(graph)
    # Every ERROR_IF of the specification: compile stops at the first, check reports them all.
    errors = spec_errors(graph, first_only=not request.keep_going)
    if errors:
        found = _errors_or_raise(list(errors), request.keep_going)
        return {"graph": graph, "order": order, "diagnostics": found}
    return {"graph": graph, "order": order}


def _passes(done: Compilation, request: Request) -> Produced:
    from vgfc.passes import run_passes

    graph = done.graph
    assert graph is not None
    options = request.options
    rewritten = run_passes(graph, options.optimize, options.type_narrowing)
    if options.dump_mlir:
        from vgfc.dump import dump_rewrites

        dump_rewrites(rewritten.rewrites)
    if rewritten.graph is graph:
        return {}
    from vgfc.verify import verify

    # What the passes made is held to the same checks as what was read.
    return {
        "graph": rewritten.graph,
        "order": verify(rewritten.graph),
        "rewrites": rewritten.rewrites,
    }


def _resolve(done: Compilation, request: Request) -> Produced:
    options = request.options
    libraries: tuple[Library, ...] = ()
    reads: tuple[str, ...] = ()
    if options.kernels:
        from vgfc.resolve.library.load import library_file, load_libraries

        # A library's shader files and include folders may also lie in the -I folders.
        libraries = load_libraries(options.kernels, include_dirs=options.shader.include_dirs)
        reads = tuple(os.fspath(library_file(name)) for name in options.kernels)
    graph = done.graph
    assert graph is not None
    if not any(op.op == "CUSTOM" for op in graph.operators):
        # Nothing to bind (and the resolve package need not load).
        return {"libraries": libraries, "reads": reads}
    from vgfc.resolve import resolve

    resolution = resolve(
        graph,
        done.order,
        keep_going=request.keep_going,
        libraries=libraries,
        auto_convert=options.auto_convert,
        calls=options.call_opcodes,
    )
    # The shader files of the kernels bound (a shader the model carries has no file).
    shaders = (op.shader.source_file for op in resolution.graph.operators if op.shader is not None)
    return {
        "reads": (*reads, *(name for name in shaders if name is not None)),
        "graph": resolution.graph,
        "order": resolution.order,
        "libraries": libraries,
        "unbound": resolution.failed,
        "kernels": resolution.kernels,
        "diagnostics": resolution.diagnostics,
    }


def _partition(done: Compilation, request: Request) -> Produced:
    from vgfc.partition import logical_bindings, partition

    assert done.graph is not None
    plan = partition(done.graph, done.order)
    return {"plan": plan, "bindings": logical_bindings(done.graph, plan)}


def _lower(done: Compilation, request: Request) -> Produced:
    from vgfc.lower import lower

    graph, plan = done.graph, done.plan
    assert graph is not None and plan is not None
    # An op a kernel library made carries its origin into the diagnostics raised at it.
    lowered = lower(
        graph,
        plan,
        done.bindings,
        request.options.shader,
        keep_going=request.keep_going,
        skip=done.unbound,
        on_shader=None if request.on_stage is None else _shader_progress(request.on_stage),
        debug_info=request.options.debug_info,
        replicated_composites=request.options.replicated_composites,
    )
    return {
        "modules": lowered.modules,
        "diagnostics": lowered.diagnostics,
        "reads": lowered.includes,
    }


def _shader_progress(on_stage: Callable[[str], None]) -> Callable[[int, int], None]:
    def shader_done(done: int, total: int) -> None:
        on_stage(f"lower: {done}/{total} shaders")

    return shader_done


def _layout(done: Compilation, request: Request) -> Produced:
    from vgfc.vgf.layout import layout

    graph, plan, options = done.graph, done.plan, request.options
    assert graph is not None and plan is not None
    modules = [m for m in done.modules if m is not None]
    model = layout(graph, plan, modules, done.bindings, keep_source=options.keep_source)
    errors: list[VgfcError] = []
    if options.target != "scenario-runner" or not options.replicated_composites:
        # The scenario runner takes every file vgfc writes: its profile has no rules to load.
        from vgfc.vgf.profiles import replicated_composites_errors, target_errors

        errors += target_errors(graph, plan, model, options.target)
        if not options.replicated_composites:
            errors += replicated_composites_errors(model, os.fspath(request.source))
    return {"model": model, "diagnostics": _errors_or_raise(errors, request.keep_going)}


def _encode(done: Compilation, request: Request) -> Produced:
    from vgfc.vgf.encode import encode, encode_to

    model, sink = done.model, request.sink
    assert model is not None
    if isinstance(sink, ToBytes):
        data = encode(model)
        return {"vgf": data, "size": len(data)}
    if isinstance(sink, ToStream):
        if sink.report is None:
            size = encode_to(model, sink.stream)
            sink.stream.flush()
            return {"size": size}
        import hashlib

        digest = hashlib.sha256()
        size = encode_to(model, sink.stream, digest)
        sink.stream.flush()  # the report is written only once the whole VGF went out
        return {"size": size, "sha256": digest.hexdigest()}
    return _stage_file(done, request, model, sink)


def _stage_file(done: Compilation, request: Request, model: Any, sink: ToFile) -> Produced:
    """Stream the VGF to a temporary file beside ``sink.path``, left in ``sink.hold`` to be
    renamed into place (with the report) by :func:`compile_model`."""
    from vgfc.files.outputs import write_atomically
    from vgfc.vgf.encode import encode_to

    written: Produced = {}

    def write(file: BinaryIO) -> None:
        if sink.report is None:
            written["size"] = encode_to(model, file)
            return
        import hashlib

        digest = hashlib.sha256()
        written["size"] = encode_to(model, file, digest)
        written["sha256"] = digest.hexdigest()

    assert sink.hold is not None
    inputs = input_files(request.source, request.options, done.libraries)
    write_atomically(sink.path, write, inputs=inputs, hold=sink.hold)
    return written


@record
class Stage:
    """One stage of the pipeline: its name and what it does. A stage that ``halts`` ends the run
    when an error has been kept (with ``keep_going``) by it or a stage before it; the others
    raise theirs, or hand them forward (resolve: lower leaves the ops it could not bind out)."""

    name: str
    run: Callable[[Compilation, Request], Produced]
    halts: bool = False


PIPELINE: tuple[Stage, ...] = (
    Stage("read", _read),
    Stage("verify", _verify, halts=True),
    Stage("passes", _passes),
    Stage("resolve", _resolve),
    Stage("partition", _partition),
    Stage("lower", _lower, halts=True),
    Stage("layout", _layout, halts=True),
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
    :attr:`Compilation.vgf`). ``on_stage`` is told each stage's name as it starts, and in the
    lower stage how many of the shaders are done (``lower: 3/40 shaders``).

    Raises the first :class:`VgfcError` unless ``keep_going``; then every error is in
    ``diagnostics``, and the stages after the first failing one do not run.
    """
    if stop_after not in STAGES:
        raise ValueError(f"stop_after must be one of {', '.join(STAGES)}, not {stop_after!r}")
    sink = sink or ToBytes()
    held: list[Staged] = []
    hold = None
    if isinstance(sink, ToFile):  # the files are renamed into place at the end
        hold, sink = sink.hold, replace(sink, hold=held)
    request = Request(source, options or Options(), sink, keep_going, on_stage)
    done = Compilation()
    flags = request.options.warning_flags
    timings: list[tuple[str, float]] = []
    try:
        for stage in PIPELINE[: STAGES.index(stop_after) + 1]:
            if on_stage is not None:
                on_stage(stage.name)
            started = time.perf_counter()
            try:
                produced = stage.run(done, request)
            except VgfcError as e:
                if not keep_going:
                    raise
                produced, stop = {"diagnostics": (e.diagnostic,)}, True
            else:
                stop = False
            finally:
                timings.append((stage.name, time.perf_counter() - started))
            new = _governed(produced.pop("diagnostics", ()), flags, keep_going)
            read = produced.pop("reads", ())
            done = replace(
                done,
                **produced,
                diagnostics=(*done.diagnostics, *new),
                reads=(*done.reads, *read),
            )
            if stop or (stage.halts and done.errors):
                break
        done = replace(done, timings=tuple(timings))
        if held:
            _place(done, request, held, hold)
        elif isinstance(sink, ToStream) and done.size is not None:
            _beside_stream(done, request, sink)
    except BaseException:
        from vgfc.files.outputs import discard

        discard(held)
        raise
    return done


def _governed(
    diagnostics: tuple[Diagnostic, ...], flags: WarningFlags, keep_going: bool
) -> tuple[Diagnostic, ...]:
    """A stage's diagnostics as the ``-W`` options want them: a silenced warning left out, one
    ``-Werror`` makes an error raised at once (or kept, with ``keep_going``), before any stage
    after it writes a file."""
    kept = []
    for d in diagnostics:
        verdict = "warning" if d.name is None else flags.verdict(d.name)
        if d.severity is not Severity.WARNING or verdict == "warning":
            kept.append(d)
        elif verdict == "error":
            error = replace(d, severity=Severity.ERROR)
            if not keep_going:
                raised = InputError(error.message, error.location, excerpt=error.excerpt)
                raised.name = error.name
                raise raised
            kept.append(error)
    return tuple(kept)


def _place(done: Compilation, request: Request, held: list[Staged], hold: list[Any] | None) -> None:
    """The written VGF, with its report (which records the file's size, SHA-256 and the time of
    every stage) and its dependency file, renamed into place together
    (:func:`vgfc.files.outputs.commit`: those describing the VGF after it, their old files
    removed first), or left with the caller's ``hold``."""
    from vgfc.files.outputs import commit, stage

    sink = request.sink
    assert isinstance(sink, ToFile)
    report = sink.report
    text = b"" if report is None else _report_text(done, str(sink.path))
    if sink.depfile is not None:
        from vgfc.deps import make_rule

        rule = make_rule(sink.depfile, done.reads)
        read: tuple[str | os.PathLike[str], ...] = (
            *input_files(request.source, request.options, done.libraries),
            *done.reads,
        )
        held.append(stage(sink.depfile.path, rule, inputs=(*read, sink.path)))
    if isinstance(report, Path):
        inputs = (*input_files(request.source, request.options, done.libraries), sink.path)
        held.append(stage(report, text, inputs=inputs))  # after the VGF it describes
    if hold is not None:
        assert report is None or isinstance(report, Path)
        hold.extend(held)
        return
    commit(held)
    if report is not None and not isinstance(report, Path):  # --report -: once the VGF is in
        report.write(text)
        report.flush()


def _beside_stream(done: Compilation, request: Request, sink: ToStream) -> None:
    """The files that go with a VGF streamed out (``-o -``): written once all of it went out."""
    from vgfc.files.outputs import write_atomically

    inputs = input_files(request.source, request.options, done.libraries)
    if sink.depfile is not None:
        from vgfc.deps import make_rule

        rule = make_rule(sink.depfile, done.reads)
        write_atomically(sink.depfile.path, rule, inputs=(*inputs, *done.reads))
    if sink.report is not None and done.sha256:
        write_atomically(sink.report, _report_text(done, "-"), inputs=inputs)


def _report_text(done: Compilation, output: str) -> bytes:
    """The JSON report of a compile whose VGF was streamed (its size and SHA-256 known)."""
    import json

    from vgfc.report import compile_report

    assert done.size is not None and done.sha256 is not None
    doc = compile_report(done, output, written=(done.size, done.sha256))
    return (json.dumps(doc, indent=2) + "\n").encode("utf-8")


def compile_to(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    report: str | os.PathLike[str] | None = None,
    options: Options | None = None,
    on_stage: Callable[[str], None] | None = None,
    depfile: Depfile | None = None,
) -> Compilation:
    """Compile ``source`` and write the VGF to ``output`` (and the JSON report to ``report``,
    the dependency file ``depfile``), each atomically. Raises the first :class:`VgfcError`;
    then no file has been written, and existing ones are left as they were."""
    sink = ToFile(Path(output), Path(report) if report is not None else None, depfile=depfile)
    return compile_model(source, options, on_stage, sink=sink)


def compile(  # vgfc.compile, as the command is vgfc compile
    model: str | os.PathLike[str],
    output: str | os.PathLike[str] | None = None,
    *,
    report: str | os.PathLike[str] | None = None,
    deps: bool = False,
    depfile: str | os.PathLike[str] | None = None,
    deps_target: str | None = None,
    deps_phony: bool = False,
    **options: Any,
) -> Compilation:
    """``vgfc compile`` in this process, for tools that are Python already.

    Compiles ``model`` (``-``: standard input, as on the command line); with ``output`` writes
    the VGF there (atomically, and the JSON report to
    ``report``), else keeps it in :attr:`Compilation.vgf`. ``options`` are the compile options
    of :data:`vgfc.options.OPTIONS` by name (``kernels``, ``target``, ``include_dirs``,
    ``defines``, ``target_env``, ``shader_timeout``, ``cache``, ``keep_source``,
    ``auto_convert``, ``warnings`` (the ``-W`` values without ``-W``), ``hide_warnings``,
    ...), checked as the command line checks them. ``deps``, ``depfile``, ``deps_target`` and
    ``deps_phony`` write a dependency file as ``-MD``, ``-MF``, ``-MT`` and ``-MP`` do
    (:mod:`vgfc.deps`); they need ``output``. Raises :class:`VgfcError`
    for the errors the command exits 1 with (the same messages), ValueError for a usage error
    (the command's exit 2), TypeError for an unknown option. Warnings are in
    :attr:`Compilation.warnings`."""
    from vgfc.compilation import make_options
    from vgfc.deps import asked

    settings = make_options(**options)
    wanted = asked(deps, depfile, deps_target, deps_phony)
    if output is None:
        if report is not None:
            raise UsageError("a report needs an output file")
        if wanted.wanted:
            raise UsageError("a dependency file needs an output file")
        return compile_model(model, settings)
    from vgfc.jobs import check_outputs, is_standard, plan_jobs

    for name, value in (("output", output), ("report", report)):
        if is_standard(value):
            raise UsageError(
                f"{name}='-': standard output is the command line's; in Python give a file "
                "name, or output=None for the VGF as bytes (Compilation.vgf)"
            )
    report_name = os.fspath(report) if report else None
    (job,) = plan_jobs((Path(model),), Path(output), None, report_name, wanted)
    check_outputs(job, settings)
    return compile_to(job.model, job.output, job.report, settings, depfile=job.depfile)
