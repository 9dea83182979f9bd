"""``vgfc inspect``: what a VGF file holds, or how it differs from another."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vgfc.cli.console import escape, stdout_console
from vgfc.cli.errors import EXIT_ERROR, handle_errors
from vgfc.cli.options import InputPath

if TYPE_CHECKING:
    from vgfc.vgf.model import Slot

__all__ = ["inspect"]


@click.command("inspect")
@click.argument("vgf", type=InputPath(dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print everything as JSON.")
@click.option(
    "--diff",
    "other",
    type=InputPath(),
    help="Print the structural differences from another VGF file instead (exit 1 if any).",
)
@handle_errors
def inspect(vgf: Path, as_json: bool, other: Path | None) -> None:
    """Show what a VGF file holds: modules, segments, resources, constants.

    Reads files written by vgfc and by other tools (such as the reference model-converter).
    With --diff, compares the structure a runtime acts on (segments, descriptor sets, binding
    slots, dispatch, push constants, resources, inputs and outputs) with another file.
    """

    from vgfc.cli.tables import table_width, word_table
    from vgfc.vgf.decode import read_vgf
    from vgfc.vgf.model import model_json

    f = read_vgf(vgf)
    if other is not None:
        from vgfc.vgf.diff import diff_models

        lines = diff_models(f, read_vgf(other))
        for line in lines:
            click.echo(line)
        click.echo(f"{len(lines)} difference(s) between {vgf} and {other}")
        if lines:
            sys.exit(EXIT_ERROR)
        return
    if as_json:
        click.echo(json.dumps(model_json(f), indent=2))
        return
    out = stdout_console()
    out.print(escape(f"{vgf}: VGF {f.version}, Vulkan headers {f.vk_header_version}"))
    modules = [
        (str(i), m.type.name, escape(m.name), escape(m.entry_point), f"{m.code} ({m.code_size} B)")
        for i, m in enumerate(f.modules)
    ]
    out.print(
        word_table(
            "modules", ("#", "type", "name", "entry point", "code"), modules, table_width(out)
        )
    )

    def slots(items: Iterable[Slot]) -> str:
        return ", ".join(f"{b.binding}->r{b.resource}" for b in items)

    segments = [
        (
            str(i),
            s.type.name,
            escape(s.name),
            str(s.module),
            "; ".join(f"set {d.set}: {slots(d.slots)}" for d in s.descriptor_sets),
            slots(s.inputs),
            slots(s.outputs),
            "x".join(map(str, s.dispatch)),
            ", ".join(f"{r.offset}+{r.size} B" for r in s.push_constant_ranges),
        )
        for i, s in enumerate(f.segments)
    ]
    headers = ("#", "type", "name", "module", "descriptor sets", "in", "out", "dispatch", "push")
    out.print(word_table("segments", headers, segments, table_width(out)))
    resources = []
    for i, r in enumerate(f.resources):
        sampler = ""
        if r.sampler is not None:
            sampler = (
                f"{r.sampler.min_filter.removeprefix('VK_FILTER_')}/"
                + r.sampler.address_mode_u.removeprefix("VK_SAMPLER_ADDRESS_MODE_")
            )
        resources.append(
            (
                str(i),
                r.category.name,
                (r.descriptor_type or "").removeprefix("VK_DESCRIPTOR_TYPE_"),
                r.format.removeprefix("VK_FORMAT_"),
                "x".join(map(str, r.shape)),
                "" if r.alias_group is None else str(r.alias_group),
                sampler,
            )
        )
    columns = ("#", "category", "descriptor", "format", "shape", "alias", "sampler")
    out.print(word_table("resources", columns, resources, table_width(out)))
    for i, c in enumerate(f.constants):
        out.print(f"constant {i}: resource r{c.resource}, {len(c.data)} bytes")
    names = ", ".join(f"{x.name} (binding {x.binding}, r{x.resource})" for x in f.inputs)
    out.print(escape(f"inputs: {names}"))
    names = ", ".join(f"{x.name} (binding {x.binding}, r{x.resource})" for x in f.outputs)
    out.print(escape(f"outputs: {names}"))
