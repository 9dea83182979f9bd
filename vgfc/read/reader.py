"""TOSA flatbuffer -> :class:`vgfc.ir.Graph`.

Reads the main block of the main region, keeps constant data as read-only numpy views of the
input buffer (the file is memory-mapped, so nothing is copied until a later stage needs it) and
turns every structural problem into an :class:`~vgfc.diagnostics.InputError` that names the file
and the operator or tensor. Names, string attributes, ranks, element counts and shape values are
held to :data:`vgfc.limits.LIMITS` as they are read, so no later stage meets a value it cannot
hold.

Why the fields are decoded here rather than through the generated ``tosa`` classes: those build
a Python object per table and run several checked ``struct`` reads per field, so a
100,000-operator model took 4.6 s to read. This reader walks the flatbuffer itself
(:mod:`vgfc.read.buffer`): one read per field, each vtable decoded once, and the tensor and
operator tables of a big model read a field of all their entries at a time, so that the only
Python objects made per entry are the IR's own. The generated package stays the specification:
every vtable offset, field type and default comes from it (:mod:`vgfc.read.schema`), and a test
reads every model the repository carries both ways, through the generated classes and through
this module, and compares every tensor, constant byte, operator and attribute.

A table of many entries is read in bulk (:meth:`_Reader.each`); anything unusual in an entry (a
constant, a name or location to check, an unknown code) has that entry read on its own, and
anything out of range has the whole table read again one entry at a time, so that a broken file
fails exactly as it does there.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import mmap
import os
import struct
from collections.abc import Callable
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np

from vgfc.diagnostics import InputError, Location, UnsupportedError, VgfcError
from vgfc.dtypes import numpy_dtype
from vgfc.ir import Array, AttrValue, DType, Graph, Operator, Tensor, Version
from vgfc.limits import LIMITS, quote
from vgfc.read.buffer import U8, U32, U64, Buffer, Corrupt
from vgfc.read.schema import STRUCTURE, attribute_layout, schema

__all__ = ["SUPPORTED_VERSIONS_TEXT", "is_supported", "load", "loads"]

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
    """Read a ``.tosa`` file. Constant data stays a view of the memory-mapped file."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            buf: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=name) from None
    return loads(buf, source=name)


def loads(data: bytes | bytearray | memoryview | mmap.mmap, source: str | None = None) -> Graph:
    """Read a TOSA flatbuffer held in memory. ``source`` names it in diagnostics."""
    where = Location(file=source)
    if len(data) == 0:
        raise InputError("file is empty, expected a TOSA flatbuffer", where)
    if len(data) < 8:
        raise InputError(f"file is {len(data)} bytes long, too short for a TOSA flatbuffer", where)
    ident = bytes(data[4:8])
    if ident != _IDENTIFIER:
        raise InputError(
            f"not a TOSA flatbuffer: file identifier is {ident!r}, expected {_IDENTIFIER!r}", where
        )
    try:
        return _Reader(data, source).graph()
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

_BULK_FROM = 64
"""Tables of tensors or operators at least this long are read in bulk (:meth:`_Reader.each`)."""

T = TypeVar("T")

_NO_ATTRS: MappingProxyType[str, AttrValue] = MappingProxyType({})


class _Reader(Buffer):
    """One pass over the model. A read out of range raises ``struct.error`` or
    :class:`~vgfc.read.buffer.Corrupt`, which :func:`loads` reports as a malformed file."""

    def __init__(self, buf: Any, source: str | None) -> None:
        super().__init__(buf)
        self.source = source
        self.schema = schema()
        self.strings: dict[int, str] = {}
        """Tensor names by position: a writer that shares strings has each decoded once."""
        self.fell_back = 0
        """How often a bulk reading gave up (for the tests: never, on a well-formed file)."""

    def name(self, at: int) -> str:
        """The tensor name whose length prefix is at ``at``."""
        name = self.strings.get(at)
        if name is None:
            name = self.strings[at] = _name(self.raw_string(at))
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
        names = tuple(_name(raw, "region name") or f"region_{i}" for i, raw in enumerate(raw_names))
        index = names.index("main") if "main" in names else 0
        main, (_, blocks_at) = regions[index], region_fields[index]
        blocks = self.offsets(main + blocks_at) if blocks_at else []
        if not blocks:
            raise InputError(f"region '{_text(raw_names[index])}' has no basic blocks")
        block = blocks[0]
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
                operators[i] = self._typed_clamp(op, tensors)
        return Graph(
            tensors=MappingProxyType(tensors),
            operators=tuple(operators),
            inputs=self.names(block + inputs_at) if inputs_at else (),
            outputs=self.names(block + outputs_at) if outputs_at else (),
            version=version,
            source=self.source,
            regions=names,
        )

    def each(
        self,
        at: int,
        one: Callable[[int, int], T],
        bulk: Callable[[list[int]], list[T]],
    ) -> list[T]:
        """The tables of the vector an offset field at ``at`` (0: none) points to, read by
        ``one(index, position)`` each, or by ``bulk`` all at once when there are many. Whatever
        surprises the bulk reading (an offset out of range, say) has the tables read one by one
        instead, so that a broken file fails as it does there."""
        tables = self.offsets(at) if at else []
        if len(tables) >= _BULK_FROM:
            try:
                return bulk(tables)
            except VgfcError:
                raise
            except Exception:  # read again, one by one, to find what is wrong
                self.fell_back += 1
        return [one(i, t) for i, t in enumerate(tables)]

    # -- the two big tables in bulk

    def bulk_tensors(self, tables: list[int]) -> list[Tensor]:
        """The tensors at ``tables``: what :meth:`tensor` reads, with the fields of all tables
        read at once; a tensor with anything unusual (constant data, an unranked or too large
        shape, an unknown type, a name to check) is read by :meth:`tensor` itself, in order,
        so that errors come as they do there."""
        t = np.array(tables, np.int64)
        f = self.columns(t, self.schema.voffsets["TosaTensor"]).T
        name_at, shape_at, type_at, data_at, variable_at, unranked_at, offset_at = f[:7]
        codes = self.present(t, type_at, "<u4")
        plain = np.isin(codes, list(self.schema.dtypes))
        plain &= self.present(t, unranked_at, "<u1") == 0
        plain &= self.present(t, offset_at, "<u8") <= 1
        plain &= self.counts(np.where(data_at != 0, t + data_at, 0))[1] == 0
        variables = (self.present(t, variable_at, "<u1") != 0).tolist()
        named = np.flatnonzero(name_at)
        fields = t[named] + name_at[named]
        found, bad = self.texts(fields + self.gather(fields, "<u4"), LIMITS.name_length_max)
        plain[named[bad]] = False
        if named.size == t.size:
            names = found
        else:  # a tensor without a name is named ""
            every = np.full(t.size, "", object)
            every[named] = found
            names = every.tolist()
        shapes = np.where(shape_at != 0, t + shape_at, 0)
        # A rank over the limit is left to `tensor`, which refuses it: its values are not read.
        ranked = self.counts(shapes)[1] <= LIMITS.rank_max
        plain &= ranked
        dims, bounds = self.vectors(shapes, ranked)
        values = self.gather(dims, "<i4")
        # Shapes whose element count comes anywhere near the limit are checked by `tensor`.
        log = np.zeros(values.size + 1)
        np.cumsum(np.log2(np.maximum(values, 1)), out=log[1:])
        plain &= log[bounds[1:]] - log[bounds[:-1]] < math.log2(LIMITS.elements_max) - 1
        dims_of = _tuples(values.tolist(), bounds)
        types = _by_code(self.schema.dtype_table, codes)
        out = list(map(Tensor, names, dims_of, types, itertools.repeat(None), variables))
        for i in np.flatnonzero(~plain).tolist():
            out[i] = self.tensor(tables[i])
        return out

    def bulk_operators(self, tables: list[int]) -> list[Operator]:
        """The operators at ``tables``, as :meth:`operator` reads them, with the fields of all
        tables read at once; one with anything unusual is read by :meth:`operator` itself."""
        t = np.array(tables, np.int64)
        f = self.columns(t, self.schema.voffsets["TosaOperator"]).T
        code_at, kind_at, attr_at, inputs_at, outputs_at, location_at = f
        codes = self.present(t, code_at, "<u4")
        op_names = self.schema.op_names
        plain = np.isin(codes, [c for c in op_names if c])
        longest = LIMITS.name_length_max
        inputs, input_bounds, bad = self.string_vectors(
            np.where(inputs_at != 0, t + inputs_at, 0), longest
        )
        plain &= ~bad
        outputs, output_bounds, bad = self.string_vectors(
            np.where(outputs_at != 0, t + outputs_at, 0), longest
        )
        plain &= ~bad
        locations, bad = self.bulk_locations(t, location_at)
        plain &= ~bad
        kinds = self.present(t, kind_at, "<u1")
        attrs_at = np.where(attr_at != 0, t + attr_at, 0).tolist()
        ops = _by_code(self.schema.op_name_table, codes)
        attrs = [_NO_ATTRS] * t.size
        replaced: dict[int, Operator] = {}
        # In order, so that the first error is the one the item-by-item reading meets first.
        special = np.flatnonzero(~plain | (kinds != 0))
        for index, kind, usual in zip(
            special.tolist(), kinds[special].tolist(), plain[special].tolist(), strict=True
        ):
            if not usual:
                replaced[index] = self.operator(index, tables[index])
                continue
            try:
                attrs[index] = self.attributes(kind, attrs_at[index])
            except VgfcError as e:
                raise e.at(op_index=index, op=ops[index]) from None
        ins, outs = _tuples(inputs, input_bounds), _tuples(outputs, output_bounds)
        out = list(map(Operator, range(t.size), ops, ins, outs, attrs, locations))
        for index, op in replaced.items():
            out[index] = op
        return out

    def bulk_locations(self, t: Array, location_at: Array) -> tuple[list[str | None], Array]:
        """The location texts of the operators at ``t`` whose location fields lie at
        ``location_at`` (0: none), as :meth:`operator` reads them (``None`` where absent or
        empty), and which operators to leave to it (a text that is not UTF-8)."""
        texts: list[str | None] = [None] * t.size
        bad = np.zeros(t.size, bool)
        located = np.flatnonzero(location_at)
        if located.size == 0:
            return texts, bad
        fields = t[located] + location_at[located]
        tables = fields + self.gather(fields, "<u4")
        (text_at,) = self.columns(tables, self.schema.voffsets["OpLocation"]).T
        have = np.flatnonzero(text_at)
        fields = tables[have] + text_at[have]
        # No length limit: a location is shown, never kept as a name.
        found, unreadable = self.texts(fields + self.gather(fields, "<u4"), self.size)
        located = located[have]
        bad[located[unreadable]] = True
        for index, text in zip(located.tolist(), found, strict=True):
            texts[index] = text or None
        return texts, bad

    def _version(self, at: int | None) -> Version:
        if at is None:
            raise InputError("the model has no TOSA version")
        table = self.table(at)
        fields = [self.schema.fields[f"Version.{m}"] for m in STRUCTURE["Version"]]
        values = [
            f.flags.py_type(f.flags.packer_type.unpack_from(self.view, table + where)[0])
            if where
            else f.default
            for f, where in zip(
                fields, self.fields(table, self.schema.voffsets["Version"]), strict=True
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
            raw = self.ubytes(t + data_at)
            if raw.size:
                data = _decode(name, dtype, shape, raw)
        if data is None and offset_at:
            offset = U64(view, t + offset_at)[0]
            if offset > 1:
                size = U64(view, t + size_at)[0] if size_at else 0
                data = _decode(name, dtype, shape, self._external(name, offset, size))
        variable = bool(variable_at and U8(view, t + variable_at)[0])
        return Tensor(name, shape, dtype, data, variable)

    def _external(self, name: str, offset: int, size: int) -> Array:
        """Constant data stored after the flatbuffer (models over 2 GB)."""
        if offset + size > self.size:
            raise InputError(
                f"constant data at offset {offset} with size {size} lies beyond the end of the "
                f"file ({self.size} bytes)",
                tensor=name,
            )
        return self.all_bytes()[offset : offset + size]

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
            raw = self.ubytes(t + data_at)
            if raw.size:
                data = _decode(name, DType.SHAPE, (rank,), raw)
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
            attrs = self.attributes(kind, t + attr_at if attr_at else 0) if kind else _NO_ATTRS
            inputs = self.names(t + inputs_at) if inputs_at else ()
            outputs = self.names(t + outputs_at) if outputs_at else ()
            location = None
            if location_at:
                loc = self.table(t + location_at)
                (text_at,) = self.fields(loc, self.schema.voffsets["OpLocation"])
                location = _text(self.string(loc + text_at) if text_at else None) or None
            return Operator(index, op, inputs, outputs, attrs, location)
        except VgfcError as e:
            raise e.at(op_index=index, op=op) from None

    def attributes(self, kind: int, at: int) -> MappingProxyType[str, AttrValue]:
        """The fields of the attribute table (of union type ``kind``) an offset at ``at`` (0:
        none) points to."""
        type_name = self.schema.attribute_names.get(kind)
        if type_name is None:
            raise InputError(f"unknown attribute type code {kind}")
        voffsets, layout = attribute_layout(type_name)
        if not at:
            return _NO_ATTRS
        table = self.table(at)
        view = self.view
        attrs: dict[str, AttrValue] = {}
        for f, where in zip(layout, self.fields(table, voffsets), strict=True):
            value: AttrValue
            if f.kind == "scalar":
                if not where:
                    value = f.default
                else:
                    assert f.unpack is not None
                    value = f.unpack(view, table + where)[0]
                    if f.convert is not None:
                        value = f.convert(value)
                if f.enum is not None and isinstance(value, int) and not isinstance(value, bool):
                    if value not in f.enum:
                        raise InputError(f"unknown enum value {value}", key=f.name)
                    value = f.enum[value]
            elif f.kind == "string":
                value = _name(self.string(table + where), "", f.name) if where else None
            elif not where:
                value = b""  # what the generated code gives for an absent vector
            elif f.kind == "bytes":
                # Raw value bytes (CLAMP bounds, CUSTOM implementation_attrs): decoded later,
                # where the element type is known.
                value = self.ubytes(table + where).tobytes()
            else:
                start, count = self.vector(table + where)
                if start + count * f.size > self.size:
                    raise Corrupt(f"vector of {count} values at {start} runs past the buffer")
                value = struct.unpack_from(f"<{count}{f.code}", view, start)
            attrs[f.name] = value
        return MappingProxyType(attrs)

    @staticmethod
    def _typed_clamp(op: Operator, tensors: dict[str, Tensor]) -> Operator:
        """CLAMP bounds are raw bytes of the input's element type: read them as numbers."""
        if not op.inputs or op.inputs[0] not in tensors:
            return op
        dtype = tensors[op.inputs[0]].dtype
        attrs = dict(op.attrs)
        for key in ("min_val", "max_val"):
            raw = attrs.get(key)
            if isinstance(raw, bytes) and raw:
                try:
                    value = _decode(op.outputs[0] if op.outputs else "", dtype, (), _raw_bytes(raw))
                except InputError as e:
                    raise e.at(op.where(), key=key) from None
                attrs[key] = value.item() if value.size == 1 else value
        return dataclasses.replace(op, attrs=MappingProxyType(attrs))


def _by_code(table: Array, codes: Array) -> list[Any]:
    """``table[code]`` for each of ``codes``; ``table[0]`` for a code past its end (the caller
    reads such an entry on its own, and refuses it)."""
    found: list[Any] = table[np.where(codes < table.size, codes, 0)].tolist()
    return found


def _tuples(flat: list[T], bounds: Array) -> list[tuple[T, ...]]:
    """``tuple(flat[bounds[i]:bounds[i + 1]])`` for each ``i``: the shapes of tensors, the
    inputs or outputs of operators, read as one flat list."""
    sizes = np.diff(bounds)
    if sizes.size and not (sizes - sizes[0]).any():
        # All of one length (every op one output, every shape one rank), as is usual: zip
        # takes that many at a time from a single iterator, faster than a slice per tuple.
        size = int(sizes[0])
        return list(zip(*[iter(flat)] * size, strict=True)) if size else [()] * sizes.size
    items = tuple(flat)
    return [items[a:b] for a, b in itertools.pairwise(bounds.tolist())]


def _first_duplicate(tensors: list[Tensor]) -> None:
    """Raise for the first tensor whose name an earlier one has."""
    seen: dict[str, Tensor] = {}
    for tensor in tensors:
        _Reader._add(seen, tensor)


def _raw_bytes(data: bytes) -> Array:
    return np.frombuffer(data, dtype=np.uint8)


def _name(value: bytes | None, what: str = "tensor name", key: str | None = None) -> str:
    """A string that names something (tensor, region, custom operator): at most
    ``LIMITS.name_length_max`` characters."""
    text = _text(value)
    if len(text) > LIMITS.name_length_max:
        shown = f"{what} '{quote(text)}'" if what else f"'{quote(text)}'"
        raise InputError(
            f"{shown} is longer than the {LIMITS.name_length_max} characters vgfc reads", key=key
        )
    return text


def _text(value: bytes | None) -> str:
    if value is None:
        return ""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"string {value[:40]!r} is not valid UTF-8") from None


def _decode(name: str, dtype: DType, shape: tuple[int, ...] | None, raw: Array) -> Array:
    """Interpret little-endian constant bytes as ``dtype`` elements shaped ``shape``."""
    if shape is None:
        raise InputError("an unranked tensor cannot hold constant data", tensor=name)
    # With no dynamic (negative) dimension the count is well inside int64 (`tensor` held it to
    # LIMITS.elements_max), and math.prod is the same as numpy's product at a tenth of the cost.
    static = min(shape, default=0) >= 0
    count = math.prod(shape) if static else int(np.prod(shape, dtype=np.int64))
    bits = dtype.storage_bits
    need = (count * bits + 7) // 8
    if raw.size < need:
        raise InputError(
            f"constant data has {raw.size} bytes, "
            f"shape {list(shape)} of {dtype.value} needs {need}",
            tensor=name,
        )
    raw = raw[:need]
    if dtype is DType.INT48:
        # Six little-endian bytes per element, sign-extended into int64 (a copy: INT48 is rare).
        padded = np.zeros((count, 8), np.uint8)
        padded[:, :6] = raw.reshape(count, 6)
        padded[:, 6:] = np.where(padded[:, 5:6] & 0x80, 0xFF, 0)
        values = padded.view("<i8").reshape(count)
    elif dtype is DType.INT4:
        # Two elements per byte, low nibble first, sign-extended (a copy).
        nibbles = np.stack([raw & 0x0F, raw >> 4], axis=-1).reshape(-1)[:count].astype(np.int8)
        values = np.where(nibbles > 7, nibbles - 16, nibbles).astype(np.int8)
    else:
        little = numpy_dtype(dtype)
        if little is None:
            # Packed sub-byte float formats of the 1.1 draft (FP6, FP4, MXINT8): kept as raw bytes.
            return raw
        values = raw.view(little)
    return values.reshape(shape)
