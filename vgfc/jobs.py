"""Where a compile's files go: the :class:`Job` of each model, the command line's outputs
planned and checked against one another (:func:`plan_jobs`), and against the files the compile
reads (:func:`input_files`, :func:`check_outputs`), before any work. ``vgfc compile`` (one
model or a batch), its quick path and :func:`vgfc.compile` all plan through here."""

from __future__ import annotations

import os
from pathlib import Path

from vgfc.files.inputs import STDIN
from vgfc.options import REPORT_NEXT_TO_OUTPUT, UsageError
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.compilation import Options
    from vgfc.deps import Depfile, DepsAsked
    from vgfc.resolve.library.records import Library

__all__ = [
    "Job",
    "check_arguments",
    "check_batch",
    "check_outputs",
    "input_files",
    "is_standard",
    "plan_jobs",
]


@record
class Job:
    """One model of a batch and where its files go."""

    model: Path
    output: Path
    report: Path | None = None
    depfile: Depfile | None = None
    """Where the dependency file goes (``-MD``/``-MF``) and its rule's target."""


def is_standard(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is ``-`` (:data:`vgfc.files.inputs.STDIN`): standard input as a model,
    standard output as ``-o`` or ``--report``."""
    return path is not None and os.fspath(path) == STDIN


def check_arguments(
    models: tuple[Path, ...], output: Path | None, output_dir: Path | None, report: str | None
) -> None:
    """Options that exclude one another, or a ``--report`` that took a model as its FILE."""
    if output is not None and output_dir is not None:
        raise UsageError("-o/--output and -d/--output-dir are exclusive")
    _check_standard(models, output, output_dir, report)
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


def _check_standard(
    models: tuple[Path, ...], output: Path | None, output_dir: Path | None, report: str | None
) -> None:
    """``-``: standard input holds one model, standard output one file."""
    if any(is_standard(m) for m in models):
        if len(models) > 1 or output_dir is not None:
            raise UsageError(
                "- (standard input) is one model: batch mode (-d OUTDIR, several models) reads "
                "files"
            )
        if output is None:
            raise UsageError(
                "the model comes from standard input (-): give -o FILE, or -o - to write the "
                "VGF to standard output"
            )
    if is_standard(output_dir):
        raise UsageError("-d - : standard output holds one file, not a folder of VGF files")
    if is_standard(output) and is_standard(report):
        raise UsageError("-o - and --report - would both write to standard output")
    if is_standard(output) and report == REPORT_NEXT_TO_OUTPUT:
        raise UsageError(
            "--report without FILE goes next to the VGF, and -o - writes no file: give "
            "--report FILE"
        )
    if is_standard(report) and output_dir is not None:
        raise UsageError("--report - : batch mode writes one report per model; give --report")


def check_batch(jobs: list[Job]) -> None:
    """Batch mode (``--json``, ``-d``, several models) writes files: never ``-``."""
    for job in jobs:
        if any(is_standard(p) for p in (job.model, job.output, job.report)):
            raise UsageError(
                "batch mode (--json, -d, several models) reads and writes files: - (standard "
                "input or output) is for one model without --json"
            )


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


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder; a path that cannot be looked at (a folder on the way that
    cannot be searched) is left to :func:`vgfc.files.outputs.check_output`, which names it."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _real(path: Path) -> Path:
    """``path`` with its links followed as far as they lead: a symlink loop stays as it is
    (``Path.resolve`` raises on one), and the file opener refuses it, naming it."""
    return Path(os.path.realpath(path))


def plan_jobs(
    models: tuple[Path, ...],
    output: Path | None,
    output_dir: Path | None,
    report: str | None,
    deps: DepsAsked | None = None,
) -> list[Job]:
    """Where each model's files go; two models that would write one file are a usage error.
    ``deps``: the dependency files asked for (``-MD``, ``-MF``, ``-MT``, ``-MP``)."""
    check_arguments(models, output, output_dir, report)
    if deps is not None:
        deps.check(len(models))
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
        depfile = deps.depfile(target) if deps is not None else None
        dep_path = depfile.path if depfile is not None else None
        for path in (target, report_path, dep_path):
            if is_standard(path):
                continue
            if path is not None and _is_dir(path):
                raise UsageError(f"{model}: cannot write {path}: it is a directory")
            if path is not None and _real(path) in inputs:
                # `--report a.tosa b.tosa`: the flag took the model after it as its FILE.
                taken = (
                    " (--report took the word after it as FILE)"
                    if path == report_path and path != dep_path
                    else ""
                )
                raise UsageError(
                    f"{model}: writing {path} would replace the model {inputs[_real(path)]}{taken}"
                )
        if is_standard(target):
            jobs.append(Job(model, target, report_path, depfile))
            continue
        if report_path is not None and _real(report_path) == _real(target):
            raise UsageError(f"{model}: the report and the VGF would both be written to {target}")
        if dep_path is not None:
            for other, what in ((target, "VGF"), (report_path, "report")):
                if other is not None and _real(dep_path) == _real(other):
                    raise UsageError(
                        f"{model}: the dependency file and the {what} would both be written "
                        f"to {dep_path}"
                    )
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
        jobs.append(Job(model, target, report_path, depfile))
    return jobs


def check_outputs(job: Job, options: Options) -> None:
    """A job's outputs checked before any work: a device such as /dev/null, a FIFO, a model or
    library given as the output, a missing folder."""
    from vgfc.files.outputs import check_output

    inputs = input_files(job.model, options)
    depfile = job.depfile.path if job.depfile is not None else None
    for path in (job.output, job.report, depfile):
        if path is not None and not is_standard(path):
            check_output(path, inputs=inputs)


def input_files(
    source: str | os.PathLike[str], options: Options, libraries: tuple[Library, ...] = ()
) -> tuple[Path, ...]:
    """Every file a compile of ``source`` reads that a user names: the model, the kernel
    libraries and, once they are read (``libraries``), their shaders. No output may replace
    one of them."""
    files = [] if is_standard(source) else [Path(source)]
    if options.kernels:
        from vgfc.resolve.library.load import library_file

        files.extend(library_file(name) for name in options.kernels)
    for library in libraries:
        files.extend(
            kernel.shader.path for entry in library.entries.values() for kernel in entry.kernels
        )
    return tuple(files)
