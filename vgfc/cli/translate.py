"""``vgfc translate``: the TOSA flatbuffer of a model, for tools that read only flatbuffers.

A model given as TOSA MLIR (text or bytecode) is written as the flatbuffer tosa-opt makes of it
(:mod:`vgfc.read.mlir`), the one ``vgfc compile`` compiles; a flatbuffer is written as it is.
Either way the model is read first, so a file vgfc would refuse is refused here, and nothing is
written. ``vgfc-model-converter --tosa-flatbuffer`` (the reference converter's option) writes
the same bytes through :func:`write_flatbuffer`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from vgfc.cli.options import declare, model_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.compilation import Options

__all__ = ["translate", "write_flatbuffer"]


def write_flatbuffer(
    model: Path, output: str | os.PathLike[str], schema: Path | None = None
) -> None:
    """Read ``model`` (``-``: standard input) and write its TOSA flatbuffer to ``output``
    (atomically; ``-``: standard output, refused when that is a terminal); with ``schema`` (a
    ``tosa.fbs``), the flatbuffer's JSON form written with it (:func:`vgfc.read.mlir.to_json`)."""
    from vgfc.cli.console import is_terminal
    from vgfc.diagnostics import InputError
    from vgfc.files.inputs import STDIN, STDIN_SHOWN
    from vgfc.read import load_flatbuffer, loads

    to_stdout = os.fspath(output) == "-"
    if to_stdout and is_terminal(sys.stdout):
        raise click.UsageError(
            "-o -: a TOSA flatbuffer is binary and standard output is a terminal: redirect it "
            "or name a file"
        )
    if not to_stdout:
        from vgfc.files.outputs import check_output

        check_output(output, inputs=() if os.fspath(model) == STDIN else (model,))
    data = load_flatbuffer(model)
    shown = STDIN_SHOWN if os.fspath(model) == STDIN else os.fspath(model)
    loads(data, source=shown)  # what vgfc cannot read is not written
    if schema is not None:
        from vgfc.files.inputs import map_input
        from vgfc.read.mlir import to_json

        rules = bytes(map_input(schema, what="TOSA flatbuffer schema"))
        data = to_json(data, rules, shown, os.fspath(schema))
    if to_stdout:
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except OSError as e:
            raise InputError(f"cannot write: {e.strerror or e}", file="standard output") from None
        return
    from vgfc.files.outputs import write_atomically

    write_atomically(output, data, inputs=() if os.fspath(model) == STDIN else (model,))


@click.command("translate")
@model_argument
@declare("translate")
def translate(model: Path, flatbuffer_output: Path | None, options: Options) -> None:
    """Write the TOSA flatbuffer of MODEL: TOSA MLIR (text or bytecode) as the tosa-tools
    translator serialises it, the one `vgfc compile` compiles; a flatbuffer as it is.

    \b
        vgfc translate model.mlir                  # model.tosa
        vgfc translate model.mlirbc -o out.tosa
        cat model.mlir | vgfc translate - -o - > model.tosa
    """
    if flatbuffer_output is None:
        if os.fspath(model) == "-":
            raise click.UsageError("a model from standard input needs -o")
        flatbuffer_output = model.with_suffix(".tosa")
    write_flatbuffer(model, flatbuffer_output)
