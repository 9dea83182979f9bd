"""The ``vgfc`` click group: its commands are imported when they are looked up
(:class:`LazyGroup`), and the group itself only when the quick path (:mod:`vgfc.cli.quick`)
leaves the arguments to click."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import click

import vgfc

__all__ = ["COMMANDS", "LazyGroup", "cli"]

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
