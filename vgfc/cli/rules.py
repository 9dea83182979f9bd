"""``vgfc compile -M`` (``-MM``): the dependency rule of each compile, and nothing else.

As ``gcc -M`` prints the Make rule of an object without compiling it, so a build tool that must
declare a step's inputs before running it (Bazel's ``srcs``, a generated Makefile) can ask
vgfc. The rule is the one ``-MD`` writes beside the VGF (:mod:`vgfc.deps`): the compile runs
up to and including ``lower``, because the shaders' includes are known only once glslang opened
them (or the shader cache remembers them), and stops before anything is laid out or written.
A model that a later stage would refuse (a target profile's rule) still has its rule printed,
as gcc prints the rule of a file that would not compile.

``-MM`` is the same as ``-M``: gcc's leaves out system headers, and vgfc has no system include
folders, only those the user names.

The rules of every model are printed together once all are known: an error in one (exit 1)
prints no rule at all, so a build that captures the output never gets a part of it.
"""

from __future__ import annotations

import os
import sys

from vgfc.cli.console import diagnostics_console, print_diagnostic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.compiler import Options
    from vgfc.jobs import Job

__all__ = ["print_rules"]


def print_rules(jobs: list[Job], options: Options) -> None:
    """The rule of each job, in order, to standard output or to its ``-MF`` file (written
    atomically); warnings on standard error. Raises the first error, before writing anything."""
    from vgfc.compiler import compile_model
    from vgfc.deps import make_rule
    from vgfc.files.outputs import check_output, write_atomically
    from vgfc.jobs import input_files, is_standard

    for job in jobs:
        assert job.depfile is not None
        if not is_standard(job.depfile.path):
            check_output(job.depfile.path, inputs=input_files(job.model, options))
    printed: list[bytes] = []
    for job in jobs:
        assert job.depfile is not None
        done = compile_model(job.model, options, stop_after="lower")
        rule = make_rule(job.depfile, done.reads)
        if done.warnings:
            console = diagnostics_console()
            for d in done.warnings:
                print_diagnostic(console, d)
        if is_standard(job.depfile.path):
            printed.append(rule)
        else:
            inputs: tuple[str | os.PathLike[str], ...] = (
                *input_files(job.model, options, done.libraries),
                *done.reads,
            )
            write_atomically(job.depfile.path, rule, inputs=inputs)
    if printed:
        _print(b"".join(printed))


def _print(text: bytes) -> None:
    """The rules to standard output; a reader gone (``| head``) asked for no more."""
    from vgfc.diagnostics import InputError

    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(text)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        from vgfc.cli.process import reader_gone

        reader_gone()
    except OSError as e:
        raise InputError(
            f"cannot write the dependency rule: {e.strerror or e}", file="standard output"
        ) from None
