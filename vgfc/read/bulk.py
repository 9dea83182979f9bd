"""Reading the two big tables of a large model (tensors, operators) a field of all tables at a
time, with numpy.

Why: the reader (:mod:`vgfc.read.reader`) reads one table at a time with ``struct``; on a
100,000-operator model that takes about 4 s, read in bulk about 1.5 s (numbers of this 2-core
machine: ``python benchmarks/bench_reader.py``). numpy costs about 0.1 s to import, more than a
whole small model takes to read, so this module, and numpy with it, is imported only for a table
of at least ``vgfc.read.reader._BULK_FROM`` entries, where reading in bulk pays for the import.

What is left to the reader, and how:

- An entry with anything unusual (constant data, an unknown code, a name or location to check,
  an attribute table) is read by the reader's own :meth:`~vgfc.read.reader.Reader.tensor` or
  :meth:`~vgfc.read.reader.Reader.operator`, in order, and whatever that raises goes on up: it is
  what reading the table one entry at a time raises first.
- A layout the bulk reads deliberately do not handle raises :class:`Fallback`, and the reader
  reads the whole table again one entry at a time, so that a broken file fails exactly as it does
  there: a vtable, an offset, a vector or a string out of range of the buffer, vectors with more
  elements than the buffer holds, and names that overlap (shared strings, or a hostile file).

Anything else raised here is a bug, and is not caught: no error turns into a silent slow path.
"""

from __future__ import annotations

import itertools
import math
import struct
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from vgfc.diagnostics import VgfcError
from vgfc.ir import Array, Operator, Tensor
from vgfc.limits import LIMITS
from vgfc.read.buffer import Buffer, Corrupt
from vgfc.read.values import NO_ATTRS, attributes

if TYPE_CHECKING:
    from vgfc.read.reader import Reader

__all__ = ["Fallback", "bulk_operators", "bulk_tensors"]

T = TypeVar("T")


class Fallback(Exception):
    """A bulk read met a layout it leaves to reading the tables one at a time (the module
    docstring lists them)."""


class _Columns:
    """The buffer of a reader as numpy arrays, and the reads of one field of many tables."""

    def __init__(self, reader: Buffer) -> None:
        self.reader = reader
        self.buf = reader.buf
        self.size = reader.size
        self._vtable = reader.decode_vtable
        array = np.frombuffer(self.buf, dtype=np.uint8)
        array.flags.writeable = False
        self._bytes = array
        self._typed: dict[str, Array] = {}

    def all_bytes(self) -> Array:
        """The whole buffer as a read-only uint8 array."""
        return self._bytes

    def gather(self, positions: Array, fmt: str) -> Array:
        """The little-endian ``fmt`` values at each of ``positions`` (any alignment), as int64
        (uint64 for ``<u8``)."""
        width = np.dtype(fmt).itemsize
        wide = np.uint64 if fmt == "<u8" else np.int64
        if positions.size == 0:
            return np.zeros(0, wide)
        if int(positions.min()) < 0 or int(positions.max()) + width > self.size:
            raise Fallback
        if width == 1:
            values: Array = self.all_bytes()[positions]
        elif not (positions % width).any():  # aligned, as writers place them
            values = self.typed(fmt)[positions // width]
        else:
            values = self.all_bytes()[positions[:, None] + np.arange(width)]
            values = values.view(fmt).reshape(-1)
        return values.astype(wide)

    def typed(self, fmt: str) -> Array:
        """The buffer as an array of ``fmt`` elements (the last few bytes left out)."""
        found = self._typed.get(fmt)
        if found is None:
            width = np.dtype(fmt).itemsize
            found = self._typed[fmt] = np.frombuffer(self.buf, fmt, self.size // width)
        return found

    def present(self, tables: Array, where: Array, fmt: str, default: int = 0) -> Array:
        """A scalar field of each table: its value where set (``where`` > 0), else ``default``."""
        mask = where != 0
        values = self.gather(tables[mask] + where[mask], fmt)
        out: Array = np.full(tables.size, default, values.dtype)
        out[mask] = values
        return out

    def columns(self, tables: Array, voffsets: tuple[int, ...]) -> Array:
        """``fields`` of many tables at once: one row of field positions per table."""
        vtables = tables - self.gather(tables, "<i4")
        unique, inverse = np.unique(vtables, return_inverse=True)
        try:
            rows = [self._vtable(0, int(v), voffsets) for v in unique.tolist()]
        except (Corrupt, struct.error):  # a vtable out of range: which table is first to say
            raise Fallback from None
        layout = np.array(rows, np.int64).reshape(len(rows), len(voffsets))
        per_table: Array = layout[inverse.reshape(-1)]
        return per_table

    def counts(self, fields: Array) -> tuple[Array, Array]:
        """(first element, element count) of the vectors that offset fields at ``fields`` (0: the
        vector is absent, count 0) point to."""
        mask = fields != 0
        starts = np.zeros(fields.size, np.int64)
        starts[mask] = fields[mask] + self.gather(fields[mask], "<u4")
        counts = np.zeros(fields.size, np.int64)
        counts[mask] = self.gather(starts[mask], "<u4")
        return starts + 4, counts

    def vectors(self, fields: Array, keep: Array | None = None) -> tuple[Array, Array]:
        """(element positions, bounds) of the vectors of 4-byte elements that offset fields at
        ``fields`` point to: vector ``i`` has elements ``bounds[i]:bounds[i + 1]``. Where
        ``keep`` is false a vector counts as empty."""
        starts, counts = self.counts(fields)
        if keep is not None:
            counts[~keep] = 0
        bounds = np.zeros(fields.size + 1, np.int64)
        np.cumsum(counts, out=bounds[1:])
        total = int(bounds[-1])
        if total > self.size // 4:
            raise Fallback
        first = np.repeat(starts - 4 * bounds[:-1], counts)
        return first + 4 * np.arange(total, dtype=np.int64), bounds

    def texts(self, strings: Array, longest: int) -> tuple[list[str], Array]:
        """The strings whose length prefixes are at ``strings``, as text, and which of them to
        leave to a one-at-a-time reading (not UTF-8, or over ``longest`` bytes): those are ``""``.
        """
        lengths = self.gather(strings, "<u4")
        starts = strings + 4
        if lengths.size and int((starts + lengths).max()) > self.size:
            raise Fallback
        bad = lengths > longest  # bytes: perhaps more characters than that
        lengths[bad] = 0
        edges = np.zeros(lengths.size + 1, np.int64)
        np.cumsum(lengths, out=edges[1:])
        if int(edges[-1]) > self.size:  # names that overlap: shared strings, or a hostile file
            raise Fallback
        # All strings in one, each followed by a NUL: when no string holds a NUL itself, and all
        # are ASCII, as names nearly always are, one split of the decoded text gives them all,
        # without a slice per string.
        count, total = lengths.size, int(edges[-1])
        each = np.arange(total, dtype=np.int64)
        joined = np.zeros(total + count, np.uint8)
        joined[each + np.repeat(np.arange(count, dtype=np.int64), lengths)] = self.all_bytes()[
            each + np.repeat(starts - edges[:-1], lengths)
        ]
        blob = joined.tobytes()
        if blob.isascii():
            names = blob.decode("ascii").split("\0")
            if len(names) == count + 1:
                names.pop()
                return names, bad
        first = edges[:-1] + np.arange(count, dtype=np.int64)  # where each lies in the blob
        names = []
        cuts = zip(first.tolist(), (first + lengths).tolist(), strict=True)
        for i, (a, b) in enumerate(cuts):
            try:
                names.append(blob[a:b].decode("utf-8"))
            except UnicodeDecodeError:
                names.append("")
                bad[i] = True
        return names, bad

    def string_vectors(self, fields: Array, longest: int) -> tuple[list[str], Array, Array]:
        """The strings of the ``[string]`` vectors that offset fields at ``fields`` point to, as
        one flat list of :meth:`texts`; the bounds of each vector in that list; and which vectors
        hold a string :meth:`texts` leaves to a one-at-a-time reading."""
        elements, bounds = self.vectors(fields)
        names, bad = self.texts(elements + self.gather(elements, "<u4"), longest)
        seen = np.zeros(len(names) + 1, np.int64)
        np.cumsum(bad, out=seen[1:])
        return names, bounds, seen[bounds[1:]] != seen[bounds[:-1]]


def bulk_tensors(self: Reader, tables: list[int]) -> list[Tensor]:
    """The tensors at ``tables``: what :meth:`tensor` reads, with the fields of all tables
    read at once; a tensor with anything unusual (constant data, an unranked or too large
    shape, an unknown type, a name to check) is read by :meth:`tensor` itself, in order,
    so that errors come as they do there."""
    c = _Columns(self)
    t = np.array(tables, np.int64)
    f = c.columns(t, self.schema.voffsets["TosaTensor"]).T
    name_at, shape_at, type_at, data_at, variable_at, unranked_at, offset_at = f[:7]
    codes = c.present(t, type_at, "<u4")
    plain = np.isin(codes, list(self.schema.dtypes))
    plain &= c.present(t, unranked_at, "<u1") == 0
    plain &= c.present(t, offset_at, "<u8") <= 1
    plain &= c.counts(np.where(data_at != 0, t + data_at, 0))[1] == 0
    variables = (c.present(t, variable_at, "<u1") != 0).tolist()
    named = np.flatnonzero(name_at)
    fields = t[named] + name_at[named]
    found, bad = c.texts(fields + c.gather(fields, "<u4"), LIMITS.name_length_max)
    plain[named[bad]] = False
    if named.size == t.size:
        names = found
    else:  # a tensor without a name is named ""
        every = np.full(t.size, "", object)
        every[named] = found
        names = every.tolist()
    shapes = np.where(shape_at != 0, t + shape_at, 0)
    # A rank over the limit is left to `tensor`, which refuses it: its values are not read.
    ranked = c.counts(shapes)[1] <= LIMITS.rank_max
    plain &= ranked
    dims, bounds = c.vectors(shapes, ranked)
    values = c.gather(dims, "<i4")
    # Shapes whose element count comes anywhere near the limit are checked by `tensor`.
    log = np.zeros(values.size + 1)
    np.cumsum(np.log2(np.maximum(values, 1)), out=log[1:])
    plain &= log[bounds[1:]] - log[bounds[:-1]] < math.log2(LIMITS.elements_max) - 1
    dims_of = _tuples(values.tolist(), bounds)
    types = _by_code(np.array(self.schema.dtype_list, object), codes)
    out = list(map(Tensor, names, dims_of, types, itertools.repeat(None), variables))
    for i in np.flatnonzero(~plain).tolist():
        out[i] = self.tensor(tables[i])
    return out


def bulk_operators(self: Reader, tables: list[int]) -> list[Operator]:
    """The operators at ``tables``, as :meth:`operator` reads them, with the fields of all
    tables read at once; one with anything unusual is read by :meth:`operator` itself."""
    c = _Columns(self)
    t = np.array(tables, np.int64)
    f = c.columns(t, self.schema.voffsets["TosaOperator"]).T
    code_at, kind_at, attr_at, inputs_at, outputs_at, location_at = f
    codes = c.present(t, code_at, "<u4")
    op_names = self.schema.op_names
    plain = np.isin(codes, [c for c in op_names if c])
    longest = LIMITS.name_length_max
    inputs, input_bounds, bad = c.string_vectors(
        np.where(inputs_at != 0, t + inputs_at, 0), longest
    )
    plain &= ~bad
    outputs, output_bounds, bad = c.string_vectors(
        np.where(outputs_at != 0, t + outputs_at, 0), longest
    )
    plain &= ~bad
    locations, bad = _bulk_locations(self, c, t, location_at)
    plain &= ~bad
    kinds = c.present(t, kind_at, "<u1")
    attrs_at = np.where(attr_at != 0, t + attr_at, 0).tolist()
    ops = _by_code(np.array(self.schema.op_name_list, object), codes)
    attrs = [NO_ATTRS] * t.size
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
            attrs[index] = attributes(self, kind, attrs_at[index])
        except VgfcError as e:
            raise e.at(op_index=index, op=ops[index]) from None
    ins, outs = _tuples(inputs, input_bounds), _tuples(outputs, output_bounds)
    out = list(map(Operator, range(t.size), ops, ins, outs, attrs, locations))
    for index, op in replaced.items():
        out[index] = op
    return out


def _bulk_locations(
    self: Reader, c: _Columns, t: Array, location_at: Array
) -> tuple[list[str | None], Array]:
    """The location texts of the operators at ``t`` whose location fields lie at
    ``location_at`` (0: none), as :meth:`operator` reads them (``None`` where absent or
    empty), and which operators to leave to it (a text that is not UTF-8)."""
    texts: list[str | None] = [None] * t.size
    bad = np.zeros(t.size, bool)
    located = np.flatnonzero(location_at)
    if located.size == 0:
        return texts, bad
    fields = t[located] + location_at[located]
    tables = fields + c.gather(fields, "<u4")
    (text_at,) = c.columns(tables, self.schema.voffsets["OpLocation"]).T
    have = np.flatnonzero(text_at)
    fields = tables[have] + text_at[have]
    # No length limit: a location is shown, never kept as a name.
    found, unreadable = c.texts(fields + c.gather(fields, "<u4"), c.size)
    located = located[have]
    bad[located[unreadable]] = True
    for index, text in zip(located.tolist(), found, strict=True):
        texts[index] = text or None
    return texts, bad


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
