"""TOSA flatbuffer -> :class:`vgfc.ir.Graph`.

Reads the main block of the main region (and, when it has control flow, the first block of every
other region: the graphs COND_IF and WHILE_LOOP run), keeps constant data as read-only views of the
input buffer (:class:`vgfc.ir.Data`; the file is memory-mapped, so nothing is copied until a later
stage needs it) and turns every structural problem into an :class:`~vgfc.diagnostics.InputError`
that names the file and the operator or tensor. Names, string attributes, ranks, element counts and
shape values are held to :data:`vgfc.limits.LIMITS` as they are read, so no later stage meets a
value it cannot hold.

Why the fields are decoded here rather than through the generated ``tosa`` classes: those build
a Python object per table and run several checked ``struct`` reads per field, so a
100,000-operator model took 4.6 s to read. This reader walks the flatbuffer itself
(:mod:`vgfc.read.buffer`): one ``struct`` read per field, each vtable decoded once. The generated
package stays the specification: every vtable offset, field type and default comes from it
(:mod:`vgfc.read.tables`, written from it and held to it by a test), and a test reads every model
the repository carries both ways, through the generated classes and through this module, and
compares every tensor, constant byte, operator and attribute. Neither the generated package nor
numpy is imported here: a command that compiles a small model spends less than either costs.

A table of :data:`_BULK_FROM` entries or more is read in bulk, a field of all its entries at a
time, by :mod:`vgfc.read.bulk` (numpy; :meth:`Reader.each`); anything unusual in an entry (a
constant, a name or location to check, an unknown code) has that entry read on its own, and
anything out of range has the whole table read again one entry at a time (the bulk reading
raises :class:`vgfc.read.bulk.Fallback`), so that a broken file fails exactly as it does there.
Both readings decode names, texts and attribute tables with :mod:`vgfc.read.values`.
"""

from __future__ import annotations

import math
import mmap
import os
import struct
from collections.abc import Callable
from types import MappingProxyType

from vgfc.diagnostics import InputError, Location, UnsupportedError, VgfcError
from vgfc.ir import REGION_ATTRS, Data, DType, Graph, Operator, Tensor, Version
from vgfc.limits import LIMITS, quote
from vgfc.read.buffer import U8, U32, U64, Buffer, Corrupt
from vgfc.read.schema import schema
from vgfc.read.values import (
    NO_ATTRS,
    attributes,
    decode_name,
    decode_text,
    needed_bytes,
    typed_clamp,
)
from vgfc.record import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = [
    "SUPPORTED_VERSIONS_TEXT",
    "is_supported",
    "load",
    "load_flatbuffer",
    "load_with_flatbuffer",
    "loads",
]

SUPPORTED_VERSIONS_TEXT = "1.0.x (draft or not) and 1.1.0 draft"
"""TOSA versions vgfc reads: the ones the reference tools (model-converter, reference model)
accept. tosa-opt writes 1.1.0 draft; the conformance generator writes 1.0.2 draft."""


def is_supported(version: Version) -> bool:
    """True for the TOSA versions vgfc reads (see :data:`SUPPORTED_VERSIONS_TEXT`)."""
    return ((version.major, version.minor) == (1, 0) and version.patch >= 0) or (
        version == Version(1, 1, 0, True)
    )


_IDENTIFIER = b"TOSA"


def load(path: str | os.PathLike[str]) -> Graph:
    """Read a model file: a TOSA flatbuffer, or TOSA MLIR (text or bytecode, translated by
    :mod:`vgfc.read.mlir`), told apart by content. Constant data of a flatbuffer stays a view of
    the memory-mapped file, opened as every input is (:func:`vgfc.files.inputs.open_input`: a
    regular file; a FIFO or a device is refused, never waited on or read without end); ``-``
    reads standard input."""
    from vgfc.files.inputs import STDIN, STDIN_SHOWN, map_input

    name = os.fspath(path)
    data = map_input(name, what="model", stdin=True)
    return loads(data, source=STDIN_SHOWN if name == STDIN else name)


def load_with_flatbuffer(
    path: str | os.PathLike[str],
) -> tuple[Graph, bytes | bytearray | memoryview | mmap.mmap]:
    """:func:`load`, and the TOSA flatbuffer the graph was read from (for MLIR, its
    translation), the input read once (standard input cannot be read twice)."""
    from vgfc.files.inputs import STDIN, STDIN_SHOWN, map_input
    from vgfc.read.mlir import as_flatbuffer

    name = os.fspath(path)
    shown = STDIN_SHOWN if name == STDIN else name
    data = as_flatbuffer(map_input(name, what="model", stdin=True), shown)
    return loads(data, source=shown), data


def load_flatbuffer(path: str | os.PathLike[str]) -> bytes:
    """The TOSA flatbuffer of a model file (opened as :func:`load` opens it): the file's bytes,
    or for TOSA MLIR its translation. What ``--tosa-flatbuffer`` writes, and what the oracles of
    ``vgfc verify`` (other programs, which read flatbuffers) are given."""
    from vgfc.files.inputs import STDIN, STDIN_SHOWN, map_input
    from vgfc.read.mlir import as_flatbuffer

    name = os.fspath(path)
    data = map_input(name, what="model", stdin=True)
    return bytes(as_flatbuffer(data, STDIN_SHOWN if name == STDIN else name))


def loads(data: bytes | bytearray | memoryview | mmap.mmap, source: str | None = None) -> Graph:
    """Read a model held in memory: a TOSA flatbuffer, or TOSA MLIR text or bytecode (see
    :func:`load`). ``source`` names it in diagnostics."""
    where = Location(file=source)
    if len(data) == 0:
        raise InputError("file is empty, expected a TOSA flatbuffer or TOSA MLIR", where)
    from vgfc.read.mlir import as_flatbuffer

    data = as_flatbuffer(data, source if source is not None else "<model>")
    if len(data) < 8:
        raise InputError(f"file is {len(data)} bytes long, too short for a TOSA flatbuffer", where)
    ident = bytes(data[4:8])
    if ident != _IDENTIFIER:
        raise InputError(
            f"not a TOSA flatbuffer: file identifier is {ident!r}, expected {_IDENTIFIER!r} "
            "(nor TOSA MLIR: binary, without MLIR bytecode's magic)",
            where,
        )
    try:
        return Reader(data, source).graph()
    except VgfcError as e:
        raise e.at(where) from None
    except Corrupt as e:
        raise InputError(f"malformed TOSA flatbuffer (truncated or corrupt): {e}", where) from None
    except (struct.error, IndexError, ValueError, TypeError, OverflowError) as e:
        # A truncated or corrupted buffer surfaces as an out-of-range read somewhere below.
        raise InputError(
            f"malformed TOSA flatbuffer (truncated or corrupt): {type(e).__name__}: {e}", where
        ) from None


_I32_VECTORS = [struct.Struct(f"<{n}i").unpack_from for n in range(LIMITS.rank_max + 1)]

_BULK_FROM = 4000
"""Tables of tensors or operators at least this long are read in bulk (:meth:`Reader.each`):
from about there on, reading in bulk saves more than importing numpy costs."""


class Reader(Buffer):
    """One pass over the model (:func:`loads` runs one). A read out of range raises
    ``struct.error`` or :class:`~vgfc.read.buffer.Corrupt`, which :func:`loads` reports as a
    malformed file."""

    def __init__(self, buf: Any, source: str | None) -> None:
        super().__init__(buf)
        self.source = source
        self.schema = schema()
        self.strings: dict[int, str] = {}
        """Tensor names by position: a writer that shares strings has each decoded once."""
        self.fell_back = 0
        """How often a bulk reading gave up (raised :class:`vgfc.read.bulk.Fallback`; for the
        tests: never, on a well-formed file)."""

    def name(self, at: int) -> str:
        """The tensor name whose length prefix is at ``at``."""
        name = self.strings.get(at)
        if name is None:
            name = self.strings[at] = decode_name(self.raw_string(at))
        return name

    def names(self, at: int) -> tuple[str, ...]:
        """The tensor names of the ``[string]`` an offset field at ``at`` points to."""
        view = self.view
        start = at + U32(view, at)[0]
        if U32(view, start)[0] == 1:  # the common case, in short
            at = start + 4
            at += U32(view, at)[0]
            return (self.strings.get(at) or self.name(at),)
        return tuple(map(self.name, self.offsets(at)))

    def graph(self) -> Graph:
        layouts = self.schema.voffsets
        root = U32(self.view, 0)[0]
        version_at, regions_at = self.fields(root, layouts["TosaGraph"])
        version = self._version(root + version_at if version_at else None)
        regions = self.offsets(root + regions_at) if regions_at else []
        if not regions:
            raise InputError("the model has no regions (no main graph)")
        region_fields = [self.fields(r, layouts["TosaRegion"]) for r in regions]
        raw_names = [
            self.string(r + name_at) if name_at else None
            for r, (name_at, _) in zip(regions, region_fields, strict=True)
        ]
        names = tuple(
            decode_name(raw, "region name") or f"region_{i}" for i, raw in enumerate(raw_names)
        )
        index = names.index("main") if "main" in names else 0
        main_at, blocks_at = regions[index], region_fields[index][1]
        first = self.first_block(main_at, blocks_at)
        if first is None:
            raise InputError(f"region '{decode_text(raw_names[index])}' has no basic blocks")
        main = self.block(first, version)
        blocks: dict[str, Graph] = {}
        if len(names) > 1 and any(op.op in REGION_ATTRS for op in main.operators):
            # Control flow: the other regions' blocks are graphs that it runs (a region without
            # one is found missing where an op refers to it).
            for i, name in enumerate(names):
                first = self.first_block(regions[i], region_fields[i][1])
                if i != index and name not in blocks and first is not None:
                    blocks[name] = self.block(first, version)
        return replace(main, regions=names, blocks=MappingProxyType(blocks))

    def first_block(self, region: int, blocks_at: int) -> int | None:
        """The first basic block of the region at ``region``, if it has one."""
        blocks = self.offsets(region + blocks_at) if blocks_at else []
        return blocks[0] if blocks else None

    def block(self, block: int, version: Version) -> Graph:
        """The basic block at ``block``, as a graph."""
        layouts = self.schema.voffsets
        ops_at, tensors_at, inputs_at, outputs_at, shapes_at = self.fields(
            block, layouts["TosaBasicBlock"]
        )
        read = self.each(
            block + tensors_at if tensors_at else 0, lambda _, t: self.tensor(t), self.bulk_tensors
        )
        tensors = {t.name: t for t in read}
        if len(tensors) != len(read):
            _first_duplicate(read)
        for t in self.offsets(block + shapes_at) if shapes_at else ():
            self._add(tensors, self._shape(t))
        operators = self.each(block + ops_at if ops_at else 0, self.operator, self.bulk_operators)
        for i, op in enumerate(operators):
            if op.op == "CLAMP":
                operators[i] = typed_clamp(op, tensors)
            elif op.is_constant:
                _empty_constants(op, tensors)
        return Graph(
            tensors=MappingProxyType(tensors),
            operators=tuple(operators),
            inputs=self.names(block + inputs_at) if inputs_at else (),
            outputs=self.names(block + outputs_at) if outputs_at else (),
            version=version,
            source=self.source,
        )

    def each(
        self,
        at: int,
        one: Callable[[int, int], T],
        bulk: Callable[[list[int]], list[T]],
    ) -> list[T]:
        """The tables of the vector an offset field at ``at`` (0: none) points to, read by
        ``one(index, position)`` each, or by ``bulk`` all at once when there are many. Where the
        bulk reading gives up (:class:`vgfc.read.bulk.Fallback`: an offset out of range, say)
        the tables are read one by one instead, so that a broken file fails as it does there;
        anything else it raises is an error of the file or of vgfc, and goes on up."""
        tables = self.offsets(at) if at else []
        if len(tables) >= _BULK_FROM:
            from vgfc.read.bulk import Fallback

            try:
                return bulk(tables)
            except Fallback:  # read again, one by one, to find what is wrong
                self.fell_back += 1
        return [one(i, t) for i, t in enumerate(tables)]

    def bulk_tensors(self, tables: list[int]) -> list[Tensor]:
        from vgfc.read.bulk import bulk_tensors

        return bulk_tensors(self, tables)

    def bulk_operators(self, tables: list[int]) -> list[Operator]:
        from vgfc.read.bulk import bulk_operators

        return bulk_operators(self, tables)

    def _version(self, at: int | None) -> Version:
        if at is None:
            raise InputError("the model has no TOSA version")
        table = self.table(at)
        values = [
            unpack(self.view, table + where)[0] if where else default
            for (unpack, default), where in zip(
                self.schema.version,
                self.fields(table, self.schema.voffsets["Version"]),
                strict=True,
            )
        ]
        version = Version(int(values[0]), int(values[1]), int(values[2]), bool(values[3]))
        if not is_supported(version):
            raise UnsupportedError(
                f"unsupported TOSA version {version} (vgfc reads {SUPPORTED_VERSIONS_TEXT})"
            )
        return version

    @staticmethod
    def _add(tensors: dict[str, Tensor], tensor: Tensor) -> None:
        if tensor.name in tensors:
            raise InputError("tensor is defined more than once", tensor=tensor.name)
        tensors[tensor.name] = tensor

    def tensor(self, t: int) -> Tensor:
        view = self.view
        name_at, shape_at, type_at, data_at, variable_at, unranked_at, offset_at, size_at = (
            self.fields(t, self.schema.voffsets["TosaTensor"])
        )
        name = ""
        if name_at:
            at = t + name_at
            at += U32(view, at)[0]
            name = self.strings.get(at) or self.name(at)
        code = U32(view, t + type_at)[0] if type_at else 0
        dtype = self.schema.dtypes.get(code)
        if dtype is None:
            raise InputError(f"unknown element type code {code}", tensor=name)
        shape: tuple[int, ...] | None = None
        if not (unranked_at and U8(view, t + unranked_at)[0]):
            shape = ()
            if shape_at:
                start, rank = self.vector(t + shape_at)
                if rank > LIMITS.rank_max:
                    raise InputError(
                        f"rank {rank} is more than the {LIMITS.rank_max} vgfc reads", tensor=name
                    )
                shape = _I32_VECTORS[rank](view, start)
                # Dynamic dimensions (-1) count as 1: the static ones alone must fit.
                elements = math.prod(d if d >= 0 else 1 for d in shape)
                if elements > LIMITS.elements_max:
                    raise InputError(
                        f"shape {quote(list(shape))} has {elements} elements, more than the "
                        f"{LIMITS.elements_max} vgfc reads",
                        tensor=name,
                    )
        data = None
        if data_at:
            start, count = self.ubytes(t + data_at)
            if count:
                data = self._data(name, dtype, shape, start, count)
        if data is None and offset_at:
            offset = U64(view, t + offset_at)[0]
            if offset > 1:
                size = U64(view, t + size_at)[0] if size_at else 0
                self._external(name, offset, size)
                data = self._data(name, dtype, shape, offset, size)
        variable = bool(variable_at and U8(view, t + variable_at)[0])
        return Tensor(name, shape, dtype, data, variable)

    def _external(self, name: str, offset: int, size: int) -> None:
        """Check where constant data stored after the flatbuffer (models over 2 GB) lies."""
        if offset + size > self.size:
            raise InputError(
                f"constant data at offset {offset} with size {size} lies beyond the end of the "
                f"file ({self.size} bytes)",
                tensor=name,
            )

    def _data(
        self, name: str, dtype: DType, shape: tuple[int, ...] | None, start: int, size: int
    ) -> Data:
        """The ``size`` bytes at ``start`` as the value of a ``dtype`` tensor shaped ``shape``:
        a view of the buffer, checked to hold every element."""
        need = needed_bytes(name, dtype, shape, size)
        assert shape is not None
        raw = self.view[start : start + need].toreadonly()
        origin = (self.buf, start) if isinstance(self.buf, mmap.mmap) else None
        return Data(raw, dtype, shape, origin)

    def _shape(self, t: int) -> Tensor:
        name_at, rank_at, data_at = self.fields(t, self.schema.voffsets["TosaShape"])
        name = self.name(self.table(t + name_at)) if name_at else ""
        rank = U32(self.view, t + rank_at)[0] if rank_at else 0
        if rank > LIMITS.shape_values_max:
            raise InputError(
                f"a shape value of {rank} values, more than the {LIMITS.shape_values_max} vgfc "
                "reads",
                tensor=name,
            )
        data = None
        if data_at:
            start, count = self.ubytes(t + data_at)
            if count:
                data = self._data(name, DType.SHAPE, (rank,), start, count)
        return Tensor(name, (rank,), DType.SHAPE, data, is_shape=True)

    def operator(self, index: int, t: int) -> Operator:
        """The operator at ``t``, the ``index``-th of the block."""
        code_at, kind_at, attr_at, inputs_at, outputs_at, location_at = self.fields(
            t, self.schema.voffsets["TosaOperator"]
        )
        code = U32(self.view, t + code_at)[0] if code_at else 0
        op = self.schema.op_names.get(code) if code else None
        if op is None:
            raise InputError(f"unknown op code {code}", op_index=index)
        try:
            kind = U8(self.view, t + kind_at)[0] if kind_at else 0
            attrs = attributes(self, kind, t + attr_at if attr_at else 0) if kind else NO_ATTRS
            inputs = self.names(t + inputs_at) if inputs_at else ()
            outputs = self.names(t + outputs_at) if outputs_at else ()
            location = None
            if location_at:
                loc = self.table(t + location_at)
                (text_at,) = self.fields(loc, self.schema.voffsets["OpLocation"])
                location = decode_text(self.string(loc + text_at) if text_at else None) or None
            return Operator(index, op, inputs, outputs, attrs, location)
        except VgfcError as e:
            raise e.at(op_index=index, op=op) from None


def _first_duplicate(tensors: list[Tensor]) -> None:
    """Raise for the first tensor whose name an earlier one has."""
    seen: dict[str, Tensor] = {}
    for tensor in tensors:
        Reader._add(seen, tensor)


def _empty_constants(op: Operator, tensors: dict[str, Tensor]) -> None:
    """Give a constant of no elements (a CONST_SHAPE of rank 0's shape, ``[]``: ExecuTorch
    writes one for a RESHAPE to a scalar) its empty data: a flatbuffer stores no bytes for it,
    and a constant without data is otherwise an error."""
    for name in op.outputs:
        t = tensors.get(name)
        if t is not None and t.data is None and t.shape is not None and 0 in t.shape:
            tensors[name] = replace(t, data=Data(memoryview(b"").toreadonly(), t.dtype, t.shape))
