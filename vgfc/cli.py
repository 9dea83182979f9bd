"""The ``vgfc`` command line.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
No traceback is shown unless ``--debug`` is given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table

import vgfc
from vgfc.cli_support import (
    EXIT_ERROR,
    F,
    handle_errors,
    stderr_console,
    write_atomically,
)
from vgfc.diagnostics import VgfcError

if TYPE_CHECKING:
    from vgfc.shader.glslang import CompileOptions


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        write_atomically(output, text.encode("utf-8"))


model_argument = click.argument(
    "model", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(vgfc.__version__, prog_name="vgfc")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
def cli(debug: bool) -> None:
    """Compile TOSA models with Vulkan custom shaders into VGF files.

    \b
    vgfc partition model.tosa          how the model splits into ML and shader work
    vgfc partition model.tosa --dot    the same as a Graphviz graph
    vgfc check model.tosa              compile and cross-check every shader, write nothing
    vgfc compile model.tosa -o m.vgf   write the VGF file (--report r.json for a report)
    vgfc inspect m.vgf                 what a VGF file holds
    vgfc run m.vgf -i x.npy -o out/    run it on the CPU (lavapipe + ML emulation layers)
    vgfc verify model.tosa             compile, run, compare with an independent oracle
    \b
    Exit codes: 0 ok, 1 error in the input, 2 usage error, 3 internal error.
    """


@cli.command()
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
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write the JSON or DOT text to this file instead of standard output.",
)
@handle_errors
def partition(model: Path, as_json: bool, as_dot: bool, output: Path | None) -> None:
    """Show how MODEL splits into ML and shader partitions.

    Every Vulkan custom shader op (domain com.arm.VulkanCustomShader) runs alone in a shader
    partition; all other work is grouped into ML partitions. Each ML op joins the earliest ML
    partition that follows all of its producers, so independent work never opens a new one.

    \b
    Render the graph:  vgfc partition model.tosa --dot | dot -Tsvg -o plan.svg
    """
    from vgfc.dot import plan_to_dot
    from vgfc.report import partition_json, summarize_ops

    if as_json and as_dot:
        raise click.UsageError("--json and --dot are exclusive: choose one")
    if output is not None and not (as_json or as_dot):
        raise click.UsageError("-o/--output needs --json or --dot")
    graph = vgfc.load(model)
    plan = vgfc.partition(graph)
    if as_json:
        _emit(json.dumps(partition_json(graph, plan), indent=2) + "\n", output)
        return
    if as_dot:
        _emit(plan_to_dot(graph, plan), output)
        return

    console = Console(highlight=False)
    table = Table(title=f"{model} (TOSA {graph.version}): {len(graph.operators)} operators")
    for col in ("id", "kind", "ops", "operators", "inputs", "outputs"):
        table.add_column(col, overflow="fold")
    for p in plan.partitions:
        kind = "[bold orange3]shader[/]" if p.kind.value == "shader" else "[blue]ml[/]"
        table.add_row(
            str(p.id),
            kind,
            str(len(p.operators)),
            summarize_ops(graph, p.operators),
            ", ".join(p.inputs),
            ", ".join(p.outputs),
        )
    console.print(table)
    for p in plan.partitions:
        console.print(f"  partition {p.id}: {p.reason}")
    n_ml = sum(p.kind.value == "ml" for p in plan.partitions)
    n = len(plan.partitions)
    saved = plan.program_order_count - n
    note = f", {saved} fewer than program order" if saved > 0 else ""
    console.print(f"{n} partitions ({n_ml} ML, {n - n_ml} shader){note}")


def _compile_options(
    include_dirs: tuple[Path, ...], defines: tuple[str, ...], target_env: str
) -> CompileOptions:
    from vgfc.shader.glslang import CompileOptions

    pairs = []
    for d in defines:
        name, _, value = d.partition("=")
        if not name.isidentifier():
            raise click.BadParameter(f"'{d}' is not NAME or NAME=VALUE", param_hint="-D/--define")
        pairs.append((name, value or "1"))
    return CompileOptions(
        target_env=target_env,
        include_dirs=tuple(str(p) for p in include_dirs),
        defines=tuple(pairs),
    )


def shader_options(func: F) -> F:
    """Options shared by every command that compiles shaders."""
    func = click.option(
        "--target-env",
        type=click.Choice(["vulkan1.1", "vulkan1.2", "vulkan1.3"]),
        default="vulkan1.3",
        show_default=True,
        help="Vulkan environment shaders are compiled and validated for.",
    )(func)
    func = click.option(
        "-D",
        "--define",
        "defines",
        multiple=True,
        metavar="NAME[=VALUE]",
        help="Preprocessor definition for GLSL/HLSL shaders (repeatable).",
    )(func)
    func = click.option(
        "-I",
        "--include-dir",
        "include_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Directory searched by #include in shaders (repeatable).",
    )(func)
    return func


@cli.command()
@model_argument
@click.option("--json", "as_json", is_flag=True, help="Print the diagnostics as JSON.")
@shader_options
@handle_errors
def check(
    model: Path,
    as_json: bool,
    include_dirs: tuple[Path, ...],
    defines: tuple[str, ...],
    target_env: str,
) -> None:
    """Check MODEL and compile its shaders, writing nothing.

    Reads and verifies the model, partitions it, and for each Vulkan custom shader op: parses
    its attributes, checks the resource layout contract, compiles the shader (GLSL, HLSL) or
    decodes it (SPIR-V), validates it with SPIRV-Tools, and cross-checks the declared bindings,
    descriptor types and push constants against the shader itself. Each custom op's first
    error is reported; warnings (e.g. a dispatch too small for its output) do not fail.

    Exit code 0 when there are no errors, 1 otherwise.
    """
    from vgfc.resolve import resolve

    options = _compile_options(include_dirs, defines, target_env)
    try:
        graph = vgfc.load(model)
        plan = vgfc.partition(graph)
    except VgfcError as e:
        diagnostics = [e.diagnostic]
        summary: dict[str, Any] = {}
    else:
        resolved = resolve(graph, options, keep_going=True)
        diagnostics = list(resolved.diagnostics)
        summary = {
            "operators": len(graph.operators),
            "partitions": len(plan.partitions),
            "shaders": sum(op.op == "CUSTOM" for op in graph.operators),
            "shaders_compiled": sum(m.spirv is not None for m in resolved.shaders.values()),
        }
    errors = [d for d in diagnostics if d.severity.value == "error"]
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
            colour = "red" if d in errors else "yellow"
            label = "error" if d in errors else "warning"
            console.print(f"[bold {colour}]{label}:[/] {d.render()}", markup=True, highlight=False)
        if not errors:
            Console(highlight=False, soft_wrap=True).print(
                f"{model}: ok: {summary['operators']} operators, {summary['partitions']} "
                f"partitions, {summary['shaders_compiled']} of {summary['shaders']} shaders "
                f"compiled and checked"
                + (f", {len(diagnostics)} warning(s)" if diagnostics else "")
            )
    if errors:
        sys.exit(EXIT_ERROR)


@cli.command()
@model_argument
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="VGF file to write (default: MODEL with the suffix .vgf).",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a JSON report (schemas/report.schema.json): partitions, segments, "
    "modules, resources, shaders, warnings, timings per stage.",
)
@click.option(
    "--keep-source",
    is_flag=True,
    help="Store GLSL/HLSL source in compute modules instead of the compiled SPIR-V "
    "(the shaders are still compiled and checked).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@shader_options
@handle_errors
def compile(
    model: Path,
    output: Path | None,
    report: Path | None,
    keep_source: bool,
    quiet: bool,
    include_dirs: tuple[Path, ...],
    defines: tuple[str, ...],
    target_env: str,
) -> None:
    """Compile MODEL into one VGF file.

    Partitions the model, compiles and cross-checks every Vulkan custom shader, lowers each ML
    partition to a SPIR-V graph module (SPV_ARM_graph, TOSA.001000.1), plans the resources and
    writes the VGF atomically: on any error no file is written and an existing one is left
    untouched. The same input and options always give the same bytes.
    """
    from vgfc.compiler import Options, compile_model
    from vgfc.report import compile_report, summarize_ops

    output = output or model.with_suffix(".vgf")
    options = Options(_compile_options(include_dirs, defines, target_env), keep_source)
    console = stderr_console()
    if quiet or not console.is_terminal:
        result = compile_model(model, options)
    else:
        with console.status("compiling") as status:
            result = compile_model(model, options, lambda s: status.update(f"{s}..."))
    for d in result.warnings:
        console.print(f"[bold yellow]warning:[/] {d.render()}", markup=True, highlight=False)
    report_bytes = None
    if report is not None:
        doc = compile_report(result, str(output))
        report_bytes = (json.dumps(doc, indent=2) + "\n").encode("utf-8")
    write_atomically(output, result.vgf)
    if report is not None and report_bytes is not None:
        write_atomically(report, report_bytes)
    if quiet:
        return
    out = Console(highlight=False, soft_wrap=True)
    table = Table(title=f"{output}: {len(result.vgf)} bytes")
    for col in ("#", "type", "module", "code", "operators", "dispatch", "push"):
        table.add_column(col, overflow="fold")
    for seg in result.program.segments:
        part = result.plan.partitions[seg.partition]
        module = result.program.modules[seg.module]
        code = "SPIR-V" if module.spirv is not None else (module.language or "none")
        push = ", ".join(f"{r.size} B" for r in seg.push_constant_ranges)
        table.add_row(
            str(seg.index),
            seg.kind,
            module.name,
            code,
            summarize_ops(result.graph, part.operators),
            "x".join(map(str, seg.dispatch)) if seg.kind == "compute" else "",
            push,
        )
    out.print(table)
    timing = ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in result.timings)
    out.print(
        f"{len(result.program.segments)} segments, {len(result.program.resources)} resources, "
        f"{len(result.program.constants)} constants; {timing}"
    )


@cli.command()
@click.argument("vgf", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
@click.option(
    "--diff",
    "other",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Print the structural differences from another VGF file instead (exit 1 if any).",
)
@handle_errors
def inspect(vgf: Path, as_json: bool, other: Path | None) -> None:
    """Show what a VGF file holds: modules, segments, resources, constants.

    Reads files written by vgfc and by other tools (such as the reference model-converter).
    With --diff, compares the structure a runtime acts on (segments, descriptor sets, binding
    slots, dispatch, push constants, resources, inputs and outputs) with another file.
    """
    from vgfc.vgf_reader import read_vgf

    f = read_vgf(vgf)
    if other is not None:
        from vgfc.vgf_diff import diff_vgf

        lines = diff_vgf(f, read_vgf(other))
        for line in lines:
            click.echo(line)
        click.echo(f"{len(lines)} difference(s) between {vgf} and {other}")
        if lines:
            sys.exit(EXIT_ERROR)
        return
    if as_json:
        click.echo(json.dumps(f.as_dict(), indent=2))
        return
    out = Console(highlight=False, soft_wrap=True)
    out.print(f"{vgf}: VGF {f.version}, Vulkan headers {f.vk_header_version}")
    t = Table(title="modules")
    for col in ("#", "type", "name", "entry point", "code"):
        t.add_column(col)
    for m in f.modules:
        t.add_row(str(m.index), m.type, m.name, m.entry_point, f"{m.code} ({m.code_size} B)")
    out.print(t)
    t = Table(title="segments")
    for col in ("#", "type", "name", "module", "descriptor sets", "in", "out", "dispatch", "push"):
        t.add_column(col, overflow="fold")
    for s in f.segments:
        sets = "; ".join(
            f"set {d.set}: " + ", ".join(f"{b.binding}->r{b.resource}" for b in d.bindings)
            for d in s.descriptor_sets
        )
        t.add_row(
            str(s.index),
            s.type,
            s.name,
            str(s.module),
            sets,
            ", ".join(f"{b.binding}->r{b.resource}" for b in s.inputs),
            ", ".join(f"{b.binding}->r{b.resource}" for b in s.outputs),
            "x".join(map(str, s.dispatch_shape)),
            ", ".join(f"{r.offset}+{r.size} B" for r in s.push_constant_ranges),
        )
    out.print(t)
    t = Table(title="resources")
    for col in ("#", "category", "descriptor", "format", "shape", "alias", "sampler"):
        t.add_column(col, overflow="fold")
    for r in f.resources:
        sampler = ""
        if r.sampler is not None:
            sampler = (
                f"{r.sampler.min_filter.removeprefix('VK_FILTER_')}/"
                + r.sampler.address_mode_u.removeprefix("VK_SAMPLER_ADDRESS_MODE_")
            )
        t.add_row(
            str(r.index),
            r.category,
            (r.descriptor_type or "").removeprefix("VK_DESCRIPTOR_TYPE_"),
            r.format.removeprefix("VK_FORMAT_"),
            "x".join(map(str, r.shape)),
            "" if r.alias_group is None else str(r.alias_group),
            sampler,
        )
    out.print(t)
    for c in f.constants:
        out.print(f"constant {c.index}: resource r{c.resource}, {c.size} bytes")
    names = ", ".join(f"{n} (binding {s.binding}, r{s.resource})" for n, s in f.inputs)
    out.print(f"inputs: {names}")
    names = ", ".join(f"{n} (binding {s.binding}, r{s.resource})" for n, s in f.outputs)
    out.print(f"outputs: {names}")


def _add_run_command() -> None:
    from vgfc.cli_run import run
    from vgfc.cli_verify import verify

    cli.add_command(run)
    cli.add_command(verify)


_add_run_command()


def main() -> None:
    cli(prog_name="vgfc")
