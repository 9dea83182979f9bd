"""The ``vgfc`` click group: its commands are imported when they are looked up
(:class:`LazyGroup`), and the group itself only when the quick path (:mod:`vgfc.cli.quick`)
leaves the arguments to click."""

from __future__ import annotations

from importlib import import_module
from typing import Any

import click

__all__ = ["COMMANDS", "LazyGroup", "cli"]

COMMANDS = {
    "partition": "vgfc.cli.partition:partition",
    "check": "vgfc.cli.check:check",
    "compile": "vgfc.cli.compile:compile_command",
    "translate": "vgfc.cli.translate:translate",
    "inspect": "vgfc.cli.inspect:inspect",
    "run": "vgfc.cli.run:run",
    "verify": "vgfc.cli.verify:verify",
    "kernels": "vgfc.cli.kernels:kernels",
    "cache": "vgfc.cli.cache:cache",
}
"""Each command and where it lives, in the order ``vgfc --help`` lists them."""


GROUP_FLAGS = ("--debug",)
"""The group's flags that may also follow the command (``vgfc check m.tosa --debug``)."""


class LazyGroup(click.Group):
    """A group whose commands are imported when they are looked up, not when the group is.

    Also what a compiler's driver does that click's group does not: ``--version --verbose``
    (:mod:`vgfc.cli.versions`), ``--debug`` anywhere on the line, and did-you-mean for a
    mistyped command."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        leading = _leading_options(args)
        if "--version" in leading and not ctx.resilient_parsing:
            from vgfc.cli.versions import verbose_lines, version_line

            lines = verbose_lines() if "--verbose" in leading else [version_line()]
            click.echo("\n".join(lines))
            ctx.exit(0)
        if "--verbose" in leading and not ctx.resilient_parsing:
            ctx.fail("--verbose goes with --version: vgfc --version --verbose")
        return super().parse_args(ctx, _group_flags_first(args, len(leading)))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from vgfc.diagnostics import did_you_mean

            hint = did_you_mean(name, self.list_commands(ctx))
            ctx.fail(f"No such command {name!r}{hint}.")
        return super().resolve_command(ctx, args)

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


def _leading_options(args: list[str]) -> list[str]:
    """The options before the command's name."""
    leading = []
    for arg in args:
        if not arg.startswith("-") or arg == "--":
            break
        leading.append(arg)
    return leading


def _group_flags_first(args: list[str], start: int) -> list[str]:
    """``args`` with the group's flags given after the command moved before it (up to a
    ``--``, after which everything is an argument)."""
    head, tail = args[:start], args[start:]
    end = tail.index("--") if "--" in tail else len(tail)
    moved = [a for a in tail[:end] if a in GROUP_FLAGS]
    if not moved:
        return args
    kept = [a for a in tail[:end] if a not in GROUP_FLAGS]
    return [*head, *moved, *kept, *tail[end:]]


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    help="Show the version and exit; with --verbose also those of glslang, SPIRV-Tools, "
    "tosa-tools, the VGF library, Python and the platform (for bug reports).",
)
@click.option("--verbose", is_flag=True, expose_value=False, help="With --version: see above.")
@click.option(
    "--debug", is_flag=True, help="Show Python tracebacks for errors (also after the command)."
)
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
    Exit codes: 0 ok, 1 error in the input, 2 usage error, 3 internal error,
    4 verify: the numbers checked agree, but some operators had no independent oracle.
    """
