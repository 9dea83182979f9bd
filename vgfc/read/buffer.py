"""Reading a flatbuffer straight from its bytes: tables through their vtables, vectors and
strings, with ``struct`` (:mod:`vgfc.read.bulk` reads one field of many tables at once).

Why not the generated accessors of the ``flatbuffers`` package: they build a Python object per
table and run several checked reads per field, which made reading a 100,000-operator TOSA model
take seconds (see :mod:`vgfc.read.reader`). Here a field is one ``struct`` read at a computed
position, a vtable is decoded once for all the tables that share it, and the bulk reads gather a
field of thousands of tables in one numpy operation. A position past the end of the buffer
raises ``struct.error``, or :class:`Corrupt` where a slice would silently come back short; the
bulk reads raise :class:`vgfc.read.bulk.Fallback` on anything out of range instead, so that a
caller can read the tables one at a time and fail the way that does.
"""

from __future__ import annotations

import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["I32", "U8", "U16", "U32", "U64", "Buffer", "Corrupt"]


class Corrupt(Exception):
    """An offset of the flatbuffer points outside the buffer."""


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

    # -- one at a time

    def fields(self, table: int, voffsets: tuple[int, ...]) -> tuple[int, ...]:
        """Where each field lies in the table at ``table`` (0: absent), from its vtable."""
        vtable = table - I32(self.view, table)[0]
        found = self.vtables.get((vtable, voffsets))
        if found is None:
            found = self.decode_vtable(table, vtable, voffsets)
        return found

    def decode_vtable(self, table: int, vtable: int, voffsets: tuple[int, ...]) -> tuple[int, ...]:
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
        # Each offset is relative to where it is stored.
        if count < len(U32_VECTORS):
            offs = U32_VECTORS[count](self.view, start)
        else:
            offs = struct.unpack_from(f"<{count}I", self.view, start)
        return list(map(int.__add__, offs, range(start, start + 4 * count, 4)))

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

    def ubytes(self, at: int) -> tuple[int, int]:
        """(start, length) of the ``[ubyte]`` vector an offset field at ``at`` points to."""
        start, count = self.vector(at)
        if start + count > self.size:
            raise Corrupt(f"vector of {count} bytes at {start} runs past the end of the buffer")
        return start, count
