"""``vgfc check``: the compile pipeline up to the layout, every error reported, nothing written."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from vgfc.cli.support import (
    EXIT_ERROR,
    compile_options,
    escape,
    handle_errors,
    kernel_options,
    load_kernels,
    model_argument,
    print_diagnostic,
    shader_options,
    stderr_console,
)
from vgfc.cli.target import target_option

__all__ = ["check"]


@click.command("check")
@model_argument
@click.option("--json", "as_json", is_flag=True, help="Print the diagnostics as JSON.")
@target_option
@kernel_options
@shader_options
@handle_errors
def check(
    model: Path,
    as_json: bool,
    target: str,
    kernels: tuple[str, ...],
    no_auto_convert: bool,
    include_dirs: tuple[Path, ...],
    defines: tuple[str, ...],
    target_env: str,
) -> None:
    """Run every check `vgfc compile` runs on MODEL, writing nothing.

    The same pipeline as compile (read, verify, resolve, partition, lower, layout), stopped
    before the VGF is encoded, and going on past errors: each custom op's and each partition's
    first error is reported, so one run shows every broken op. For each Vulkan custom shader op
    that means: its attributes parsed, the resource layout contract checked, the shader compiled
    (GLSL, HLSL) or decoded (SPIR-V), validated with SPIRV-Tools and cross-checked with the
    declared bindings, descriptor types and push constants. Warnings (e.g. a dispatch too small
    for its output) do not fail.

    Exit code 0 when there are no errors, 1 otherwise.
    """
    from rich.console import Console

    from vgfc.compiler import Options, compile_model
    from vgfc.lower.shader import ShaderModule

    options = Options(
        compile_options(include_dirs, defines, target_env),
        target=target,
        libraries=load_kernels(kernels),
        auto_convert=not no_auto_convert,
    )
    result = compile_model(model, options, stop_after="layout", keep_going=True)
    diagnostics = result.diagnostics
    errors = result.errors
    summary: dict[str, Any] = {}
    graph = result.graph
    if graph is not None and result.plan is not None:
        summary = {
            "operators": len(graph.operators),
            "partitions": len(result.plan.partitions),
            "shaders": sum(op.is_shader for op in graph.operators),
            "shaders_compiled": sum(
                isinstance(m, ShaderModule) and m.spirv is not None for m in result.modules
            ),
        }
    if as_json:
        doc = {
            "model": str(model),
            "ok": not errors,
            "errors": len(errors),
            "warnings": len(diagnostics) - len(errors),
            "diagnostics": [d.as_dict() for d in diagnostics],
            "summary": summary,
        }
        click.echo(json.dumps(doc, indent=2))
    else:
        console = stderr_console()
        for d in diagnostics:
            print_diagnostic(console, d)
        if not errors:
            Console(highlight=False, soft_wrap=True).print(
                escape(
                    f"{model}: ok: {summary['operators']} operators, {summary['partitions']} "
                    f"partitions, {summary['shaders_compiled']} of {summary['shaders']} shaders "
                    "compiled and checked"
                    + (f", {len(diagnostics)} warning(s)" if diagnostics else "")
                )
            )
    if errors:
        sys.exit(EXIT_ERROR)
