"""The ``vgfc`` command line: one module per command, the shared plumbing in
:mod:`vgfc.cli.support`.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
No traceback is shown unless ``--debug`` is given.

Each command's module is imported only when that command runs (:class:`LazyGroup`): the modules
bring numpy, rich, the reader and the compiler with them, and ``vgfc --version`` or a compile
should not pay for ``run``'s or ``inspect``'s imports.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import click

import vgfc

__all__ = ["COMMANDS", "LazyGroup", "cli", "main"]

COMMANDS = {
    "partition": "vgfc.cli.partition:partition",
    "check": "vgfc.cli.check:check",
    "compile": "vgfc.cli.compile:compile_command",
    "inspect": "vgfc.cli.inspect:inspect",
    "run": "vgfc.cli.run:run",
    "verify": "vgfc.cli.verify:verify",
    "kernels": "vgfc.cli.kernels:kernels",
    "cache": "vgfc.cli.cache:cache",
}
"""Each command and where it lives, in the order ``vgfc --help`` lists them."""


class LazyGroup(click.Group):
    """A group whose commands are imported when they are looked up, not when the group is."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *(name for name in super().list_commands(ctx) if name not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = self.lazy.get(cmd_name)
        if where is None:
            return super().get_command(ctx, cmd_name)
        module, _, attribute = where.partition(":")
        command = getattr(import_module(module), attribute)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(vgfc.__version__, prog_name="vgfc")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
def cli(debug: bool) -> None:
    """Compile TOSA models with Vulkan custom shaders into VGF files.

    \b
    vgfc partition model.tosa          how the model splits into ML and shader work
    vgfc partition model.tosa --dot    the same as a Graphviz graph
    vgfc check model.tosa              every check compile runs, all errors, nothing written
    vgfc compile model.tosa -o m.vgf   write the VGF file (--report r.json for a report)
    vgfc inspect m.vgf                 what a VGF file holds
    vgfc run m.vgf -i x.npy -o out/    run it on the CPU (lavapipe + ML emulation layers)
    vgfc verify model.tosa             compile, run, compare with an independent oracle
    vgfc kernels lib.yaml              check a kernel library (--kernels) without a model
    vgfc cache [clear]                 the shader cache: where, how big; empty it
    \b
    Exit codes: 0 ok, 1 error in the input, 2 usage error, 3 internal error.
    """


def command_process() -> None:
    """Set up this process for one command: it is a short run that keeps most of what it makes
    until it ends, and the collector's default (a pass per 700 new objects) walks that again and
    again: importing vgfc took 7 ms longer, and reading and lowering 100,000 operators 12%
    longer. Cycles are still collected, in fewer and larger passes. A library user's process
    keeps its own settings."""
    import gc

    gc.set_threshold(100_000, 50, 100)


def main() -> None:
    """The ``vgfc`` console script: SIGTERM, SIGHUP and SIGQUIT unwind like Ctrl-C (temporary
    files removed, one line saying what was written), and output that cannot be written (a
    full disk, a closed standard output) is an error (:func:`vgfc.cli.support.run_command`)."""
    from vgfc.cli.support import run_command

    command_process()
    run_command(cli, prog_name="vgfc")
