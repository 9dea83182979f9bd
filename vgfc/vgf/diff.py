"""Structural differences between two VGF models (``vgfc inspect A.vgf --diff B.vgf``).

Compares what a runtime acts on (modules' kinds and code, segments with their descriptor sets,
binding slots, dispatch and push-constant ranges, the resource table, the sequence's inputs and
outputs) and reports each difference as one line, so a file from vgfc can be held up against one
from another converter. Names of modules and segments and the code itself are not compared: two
converters may name things and compile shaders differently and still be interchangeable.
"""

from __future__ import annotations

from collections.abc import Iterable

from vgfc.record import astuple
from vgfc.vgf.model import Interface, Model, Slot

__all__ = ["diff_models"]


def _slots(slots: Iterable[Slot | Interface]) -> list[tuple[int, int]]:
    return [(s.binding, s.resource) for s in slots]


def _compare(where: str, a: object, b: object, out: list[str]) -> None:
    if a != b:
        out.append(f"{where}: {a} != {b}")


def diff_models(a: Model, b: Model) -> list[str]:
    """One line per difference, ``where: A's value != B's value``; empty when they agree."""
    out: list[str] = []
    _compare(
        "modules",
        [(m.type.name, m.code) for m in a.modules],
        [(m.type.name, m.code) for m in b.modules],
        out,
    )
    _compare("segments", [s.type.name for s in a.segments], [s.type.name for s in b.segments], out)
    for i, (x, y) in enumerate(zip(a.segments, b.segments, strict=False)):
        where = f"segment {i} ({x.name})"
        _compare(
            f"{where} descriptor sets",
            [(d.set, _slots(d.slots)) for d in x.descriptor_sets],
            [(d.set, _slots(d.slots)) for d in y.descriptor_sets],
            out,
        )
        _compare(f"{where} inputs", _slots(x.inputs), _slots(y.inputs), out)
        _compare(f"{where} outputs", _slots(x.outputs), _slots(y.outputs), out)
        _compare(f"{where} dispatch", x.dispatch, y.dispatch, out)
        _compare(
            f"{where} push constants",
            [astuple(r) for r in x.push_constant_ranges],
            [astuple(r) for r in y.push_constant_ranges],
            out,
        )
        _compare(f"{where} constants", len(x.constant_bindings), len(y.constant_bindings), out)
    _compare("resources", len(a.resources), len(b.resources), out)
    for i, (r, q) in enumerate(zip(a.resources, b.resources, strict=False)):
        _compare(f"resource {i} category", r.category.name, q.category.name, out)
        for f in ("descriptor_type", "format", "shape", "alias_group", "sampler"):
            _compare(f"resource {i} {f}", getattr(r, f), getattr(q, f), out)
    _compare(
        "constants", [len(c.data) for c in a.constants], [len(c.data) for c in b.constants], out
    )
    _compare("inputs", _slots(a.inputs), _slots(b.inputs), out)
    _compare("outputs", _slots(a.outputs), _slots(b.outputs), out)
    _compare("input names", [x.name for x in a.inputs], [x.name for x in b.inputs], out)
    _compare("output names", [x.name for x in a.outputs], [x.name for x in b.outputs], out)
    return out
