"""What ``vgfc compile`` does once its arguments are parsed, without click: the click command
(:mod:`vgfc.cli.compile`) and the quick path (:mod:`vgfc.cli.quick`) both call it, so a compile
behaves the same whichever parsed its command line."""

from __future__ import annotations

import sys
from pathlib import Path

from vgfc.cli.support import diagnostics_console, print_diagnostic, print_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.batch import Job
    from vgfc.compiler import Options

__all__ = [
    "REPORT_NEXT_TO_OUTPUT",
    "SUMMARY_ROWS",
    "UsageError",
    "compile_single",
    "plan_jobs",
]

REPORT_NEXT_TO_OUTPUT = ""
"""The value of ``--report`` given without a FILE: each report goes next to its VGF."""


class UsageError(Exception):
    """A command line that cannot be run as given (exit 2 with click's usage line). Found before
    any work is done."""


def check_arguments(
    models: tuple[Path, ...], output: Path | None, output_dir: Path | None, report: str | None
) -> None:
    """Options that exclude one another, or a ``--report`` that took a model as its FILE."""
    if output is not None and output_dir is not None:
        raise UsageError("-o/--output and -d/--output-dir are exclusive")
    if output is not None and len(models) > 1:
        raise UsageError(
            f"-o/--output names one file, and {len(models)} models were given: "
            "use -d/--output-dir OUTDIR to write each to OUTDIR/<stem>.vgf"
        )
    if report and len(models) > 1:
        raise UsageError(
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
        raise UsageError(
            f"--report took {report} as its FILE, and that is a TOSA model, not a report: put "
            "--report last (or write --report=FILE) so that it does not take a model's name"
        )


def compile_single(job: Job, options: Options, *, quiet: bool) -> None:
    """One model, not in batch mode: its outputs checked before any work (a device such as
    /dev/null, a FIFO, a library given as the output, a missing folder), then compiled, with the
    summary table unless ``quiet``."""
    from vgfc.compiler import input_files
    from vgfc.files.outputs import check_output

    inputs = input_files(job.model, options)
    for path in (job.output, job.report):
        if path is not None:
            check_output(path, inputs=inputs)
    _compile_quietly_or_not(job, options, quiet=quiet)


def _looks_like_a_model(path: Path) -> bool:
    """A ``.tosa`` name, or a file that starts like a TOSA flatbuffer (identifier ``TOSA``)."""
    from vgfc.diagnostics import VgfcError
    from vgfc.files.inputs import open_input

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


def plan_jobs(
    models: tuple[Path, ...], output: Path | None, output_dir: Path | None, report: str | None
) -> list[Job]:
    """Where each model's files go; two models that would write one file are a usage error."""
    check_arguments(models, output, output_dir, report)
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
                raise UsageError(f"{model}: cannot write {path}: it is a directory")
            if path is not None and _real(path) in inputs:
                # `--report a.tosa b.tosa`: the flag took the model after it as its FILE.
                taken = " (--report took the word after it as FILE)" if path == report_path else ""
                raise UsageError(
                    f"{model}: writing {path} would replace the model {inputs[_real(path)]}{taken}"
                )
        if report_path is not None and _real(report_path) == _real(target):
            raise UsageError(f"{model}: the report and the VGF would both be written to {target}")
        key = _real(target)
        if key in writers:
            raise UsageError(
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


def _compile_quietly_or_not(job: Job, options: Options, *, quiet: bool) -> None:
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
    from vgfc.files.outputs import WRITES, Staged, commit, discard

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
