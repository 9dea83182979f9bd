"""``vgfc verify``: compile a model, run it on the CPU, compare with an independent oracle.

Registered on the main group with ``cli.add_command(verify)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

from vgfc.cli.options import compile_options, run_options
from vgfc.cli.support import escape, handle_errors
from vgfc.diagnostics import InputError

if TYPE_CHECKING:
    from vgfc.compiler import Options

__all__ = ["verify"]


@click.command("verify")
@click.argument("model", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-i",
    "--input",
    "inputs",
    multiple=True,
    metavar="NAME=FILE.npy",
    help="A graph input (repeatable); inputs not given are random (see --seed).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of random inputs.")
@click.option(
    "--against",
    type=click.Choice(["auto", "tosa", "reference", "expected"]),
    default="auto",
    show_default=True,
    help="Oracle: the TOSA reference model (no custom ops), the reference converter's VGF run "
    "on the same stack, or --expected arrays. auto: expected if given, else tosa without "
    "custom ops, else reference.",
)
@click.option(
    "-e",
    "--expected",
    multiple=True,
    metavar="NAME=FILE.npy",
    help="Expected value of a graph output (repeatable).",
)
@click.option(
    "--push-constants",
    multiple=True,
    metavar="OP=FILE",
    help="Push-constant values of a shader op, by operator_name or op index: raw bytes or a "
    ".npy array's bytes (repeatable).",
)
@click.option(
    "--atol",
    type=float,
    help="Absolute tolerance (default by element type: 1e-5 fp32, 2e-3 fp16, 2e-2 bf16).",
)
@click.option("--rtol", type=float, help="Relative tolerance (defaults as for --atol).")
@run_options
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@compile_options
@handle_errors
def verify(
    model: Path,
    inputs: tuple[str, ...],
    seed: int,
    against: str,
    expected: tuple[str, ...],
    push_constants: tuple[str, ...],
    atol: float | None,
    rtol: float | None,
    validate: bool,
    device: str,
    as_json: bool,
    options: Options,
) -> None:
    """Compile MODEL, run it on the CPU and compare every output with an oracle.

    Prints the largest absolute and relative error of each output. Floats pass within
    atol + rtol * |expected|; integers and booleans must be equal; NaN matches NaN.
    Exit code 0 when every output passes, 1 otherwise.

    \b
    vgfc verify model.tosa                          random inputs, automatic oracle
    vgfc verify model.tosa -i x=x.npy -e y=y.npy    your inputs and expected outputs
    """
    from vgfc.cli.run import load_array, parse_pairs, read_push_data
    from vgfc.compiler import compile_model
    from vgfc.runner.numeric import random_inputs
    from vgfc.runner.oracle import push_constants_by_op, verify_numbers

    result = compile_model(model, options)
    graph = result.graph
    assert graph is not None
    values = random_inputs(graph, seed)
    for name, path in parse_pairs(inputs, "--input", "NAME=FILE.npy"):
        if name not in graph.inputs:
            raise InputError(f"the model has no input '{name}' (it has {', '.join(graph.inputs)})")
        values[name] = load_array(path, "input file")
    want = {}
    for name, path in parse_pairs(expected, "--expected", "NAME=FILE.npy"):
        if name not in graph.outputs:
            raise InputError(
                f"the model has no output '{name}' (it has {', '.join(graph.outputs)})"
            )
        want[name] = load_array(path, "expected file")
    if against == "expected" and not want:
        raise click.UsageError("--against expected needs --expected NAME=FILE.npy")
    given = parse_pairs(push_constants, "--push-constants", "OP=FILE")
    pushes = push_constants_by_op(graph, [(k, p, read_push_data(p)) for k, p in given])
    verdict = verify_numbers(
        model,
        result,
        values,
        against=against,
        expected=want,
        push_constants=pushes,
        atol=atol,
        rtol=rtol,
        validate=validate,
        device=device,
    )
    against = verdict.oracle
    rows = verdict.rows
    failed = [r for r in rows if not r.ok]
    if as_json:
        doc = {
            "model": str(model),
            "oracle": against,
            "ok": not failed,
            "outputs": [
                {
                    "name": r.name,
                    "shape": list(r.shape),
                    "dtype": r.dtype,
                    "max_abs_error": r.max_abs,
                    "max_rel_error": r.max_rel,
                    "ok": r.ok,
                }
                for r in rows
            ],
        }
        click.echo(json.dumps(doc, indent=2))
    else:
        table = Table(title=escape(f"{model} against {against}"))
        for col in ("output", "shape", "dtype", "max abs error", "max rel error", ""):
            table.add_column(col)
        for r in rows:
            table.add_row(
                escape(r.name),
                "x".join(map(str, r.shape)),
                r.dtype,
                f"{r.max_abs:.3g}",
                f"{r.max_rel:.3g}",
                "[green]ok[/]" if r.ok else "[bold red]FAIL[/]",
            )
        Console(highlight=False, soft_wrap=True).print(table)
    if failed:
        raise InputError(
            f"{len(failed)} of {len(rows)} outputs differ from the {against} oracle beyond "
            f"the tolerance ({', '.join(r.name for r in failed)})",
            file=str(model),
        )
