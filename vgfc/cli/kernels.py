"""``vgfc kernels``: check a kernel library without a model and list what it holds."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from vgfc.cli.bounded import print_bounded
from vgfc.cli.console import escape, stderr_console, stdout_console
from vgfc.cli.errors import EXIT_ERROR
from vgfc.cli.options import declare, max_errors_option

if TYPE_CHECKING:
    from vgfc.compiler import Options

__all__ = ["kernels"]


def _named(_context: click.Context, param: click.Parameter, values: tuple[str, ...]) -> object:
    if "" in values:  # as a model's path (InputPath): "" would read as the current folder
        raise click.BadParameter("an empty path names no file", param=param)
    return values


@click.command("kernels")
@click.argument("libraries", nargs=-1, required=True, metavar="LIB...", callback=_named)
@click.option("--json", "as_json", is_flag=True, help="Print the entries and verdicts as JSON.")
@max_errors_option("kernels that fail the same way are one")
@declare("kernels")
def kernels(
    libraries: tuple[str, ...],
    as_json: bool,
    max_errors: int,
    options: Options,
) -> None:
    """Check kernel libraries (YAML files, or a bundled one by name: mediapipe).

    Validates each file against schemas/kernel_library.schema.json, checks every expression's
    names, resources, paths, composed graphs and torch: schemas (as vgfc.executorch.load does,
    without torch), then compiles each kernel's shader, validates
    it with SPIRV-Tools and holds its declared resources against the shader's reflection. Prints
    one row per entry and kernel when everything is sound; else the errors (at most
    --max-errors) and a summary line. Exit code 0 when everything is sound, 1 otherwise.

    \b
    vgfc kernels my_ops.yaml
    vgfc kernels mediapipe --json
    """

    from vgfc.cli.kernels_check import check_library
    from vgfc.cli.tables import table_width, word_table
    from vgfc.resolve.library.load import load_libraries

    loaded = load_libraries(libraries, include_dirs=options.shader.include_dirs)
    errors = 0
    found = []
    docs: list[dict[str, Any]] = []
    rows = []
    for library in loaded:
        for verdict in check_library(library, options.shader):
            entry, kernel = verdict.entry, verdict.kernel
            if verdict.error is not None:
                errors += 1
                found.append(verdict.error)
            what = "torch" if verdict.torch else "compose" if kernel is None else kernel.name
            detail = (
                f"{len(entry.compose.ops)} built-in op(s)"
                if entry.compose is not None
                else f"{kernel.shader.path.name}"
                if kernel is not None
                else ""
            )
            local = "x".join(map(str, verdict.local_size)) if verdict.local_size else ""
            status = "ok" if verdict.error is None else "error"
            rows.append(
                (
                    escape(library.shown),
                    escape(entry.label),
                    escape(what),
                    escape(detail),
                    entry.params.encoding,
                    local,
                    "[green]ok[/]" if verdict.error is None else "[red]error[/]",
                )
            )
            docs.append(
                {
                    "library": library.shown,
                    "entry": entry.label,
                    "kernel": what,
                    "shader": str(kernel.shader.path.name) if kernel is not None else None,
                    "params": entry.params.encoding,
                    "local_size": list(verdict.local_size) if verdict.local_size else None,
                    "status": status,
                    "error": verdict.error.as_dict() if verdict.error else None,
                }
            )
    if as_json:
        click.echo(json.dumps({"ok": errors == 0, "errors": errors, "kernels": docs}, indent=2))
    else:
        out = stdout_console()
        if found:  # the errors are what to read: no table of the kernels that are sound
            print_bounded(stderr_console(), found, max_errors)
        else:
            columns = ("library", "operator", "kernel", "shader / graph", "params", "local", "")
            out.print(word_table("kernel libraries", columns, rows, table_width(out)))
        out.print(f"{len(rows)} kernel(s), {errors} error(s)")
    if errors:
        sys.exit(EXIT_ERROR)
