"""``vgfc compile``: MODEL.tosa -> one VGF file (and optionally a JSON report); many models in
one run with ``-d OUTDIR`` (batch mode, :mod:`vgfc.cli.batch`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vgfc.cli.compiling import compile_single
from vgfc.cli.console import escape, stderr_console, stdout_console
from vgfc.cli.errors import EXIT_ERROR, EXIT_INTERNAL
from vgfc.cli.options import InputPath, declare

if TYPE_CHECKING:
    from vgfc.batch import Outcome
    from vgfc.compiler import Options
    from vgfc.jobs import Job

__all__ = ["compile_command"]


@click.command("compile")
@click.argument(
    "models",
    nargs=-1,
    required=True,
    metavar="MODEL...",
    type=InputPath(dash=True),
)
@declare("compile")
def compile_command(
    models: tuple[Path, ...],
    output: Path | None,
    output_dir: Path | None,
    report: str | None,
    deps: bool,
    depfile: Path | None,
    deps_target: str | None,
    deps_phony: bool,
    deps_only: bool,
    jobs: int,
    as_json: bool,
    quiet: bool,
    options: Options,
) -> None:
    """Compile MODEL into one VGF file, or many models in one run.

    Reads and verifies the model, resolves its custom ops, partitions it, lowers each ML
    partition to a SPIR-V graph module (SPV_ARM_graph, TOSA.001000.1) and compiles and
    cross-checks each Vulkan custom shader, lays out the resources and writes the VGF
    atomically: on any error no file is written and an existing one is left untouched. The same
    input and options always give the same bytes. MODEL - reads standard input (with -o);
    -o - writes the VGF to standard output, --report - the report.

    Batch mode (several models, -d OUTDIR or --json) compiles every model, with -j N in N
    worker processes, and goes on past failures: each failure prints its errors, naming the
    model, and leaves no file. Models with the same stem are refused before anything is
    compiled. At the end a table (model, result, operators, time, output, bytes) on stdout, or
    with --json a list; progress lines on a terminal. Exit code 0 when every model compiled, 1
    when one failed, 3 when one hit an internal error.

    \b
        vgfc compile a.tosa b.tosa c.tosa -d out/ -j 0 --report
        vgfc compile model.tosa -o out/model.vgf -MD -MP    # and out/model.d for make
        vgfc compile model.tosa -o out/model.vgf -M         # the rule alone, no VGF
    """
    from vgfc.deps import asked
    from vgfc.jobs import plan_jobs
    from vgfc.options import UsageError

    try:
        wanted = asked(deps, depfile, deps_target, deps_phony, deps_only)
        job_list = plan_jobs(models, output, output_dir, report, wanted)
        if deps_only and (report is not None or as_json):
            given = "--report" if report is not None else "--json"
            raise UsageError(
                f"-M prints the dependency rule and writes nothing else: {given} "
                "has nothing to describe"
            )
    except UsageError as e:
        raise click.UsageError(str(e)) from None
    if deps_only:
        from vgfc.cli.rules import print_rules

        print_rules(job_list, options)
        return
    batch = len(models) > 1 or output_dir is not None or as_json
    if batch:
        from vgfc.jobs import check_batch

        try:
            check_batch(job_list)
        except UsageError as e:
            raise click.UsageError(str(e)) from None
        if output_dir is not None:
            try:
                output_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                from vgfc.files.outputs import folder_error

                raise folder_error(output_dir, e) from None
        _compile_many(job_list, options, jobs, as_json=as_json, quiet=quiet)
    else:
        (job,) = job_list
        compile_single(job, options, quiet=quiet)


def _compile_many(
    jobs: list[Job], options: Options, parallel: int, *, as_json: bool, quiet: bool
) -> None:
    """Batch mode: every job, past failures; errors in the order of the models as soon as the
    models before them are done, progress lines on a terminal, a summary at the end."""
    import json
    import time

    from vgfc.batch import output_states, run_jobs, worker_count, written_since
    from vgfc.cli.batch import outcomes_json, print_outcome, summary_line, summary_table
    from vgfc.cli.tables import table_width
    from vgfc.diagnostics import InputError, VgfcError
    from vgfc.files.interrupts import Interrupted

    debug = bool(click.get_current_context().find_root().params.get("debug"))
    console = stderr_console()
    progress = console.is_terminal and not quiet
    workers = min(worker_count(parallel), len(jobs))
    finished: dict[int, Outcome] = {}
    shown = 0
    gone = False
    """The reader of the output went away (``| head``): nothing more is printed, and the
    batch goes on; that is no failure of the compile."""

    def on_done(index: int, outcome: Outcome) -> None:
        nonlocal shown, gone
        finished[index] = outcome
        try:
            if progress and not gone:
                colour = "green" if outcome.ok else "bold red"
                console.print(
                    escape(f"[{len(finished)}/{len(jobs)}] {outcome.job.model} ")
                    + f"[{colour}]{outcome.result}[/]",
                    highlight=False,
                )
            while shown in finished:
                if not gone:
                    print_outcome(console, finished[shown], debug=debug)
                shown += 1
        except BrokenPipeError:
            gone = True

    start = time.perf_counter()
    before = output_states(jobs)
    try:
        outcomes = run_jobs(jobs, options, workers, on_done)
    except (KeyboardInterrupt, Interrupted) as e:
        # The workers are gone; say which models' files were written before the interrupt.
        written = written_since(before)
        vgfs = [job.output for job in jobs if job.output in written]
        how = e.name if isinstance(e, Interrupted) else "Ctrl-C"
        names = ", ".join(str(p) for p in vgfs[:5]) + (" ..." if len(vgfs) > 5 else "")
        text = f"interrupted ({how}): {len(vgfs)} of {len(jobs)} models written" + (
            f" ({names})" if vgfs else ""
        )
        if len(vgfs) < len(jobs):
            text += "; the others' files were left as they were"
        console.print(f"[bold red]error:[/] {escape(text)}", highlight=False)
        sys.exit(EXIT_ERROR)
    seconds = time.perf_counter() - start
    try:
        if gone:
            raise BrokenPipeError
        if as_json:
            click.echo(json.dumps(outcomes_json(outcomes), indent=2))
        elif not quiet:
            out = stdout_console()
            out.print(summary_table(outcomes, table_width(out)))
            out.print(escape(summary_line(outcomes, seconds, workers)))
        sys.stdout.flush()
    except BrokenPipeError:
        from vgfc.cli.process import reader_gone

        reader_gone(_written(outcomes))
    except VgfcError as e:  # a full disk or a closed stdout: say the files are in place
        if e.location.file != "standard output":
            raise
        raise InputError(f"{e.message}; {_written(outcomes)}", e.location) from None
    if any(o.internal for o in outcomes):
        sys.exit(EXIT_INTERNAL)
    if not all(o.ok for o in outcomes):
        sys.exit(EXIT_ERROR)


def _written(outcomes: list[Outcome]) -> str:
    return f"{sum(o.ok for o in outcomes)} of {len(outcomes)} models compiled and written"
