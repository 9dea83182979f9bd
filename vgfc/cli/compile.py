"""``vgfc compile``: MODEL.tosa -> one VGF file (and optionally a JSON report)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path
from typing import BinaryIO

import click

from vgfc.cli.support import (
    compile_options,
    escape,
    handle_errors,
    kernel_options,
    load_kernels,
    model_argument,
    print_diagnostic,
    shader_options,
    stderr_console,
    write_atomically,
)
from vgfc.cli.target import target_option

__all__ = ["compile_command"]


@click.command("compile")
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
@target_option
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@kernel_options
@shader_options
@handle_errors
def compile_command(
    model: Path,
    output: Path | None,
    report: Path | None,
    keep_source: bool,
    target: str,
    quiet: bool,
    kernels: tuple[str, ...],
    no_auto_convert: bool,
    include_dirs: tuple[Path, ...],
    defines: tuple[str, ...],
    target_env: str,
) -> None:
    """Compile MODEL into one VGF file.

    Reads and verifies the model, resolves its custom ops, partitions it, lowers each ML
    partition to a SPIR-V graph module (SPV_ARM_graph, TOSA.001000.1) and compiles and
    cross-checks each Vulkan custom shader, lays out the resources and writes the VGF
    atomically: on any error no file is written and an existing one is left untouched. The same
    input and options always give the same bytes.
    """
    from rich.console import Console

    from vgfc.cli.tables import word_table
    from vgfc.compiler import Options, compile_model
    from vgfc.report import compile_report, kernel_lines, summarize_ops
    from vgfc.vgf.encode import encode_to

    output = output or model.with_suffix(".vgf")
    options = Options(
        compile_options(include_dirs, defines, target_env),
        keep_source,
        target,
        libraries=load_kernels(kernels),
        auto_convert=not no_auto_convert,
    )
    console = stderr_console()
    # The pipeline stops before encoding: the VGF streams from the layout to the output file,
    # so constants go from the mapped input to disk without a copy in memory.
    if quiet or not console.is_terminal:
        result = compile_model(model, options, stop_after="layout")
    else:
        with console.status("compiling") as status:
            result = compile_model(
                model, options, lambda s: status.update(f"{s}..."), stop_after="layout"
            )
    for d in result.warnings:
        print_diagnostic(console, d)
    assert result.model is not None and result.graph is not None
    laid_out = result.model
    digest = hashlib.sha256() if report is not None else None
    size = 0

    def write(file: BinaryIO) -> None:
        nonlocal size
        size = encode_to(laid_out, file, digest)

    start = time.perf_counter()
    write_atomically(output, write)
    timings = (*result.timings, ("encode", time.perf_counter() - start))
    if report is not None and digest is not None:
        doc = compile_report(
            dataclasses.replace(result, timings=timings),
            str(output),
            written=(size, digest.hexdigest()),
        )
        write_atomically(report, (json.dumps(doc, indent=2) + "\n").encode("utf-8"))
    if quiet:
        return
    vgf = result.model
    out = Console(highlight=False, soft_wrap=True)
    assert result.plan is not None
    rows = []
    for i, (seg, part) in enumerate(zip(vgf.segments, result.plan.partitions, strict=True)):
        module = vgf.module_of(seg)
        push = ", ".join(f"{r.size} B" for r in seg.push_constant_ranges)
        rows.append(
            (
                str(i),
                seg.type.value,
                escape(module.name),
                module.code,
                escape(summarize_ops(result.graph, part.operators)),
                "x".join(map(str, seg.dispatch)) if seg.type.value == "compute" else "",
                push,
            )
        )
    columns = ("#", "type", "module", "code", "operators", "dispatch", "push")
    title = escape(f"{output}: {size} bytes")
    out.print(word_table(title, columns, rows, out.width))
    for line in kernel_lines(result):
        out.print(escape(line))
    timing = ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in timings)
    out.print(
        f"{len(vgf.segments)} segments, {len(vgf.resources)} resources, "
        f"{len(vgf.constants)} constants; {timing}"
    )
