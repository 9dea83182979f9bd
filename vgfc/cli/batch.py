"""``vgfc compile`` of one model to a file, and of many in one run (batch mode).

:func:`compile_to` is the one way the command turns a model into a VGF file (and a report):
single-model compile and every batch job call it, so a model compiled in a batch gives the
bytes a single compile gives. :func:`run_jobs` compiles a list of jobs in this process (``-j 1``)
or in a pool of worker processes, going on past failures; each worker writes its own output
atomically and sends back a small :class:`Outcome`, never the VGF. :func:`print_outcome`,
:func:`summary_table` and :func:`outcomes_json` are how the command shows them.

Importing this module is cheap: the compiler, rich and the process pool are imported by the
functions that use them.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from rich.console import Console
    from rich.table import Table

    from vgfc.compiler import Compilation, Options
    from vgfc.diagnostics import Diagnostic

__all__ = [
    "Job",
    "Outcome",
    "Written",
    "compile_to",
    "outcomes_json",
    "print_outcome",
    "run_jobs",
    "summary_table",
    "worker_count",
]


@dataclass(frozen=True, slots=True)
class Written:
    """What :func:`compile_to` produced: the compilation (stopped after layout), the size of
    the VGF written and the time of every stage, encode included."""

    result: Compilation
    size: int
    timings: tuple[tuple[str, float], ...]


def compile_to(
    model: Path,
    output: Path,
    report: Path | None,
    options: Options,
    on_stage: Callable[[str], None] | None = None,
) -> Written:
    """Compile ``model`` and write the VGF to ``output`` (and the JSON report to ``report``),
    each atomically. Raises :class:`~vgfc.diagnostics.VgfcError` at the first error; then no
    VGF has been written, and an existing one is left as it was. The report is written before
    the VGF takes its place, so a report that cannot be written fails the compile too."""
    import json

    from vgfc.cli.support import write_atomically
    from vgfc.compiler import compile_model
    from vgfc.report import compile_report
    from vgfc.vgf.encode import encode_to

    # The pipeline stops before encoding: the VGF streams from the layout to the output file,
    # so constants go from the mapped input to disk without a copy in memory.
    result = compile_model(model, options, on_stage, stop_after="layout")
    assert result.model is not None and result.graph is not None
    laid_out = result.model
    size = 0
    timings = result.timings

    def write(file: BinaryIO) -> None:
        nonlocal size, timings
        start = time.perf_counter()
        digest = None
        if report is not None:  # the report records the file's SHA-256
            import hashlib

            digest = hashlib.sha256()
        size = encode_to(laid_out, file, digest)
        timings = (*result.timings, ("encode", time.perf_counter() - start))
        if report is not None and digest is not None:
            doc = compile_report(
                dataclasses.replace(result, timings=timings),
                str(output),
                written=(size, digest.hexdigest()),
            )
            write_atomically(report, (json.dumps(doc, indent=2) + "\n").encode("utf-8"))

    write_atomically(output, write)
    return Written(result, size, timings)


@dataclass(frozen=True, slots=True)
class Job:
    """One model of a batch and where its files go."""

    model: Path
    output: Path
    report: Path | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one :class:`Job`: small, so that it crosses from a worker process."""

    job: Job
    ok: bool
    seconds: float
    """Wall time of the compile and the writes, in the process that did them."""
    operators: int | None = None
    """Operators of the model after its custom ops were resolved (known when it compiled)."""
    segments: int | None = None
    size: int | None = None
    """Bytes of the VGF written."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """Warnings, then the error that stopped the compile."""
    internal: bool = False
    """The error is a bug in vgfc (exit code 3)."""
    traceback: str | None = None
    """The traceback of an internal error, for ``--debug``."""

    @property
    def result(self) -> str:
        return "ok" if self.ok else "internal error" if self.internal else "failed"


def compile_job(job: Job, options: Options) -> Outcome:
    """Run one job: compile, write, and catch every error into the :class:`Outcome`. A failed
    job leaves no output file (an existing one is left as it was)."""
    import traceback

    from vgfc.diagnostics import ErrorKind, VgfcError

    start = time.perf_counter()
    try:
        written = compile_to(job.model, job.output, job.report, options)
    except VgfcError as e:
        return Outcome(
            job,
            ok=False,
            seconds=time.perf_counter() - start,
            diagnostics=(e.diagnostic,),
            internal=e.kind is ErrorKind.INTERNAL,
            traceback=traceback.format_exc() if e.kind is ErrorKind.INTERNAL else None,
        )
    except Exception as e:  # a bug: this model fails, the others go on
        message = (
            f"{type(e).__name__}: {e}\nThis is a bug in vgfc; rerun with --debug for a "
            "traceback and report it."
        )
        return _internal_failure(job, start, message, traceback.format_exc())
    result = written.result
    assert result.graph is not None and result.model is not None
    return Outcome(
        job,
        ok=True,
        seconds=time.perf_counter() - start,
        operators=len(result.graph.operators),
        segments=len(result.model.segments),
        size=written.size,
        diagnostics=result.warnings,
    )


def worker_count(jobs: int) -> int:
    """``-j``: 0 means one worker per CPU this process may use."""
    if jobs > 0:
        return jobs
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def run_jobs(
    jobs: Sequence[Job],
    options: Options,
    workers: int,
    on_done: Callable[[int, Outcome], None],
) -> list[Outcome]:
    """Compile every job, going on past failures; ``on_done(index, outcome)`` is called as each
    one finishes (in finishing order). Returns the outcomes in the order of ``jobs``.

    With ``workers`` > 1 the jobs run in a pool of that many processes. A worker that dies (a
    crash, the kernel's out-of-memory killer) breaks the pool; the jobs it left unfinished then
    run again one at a time, each in a process of its own, so the crash is pinned on the model
    that causes it and the others still compile."""
    outcomes: list[Outcome | None] = [None] * len(jobs)

    def done(i: int, outcome: Outcome) -> None:
        outcomes[i] = outcome
        on_done(i, outcome)

    workers = min(workers, len(jobs))
    if workers <= 1:
        for i, job in enumerate(jobs):
            done(i, compile_job(job, options))
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        broken: list[int] = []
        pool = ProcessPoolExecutor(
            max_workers=workers, initializer=_worker_started, initargs=(workers,)
        )
        try:
            futures: dict[Future[Outcome], int] = {
                pool.submit(compile_job, job, options): i for i, job in enumerate(jobs)
            }
            for future in as_completed(futures):
                i = futures[future]
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    broken.append(i)
                    continue
                done(i, outcome)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        for i in sorted(broken):
            done(i, _isolated(jobs[i], options))
    assert all(o is not None for o in outcomes)
    return [o for o in outcomes if o is not None]


def _worker_started(models_at_once: int) -> None:
    """Make a pool worker end the way a vgfc process does, and take its share of the CPUs for
    shader compiler workers (``models_at_once`` models compile at the same time).

    A pool worker ends with ``os._exit``, so its ``atexit`` handlers never run, and the shader
    compiler processes it started (:mod:`vgfc.shader.bounded`, which stop them from ``atexit``)
    would only end when they see their socket close, orphaned and never waited for. So the
    handlers this worker registers run when it ends, from multiprocessing's own exit hook; the
    ones a forked worker inherited from this process are dropped first: they are this process's
    to run, not the worker's."""
    import atexit
    from multiprocessing import util

    from vgfc.shader.build import share_cpus

    share_cpus(models_at_once)

    atexit._clear()
    util.Finalize(None, atexit._run_exitfuncs, exitpriority=0)


def _isolated(job: Job, options: Options) -> Outcome:
    """``job`` in a process of its own; an internal error if that process dies."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    start = time.perf_counter()
    pool: ProcessPoolExecutor = ProcessPoolExecutor(
        max_workers=1, initializer=_worker_started, initargs=(1,)
    )
    try:
        return pool.submit(compile_job, job, options).result()
    except BrokenProcessPool:
        message = (
            "the worker process compiling this model ended abruptly (a crash, or killed for "
            "memory)\nThis is a bug in vgfc, or the machine ran out of memory; rerun it alone "
            "with --debug to see which."
        )
        return _internal_failure(job, start, message)
    finally:
        pool.shutdown(wait=True)


def _internal_failure(job: Job, start: float, message: str, trace: str | None = None) -> Outcome:
    """The outcome of a model whose compile hit a bug or lost its process: an internal error."""
    from vgfc.diagnostics import Diagnostic, Location, Severity

    return Outcome(
        job,
        ok=False,
        seconds=time.perf_counter() - start,
        diagnostics=(Diagnostic(Severity.ERROR, message, Location(file=str(job.model))),),
        internal=True,
        traceback=trace,
    )


def _attributed(d: Diagnostic, model: Path) -> Diagnostic:
    """``d`` as it is when it names the model; else with the model's name in front, so that in
    a batch every line says which model it is about."""
    from vgfc.diagnostics import Location

    if d.location.file == str(model):
        return d
    return dataclasses.replace(d, message=d.render(), location=Location(file=str(model)))


def print_outcome(console: Console, outcome: Outcome, *, debug: bool = False) -> None:
    """The warnings and the error of one model on ``console``, in the lines single-model
    compile prints, each naming the model."""
    from vgfc.cli.support import print_diagnostic
    from vgfc.diagnostics import Severity

    for d in outcome.diagnostics:
        label = None
        if d.severity is Severity.ERROR and outcome.internal:
            label = "internal error"
            if debug and outcome.traceback:
                console.out(outcome.traceback, end="", highlight=False)
        print_diagnostic(console, _attributed(d, outcome.job.model), label)


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def summary_table(outcomes: Sequence[Outcome], width: int) -> Table:
    """One row per model: its result, operators, compile time and the file written."""
    from rich.markup import escape

    from vgfc.cli.tables import word_table

    rows = [
        (
            escape(str(o.job.model)),
            o.result if o.ok else f"[bold red]{o.result}[/]",
            "" if o.operators is None else str(o.operators),
            _duration(o.seconds),
            escape(str(o.job.output)) if o.ok else "",
            "" if o.size is None else str(o.size),
        )
        for o in outcomes
    ]
    columns = ("model", "result", "ops", "time", "output", "bytes")
    return word_table("", columns, rows, width)


def summary_line(outcomes: Sequence[Outcome], seconds: float, workers: int) -> str:
    """``3 models: 2 compiled, 1 failed; 0.41 s, 2 workers``."""
    failed = sum(not o.ok for o in outcomes)
    internal = sum(o.internal for o in outcomes)
    parts = [f"{len(outcomes) - failed} compiled"]
    if failed:
        parts.append(f"{failed} failed" + (f" ({internal} internal errors)" if internal else ""))
    count = f"{len(outcomes)} model" + ("" if len(outcomes) == 1 else "s")
    how = f"{workers} worker processes" if workers > 1 else "in one process"
    return f"{count}: {', '.join(parts)}; {_duration(seconds)}, {how}"


def outcomes_json(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """The outcomes as plain JSON data, documented by ``schemas/compile.schema.json``."""
    from vgfc.diagnostics import Severity

    docs = []
    for o in outcomes:
        errors = sum(d.severity is Severity.ERROR for d in o.diagnostics)
        docs.append(
            {
                "model": str(o.job.model),
                "ok": o.ok,
                "result": o.result,
                "output": str(o.job.output) if o.ok else None,
                "report": str(o.job.report) if o.ok and o.job.report is not None else None,
                "operators": o.operators,
                "segments": o.segments,
                "bytes": o.size,
                "seconds": round(o.seconds, 6),
                "errors": errors,
                "warnings": len(o.diagnostics) - errors,
                "diagnostics": [d.as_dict() for d in o.diagnostics],
            }
        )
    return docs
