"""Reading a flatbuffer straight from its bytes: tables through their vtables, vectors and
strings, one at a time with ``struct``, or one field of many tables at once with numpy.

Why not the generated accessors of the ``flatbuffers`` package: they build a Python object per
table and run several checked reads per field, which made reading a 100,000-operator TOSA model
take seconds (see :mod:`vgfc.read.reader`). Here a field is one ``struct`` read at a computed
position, a vtable is decoded once for all the tables that share it, and the bulk reads gather a
field of thousands of tables in one numpy operation. A position past the end of the buffer
raises ``struct.error``, or :class:`Corrupt` where a slice would silently come back short; the
bulk reads raise :class:`Fallback` on anything out of range instead, so that a caller can read
the tables one at a time and fail the way that does.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from vgfc.ir import Array

__all__ = ["I32", "U8", "U16", "U32", "U64", "Buffer", "Corrupt", "Fallback"]


class Corrupt(Exception):
    """An offset of the flatbuffer points outside the buffer."""


class Fallback(Exception):
    """A bulk read met something it leaves to reading the tables one at a time."""


U8 = struct.Struct("<B").unpack_from
U16 = struct.Struct("<H").unpack_from
U32 = struct.Struct("<I").unpack_from
I32 = struct.Struct("<i").unpack_from
U64 = struct.Struct("<Q").unpack_from
U32_VECTORS = [struct.Struct(f"<{n}I").unpack_from for n in range(17)]


class Buffer:
    """A flatbuffer held in ``buf`` (bytes, bytearray, memoryview or mmap). Positions are byte
    offsets into it; an "offset field at ``at``" is a uoffset stored at ``at``."""

    def __init__(self, buf: Any) -> None:
        self.buf = buf
        self.view = memoryview(buf)
        self.size = len(buf)
        self.vtables: dict[tuple[int, tuple[int, ...]], tuple[int, ...]] = {}
        self._bytes: Array | None = None
        self._typed: dict[str, Array] = {}

    # -- one at a time

    def fields(self, table: int, voffsets: tuple[int, ...]) -> tuple[int, ...]:
        """Where each field lies in the table at ``table`` (0: absent), from its vtable."""
        vtable = table - I32(self.view, table)[0]
        found = self.vtables.get((vtable, voffsets))
        if found is None:
            found = self._vtable(table, vtable, voffsets)
        return found

    def _vtable(self, table: int, vtable: int, voffsets: tuple[int, ...]) -> tuple[int, ...]:
        """Decode the vtable at ``vtable`` (of the table at ``table``) for ``voffsets``, once."""
        if vtable < 0 or vtable + 4 > self.size:
            raise Corrupt(f"table at {table} has its vtable at {vtable}, outside the buffer")
        length = U16(self.view, vtable)[0]
        found = tuple(U16(self.view, vtable + v)[0] if v < length else 0 for v in voffsets)
        self.vtables[(vtable, voffsets)] = found
        return found

    def table(self, at: int) -> int:
        """The table an offset field at ``at`` points to."""
        return at + int(U32(self.view, at)[0])

    def vector(self, at: int) -> tuple[int, int]:
        """(start of the elements, element count) of the vector an offset field points to."""
        start = at + U32(self.view, at)[0]
        return start + 4, U32(self.view, start)[0]

    def offsets(self, at: int) -> list[int]:
        """The targets of a vector of offsets (tables or strings) an offset field points to."""
        start, count = self.vector(at)
        if start + 4 * count > self.size:
            raise Corrupt(f"vector of {count} offsets at {start} runs past the end of the buffer")
        if count < len(U32_VECTORS):
            offs = U32_VECTORS[count](self.view, start)
            return [start + 4 * i + off for i, off in enumerate(offs)]
        # Each offset is relative to where it is stored.
        targets = np.frombuffer(self.buf, "<u4", count, start).astype(np.int64)
        targets += np.arange(start, start + 4 * count, 4, dtype=np.int64)
        positions: list[int] = targets.tolist()
        return positions

    def raw_string(self, at: int) -> bytes:
        """The bytes of a string whose length prefix is at ``at``."""
        n = U32(self.view, at)[0]
        if at + 4 + n > self.size:
            raise Corrupt(f"string of {n} bytes at {at} runs past the end of the buffer")
        data = self.buf[at + 4 : at + 4 + n]
        return data if type(data) is bytes else bytes(data)

    def string(self, at: int) -> bytes:
        """The string an offset field at ``at`` points to."""
        return self.raw_string(at + U32(self.view, at)[0])

    def all_bytes(self) -> Array:
        """The whole buffer as a read-only uint8 array (views of it are views of the buffer)."""
        if self._bytes is None:
            array = np.frombuffer(self.buf, dtype=np.uint8)
            array.flags.writeable = False
            self._bytes = array
        return self._bytes

    def ubytes(self, at: int) -> Array:
        """The elements of the ``[ubyte]`` vector an offset field at ``at`` points to."""
        start, count = self.vector(at)
        if start + count > self.size:
            raise Corrupt(f"vector of {count} bytes at {start} runs past the end of the buffer")
        return self.all_bytes()[start : start + count]

    # -- many at once

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
        rows = [self._vtable(0, int(v), voffsets) for v in unique.tolist()]
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
