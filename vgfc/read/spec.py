"""The TOSA schema as tosa-tools' generated ``tosa`` package spells it, learnt from the package.

The generated package is the specification: for each field the reader reads, its vtable offset,
how it is read and its default, and the enums. Each field is learnt by running its generated
accessor once against :class:`_Probe`, which stands in for the flatbuffers table and records
what the accessor asks for. :func:`derive_tables` gives it all as plain data, in the form of
:mod:`vgfc.read.tables`, which ``scripts/make_tosa_tables.py`` writes from it and a test holds
to it: the reader itself never imports the generated package (it pulls in the ``flatbuffers``
package, which imports numpy: 0.1 s of every command).
"""

from __future__ import annotations

import re
from typing import Any

from vgfc.diagnostics import UnsupportedError
from vgfc.record import record

__all__ = ["ENUM_FIELDS", "STRUCTURE", "Field", "attribute_fields", "derive_tables"]


class _Probe:
    """Stands in for the ``flatbuffers.table.Table`` of a generated object while one accessor runs,
    and records what it reads: the vtable offset it looks up, and how it reads the field (a scalar
    of which type, a string, a vector of which element type, a table)."""

    Bytes = b""
    Pos = 0

    def __init__(self, present: bool) -> None:
        self.present = present
        self.voffset = 0
        self.kind = ""
        self.flags: Any = None

    def Offset(self, voffset: int) -> int:  # the flatbuffers Table API
        self.voffset = voffset
        return 4 if self.present else 0

    def Get(self, flags: Any, _off: int) -> Any:
        self.kind, self.flags = "scalar", flags
        return flags.py_type(0)

    def String(self, _off: int) -> bytes:
        self.kind = "string"
        return b""

    def GetVectorAsNumpy(self, flags: Any, _off: int) -> bytes:
        self.kind, self.flags = "vector", flags
        return b""

    def VectorLen(self, _off: int) -> int:
        self.kind = "length"
        return 0

    def Vector(self, _off: int) -> int:
        return 0

    def Indirect(self, _off: int) -> int:
        self.kind = "table"
        return 0

    def Union(self, _table: Any, _off: int) -> None:
        self.kind = "union"


@record
class Field:
    """One field of a table: where its vtable entry is, how it is read, and its default."""

    voffset: int
    kind: str
    """``scalar``, ``string``, ``vector``, ``length`` (vector of strings or tables), ``table``
    or ``union``."""
    flags: Any
    """``flatbuffers.number_types`` flags of a scalar or vector element (``None`` otherwise)."""
    default: Any
    """What the generated accessor returns when the field is absent."""


def field(cls: type, method: str) -> Field:
    """How the generated accessor ``cls.method`` reads its field."""
    obj: Any = object.__new__(cls)
    present, absent = _Probe(True), _Probe(False)
    obj._tab = present
    getattr(obj, method)()
    obj._tab = absent
    default = getattr(obj, method)()
    return Field(present.voffset, present.kind, present.flags, default)


def _enum_names(cls: type) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


_ABSENT = 1 << 16
"""The vtable offset given to a field of :data:`STRUCTURE` that the installed schema lacks
(none does today): past the end of every vtable, so the field reads as absent."""


STRUCTURE = {
    "TosaGraph": ("Version", "RegionsLength"),
    "Version": ("_Major", "_Minor", "_Patch", "_Draft"),
    "TosaRegion": ("Name", "BlocksLength"),
    "TosaBasicBlock": (
        "OperatorsLength",
        "TensorsLength",
        "InputsLength",
        "OutputsLength",
        "ShapesLength",
    ),
    # offset/size: where the constants of a model over 2 GB lie, after the flatbuffer.
    "TosaTensor": (
        "Name",
        "ShapeAsNumpy",
        "Type",
        "DataAsNumpy",
        "Variable",
        "IsUnranked",
        "Offset",
        "Size",
    ),
    "TosaShape": ("Name", "Rank", "DataAsNumpy"),
    "TosaOperator": (
        "Op",
        "AttributeType",
        "Attribute",
        "InputsLength",
        "OutputsLength",
        "Location",
    ),
    "OpLocation": ("Text",),
}
"""The accessors of the structural tables whose fields the reader reads."""

ENUM_FIELDS = {
    "acc_type": "DType",
    "nan_mode": "NanPropagationMode",
    "mode": "ResizeMode",
    "rounding_mode": "RoundingMode",
}
"""Attribute fields whose integer value is a schema enum, read back as the enum's name, and the
enum. BlockSize/BlockShape values are the sizes themselves (BLOCK_SIZE_32 = 32): ints."""


def derive_tables() -> dict[str, Any]:
    """Everything :mod:`vgfc.read.tables` holds, learnt from the installed generated package."""
    import importlib.metadata

    import tosa.Attribute
    import tosa.DType
    import tosa.Op

    structure: dict[str, tuple[int, ...]] = {}
    version: list[tuple[str, Any]] = []
    for table, methods in STRUCTURE.items():
        cls = getattr(__import__(f"tosa.{table}", fromlist=[table]), table)
        offsets = []
        for method in methods:
            if not hasattr(cls, method):
                offsets.append(_ABSENT)
                continue
            f = field(cls, method)
            offsets.append(f.voffset)
            if table == "Version":
                version.append((f.flags.packer_type.format, f.default))
        structure[table] = tuple(offsets)
    attributes = _enum_names(tosa.Attribute.Attribute)
    enums = {
        name: _enum_names(getattr(__import__(f"tosa.{e}", fromlist=[e]), e))
        for name, e in ENUM_FIELDS.items()
    }
    return {
        "tosa_tools": importlib.metadata.version("tosa-tools"),
        "ops": _enum_names(tosa.Op.Op),
        "dtypes": _enum_names(tosa.DType.DType),
        "attributes": attributes,
        "enums": enums,
        "structure": structure,
        "version": tuple(version),
        "attribute_fields": {
            name: attribute_fields(name) for code, name in sorted(attributes.items()) if code
        },
    }


def _snake(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).lower()


def attribute_fields(type_name: str) -> tuple[tuple[Any, ...], ...]:
    """The fields of an attribute table in schema order, each (vtable offset, schema name,
    kind, struct format, default): kind ``scalar`` (format of the value, ``<?`` for a bool),
    ``string``, ``bytes`` (a ubyte vector) or ``ints`` (a vector of the format's elements)."""
    cls: type = getattr(__import__(f"tosa.{type_name}", fromlist=[type_name]), type_name)
    members = vars(cls)
    suffixes = ("Length", "IsNone", "AsNumpy")
    skip = {"Init", "GetRootAs", f"GetRootAs{type_name}", f"{type_name}BufferHasIdentifier"}
    fields: list[tuple[Any, ...]] = []
    for method in members:
        if method.startswith("_") or method in skip or method.endswith(suffixes):
            continue
        snake = _snake(method)
        if f"{method}AsNumpy" in members:
            f = field(cls, f"{method}AsNumpy")
            fmt = f.flags.packer_type.format
            kind = "bytes" if fmt in ("<B", "B") else "ints"
            fields.append((f.voffset, snake, kind, fmt, b""))
        elif f"{method}Length" in members:
            raise UnsupportedError(
                f"{type_name}.{snake}: attribute fields that are vectors of strings or tables "
                "are not read"
            )
        else:
            f = field(cls, method)
            if f.kind == "string":
                fields.append((f.voffset, snake, "string", "", None))
            elif f.kind == "scalar":
                fields.append((f.voffset, snake, "scalar", f.flags.packer_type.format, f.default))
            else:
                raise UnsupportedError(
                    f"{type_name}.{snake}: attribute fields that are tables are not read"
                )
    return tuple(fields)
