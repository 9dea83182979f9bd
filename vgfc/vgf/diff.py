"""Structural differences between two VGF models (``vgfc inspect A.vgf --diff B.vgf``).

Compares what a runtime acts on (modules' kinds and code, segments with their descriptor sets,
binding slots, dispatch and push-constant ranges, the resource table, the sequence's inputs and
outputs) and reports each difference as one line, so a file from vgfc can be held up against one
from another converter. Names of modules and segments and the code itself are not compared: two
converters may name things and compile shaders differently and still be interchangeable.
"""

from __future__ import annotations

from collections.abc import Iterable

from vgfc.ir_shaders import Sampler
from vgfc.record import fields
from vgfc.vgf.model import Interface, Model, PushConstantRange, Slot

__all__ = ["diff_models"]


def _slots(slots: Iterable[Slot | Interface]) -> str:
    """``0->r2, 1->r3``: binding -> resource, as ``vgfc inspect`` prints them."""
    return ", ".join(f"{s.binding}->r{s.resource}" for s in slots) or "none"


def _push(ranges: Iterable[PushConstantRange]) -> str:
    return (
        ", ".join(f"{r.offset}+{r.size} B (stages 0x{r.stage_flags:x})" for r in ranges) or "none"
    )


def _show(value: object) -> str:
    """A value as a user reads it: names bare, shapes ``1x8x8x4``, nothing ``none``; never
    Python's reprs (quotes, brackets, ``None``)."""
    if value is None:
        return "none"
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return "x".join(map(str, value)) or "scalar"
    if isinstance(value, list):
        return ", ".join(_show(v) for v in value) or "none"
    if isinstance(value, Sampler):
        return ", ".join(f"{f} {getattr(value, f)}" for f in fields(value))
    return str(value)


def _compare(where: str, a: object, b: object, out: list[str]) -> None:
    if a != b:
        out.append(f"{where}: {_show(a)} != {_show(b)}")


def diff_models(a: Model, b: Model) -> list[str]:
    """One line per difference, ``where: A's value != B's value``; empty when they agree."""
    out: list[str] = []
    _compare(
        "modules",
        [f"{m.type.name} {m.code}" for m in a.modules],
        [f"{m.type.name} {m.code}" for m in b.modules],
        out,
    )
    _compare("segments", [s.type.name for s in a.segments], [s.type.name for s in b.segments], out)
    for i, (x, y) in enumerate(zip(a.segments, b.segments, strict=False)):
        where = f"segment {i} ({x.name})"
        _compare(
            f"{where} descriptor sets",
            "; ".join(f"set {d.set}: {_slots(d.slots)}" for d in x.descriptor_sets) or "none",
            "; ".join(f"set {d.set}: {_slots(d.slots)}" for d in y.descriptor_sets) or "none",
            out,
        )
        _compare(f"{where} inputs", _slots(x.inputs), _slots(y.inputs), out)
        _compare(f"{where} outputs", _slots(x.outputs), _slots(y.outputs), out)
        _compare(f"{where} dispatch", x.dispatch, y.dispatch, out)
        _compare(
            f"{where} push constants",
            _push(x.push_constant_ranges),
            _push(y.push_constant_ranges),
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
