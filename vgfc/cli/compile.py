"""``vgfc compile``: MODEL.tosa -> one VGF file (and optionally a JSON report); many models in
one run with ``-d OUTDIR`` (batch mode, :mod:`vgfc.cli.batch`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vgfc.cli.options import InputPath, compile_options
from vgfc.cli.support import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    diagnostics_console,
    escape,
    handle_errors,
    print_diagnostic,
    print_table,
    stderr_console,
)

if TYPE_CHECKING:
    from vgfc.batch import Job, Outcome
    from vgfc.compiler import Options

__all__ = ["compile_command"]

REPORT_NEXT_TO_OUTPUT = ""
"""The value of ``--report`` given without a FILE: each report goes next to its VGF."""


@click.command("compile")
@click.argument(
    "models",
    nargs=-1,
    required=True,
    metavar="MODEL...",
    type=InputPath(),
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="VGF file to write (default: MODEL with the suffix .vgf). One MODEL only.",
)
@click.option(
    "-d",
    "--output-dir",
    "output_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="OUTDIR",
    help="Write each MODEL's VGF to OUTDIR/<stem>.vgf (created if missing): batch mode.",
)
@click.option(
    "--report",
    is_flag=False,
    flag_value=REPORT_NEXT_TO_OUTPUT,
    default=None,
    metavar="[FILE]",
    type=click.Path(dir_okay=False),
    help="Also write a JSON report (schemas/report.schema.json): partitions, segments, "
    "modules, resources, shaders, warnings, timings per stage. Without FILE (as the last "
    "argument or before another option) each report goes next to its VGF as "
    "<stem>.report.json; with several models FILE is not allowed.",
)
@click.option(
    "--keep-source",
    is_flag=True,
    help="Store GLSL/HLSL source in compute modules instead of the compiled SPIR-V "
    "(the shaders are still compiled and checked).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    metavar="N",
    help="Compile up to N models at once, each in a worker process (0: one per CPU). "
    "Results are printed in the order of the models, and the files are the same.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON list with one entry per model (schemas/compile.schema.json) instead "
    "of the summary: result, files written, operators, segments, bytes, seconds, "
    "diagnostics. Implies batch mode.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print nothing but errors and warnings (and the --json list).",
)
@compile_options
@handle_errors
def compile_command(
    models: tuple[Path, ...],
    output: Path | None,
    output_dir: Path | None,
    report: str | None,
    keep_source: bool,
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
    input and options always give the same bytes.

    Batch mode (several models, -d OUTDIR or --json) compiles every model, with -j N in N
    worker processes, and goes on past failures: each failure prints its errors, naming the
    model, and leaves no file. Models with the same stem are refused before anything is
    compiled. At the end a table (model, result, operators, time, output, bytes) on stdout, or
    with --json a list; progress lines on a terminal. Exit code 0 when every model compiled, 1
    when one failed, 3 when one hit an internal error.

    \b
        vgfc compile a.tosa b.tosa c.tosa -d out/ -j 0 --report
    """
    if output is not None and output_dir is not None:
        raise click.UsageError("-o/--output and -d/--output-dir are exclusive")
    if output is not None and len(models) > 1:
        raise click.UsageError(
            f"-o/--output names one file, and {len(models)} models were given: "
            "use -d/--output-dir OUTDIR to write each to OUTDIR/<stem>.vgf"
        )
    if report and len(models) > 1:
        raise click.UsageError(
            f"--report {report} names one file, and {len(models)} models were given: give "
            "--report without a FILE to write each report next to its VGF as "
            "<stem>.report.json"
            + (
                " (the FILE was taken from the word after --report)"
                if report.endswith(".tosa")
                else ""
            )
        )
    if report and report != REPORT_NEXT_TO_OUTPUT and _looks_like_a_model(Path(report)):
        raise click.UsageError(
            f"--report took {report} as its FILE, and that is a TOSA model, not a report: put "
            "--report last (or write --report=FILE) so that it does not take a model's name"
        )
    batch = len(models) > 1 or output_dir is not None or as_json
    job_list = _jobs(models, output, output_dir, report)
    if keep_source:
        import dataclasses

        options = dataclasses.replace(options, keep_source=True)
    if batch:
        if output_dir is not None:
            try:
                output_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                from vgfc.diagnostics import InputError

                raise InputError(
                    f"cannot create output folder: {e.strerror}", file=str(output_dir)
                ) from None
        _compile_many(job_list, options, jobs, as_json=as_json, quiet=quiet)
    else:
        (job,) = job_list
        from vgfc.compiler import input_files
        from vgfc.files import check_output

        # Before any work: a device such as /dev/null, a FIFO, a library given as the output,
        # a missing folder (a batch's jobs each check their own and go on past a refusal).
        inputs = input_files(job.model, options)
        for path in (job.output, job.report):
            if path is not None:
                check_output(path, inputs=inputs)
        _compile_one(job, options, quiet=quiet)


def _looks_like_a_model(path: Path) -> bool:
    """A ``.tosa`` name, or a file that starts like a TOSA flatbuffer (identifier ``TOSA``)."""
    from vgfc.diagnostics import VgfcError
    from vgfc.files import open_input

    if path.suffix.lower() == ".tosa":
        return True
    try:  # a FIFO or a device is no model (and must not block or be read here)
        with open_input(path) as f:
            return f.header(8)[4:8] == b"TOSA"
    except VgfcError:
        return False


def _real(path: Path) -> Path:
    """``path`` with its links followed as far as they lead: a symlink loop stays as it is
    (``Path.resolve`` raises on one), and the file opener refuses it, naming it."""
    import os

    return Path(os.path.realpath(path))


def _jobs(
    models: tuple[Path, ...], output: Path | None, output_dir: Path | None, report: str | None
) -> list[Job]:
    """Where each model's files go; two models that would write one file are a usage error."""
    from vgfc.batch import Job

    jobs = []
    writers: dict[Path, Path] = {}
    inputs = {_real(model): model for model in models}
    for model in models:
        if output is not None:
            target = output
        elif output_dir is not None:
            target = output_dir / f"{model.stem}.vgf"
        else:
            target = model.with_suffix(".vgf")
        if report is None:
            report_path = None
        elif report == REPORT_NEXT_TO_OUTPUT:
            report_path = target.with_suffix(".report.json")
        else:
            report_path = Path(report)
        for path in (target, report_path):
            if path is not None and path.is_dir():
                raise click.UsageError(f"{model}: cannot write {path}: it is a directory")
            if path is not None and _real(path) in inputs:
                # `--report a.tosa b.tosa`: the flag took the model after it as its FILE.
                taken = " (--report took the word after it as FILE)" if path == report_path else ""
                raise click.UsageError(
                    f"{model}: writing {path} would replace the model {inputs[_real(path)]}{taken}"
                )
        if report_path is not None and _real(report_path) == _real(target):
            raise click.UsageError(
                f"{model}: the report and the VGF would both be written to {target}"
            )
        key = _real(target)
        if key in writers:
            raise click.UsageError(
                f"{writers[key]} and {model} would both be written to {target}: "
                + (
                    "models in one batch need different file names (stems)"
                    if _real(writers[key]) != _real(model)
                    else "the model is given twice"
                )
            )
        writers[key] = model
        jobs.append(Job(model, target, report_path))
    return jobs


SUMMARY_ROWS = 40
"""Segments the summary table shows; a longer table is cut with a line that says how many more
there are (a terminal shows no more at once, and rich takes about a millisecond a row)."""


def _compile_one(job: Job, options: Options, *, quiet: bool) -> None:
    """One model: errors end the command (``handle_errors``); a table of the segments. rich
    draws it, and the progress on stderr, only on a terminal: elsewhere (a CI log, a pipe) the
    same words go out as plain lines, and rich, 30 ms to import, is never loaded."""
    from vgfc.compiler import compile_to

    if not quiet:
        _compile_and_show(job, options)
        return
    # Nothing printed but warnings.
    result = compile_to(job.model, job.output, job.report, options)
    if result.warnings:
        console = diagnostics_console()
        for d in result.warnings:
            print_diagnostic(console, d)


def _compile_and_show(job: Job, options: Options) -> None:
    """One model with its summary table. The files are renamed into place only once the table
    is out: output that cannot be printed (a full disk, a closed stdout) leaves the old files,
    and the error says so."""
    from vgfc.compiler import ToFile
    from vgfc.diagnostics import InputError, VgfcError
    from vgfc.files import WRITES, Staged, commit, discard

    held: list[Staged] = []
    sink = ToFile(job.output, job.report, hold=held)
    try:
        _show(job, options, sink)
        sys.stdout.flush()
    except VgfcError as e:
        discard(held)
        if e.location.file != "standard output":
            raise
        raise InputError(f"{e.message}; {WRITES.outcome()}", e.location) from None
    except BaseException:
        discard(held)
        raise
    commit(held)


def _show(job: Job, options: Options, sink: Any) -> None:
    from vgfc.compiler import compile_model

    console = diagnostics_console()
    if console is not None:
        with console.status("compiling") as status:
            result = compile_model(
                job.model, options, lambda s: status.update(f"{s}..."), sink=sink
            )
    else:
        result = compile_model(job.model, options, sink=sink)
    for d in (*result.warnings, *result.notes):
        print_diagnostic(console, d)

    from vgfc.report import kernel_lines, summarize_ops

    vgf = result.model
    assert result.plan is not None and result.graph is not None and vgf is not None
    rows = []
    pairs = list(zip(vgf.segments, result.plan.partitions, strict=True))
    for i, (seg, part) in enumerate(pairs[:SUMMARY_ROWS]):
        module = vgf.module_of(seg)
        push = ", ".join(f"{r.size} B" for r in seg.push_constant_ranges)
        rows.append(
            (
                str(i),
                seg.type.value,
                module.name,
                module.code,
                summarize_ops(result.graph, part.operators),
                "x".join(map(str, seg.dispatch)) if seg.type.value == "compute" else "",
                push,
            )
        )
    columns = ("#", "type", "module", "code", "operators", "dispatch", "push")
    lines = []
    if len(pairs) > SUMMARY_ROWS:
        lines.append(
            f"... and {len(pairs) - SUMMARY_ROWS} more segments: "
            f"vgfc inspect {job.output} lists them all"
        )
    lines += kernel_lines(result)
    timing = ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in result.timings)
    lines.append(
        f"{len(vgf.segments)} segments, {len(vgf.resources)} resources, "
        f"{len(vgf.constants)} constants; {timing}"
    )
    print_table(f"{job.output}: {result.size} bytes", columns, rows, lines)


def _compile_many(
    jobs: list[Job], options: Options, parallel: int, *, as_json: bool, quiet: bool
) -> None:
    """Batch mode: every job, past failures; errors in the order of the models as soon as the
    models before them are done, progress lines on a terminal, a summary at the end."""
    import json
    import time

    from rich.console import Console

    from vgfc.batch import output_states, run_jobs, worker_count, written_since
    from vgfc.cli.batch import outcomes_json, print_outcome, summary_line, summary_table
    from vgfc.files import Interrupted

    debug = bool(click.get_current_context().find_root().params.get("debug"))
    console = stderr_console()
    progress = console.is_terminal and not quiet
    workers = min(worker_count(parallel), len(jobs))
    finished: dict[int, Outcome] = {}
    shown = 0

    def on_done(index: int, outcome: Outcome) -> None:
        nonlocal shown
        finished[index] = outcome
        if progress:
            colour = "green" if outcome.ok else "bold red"
            console.print(
                escape(f"[{len(finished)}/{len(jobs)}] {outcome.job.model} ")
                + f"[{colour}]{outcome.result}[/]",
                highlight=False,
            )
        while shown in finished:
            print_outcome(console, finished[shown], debug=debug)
            shown += 1

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
    if as_json:
        click.echo(json.dumps(outcomes_json(outcomes), indent=2))
    elif not quiet:
        out = Console(highlight=False, soft_wrap=True)
        out.print(summary_table(outcomes, out.width))
        out.print(escape(summary_line(outcomes, seconds, workers)))
    if any(o.internal for o in outcomes):
        sys.exit(EXIT_INTERNAL)
    if not all(o.ok for o in outcomes):
        sys.exit(EXIT_ERROR)
