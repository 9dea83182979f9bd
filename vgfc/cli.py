"""The ``vgfc`` command line.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
No traceback is shown unless ``--debug`` is given.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

import vgfc
from vgfc.diagnostics import ErrorKind, InputError, VgfcError
from vgfc.dot import plan_to_dot
from vgfc.report import partition_json, summarize_ops

if TYPE_CHECKING:
    from vgfc.shader.glslang import CompileOptions

F = TypeVar("F", bound=Callable[..., Any])

EXIT_ERROR = 1
EXIT_INTERNAL = 3


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _handle_errors(func: F) -> F:
    """Turn errors into one clear line on stderr and an exit code; tracebacks only with --debug."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = bool(click.get_current_context().find_root().params.get("debug"))
        try:
            return func(*args, **kwargs)
        except VgfcError as e:
            if debug:
                raise
            label = "internal error" if e.kind is ErrorKind.INTERNAL else "error"
            _stderr().print(f"[bold red]{label}:[/] {e.render()}", markup=True, highlight=False)
            sys.exit(EXIT_INTERNAL if e.kind is ErrorKind.INTERNAL else EXIT_ERROR)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except Exception as e:
            if debug:
                raise
            _stderr().print(
                f"[bold red]internal error:[/] {type(e).__name__}: {e}\n"
                "This is a bug in vgfc; rerun with --debug for a traceback and report it.",
                markup=True,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never a partial file."""
    target = path.resolve()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise InputError(f"cannot write output file: {e.strerror}", file=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
@_handle_errors
def partition(model: Path, as_json: bool, as_dot: bool, output: Path | None) -> None:
    """Show how MODEL splits into ML and shader partitions.

    Every Vulkan custom shader op (domain com.arm.VulkanCustomShader) runs alone in a shader
    partition; all other work is grouped into ML partitions. Each ML op joins the earliest ML
    partition that follows all of its producers, so independent work never opens a new one.

    \b
    Render the graph:  vgfc partition model.tosa --dot | dot -Tsvg -o plan.svg
    """
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
@_handle_errors
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
        console = _stderr()
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


def main() -> None:
    cli(prog_name="vgfc")
