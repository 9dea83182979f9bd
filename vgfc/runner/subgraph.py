"""Cut a TOSA file down to some of its operators, so that the TOSA reference model can run the
built-in parts of a model with custom operators (which it cannot run) one piece at a time.

The cut is made on the flatbuffer itself, not rebuilt from vgfc's IR: a rebuilt file would be
vgfc's reading of the model, and ``vgfc verify`` wants an oracle that does not share vgfc's
mistakes. Flatbuffer offsets point forward, so a new root, graph, region and block written in
front of the original bytes can refer to the original operator and tensor tables unchanged: the
operators and tensors the reference model sees are byte for byte the user's.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from vgfc.diagnostics import UnsupportedError
from vgfc.read.buffer import U32, Buffer
from vgfc.record import record

__all__ = ["Cut", "cut"]

_ALIGN = 16  # the original bytes keep their alignment (constant data is 8-aligned)


@record
class _Block:
    """Where the main block's parts lie in the original file."""

    version: int | None
    operators: list[int]
    tensors: dict[str, int]
    shapes: dict[str, int]
    """The block's shape values (TOSA 1.0's ``shapes`` table) by name."""


def _block(data: bytes) -> _Block:
    from vgfc.read.schema import schema

    buf = Buffer(data)
    layouts = schema().voffsets
    root = U32(buf.view, 0)[0]
    version_at, regions_at = buf.fields(root, layouts["TosaGraph"])
    regions = buf.offsets(root + regions_at) if regions_at else []
    names = []
    for r in regions:
        name_at, _ = buf.fields(r, layouts["TosaRegion"])
        names.append(buf.string(r + name_at) if name_at else b"")
    main = regions[names.index(b"main") if b"main" in names else 0]
    _, blocks_at = buf.fields(main, layouts["TosaRegion"])
    block = buf.offsets(main + blocks_at)[0]
    ops_at, tensors_at, _, _, shapes_at = buf.fields(block, layouts["TosaBasicBlock"])
    (name_voffset,) = _name_voffset()
    tensors = _named(buf, buf.offsets(block + tensors_at) if tensors_at else [], name_voffset)
    shape_name = schema().voffsets["TosaShape"][0]  # Name, Rank, DataAsNumpy
    shapes = _named(buf, buf.offsets(block + shapes_at) if shapes_at else [], shape_name)
    return _Block(
        buf.table(root + version_at) if version_at else None,
        buf.offsets(block + ops_at) if ops_at else [],
        tensors,
        shapes,
    )


def _named(buf: Buffer, tables: list[int], voffset: int) -> dict[str, int]:
    """Tables by the string field at ``voffset`` (their name)."""
    found = {}
    for t in tables:
        (name_at,) = buf.fields(t, (voffset,))
        found[buf.string(t + name_at).decode("utf-8", "replace") if name_at else ""] = t
    return found


def _name_voffset() -> tuple[int]:
    from vgfc.read.schema import schema

    return (schema().voffsets["TosaTensor"][0],)  # Name first (vgfc.read.spec.STRUCTURE)


@record
class Cut:
    """A file holding some of a model's operators."""

    data: bytes
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


class _Writer:
    """Objects written front to back; each uoffset field is patched once its target is known."""

    def __init__(self) -> None:
        self.out = bytearray(8)  # root uoffset and file identifier
        self.out[4:8] = b"TOSA"
        self.patches: list[tuple[int, str]] = []  # (field position, target key)
        self.where: dict[str, int] = {}

    def align(self, n: int) -> None:
        self.out.extend(b"\0" * (-len(self.out) % n))

    def table(self, key: str, fields: dict[int, str | None]) -> None:
        """A table whose fields (by voffset) are uoffsets to the objects named (``None``:
        absent), its vtable written right before it."""
        slots = sorted(v for v, target in fields.items() if target is not None)
        vtable_size = max(slots) + 2 if slots else 4
        where = {v: 4 + 4 * i for i, v in enumerate(slots)}
        vtable = struct.pack("<HH", vtable_size, 4 + 4 * len(slots))
        vtable += b"".join(struct.pack("<H", where.get(v, 0)) for v in range(4, vtable_size, 2))
        self.align(4)
        vtable_at = len(self.out)
        self.out += vtable
        self.align(4)
        start = len(self.out)
        self.where[key] = start
        self.out += struct.pack("<i", start - vtable_at)  # the vtable is at table - soffset
        for v in slots:
            target = fields[v]
            assert target is not None
            self.patches.append((len(self.out), target))
            self.out += b"\0\0\0\0"

    def offsets(self, key: str, targets: Sequence[str]) -> None:
        self.align(4)
        self.where[key] = len(self.out)
        self.out += struct.pack("<I", len(targets))
        for target in targets:
            self.patches.append((len(self.out), target))
            self.out += b"\0\0\0\0"

    def string(self, key: str, text: str) -> None:
        self.align(4)
        self.where[key] = len(self.out)
        raw = text.encode("utf-8")
        self.out += struct.pack("<I", len(raw)) + raw + b"\0"

    def finish(self, root: str, original: bytes, positions: dict[str, int]) -> bytes:
        self.align(_ALIGN)
        base = len(self.out)
        where = dict(self.where)
        where.update({k: base + v for k, v in positions.items()})
        for at, target in self.patches:
            struct.pack_into("<I", self.out, at, where[target] - at)
        struct.pack_into("<I", self.out, 0, where[root])
        return bytes(self.out) + original


def cut(
    data: bytes, operators: Sequence[int], inputs: Sequence[str], outputs: Sequence[str]
) -> Cut:
    """The file ``data`` with only the main block's ``operators`` (indices in program order),
    taking ``inputs`` and giving ``outputs`` (tensor names). The tensors it lists are those the
    operators read or write."""
    try:
        block = _block(data)
    except (struct.error, IndexError, ValueError) as e:
        raise UnsupportedError(f"cannot cut the model into pieces: {e}") from None
    import tosa.TosaBasicBlock
    import tosa.TosaGraph
    import tosa.TosaRegion

    from vgfc.read.spec import field

    voffset = {
        name: field(cls, method).voffset
        for name, cls, method in (
            ("graph.version", tosa.TosaGraph.TosaGraph, "Version"),
            ("graph.regions", tosa.TosaGraph.TosaGraph, "RegionsLength"),
            ("region.name", tosa.TosaRegion.TosaRegion, "Name"),
            ("region.blocks", tosa.TosaRegion.TosaRegion, "BlocksLength"),
            ("block.name", tosa.TosaBasicBlock.TosaBasicBlock, "Name"),
            ("block.operators", tosa.TosaBasicBlock.TosaBasicBlock, "OperatorsLength"),
            ("block.tensors", tosa.TosaBasicBlock.TosaBasicBlock, "TensorsLength"),
            ("block.inputs", tosa.TosaBasicBlock.TosaBasicBlock, "InputsLength"),
            ("block.outputs", tosa.TosaBasicBlock.TosaBasicBlock, "OutputsLength"),
            ("block.shapes", tosa.TosaBasicBlock.TosaBasicBlock, "ShapesLength"),
        )
    }
    w = _Writer()
    positions: dict[str, int] = {}
    if block.version is not None:
        positions["version"] = block.version
    w.table(
        "graph",
        {
            voffset["graph.version"]: "version" if block.version is not None else None,
            voffset["graph.regions"]: "regions",
        },
    )
    w.offsets("regions", ["region"])
    w.table("region", {voffset["region.name"]: "main", voffset["region.blocks"]: "blocks"})
    w.offsets("blocks", ["block"])
    w.table(
        "block",
        {
            voffset["block.name"]: "main",
            voffset["block.operators"]: "ops",
            voffset["block.tensors"]: "tensors",
            voffset["block.inputs"]: "inputs",
            voffset["block.outputs"]: "outputs",
            voffset["block.shapes"]: "shapes",
        },
    )
    w.string("main", "main")
    w.offsets("ops", [f"op{i}" for i in operators])
    positions.update({f"op{i}": block.operators[i] for i in operators})
    used = _tensors_of(data, block, operators) | set(inputs) | set(outputs)
    names = [n for n in block.tensors if n in used]
    w.offsets("tensors", [f"tensor{k}" for k in range(len(names))])
    positions.update({f"tensor{k}": block.tensors[n] for k, n in enumerate(names)})
    w.offsets("inputs", [f"in{k}" for k in range(len(inputs))])
    w.offsets("outputs", [f"out{k}" for k in range(len(outputs))])
    # The reference model refuses a value nothing reads or writes: only the shapes used.
    shapes = [n for n in block.shapes if n in used]
    w.offsets("shapes", [f"shape{k}" for k in range(len(shapes))])
    positions.update({f"shape{k}": block.shapes[n] for k, n in enumerate(shapes)})
    for k, name in enumerate(inputs):
        w.string(f"in{k}", name)
    for k, name in enumerate(outputs):
        w.string(f"out{k}", name)
    return Cut(w.finish("graph", data, positions), tuple(inputs), tuple(outputs))


def _tensors_of(data: bytes, block: _Block, operators: Sequence[int]) -> set[str]:
    from vgfc.read.schema import schema

    buf = Buffer(data)
    layout = schema().voffsets["TosaOperator"]
    names: set[str] = set()
    for i in operators:
        t = block.operators[i]
        _, _, _, inputs_at, outputs_at, _ = buf.fields(t, layout)
        for at in (inputs_at, outputs_at):
            if at:
                names.update(
                    buf.raw_string(s).decode("utf-8", "replace") for s in buf.offsets(t + at)
                )
    return names
