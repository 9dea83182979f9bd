"""A TOSA flatbuffer as a tree of plain Python values, and back, driven by ``tosa.fbs``.

The generated ``tosa`` package has readers and builder functions but no object API, so the
fuzzer's mutator cannot decode a model, change one field and write it again with it alone. This
module reads the schema that tosa-tools ships (the same one the package was generated from) and
walks any table generically:

- a table is a ``dict`` holding only the fields present in the buffer (absent stays absent);
- scalars and enums are ``int``/``float``/``bool``; strings are ``bytes`` (so they may be
  invalid UTF-8); ``[ubyte]`` is ``bytes``; other scalar vectors are lists;
- a union field is a :class:`Union`: its type code and the table it was written as, so a
  mutation can change the code alone (a type confusion) and still encode.

``encode(decode(b))`` is equivalent to ``b`` for every reader: fields keep their presence, and
defaults are written when present (``ForceDefaults``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import flatbuffers
from flatbuffers import number_types as nt
from flatbuffers.table import Table

__all__ = ["IDENTIFIER", "Field", "Schema", "Union", "decode", "encode", "schema"]

IDENTIFIER = b"TOSA"
_MAX_DEPTH = 16

_SCALARS: dict[str, Any] = {
    "bool": nt.BoolFlags,
    "byte": nt.Int8Flags,
    "int8": nt.Int8Flags,
    "ubyte": nt.Uint8Flags,
    "uint8": nt.Uint8Flags,
    "short": nt.Int16Flags,
    "int16": nt.Int16Flags,
    "ushort": nt.Uint16Flags,
    "uint16": nt.Uint16Flags,
    "int": nt.Int32Flags,
    "int32": nt.Int32Flags,
    "uint": nt.Uint32Flags,
    "uint32": nt.Uint32Flags,
    "long": nt.Int64Flags,
    "int64": nt.Int64Flags,
    "ulong": nt.Uint64Flags,
    "uint64": nt.Uint64Flags,
    "float": nt.Float32Flags,
    "float32": nt.Float32Flags,
    "double": nt.Float64Flags,
    "float64": nt.Float64Flags,
}


@dataclass(frozen=True)
class Field:
    """One field of a table, as the schema declares it."""

    name: str
    type: str
    """A scalar name, ``string``, or the name of an enum, union or table."""
    vector: bool
    slot: int
    """vtable slot; a union takes two (its type code, then the value)."""
    default: int | float | None
    align: int | None = None


@dataclass
class Union:
    """A union field's value: ``code`` is what readers dispatch on, ``table`` how it is encoded."""

    code: int
    table: str
    value: dict[str, Any]


@dataclass(frozen=True)
class Schema:
    tables: dict[str, tuple[Field, ...]]
    enums: dict[str, tuple[str, dict[str, int]]]
    """name -> (underlying scalar type, value names -> codes)."""
    unions: dict[str, dict[int, str]]
    """name -> type code -> table name."""
    root: str

    def kind(self, type_name: str) -> str:
        """``scalar``, ``string``, ``table`` or ``union``."""
        if type_name in _SCALARS or type_name in self.enums:
            return "scalar"
        if type_name == "string":
            return "string"
        if type_name in self.unions:
            return "union"
        if type_name in self.tables:
            return "table"
        raise KeyError(type_name)

    def scalar(self, type_name: str) -> str:
        """The scalar type a scalar or enum field is stored as."""
        return self.enums[type_name][0] if type_name in self.enums else type_name

    def flags(self, type_name: str) -> Any:
        """The ``flatbuffers.number_types`` flags of a scalar or enum type."""
        return _SCALARS[self.scalar(type_name)]


def _fbs_path() -> Path:
    import tosa

    # tosa-tools installs the schema next to its tools, in site-packages/bin.
    return Path(tosa.__file__).resolve().parent.parent / "bin" / "tosa.fbs"


def _default(text: str | None, type_name: str, enums: dict[str, tuple[str, dict[str, int]]]) -> Any:
    if text is None:
        return False if type_name == "bool" else 0
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if type_name in enums and text in enums[type_name][1]:
        return enums[type_name][1][text]
    return float(text) if "." in text or type_name in ("float", "double") else int(text)


@cache
def schema() -> Schema:
    """The schema of tosa-tools' ``tosa.fbs``."""
    text = re.sub(r"//[^\n]*", "", _fbs_path().read_text())
    enums: dict[str, tuple[str, dict[str, int]]] = {}
    unions: dict[str, dict[int, str]] = {}
    bodies: dict[str, str] = {}
    for kind, name, base, body in re.findall(
        r"\b(enum|union|table|struct)\s+(\w+)\s*(?::\s*(\w+))?\s*\{([^}]*)\}", text
    ):
        if kind == "struct":
            raise NotImplementedError(f"struct {name}: tosa.fbs has none")
        if kind == "table":
            bodies[name] = body
            continue
        values: dict[str, int] = {}
        nxt = 1 if kind == "union" else 0
        for item in filter(None, (s.strip() for s in body.split(","))):
            label, _, value = (p.strip() for p in item.partition("="))
            nxt = int(value, 0) if value else nxt
            values[label] = nxt
            nxt += 1
        if kind == "enum":
            enums[name] = (base, values)
        else:
            unions[name] = {code: label for label, code in values.items()}
    tables: dict[str, tuple[Field, ...]] = {}
    for name, body in bodies.items():
        fields = []
        slot = 0
        for decl in filter(None, (s.strip() for s in body.split(";"))):
            m = re.fullmatch(
                r"(\w+)\s*:\s*(\[?)\s*(\w+)\s*\]?\s*(?:=\s*([^(]+?))?\s*(\(.*\))?", decl
            )
            if m is None:
                raise ValueError(f"cannot parse field of table {name}: {decl!r}")
            fname, vec, ftype, default, attrs = m.groups()
            align = re.search(r"force_align\s*:\s*(\d+)", attrs or "")
            is_scalar = not vec and (ftype in _SCALARS or ftype in enums)
            fields.append(
                Field(
                    fname,
                    ftype,
                    bool(vec),
                    slot + (1 if ftype in unions and not vec else 0),
                    _default(default, enums.get(ftype, (ftype,))[0], enums) if is_scalar else None,
                    int(align.group(1)) if align else None,
                )
            )
            slot += 2 if ftype in unions and not vec else 1
        tables[name] = tuple(fields)
    root = re.search(r"root_type\s+(\w+)", text)
    return Schema(tables, enums, unions, root.group(1) if root else "TosaGraph")


# --- decoding -------------------------------------------------------------------------------


def decode(data: bytes) -> dict[str, Any]:
    """The root table of a TOSA flatbuffer. Raises ``ValueError`` for anything malformed."""
    if len(data) < 8 or data[4:8] != IDENTIFIER:
        raise ValueError("not a TOSA flatbuffer")
    s = schema()
    buf = bytes(data)
    try:
        pos = flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0)
        return _table(s, s.root, Table(buf, pos), 0)
    except (IndexError, ValueError, OverflowError, RecursionError) as e:
        raise ValueError(f"malformed flatbuffer: {e}") from None
    except Exception as e:  # struct.error and friends from a corrupt buffer
        raise ValueError(f"malformed flatbuffer: {type(e).__name__}: {e}") from None


def _table(s: Schema, name: str, tab: Table, depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH or not 0 <= tab.Pos < len(tab.Bytes):
        raise ValueError("table out of bounds or nested too deeply")
    out: dict[str, Any] = {}
    for f in s.tables[name]:
        o = tab.Offset(4 + 2 * f.slot)
        if not o:
            continue
        kind = s.kind(f.type)
        if f.vector:
            out[f.name] = _vector(s, f, kind, tab, o, depth)
        elif kind == "scalar":
            out[f.name] = tab.Get(_SCALARS[s.scalar(f.type)], o + tab.Pos)
        elif kind == "string":
            out[f.name] = bytes(tab.String(o + tab.Pos))
        elif kind == "table":
            out[f.name] = _table(s, f.type, Table(tab.Bytes, tab.Indirect(o + tab.Pos)), depth + 1)
        else:  # union: the type code sits in the slot before the value
            to = tab.Offset(4 + 2 * (f.slot - 1))
            code = tab.Get(nt.Uint8Flags, to + tab.Pos) if to else 0
            member = s.unions[f.type].get(code)
            if member is None:
                raise ValueError(f"unknown {f.type} code {code}")
            value = _table(s, member, Table(tab.Bytes, tab.Indirect(o + tab.Pos)), depth + 1)
            out[f.name] = Union(code, member, value)
    return out


def _vector(s: Schema, f: Field, kind: str, tab: Table, o: int, depth: int) -> Any:
    start, n = tab.Vector(o), tab.VectorLen(o)
    size = _SCALARS[s.scalar(f.type)].bytewidth if kind == "scalar" else 4
    if start + n * size > len(tab.Bytes):
        raise ValueError(f"vector {f.name} runs past the end of the buffer")
    if kind == "scalar":
        flags = _SCALARS[s.scalar(f.type)]
        if flags is nt.Uint8Flags:
            return bytes(tab.Bytes[start : start + n])
        return [tab.Get(flags, start + j * size) for j in range(n)]
    if kind == "string":
        return [bytes(tab.String(start + 4 * j)) for j in range(n)]
    if kind == "table":
        return [
            _table(s, f.type, Table(tab.Bytes, tab.Indirect(start + 4 * j)), depth + 1)
            for j in range(n)
        ]
    raise ValueError(f"vector of unions ({f.name}) is not supported")


# --- encoding -------------------------------------------------------------------------------


def encode(root: dict[str, Any]) -> bytes:
    """A TOSA flatbuffer (file identifier ``TOSA``) holding ``root``."""
    s = schema()
    b = flatbuffers.Builder(4096)
    b.ForceDefaults(True)
    b.Finish(_encode_table(s, b, s.root, root), IDENTIFIER)
    return bytes(b.Output())


def _encode_table(s: Schema, b: flatbuffers.Builder, name: str, value: dict[str, Any]) -> int:
    fields = s.tables[name]
    offsets: dict[str, int] = {}
    # Children first: a flatbuffers builder cannot nest the construction of two objects.
    for f in fields:
        if f.name not in value:
            continue
        kind = s.kind(f.type)
        v = value[f.name]
        if f.vector:
            offsets[f.name] = _encode_vector(s, b, f, kind, v)
        elif kind == "string":
            offsets[f.name] = b.CreateString(bytes(v))
        elif kind == "table":
            offsets[f.name] = _encode_table(s, b, f.type, v)
        elif kind == "union":
            offsets[f.name] = _encode_table(s, b, v.table, v.value)
    b.StartObject(max((f.slot for f in fields), default=-1) + 1)
    for f in fields:
        if f.name not in value:
            continue
        kind = s.kind(f.type)
        if f.vector or kind in ("string", "table"):
            b.PrependUOffsetTRelativeSlot(f.slot, offsets[f.name], 0)
        elif kind == "union":
            b.PrependUint8Slot(f.slot - 1, value[f.name].code & 0xFF, 0)
            b.PrependUOffsetTRelativeSlot(f.slot, offsets[f.name], 0)
        else:
            flags = _SCALARS[s.scalar(f.type)]
            b.PrependSlot(flags, f.slot, flags.py_type(value[f.name]), f.default)
    return int(b.EndObject())


def _encode_vector(s: Schema, b: flatbuffers.Builder, f: Field, kind: str, items: Any) -> int:
    if kind == "scalar":
        flags = _SCALARS[s.scalar(f.type)]
        if flags is nt.Uint8Flags:
            data = bytes(items)
            b.StartVector(1, len(data), f.align or 1)
            b.head = b.head - len(data)
            b.Bytes[b.head : b.head + len(data)] = data
            return int(b.EndVector())
        b.StartVector(flags.bytewidth, len(items), f.align or flags.bytewidth)
        for x in reversed(items):
            b.Prepend(flags, flags.py_type(x))
        return int(b.EndVector())
    if kind == "string":
        offs = [b.CreateString(bytes(x)) for x in items]
    else:
        offs = [_encode_table(s, b, f.type, x) for x in items]
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return int(b.EndVector())
