"""What ``vgfc compile`` does once its arguments are parsed, without click: the click command
(:mod:`vgfc.cli.compile`) and the quick path (:mod:`vgfc.cli.quick`) both call it, so a compile
behaves the same whichever parsed its command line."""

from __future__ import annotations

import sys

from vgfc.cli.console import diagnostics_console, is_terminal, print_diagnostic, print_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.compilation import Compilation
    from vgfc.compiler import Options
    from vgfc.jobs import Job

__all__ = ["SUMMARY_ROWS", "compile_single"]


def compile_single(job: Job, options: Options, *, quiet: bool) -> None:
    """One model, not in batch mode: its outputs checked before any work (a device such as
    /dev/null, a FIFO, a library given as the output, a missing folder), then compiled, with the
    summary table unless ``quiet``."""
    from vgfc.jobs import check_outputs, is_standard

    check_outputs(job, options)
    if is_standard(job.output) or is_standard(job.report):
        _compile_to_standard_output(job, options)
        return
    _compile_quietly_or_not(job, options, quiet=quiet)


def _compile_to_standard_output(job: Job, options: Options) -> None:
    """``-o -`` (the VGF, byte for byte what ``-o FILE`` writes) or ``--report -`` (the JSON
    report, once the VGF file is in place) on standard output, which then carries nothing else:
    no summary, warnings on stderr. A VGF is binary: a terminal is refused, as gzip refuses
    one. A reader that goes away before the whole output went out is an error: the output was
    not delivered."""
    from vgfc.compilation import ToFile, ToStream
    from vgfc.compiler import compile_model
    from vgfc.diagnostics import InputError, VgfcError
    from vgfc.files.outputs import WRITES
    from vgfc.jobs import is_standard

    vgf_out = is_standard(job.output)
    if vgf_out and is_terminal(sys.stdout):
        raise InputError(
            "-o -: a VGF file is binary and standard output is a terminal: redirect it "
            "(> m.vgf, | ...) or give -o FILE",
            file="standard output",
        )
    stream = sys.stdout.buffer
    sink = (
        ToStream(stream, job.report, job.depfile)
        if vgf_out
        else ToFile(job.output, stream, depfile=job.depfile)
    )
    written = "" if vgf_out else "; {}"  # --report -: the VGF file is in place by then
    try:
        result = compile_model(job.model, options, sink=sink)
    except BrokenPipeError:
        what = "the VGF" if vgf_out else "the report"
        raise InputError(
            f"cannot write {what}: the reader went away (a closed pipe) before all of it went "
            f"out{written.format(WRITES.outcome())}",
            file="standard output",
        ) from None
    except VgfcError as e:  # a full disk, a closed stdout
        if e.location.file != "standard output" or vgf_out:
            raise
        raise InputError(e.message + written.format(WRITES.outcome()), e.location) from None
    if result.warnings:
        console = diagnostics_console()
        for d in result.warnings:
            print_diagnostic(console, d)


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
    result = compile_to(job.model, job.output, job.report, options, depfile=job.depfile)
    try:
        if result.warnings:
            console = diagnostics_console()
            for d in result.warnings:
                print_diagnostic(console, d)
    except BrokenPipeError:  # stderr's reader went away (`2>&1 | true`): the files are in place
        from vgfc.cli.process import reader_gone

        reader_gone()


def _compile_and_show(job: Job, options: Options) -> None:
    """One model with its summary table. The files are renamed into place only once the table
    is out: output that cannot be written (a full disk, a closed stdout) leaves the old files,
    and the error says so. A reader that went away (``| head``, ``| true``: a broken pipe)
    asked for no more of the summary, and costs nothing else: the files are renamed into place,
    a note says so and the exit status is the compile's."""
    from vgfc.compiler import ToFile
    from vgfc.diagnostics import InputError, VgfcError
    from vgfc.files.outputs import WRITES, Staged, commit, discard

    held: list[Staged] = []
    sink = ToFile(job.output, job.report, hold=held, depfile=job.depfile)
    try:
        result = _compile(job, options, sink)
    except BaseException:
        discard(held)
        raise
    try:
        _show(job, result)
        sys.stdout.flush()
    except BrokenPipeError:
        from vgfc.cli.process import reader_gone

        commit(held)
        reader_gone(WRITES.outcome())
        return
    except VgfcError as e:
        discard(held)
        if e.location.file != "standard output":
            raise
        raise InputError(f"{e.message}; {WRITES.outcome()}", e.location) from None
    except BaseException:
        discard(held)
        raise
    commit(held)


def _compile(job: Job, options: Options, sink: Any) -> Compilation:
    """The compile, with its stages shown on a terminal."""
    from vgfc.cli.progress import progress
    from vgfc.compiler import compile_model

    with progress("compiling") as say:
        return compile_model(job.model, options, say, sink=sink)


def _show(job: Job, result: Compilation) -> None:
    console = diagnostics_console()
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
