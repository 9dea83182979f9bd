"""The ``vgfc`` command line: one module per command, the shared plumbing beside them: printing
(:mod:`vgfc.cli.console`), errors and exit codes (:mod:`vgfc.cli.errors`), the process
(:mod:`vgfc.cli.process`), bounded error lists (:mod:`vgfc.cli.bounded`) and the shared options
(:mod:`vgfc.cli.options`).

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
No traceback is shown unless ``--debug`` is given.

Each command's module is imported only when that command runs (:class:`LazyGroup`): the modules
bring numpy, rich, the reader and the compiler with them, and ``vgfc --version`` or a compile
should not pay for ``run``'s or ``inspect``'s imports. ``vgfc --version`` and the usual
``vgfc compile`` command lines do not load click at all (:mod:`vgfc.cli.quick`); the group
(:mod:`vgfc.cli.group`) is imported when ``cli`` is asked for.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


__all__ = ["LazyGroup", "cli", "console_main", "main"]


def __getattr__(name: str) -> Any:
    """``cli`` and ``LazyGroup`` live in :mod:`vgfc.cli.group`, with click: imported when asked
    for, so that the quick path of ``main`` never loads click."""
    if name in ("cli", "LazyGroup"):
        from vgfc.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def command_process() -> None:
    """Set up this process for one command: it is a short run that keeps most of what it makes
    until it ends, and the collector's default (a pass per 700 new objects) walks that again and
    again: importing vgfc took 7 ms longer, and reading and lowering 100,000 operators 12%
    longer. Cycles are still collected, in fewer and larger passes. A library user's process
    keeps its own settings."""
    import gc

    gc.set_threshold(100_000, 50, 100)


def console_main() -> None:
    """The ``vgfc`` console script: :func:`main`, and its exit without the interpreter's teardown
    where nothing is left to run (:func:`vgfc.cli.process.exit_process`)."""
    from vgfc.cli.process import exit_process

    try:
        main()
    except SystemExit as e:
        exit_process(e.code)


def main() -> None:
    """The ``vgfc`` command, ending in ``SystemExit`` as a program that calls it expects.
    SIGTERM, SIGHUP and SIGQUIT unwind like Ctrl-C (temporary files removed, one line saying
    what was written), and output that cannot be written (a full disk, a closed standard
    output) is an error (:func:`vgfc.cli.process.run_command`)."""
    import sys

    from vgfc.cli.quick import run_quick

    command_process()
    prepared = run_quick(sys.argv[1:])  # returns only when the arguments need click
    from vgfc.cli.group import cli
    from vgfc.cli.process import run_command

    run_command(cli, prepared=prepared, prog_name="vgfc")
