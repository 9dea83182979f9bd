"""Many models in one run: batch mode's jobs, their outcomes and the worker processes.

:func:`run_jobs` compiles a list of :class:`Job` in this process (one worker) or in worker
processes, going on past failures; each job goes through :func:`vgfc.compiler.compile_to`, so a
model compiled in a batch gives the bytes a single compile gives, and each worker writes its own
output atomically and sends back a small :class:`Outcome`, never the VGF. How the command shows
the outcomes is :mod:`vgfc.cli.batch`'s.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from vgfc.jobs import Job
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.compiler import Options
    from vgfc.diagnostics import Diagnostic

__all__ = [
    "Outcome",
    "compile_job",
    "output_states",
    "run_jobs",
    "worker_count",
    "written_since",
]


@record
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

    from vgfc.compiler import compile_to
    from vgfc.diagnostics import ErrorKind, VgfcError

    start = time.perf_counter()
    try:
        result = compile_to(job.model, job.output, job.report, options, depfile=job.depfile)
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
    assert result.graph is not None and result.model is not None
    return Outcome(
        job,
        ok=True,
        seconds=time.perf_counter() - start,
        operators=len(result.graph.operators),
        segments=len(result.model.segments),
        size=result.size,
        diagnostics=result.warnings,
    )


def output_states(jobs: Sequence[Job]) -> dict[Path, tuple[int, int, int] | None]:
    """Each job's output file as it is now (device, inode, modification time), ``None`` when
    absent: compared after an interrupt, it tells which outputs were written."""
    states: dict[Path, tuple[int, int, int] | None] = {}
    for job in jobs:
        for path in (job.output, job.report):
            if path is None:
                continue
            try:
                info = os.stat(path)
            except OSError:
                states[path] = None
                continue
            states[path] = (info.st_dev, info.st_ino, info.st_mtime_ns)
    return states


def written_since(before: dict[Path, tuple[int, int, int] | None]) -> list[Path]:
    """The outputs of :func:`output_states` that were replaced or created since."""
    now = output_states([])
    for path in before:
        try:
            info = os.stat(path)
            now[path] = (info.st_dev, info.st_ino, info.st_mtime_ns)
        except OSError:
            now[path] = None
    return [path for path, state in before.items() if now[path] is not None and now[path] != state]


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
    one finishes (in finishing order, in this thread). Returns the outcomes in the order of
    ``jobs``.

    With ``workers`` > 1 the jobs run in that many worker processes (:mod:`vgfc.processes`),
    each fed by a thread of this process. A worker that dies (a crash, the kernel's
    out-of-memory killer) fails only the model it was compiling, as an internal error; the next
    job starts a fresh worker. On an interrupt the workers are asked to end (they remove their
    temporary files) and the interrupt goes on."""
    outcomes: list[Outcome | None] = [None] * len(jobs)

    def done(i: int, outcome: Outcome) -> None:
        outcomes[i] = outcome
        on_done(i, outcome)

    workers = min(workers, len(jobs))
    if workers <= 1:
        for i, job in enumerate(jobs):
            done(i, compile_job(job, options))
    else:
        _in_workers(jobs, options, workers, done)
    assert all(o is not None for o in outcomes)
    return [o for o in outcomes if o is not None]


def _in_workers(
    jobs: Sequence[Job], options: Options, count: int, done: Callable[[int, Outcome], None]
) -> None:
    import queue
    import threading

    from vgfc.diagnostics import InternalError
    from vgfc.processes import Labels, Worker, end_together

    # How a batch worker's failures read: ``the worker process compiling this model crashed
    # (signal SIGKILL)``.
    labels = Labels(
        "compiling this model", "worker process compiling this model", "no deadline", InternalError
    )
    todo: queue.SimpleQueue[int] = queue.SimpleQueue()
    for i in range(len(jobs)):
        todo.put(i)
    finished: queue.SimpleQueue[tuple[int, Outcome]] = queue.SimpleQueue()
    pool = [Worker(labels, _share_cpus(count), graceful=True) for _ in range(count)]
    stop = threading.Event()

    def feed(worker: Worker) -> None:
        while not stop.is_set():
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            start = time.perf_counter()
            try:
                outcome: Outcome = worker.run(compile_job, (jobs[i], options), math.inf, 0)
            except Exception as e:  # the worker died: this model fails, the others go on
                message = (
                    f"{e}\nThis is a bug in vgfc, or the machine ran out of memory; rerun "
                    "it alone with --debug to see which."
                )
                outcome = _internal_failure(jobs[i], start, message)
            finished.put((i, outcome))

    threads = [threading.Thread(target=feed, args=(w,), daemon=True) for w in pool]
    try:
        for thread in threads:
            thread.start()
        for _ in jobs:
            done(*_next(finished))
    finally:
        # On an interrupt every worker is asked to end at once (each removes its temporary
        # file) and none starts another job: no worker outlives the command, none writes late.
        stop.set()
        end_together(pool)


def _next(finished: Any) -> tuple[int, Outcome]:
    """The next finished job. Waits in short steps: a blocking wait on a queue holds off the
    signal handlers of this (main) thread until a job finishes, and an interrupt must stop the
    workers before they write their files."""
    import queue

    while True:
        try:
            item: tuple[int, Outcome] = finished.get(timeout=0.05)
        except queue.Empty:
            continue
        return item


def _share_cpus(models_at_once: int) -> Callable[[], None]:
    """A worker's set-up: its share of the CPUs for shader compiler workers
    (``models_at_once`` models compile at the same time)."""

    def start() -> None:
        from vgfc.shader.build import share_cpus

        share_cpus(models_at_once)

    return start


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
