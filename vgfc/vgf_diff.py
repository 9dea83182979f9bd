"""Structural differences between two VGF files (``vgfc inspect A.vgf --diff B.vgf``).

Compares what a runtime acts on (modules' kinds and code, segments with their descriptor sets,
binding slots, dispatch and push-constant ranges, the resource table, the sequence's inputs and
outputs) and reports each difference as one line, so a file from vgfc can be held up against one
from another converter.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import astuple
from typing import Any

from vgfc.vgf_reader import VgfFile

__all__ = ["diff_vgf"]


def _slots(slots: Iterable[Any]) -> list[tuple[int, int]]:
    return [(s.binding, s.resource) for s in slots]


def _compare(where: str, a: object, b: object, out: list[str]) -> None:
    if a != b:
        out.append(f"{where}: {a} != {b}")


def diff_vgf(a: VgfFile, b: VgfFile) -> list[str]:
    """One line per difference, ``where: A's value != B's value``; empty when they agree."""
    out: list[str] = []
    _compare(
        "modules", [(m.type, m.code) for m in a.modules], [(m.type, m.code) for m in b.modules], out
    )
    _compare("segments", [s.type for s in a.segments], [s.type for s in b.segments], out)
    for i, (x, y) in enumerate(zip(a.segments, b.segments, strict=False)):
        where = f"segment {i} ({x.name})"
        _compare(
            f"{where} descriptor sets",
            [(d.set, _slots(d.bindings)) for d in x.descriptor_sets],
            [(d.set, _slots(d.bindings)) for d in y.descriptor_sets],
            out,
        )
        _compare(f"{where} inputs", _slots(x.inputs), _slots(y.inputs), out)
        _compare(f"{where} outputs", _slots(x.outputs), _slots(y.outputs), out)
        _compare(f"{where} dispatch", x.dispatch_shape, y.dispatch_shape, out)
        _compare(
            f"{where} push constants",
            [astuple(r) for r in x.push_constant_ranges],
            [astuple(r) for r in y.push_constant_ranges],
            out,
        )
        _compare(f"{where} constants", len(x.constant_bindings), len(y.constant_bindings), out)
    _compare("resources", len(a.resources), len(b.resources), out)
    fields = ("category", "descriptor_type", "format", "shape", "alias_group", "sampler")
    for r, q in zip(a.resources, b.resources, strict=False):
        for f in fields:
            _compare(f"resource {r.index} {f}", getattr(r, f), getattr(q, f), out)
    _compare("constants", [c.size for c in a.constants], [c.size for c in b.constants], out)
    _compare("inputs", _slots(s for _, s in a.inputs), _slots(s for _, s in b.inputs), out)
    _compare("outputs", _slots(s for _, s in a.outputs), _slots(s for _, s in b.outputs), out)
    _compare("input names", [n for n, _ in a.inputs], [n for n, _ in b.inputs], out)
    _compare("output names", [n for n, _ in a.outputs], [n for n, _ in b.outputs], out)
    return out
