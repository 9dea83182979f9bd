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
Everything else goes to the click command (:mod:`vgfc.cli.model_converter_command`);
what it does is :func:`vgfc.cli.converting.convert`, whichever parsed the line.

Exit codes as for ``vgfc``: 0 success, 1 error in the input, 2 usage error, 3 internal error.
Every error is one line on stderr, and after an error no output file exists.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from vgfc.cli.converting import EXIT_USAGE, PROG

__all__ = ["main"]


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
