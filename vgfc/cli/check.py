"""``vgfc check``: the compile pipeline up to the layout, every error reported, nothing written."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from vgfc.cli.bounded import print_bounded
from vgfc.cli.console import escape, stderr_console, stdout_console
from vgfc.cli.errors import EXIT_ERROR, handle_errors
from vgfc.cli.options import declare, max_errors_option, model_argument
from vgfc.compiler import STAGES
from vgfc.diagnostics import Severity

if TYPE_CHECKING:
    from vgfc.compiler import Options
    from vgfc.diagnostics import Diagnostic

__all__ = ["check"]


@click.command("check")
@model_argument
@click.option("--json", "as_json", is_flag=True, help="Print the diagnostics as JSON.")
@max_errors_option("ops that fail the same way are one, listed with the others' numbers")
@click.option(
    "--stop-after",
    type=click.Choice(STAGES),
    default="layout",
    show_default=True,
    help="Run the pipeline up to this stage (encode: also encode the VGF, in memory).",
)
@declare("check")
@handle_errors
def check(
    model: Path,
    as_json: bool,
    max_errors: int,
    stop_after: str,
    analysis: bool,
    options: Options,
) -> None:
    """Run every check `vgfc compile` runs on MODEL, writing nothing.

    The same pipeline as compile (read, verify, resolve, partition, lower, layout), stopped
    before the VGF is encoded, and going on past errors: each custom op's and each partition's
    first error is reported, so one run shows every broken op. For each Vulkan custom shader op
    that means: its attributes parsed, the resource layout contract checked, the shader compiled
    (GLSL, HLSL) or decoded (SPIR-V), validated with SPIRV-Tools and cross-checked with the
    declared bindings, descriptor types and push constants. Warnings (e.g. a dispatch too small
    for its output) do not fail.

    With --analysis (or --experimental-analysis, as the reference converter calls it), one line
    per operator on standard output first: which partition runs it, or why it was not lowered.

    At most --max-errors errors are listed (20; ops that fail the same way count once), then
    a line saying how many more there are, and a summary line on standard output. Exit code 0
    when there are no errors, 1 otherwise.
    """

    from vgfc.cli.progress import progress
    from vgfc.compiler import compile_model
    from vgfc.lower.shader import ShaderModule

    with progress("checking") as say:
        result = compile_model(model, options, say, stop_after=stop_after, keep_going=True)
    diagnostics = result.diagnostics
    errors = result.errors
    summary: dict[str, Any] = {}
    graph = result.graph
    if graph is not None:
        summary["operators"] = len(graph.operators)
    if result.plan is not None:
        summary["partitions"] = len(result.plan.partitions)
    if graph is not None and STAGES.index(stop_after) >= STAGES.index("lower"):
        summary["shaders"] = sum(op.is_shader for op in graph.operators)
        summary["shaders_compiled"] = sum(
            isinstance(m, ShaderModule) and m.spirv is not None for m in result.modules
        )
    if analysis and not as_json:
        from vgfc.analysis import analysis_lines

        for line in analysis_lines(result):
            click.echo(line)
    if as_json:
        doc = {
            "model": str(model),
            "ok": not errors,
            "errors": len(errors),
            "warnings": len(result.warnings),
            "diagnostics": [d.as_dict() for d in diagnostics],
            "summary": summary,
        }
        if analysis:
            from vgfc.analysis import analysis_lines

            doc["analysis"] = analysis_lines(result)
        click.echo(json.dumps(doc, indent=2))
    else:
        groups = print_bounded(stderr_console(), diagnostics, max_errors)
        out = stdout_console()
        if not errors:
            out.print(escape(_ok_line(model, summary, stop_after, len(result.warnings))))
        else:
            out.print(
                escape(_failed_line(model, summary, stop_after, len(result.warnings), groups))
            )
    if errors:
        sys.exit(EXIT_ERROR)


def _failed_line(
    model: Path,
    summary: dict[str, Any],
    stop_after: str,
    warnings: int,
    groups: list[list[Diagnostic]],
) -> str:
    """``model.tosa: 30 errors (3 distinct), 2 warnings; 30 operators``."""
    errors = [g for g in groups if g[0].severity is Severity.ERROR]
    count = sum(len(g) for g in errors)
    text = f"{model}: {count} error{'s' if count != 1 else ''}"
    if len(errors) != count:
        text += f" ({len(errors)} distinct)"
    if warnings:
        text += f", {warnings} warning{'s' if warnings != 1 else ''}"
    facts = [
        f"{summary[key]} {key if summary[key] != 1 else key[:-1]}"
        for key in ("operators", "partitions")
        if key in summary
    ]
    if facts:
        text += "; " + ", ".join(facts)
    if stop_after not in ("layout", "encode"):
        text += f" (stopped after {stop_after})"
    return text


def _ok_line(model: Path, summary: dict[str, Any], stop_after: str, warnings: int) -> str:
    """``model.tosa: ok: 7 operators, 3 partitions, 2 of 2 shaders compiled and checked``."""
    parts = []
    if "operators" in summary:
        parts.append(f"{summary['operators']} operators")
    if "partitions" in summary:
        parts.append(f"{summary['partitions']} partitions")
    if "shaders" in summary:
        parts.append(
            f"{summary['shaders_compiled']} of {summary['shaders']} shaders compiled and checked"
        )
    if warnings:
        parts.append(f"{warnings} warning(s)")
    line = f"{model}: ok: {', '.join(parts)}"
    if stop_after not in ("layout", "encode"):
        line += f" (stopped after {stop_after})"
    return line
