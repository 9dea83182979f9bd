"""Write coverage: which elements of the outputs, and of the values passed between segments, no
segment wrote.

A shader whose dispatch covers half its result leaves the other half as whatever the memory held
(1.2e33 on lavapipe, zeros elsewhere); comparing with the reference converter's file, which runs
the same shader, cannot notice. So before a run every output and every value a segment writes
for a later one is filled with a canary, and after it the elements that still hold the canary are
reported, with the segment that should have written them.

Values between segments are not model outputs: the scenario runner creates them itself and lets
nobody bind or read them. So the run uses a copy of the VGF in which each of them is also a model
output (:func:`watch`): same modules, segments and bindings, one more interface entry and the
resource's category OUTPUT; a value with an alias group keeps its other views, which the runner
places in the same memory, so the model computes what it computes without the copy.

The canary is a byte pattern per element width that real results rarely hold: a NaN with a
payload for float widths (a NaN a shader computes is the canonical one) and 0xA5 for bytes (not a
boolean, an unlikely int8). An element that holds it after the run is only *suspected*; a second
run with another pattern confirms it, so a shader that really writes the first pattern is never
reported (the second run costs time only when the first found suspects).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vgfc.diagnostics import UnsupportedError
from vgfc.ir import Array
from vgfc.record import record, replace
from vgfc.runner.formats import element_format
from vgfc.runner.scenario import resource_kind
from vgfc.vgf.model import Category, Interface, Model, ModuleType

__all__ = ["CANARIES", "Unwritten", "Watched", "canary_array", "unwritten", "watch"]

CANARIES: tuple[dict[int, int], ...] = (
    {1: 0xA5, 2: 0x7E5B, 4: 0x7FE3C5F1, 8: 0x7FFCA5C3D2E1F0A9},
    {1: 0x5A, 2: 0x7E3C, 4: 0x7FF1D2E3, 8: 0x7FFBC1E2D4B5A697},
)
"""Element bit patterns by byte width: the first run's, and the confirming run's. As floats they
are quiet NaNs (a signalling one would raise numpy's "invalid value" when read)."""

WATCHED_PREFIX = "vgfc.coverage."
"""Names of the interface entries :func:`watch` adds (no TOSA tensor name is needed for them)."""


@record
class Watched:
    """One value whose writes are checked."""

    name: str
    """The model output's name, or ``vgfc.coverage.<binding>`` for a value between segments."""
    binding: int
    """Its logical binding id."""
    resource: int
    """Index of the resource that holds it in the model."""
    writer: int | None
    """The segment that writes it (``None`` when none of them lists it as an output)."""
    output: bool
    """True for a model output; False for a value between segments."""


@record
class Unwritten:
    """Elements of one value that no segment wrote."""

    value: Watched
    count: int
    """How many elements still hold the canary."""
    total: int
    first: int
    """Flat index (row-major over the value's shape) of the first of them."""
    shape: tuple[int, ...]
    segment: str | None
    """``segment 1 'compute_segment_0' (compute, module 'blur')``: the one that should have
    written them; ``None`` when no segment lists the value."""
    carried_from: str | None = None
    """Where the canary came from when the segment that writes this value read it from an
    earlier value that was not written in full (a NaN canary survives arithmetic): the earlier
    value is the one to fix; ``None`` for a value whose own writer left elements out."""

    @property
    def what(self) -> str:
        if self.value.output:
            return f"output '{self.value.name}'"
        return f"the value passed between segments at binding {self.value.binding}"

    def to_json(self) -> dict[str, object]:
        """What ``run --json`` and ``verify --json`` list under ``unwritten``."""
        return {
            "value": self.value.name if self.value.output else None,
            "binding": self.value.binding,
            "output": self.value.output,
            "count": self.count,
            "total": self.total,
            "first_index": self.first,
            "segment": self.value.writer,
            "carried_from": self.carried_from,
            "message": self.describe(),
        }

    def describe(self) -> str:
        if self.carried_from is not None:
            return (
                f"{self.what}: {self.count} of {self.total} elements hold the canary carried on "
                f"from {self.carried_from} (first at flat index {self.first})"
            )
        who = f"; {self.segment} should have written them" if self.segment else ""
        return (
            f"{self.what}: {self.count} of {self.total} elements were never written (first at "
            f"flat index {self.first}, shape {list(self.shape)}){who}"
        )


def watch(model: Model) -> tuple[Model, tuple[Watched, ...]]:
    """``model`` with every value a segment writes for another one also a model output, and
    every value whose writes are checked (the model's outputs first)."""
    writer: dict[int, int] = {}
    for index, segment in enumerate(model.segments):
        for slot in segment.outputs:
            writer.setdefault(slot.binding, index)
    watched = [
        Watched(o.name, o.binding, o.resource, writer.get(o.binding), True) for o in model.outputs
    ]
    outputs = {o.binding for o in model.outputs} | {i.binding for i in model.inputs}
    resources = list(model.resources)
    extra: list[Interface] = []
    for index, segment in enumerate(model.segments):
        for slot in segment.outputs:
            resource = resources[slot.resource]
            if slot.binding in outputs or resource.category is not Category.INTERMEDIATE:
                continue
            try:
                resource_kind(resource, slot.resource)
                element_format(resource.format)
            except UnsupportedError:
                continue  # a kind the scenario cannot hold: left to the runner
            if any(d < 0 for d in resource.shape):
                continue
            outputs.add(slot.binding)
            resources[slot.resource] = replace(resource, category=Category.OUTPUT)
            name = f"{WATCHED_PREFIX}{slot.binding}"
            extra.append(Interface(name, slot.binding, slot.resource))
            watched.append(Watched(name, slot.binding, slot.resource, index, False))
    if not extra:
        return model, tuple(watched)
    exposed = replace(model, resources=tuple(resources), outputs=(*model.outputs, *extra))
    return exposed, tuple(watched)


def canary_array(model: Model, iface: Interface, run: int) -> Array:
    """The array a model output starts as in run ``run`` (0 or 1): the canary in every element,
    typed and shaped as the scenario runner reads the resource's initial data."""
    resource = model.resource_of(iface)
    element = element_format(resource.format)
    width = element.dtype.itemsize
    pattern = np.full(resource.shape, CANARIES[run][width], dtype=f"<u{width}")
    return pattern.view(element.dtype)


def unwritten(
    model: Model,
    watched: Sequence[Watched],
    first: Mapping[str, Array],
    second: Mapping[str, Array] | None = None,
) -> list[Unwritten]:
    """The elements of each watched value that hold the first run's canary in ``first`` (and,
    when given, the confirming run's in ``second``). ``first`` and ``second`` are the run's
    outputs by name, as :func:`vgfc.runner.scenario.read_output` returns them. In the order the
    segments write them; a value whose writer read a value already found is marked
    :attr:`Unwritten.carried_from` it."""
    found: list[Unwritten] = []
    flagged: dict[int, str] = {}  # binding -> what it is, for values found so far
    order = sorted(watched, key=lambda w: (w.writer is None, w.writer or 0))
    for value in order:
        mask = suspects(model, value, first, 0)
        if mask is None or not mask.any():
            continue
        if second is not None:
            confirm = suspects(model, value, second, 1)
            if confirm is None:
                continue
            mask &= confirm
            if not mask.any():
                continue
        array = first[value.name]
        flat = np.flatnonzero(mask)
        reads = (
            [s.binding for s in model.segments[value.writer].inputs]
            if value.writer is not None
            else []
        )
        source = next((flagged[b] for b in reads if b in flagged), None)
        item = Unwritten(
            value,
            int(flat.size),
            int(mask.size),
            int(flat[0]),
            tuple(array.shape),
            _segment(model, value.writer),
            source,
        )
        flagged[value.binding] = source or item.what
        found.append(item)
    return found


def suspects(model: Model, value: Watched, outputs: Mapping[str, Array], run: int) -> Array | None:
    """Flat boolean mask of the elements of ``value`` that hold run ``run``'s canary."""
    array = outputs.get(value.name)
    if array is None:
        return None
    width = array.dtype.itemsize
    pattern = CANARIES[run].get(width)
    if pattern is None:
        return None
    raw = np.ascontiguousarray(array).reshape(-1).view(f"<u{width}")
    mask: Array = raw == pattern
    return mask


def _segment(model: Model, index: int | None) -> str | None:
    if index is None:
        return None
    segment = model.segments[index]
    module = model.module_of(segment)
    kind = "compute" if segment.type is ModuleType.COMPUTE else "graph"
    return f"segment {index} '{segment.name}' ({kind}, module '{module.name}')"
