"""``vgfc partition``: how a model splits into ML and shader partitions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vgfc.cli.console import emit, escape, print_diagnostic, stderr_console, stdout_console
from vgfc.cli.errors import handle_errors
from vgfc.cli.options import declare, model_argument

if TYPE_CHECKING:
    from vgfc.compiler import Options

__all__ = ["partition"]


@click.command("partition")
@model_argument
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the plan as JSON (schemas/partition.schema.json).",
)
@click.option(
    "--dot", "as_dot", is_flag=True, help="Print a Graphviz DOT graph, one cluster per partition."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write the JSON or DOT text to this file instead of standard output (atomically; "
    "the model, a library or anything but a regular file is refused).",
)
@declare("partition")
@handle_errors
def partition(
    model: Path,
    as_json: bool,
    as_dot: bool,
    output: Path | None,
    options: Options,
) -> None:
    """Show how MODEL splits into ML and shader partitions.

    Every Vulkan custom shader op (domain com.arm.VulkanCustomShader, or a custom op bound to a
    kernel of a --kernels library) runs alone in a shader partition; all other work, with the
    built-ins composed ops expand into and the conversions kernel selection inserts, is grouped
    into ML partitions. Each ML op joins the earliest ML
    partition that follows all of its producers, so independent work never opens a new one.

    \b
    Render the graph:  vgfc partition model.tosa --dot | dot -Tsvg -o plan.svg
    """

    from vgfc.cli.tables import table_width, word_table
    from vgfc.dot import plan_to_dot
    from vgfc.report import partition_json, summarize_ops

    if as_json and as_dot:
        raise click.UsageError("--json and --dot are exclusive: choose one")
    if output is not None and not (as_json or as_dot):
        raise click.UsageError("-o/--output needs --json or --dot")
    from vgfc.compiler import compile_model

    inputs: tuple[Path, ...] = ()
    if output is not None:
        from vgfc.files.outputs import check_output
        from vgfc.jobs import input_files

        # Refused before any work: the model itself, a library, a device such as /dev/null.
        inputs = input_files(model, options)
        check_output(output, inputs=inputs)
    result = compile_model(model, options, stop_after="partition", keep_going=True)
    console = stderr_console()
    for d in result.diagnostics:
        print_diagnostic(console, d)
    if result.errors or result.graph is None or result.plan is None:
        raise SystemExit(1)
    graph, plan = result.graph, result.plan
    if as_json:
        emit(json.dumps(partition_json(graph, plan), indent=2) + "\n", output, inputs)
        return
    if as_dot:
        emit(plan_to_dot(graph, plan), output, inputs)
        return

    console = stdout_console()  # a long reason is one line in a pipe
    rows = [
        (
            str(p.id),
            "[bold orange3]shader[/]" if p.kind.value == "shader" else "[blue]ml[/]",
            str(len(p.operators)),
            escape(summarize_ops(graph, p.operators)),
            escape(", ".join(p.inputs)),
            escape(", ".join(p.outputs)),
        )
        for p in plan.partitions
    ]
    title = escape(f"{model} (TOSA {graph.version}): {len(graph.operators)} operators")
    columns = ("id", "kind", "ops", "operators", "inputs", "outputs")
    table = word_table(title, columns, rows, table_width(console))
    console.print(table)
    for p in plan.partitions:
        console.print(f"  partition {p.id}: {escape(p.reason)}")
    for op in graph.operators:
        if op.inserted is not None:
            console.print(f"  {escape(op.label())}")
    n_ml = sum(p.kind.value == "ml" for p in plan.partitions)
    n = len(plan.partitions)
    saved = plan.program_order_count - n
    note = f", {saved} fewer than program order" if saved > 0 else ""
    console.print(f"{n} partitions ({n_ml} ML, {n - n_ml} shader){note}")
