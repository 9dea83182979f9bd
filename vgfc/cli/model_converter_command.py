"""The click command of ``vgfc-model-converter``: its help, ``--version`` and every command line
the quick path (:func:`vgfc.cli.quick.run_quick_converter`) leaves to click. What the command
does is :func:`vgfc.cli.converting.convert`, whichever parsed it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from vgfc.cli.converting import (
    COMPATIBLE_VERSION,
    OWN_DEFAULTS,
    OWN_FLAGS,
    OWN_VALUES,
    PROG,
    convert,
    version_text,
)
from vgfc.cli.errors import handle_errors
from vgfc.cli.options import InputPath, declare

if TYPE_CHECKING:
    from vgfc.compiler import Options

__all__ = ["model_converter"]


def _print_version(context: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or context.resilient_parsing:
        return
    click.echo(version_text())
    context.exit()


def _flags(param: str) -> list[str]:
    return [flag for flag, name in (*OWN_VALUES, *OWN_FLAGS) if name == param]


@click.command(
    PROG,
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
)
@click.option(
    "-v",
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version as JSON: the reference converter release vgfc follows "
    f"({COMPATIBLE_VERSION}), vgfc's own version and its packages' versions.",
)
@click.option(
    *_flags("input_path"),
    "input_path",
    default=OWN_DEFAULTS["input_path"],
    type=InputPath(dash=True),
    help="The model to compile: a TOSA flatbuffer or TOSA MLIR (text or bytecode), told apart "
    "by content; '-' reads standard input.",
)
@click.option(
    *_flags("output"),
    "output",
    default=OWN_DEFAULTS["output"],
    help="The VGF file to write, atomically; '-' writes it to standard output.",
)
@click.option(
    *_flags("require_static_shape"),
    "require_static_shape",
    is_flag=True,
    help="Always so in vgfc: a dynamic shape is an error.",
)
@declare("model-converter")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
@handle_errors
def model_converter(
    input_path: Path,
    output: str,
    tosa_flatbuffer: bool,
    tosa_flatbuffer_schema: Path | None,
    analysis: bool,
    require_static_shape: bool,
    options: Options,
    debug: bool,
) -> None:
    """Compile a TOSA model (flatbuffer or MLIR) into a VGF file with vgfc, taking the command
    line of Arm's model-converter; for tools that run it, such as ExecuTorch's VGF backend
    (MODEL_CONVERTER_PATH=$(which vgfc-model-converter)).

    \b
    vgfc-model-converter -i model.tosa -o model.vgf
    vgfc-model-converter --version
    """
    if tosa_flatbuffer_schema is not None and not tosa_flatbuffer:
        raise click.UsageError("--tosa-flatbuffer-schema is for --tosa-flatbuffer")
    convert(
        input_path,
        output,
        options,
        tosa_flatbuffer=tosa_flatbuffer,
        tosa_flatbuffer_schema=tosa_flatbuffer_schema,
        analysis=analysis,
    )
