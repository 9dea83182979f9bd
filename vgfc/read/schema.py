"""The TOSA schema as the reader uses it: codes to names, vtable offsets, attribute layouts.

Built from :mod:`vgfc.read.tables`, plain data written from tosa-tools' generated package (the
specification, :mod:`vgfc.read.spec`), so that reading a model imports neither that package nor
the ``flatbuffers`` package it pulls in (with numpy: 0.1 s of every command).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cache

from vgfc.ir import AttrValue, DType
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AttrField", "Schema", "attribute_layout", "schema"]

TABLES = (
    "TosaGraph",
    "Version",
    "TosaRegion",
    "TosaBasicBlock",
    "TosaTensor",
    "TosaShape",
    "TosaOperator",
    "OpLocation",
)
"""The structural tables whose fields the reader reads (their fields: :data:`vgfc.read.spec.
STRUCTURE`, in that order)."""


@record
class Schema:
    """The vtable offsets of the fields vgfc reads, and the enums."""

    op_names: dict[int, str]
    dtypes: dict[int, DType]
    attribute_names: dict[int, str]
    enum_fields: dict[str, dict[int, str]]
    voffsets: dict[str, tuple[int, ...]]
    """Table -> the vtable offsets of its fields, in :data:`vgfc.read.spec.STRUCTURE` order."""
    version: tuple[tuple[Callable[[Any, int], tuple[Any, ...]], Any], ...]
    """How each field of ``Version`` (major, minor, patch, draft) is read, and its default."""
    op_name_list: tuple[str, ...]
    """:attr:`op_names` indexed by code (``""`` for a code without an op)."""
    dtype_list: tuple[DType, ...]
    """:attr:`dtypes` indexed by code (``DType.UNKNOWN`` for a code without a type)."""


@cache
def schema() -> Schema:
    from vgfc.read import tables

    dtypes = {code: DType[name] for code, name in tables.DTYPES.items()}
    return Schema(
        op_names=dict(tables.OPS),
        dtypes=dtypes,
        attribute_names=dict(tables.ATTRIBUTES),
        enum_fields={
            "acc_type": {code: dtypes[code].value for code in tables.ENUMS["acc_type"]},
            **{name: dict(values) for name, values in tables.ENUMS.items() if name != "acc_type"},
        },
        voffsets=dict(tables.STRUCTURE),
        version=tuple((struct.Struct(fmt).unpack_from, default) for fmt, default in tables.VERSION),
        op_name_list=_by_code(tables.OPS, ""),
        dtype_list=_by_code(dtypes, DType.UNKNOWN),
    )


def _by_code(by_code: dict[int, Any], missing: Any) -> tuple[Any, ...]:
    return tuple(by_code.get(code, missing) for code in range(max(by_code) + 1))


@record
class AttrField:
    name: str
    """Schema (snake_case) name, the key in :attr:`Operator.attrs`."""
    kind: str
    """``scalar``, ``string``, ``bytes`` (a ubyte vector) or ``ints`` (any other vector)."""
    unpack: Callable[[Any, int], tuple[Any, ...]] | None
    """Reads a scalar."""
    code: str
    """``struct`` code of a scalar or of one vector element."""
    size: int
    """Bytes of a scalar or of one vector element."""
    convert: Callable[[Any], Any] | None
    """``bool`` for a bool scalar."""
    default: AttrValue
    enum: dict[int, str] | None


@cache
def attribute_layout(type_name: str) -> tuple[tuple[int, ...], tuple[AttrField, ...]]:
    """The vtable offsets and readers of the fields of an attribute table, in schema order."""
    from vgfc.read import tables

    enums = schema().enum_fields
    voffsets: list[int] = []
    fields: list[AttrField] = []
    for voffset, name, kind, fmt, default in tables.ATTRIBUTE_FIELDS[type_name]:
        voffsets.append(voffset)
        if kind == "string":
            fields.append(AttrField(name, kind, None, "", 0, None, None, None))
            continue
        packer = struct.Struct(fmt)
        unpack = packer.unpack_from if kind == "scalar" else None
        convert = bool if kind == "scalar" and fmt[-1] == "?" else None
        enum = enums.get(name) if kind == "scalar" else None
        fields.append(AttrField(name, kind, unpack, fmt[-1], packer.size, convert, default, enum))
    return tuple(voffsets), tuple(fields)
