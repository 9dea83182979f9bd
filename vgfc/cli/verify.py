"""``vgfc verify``: compile a model, run it on the CPU, compare with an independent oracle.

Registered on the main group with ``cli.add_command(verify)``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.table import Table

from vgfc.cli.console import escape, stdout_console
from vgfc.cli.errors import handle_errors
from vgfc.cli.options import InputPath, declare, inputs_option, run_options
from vgfc.cli.run import PUSH_CONSTANTS_HELP, push_target, timeout_option
from vgfc.diagnostics import InputError

if TYPE_CHECKING:
    from vgfc.compiler import Options
    from vgfc.runner.oracle import Verdict

__all__ = ["EXIT_UNVERIFIED", "check_lines", "verify"]


EXIT_UNVERIFIED = 4
"""``vgfc verify``'s exit code when every number that was checked agrees but some operators had
no independent oracle (their numbers were not checked)."""


@click.command("verify")
@click.argument("model", type=InputPath(dash=True))
@inputs_option(
    "NAME=FILE.npy",
    "A graph input by its tensor name (repeatable); inputs not given are random (see --seed).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of random inputs.")
@click.option(
    "--against",
    type=click.Choice(["auto", "tosa", "reference", "expected"]),
    default="auto",
    show_default=True,
    help="Oracle. tosa: the TOSA reference model runs the built-in operators (piece by piece "
    "between custom ones) and each custom operator runs its kernel-library entry's Python "
    "`reference`; custom operators without one are unverified. expected: the --expected "
    "arrays. reference: the reference converter's VGF on the same stack, which runs the same "
    "shaders (not independent: shader ops stay unverified). auto: expected if given, else tosa.",
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
    metavar="TARGET=FILE",
    help=PUSH_CONSTANTS_HELP,
)
@click.option(
    "--atol",
    type=float,
    help="Absolute tolerance (default by element type: 1e-5 fp32, 2e-3 fp16, 2e-2 bf16).",
)
@click.option("--rtol", type=float, help="Relative tolerance (defaults as for --atol).")
@run_options
@timeout_option
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@declare("verify")
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
    timeout: float,
    as_json: bool,
    allow_reference_imports: bool,
    options: Options,
) -> None:
    """Compile MODEL, run it on the CPU and compare every output with an independent oracle.

    Prints what each operator was checked against, and the largest absolute and relative
    error of each output. Floats pass within atol + rtol * |expected|; integers and booleans
    must be equal; NaN matches NaN. Every output and every value between segments starts as a
    canary: elements no segment wrote are errors.

    \b
    Exit codes: 0 every output agrees and every operator was checked;
    1 an output differs, elements were never written, or the input is wrong;
    4 the numbers checked agree, but some operators had no independent oracle
      (the message lists them): not "ok".

    \b
    vgfc verify model.tosa                          random inputs, automatic oracle
    vgfc verify model.tosa -i x=x.npy -e y=y.npy    your inputs and expected outputs
    vgfc verify --type-narrowing full model.tosa    what FP16 narrowing costs
    """
    from vgfc.cli.progress import progress
    from vgfc.cli.run import load_array, parse_pairs, read_push_data
    from vgfc.compiler import compile_model
    from vgfc.files.inputs import named_input
    from vgfc.runner.numeric import random_inputs
    from vgfc.runner.oracle import push_constants_by_op, verify_numbers

    # The oracles are other programs that read the model's file: standard input (-) is
    # given to them as a file (kept until the command ends), named "standard input" in messages.
    piped = named_input(model, what="model")
    source = Path(click.get_current_context().with_resource(piped))
    with progress("compiling") as say:
        result = compile_model(source, options, say)
    graph, plan = result.graph, result.plan
    assert graph is not None and plan is not None
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
    given = parse_pairs(push_constants, "--push-constants", "TARGET=FILE")
    for key, _ in given:
        push_target(key, numbers="")  # a bare number is ambiguous here: refused
    segments = {p.id: p.operators[0] for p in plan.partitions if len(p.operators) == 1}
    pushes = push_constants_by_op(graph, [(k, p, read_push_data(p)) for k, p in given], segments)
    with progress("running") as say:
        verdict = verify_numbers(
            source,
            result,
            values,
            against=against,
            expected=want,
            push_constants=pushes,
            atol=atol,
            rtol=rtol,
            validate=validate,
            device=device,
            libraries=result.libraries,
            timeout=timeout,
            on_stage=say,
            reference_imports=allow_reference_imports,
        )
    narrowing = options.type_narrowing
    if as_json:
        document = _verdict_json(model, verdict)
        document["type_narrowing"] = narrowing
        click.echo(json.dumps(document, indent=2))
    else:
        if narrowing != "none":
            # The oracle runs the model as the file has it: each output's error is what
            # narrowing cost (the inputs are the FP16 values both runs read).
            click.echo(
                f"narrowed to FP16 (--type-narrowing {narrowing}): each output against the FP32 "
                "model; --atol/--rtol set the error you accept"
            )
        _print(model, verdict)
    _exit(model, verdict, quiet=as_json)


def _verdict_json(model: Path, verdict: Verdict) -> dict[str, object]:
    return {
        "model": str(model),
        "oracle": verdict.oracle,
        "ok": not verdict.failed and not verdict.unwritten and not verdict.unverified,
        "outputs": [
            {
                "name": r.name,
                "shape": list(r.shape),
                "dtype": r.dtype,
                "max_abs_error": r.max_abs,
                "max_rel_error": r.max_rel,
                "ok": r.ok,
            }
            for r in verdict.rows
        ],
        "unchecked_outputs": list(verdict.unchecked_outputs),
        "ops": [
            {"op": c.op, "label": c.label, "status": c.status.value, "against": c.against}
            for c in verdict.checks
        ],
        "unwritten": [u.to_json() for u in verdict.unwritten],
    }


def _print(model: Path, verdict: Verdict) -> None:
    console = stdout_console()
    for line in check_lines(verdict):
        console.print(escape(line))
    table = Table(title=escape(f"{model} against {verdict.oracle}"))
    for col in ("output", "shape", "dtype", "max abs error", "max rel error", ""):
        table.add_column(col)
    for r in verdict.rows:
        table.add_row(
            escape(r.name),
            "x".join(map(str, r.shape)),
            r.dtype,
            f"{r.max_abs:.3g}",
            f"{r.max_rel:.3g}",
            "[green]agrees[/]" if r.ok else "[bold red]FAIL[/]",
        )
    for name in verdict.unchecked_outputs:
        table.add_row(escape(name), "", "", "", "", "[yellow]unverified[/]")
    console.print(table)


def check_lines(verdict: Verdict) -> list[str]:
    """What each operator was checked against: runs of ops checked the same way share a line.
    An unverified op says only that: why, and what to do, is said once per reason by the last
    line of the command (:func:`_exit`), not once per op."""
    lines = ["checked:"]
    groups: list[tuple[str, list[str]]] = []
    for c in verdict.checks:
        against = "unverified" if c.against.startswith("unverified: ") else c.against
        if groups and groups[-1][0] == against and " CUSTOM" not in c.label:
            groups[-1][1].append(c.label)
        else:
            groups.append((against, [c.label]))
    for against, labels in groups:
        first, last = labels[0].split()[0], labels[-1].split()[0]
        shown = labels[0] if len(labels) == 1 else f"{first}..{last} ({len(labels)} ops)"
        lines.append(f"  {shown}: {against}")
    return lines


def _exit(model: Path, verdict: Verdict, *, quiet: bool) -> None:
    """Exit with the verdict's code; the last line says it (``quiet``: the JSON says it)."""
    from vgfc.cli.console import print_diagnostic, stderr_console
    from vgfc.diagnostics import Diagnostic, Location, Severity

    where = Location(file=str(model))
    roots = [u for u in verdict.unwritten if u.carried_from is None]
    if roots:
        console = stderr_console()
        for u in verdict.unwritten:
            if u.carried_from is not None:
                print_diagnostic(console, Diagnostic(Severity.NOTE, u.describe(), where))
        for u in roots[:-1]:
            print_diagnostic(console, Diagnostic(Severity.ERROR, u.describe(), where))
        raise InputError(roots[-1].describe(), where)
    rows = verdict.rows
    failed = [r for r in rows if not r.ok]
    if failed:
        raise InputError(
            f"{len(failed)} of {len(rows)} outputs differ from the {verdict.oracle} oracle beyond "
            f"the tolerance ({', '.join(r.name for r in failed)})",
            where,
        )
    unverified = verdict.unverified
    if unverified:
        reasons: dict[str, list[str]] = {}
        for c in unverified:
            reasons.setdefault(c.against.removeprefix("unverified: "), []).append(c.label)
        parts = []
        for reason, labels in reasons.items():
            more = f" and {len(labels) - 5} more" if len(labels) > 5 else ""
            parts.append(f"{', '.join(labels[:5])}{more} ({reason})")
        shown, more = "; ".join(parts), ""
        agreed = (
            f"the {len(rows)} output(s) checked agree, but"
            if rows
            else "no output could be checked:"
        )
        stderr_console().print(
            f"[bold yellow]unverified:[/] {escape(where.render())}: {agreed} "
            f"{len(unverified)} of {len(verdict.checks)} ops had no independent oracle: "
            f"{escape(shown + more)}",
            highlight=False,
        )
        sys.exit(EXIT_UNVERIFIED)
    if not quiet:
        click.echo(f"{model}: ok: every output agrees, all {len(verdict.checks)} ops checked")
