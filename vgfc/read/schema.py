"""The TOSA schema as the generated ``tosa`` package of tosa-tools spells it: for each field that
:mod:`vgfc.read.reader` reads, its vtable offset, how it is read and its default; and the enums.

Why: the reader decodes the flatbuffer itself (:mod:`vgfc.read.buffer`, for speed), yet the
generated package stays the specification, so that a new tosa-tools cannot silently disagree
with a table written here by hand. Each field is learnt by running its generated accessor once
against :class:`_Probe`, which stands in for the flatbuffers table and records what the accessor
asks for. This module and the reader are the only users of the generated package.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from vgfc.diagnostics import UnsupportedError
from vgfc.ir import Array, AttrValue, DType

__all__ = ["STRUCTURE", "AttrField", "Field", "Schema", "attribute_layout", "schema"]


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

    def GetVectorAsNumpy(self, flags: Any, _off: int) -> Array:
        self.kind, self.flags = "vector", flags
        return np.zeros(0, np.uint8)

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


@dataclasses.dataclass(frozen=True, slots=True)
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


@dataclasses.dataclass(frozen=True, slots=True)
class Schema:
    """The vtable offsets of the fields vgfc reads, and the enums, from the generated package."""

    op_names: dict[int, str]
    dtypes: dict[int, DType]
    attribute_names: dict[int, str]
    enum_fields: dict[str, dict[int, str]]
    fields: dict[str, Field]
    """``Table.Method`` -> field, for the tables of the model's structure."""
    voffsets: dict[str, tuple[int, ...]]
    """Table -> the vtable offsets of the fields of :data:`STRUCTURE`, in its order."""
    op_name_table: Array
    """:attr:`op_names` as an object array indexed by code (``""`` for a code without an op),
    so that the codes of thousands of operators are named in one indexing."""
    dtype_table: Array
    """:attr:`dtypes` likewise (``DType.UNKNOWN`` for a code without a type)."""


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
"""The accessors of the structural tables whose fields this reader reads."""


@cache
def schema() -> Schema:
    import tosa.Attribute
    import tosa.DType
    import tosa.NanPropagationMode
    import tosa.Op
    import tosa.ResizeMode
    import tosa.RoundingMode

    fields: dict[str, Field] = {}
    voffsets: dict[str, tuple[int, ...]] = {}
    for table, methods in STRUCTURE.items():
        cls = getattr(__import__(f"tosa.{table}", fromlist=[table]), table)
        for method in methods:
            if hasattr(cls, method):
                fields[f"{table}.{method}"] = field(cls, method)
        voffsets[table] = tuple(
            fields[f"{table}.{m}"].voffset if f"{table}.{m}" in fields else _ABSENT for m in methods
        )
    dtypes = {value: DType[name] for value, name in _enum_names(tosa.DType.DType).items()}
    op_names = _enum_names(tosa.Op.Op)
    return Schema(
        op_names=op_names,
        dtypes=dtypes,
        attribute_names=_enum_names(tosa.Attribute.Attribute),
        # Attribute fields whose integer value is a schema enum: read back as the enum's name.
        # BlockSize/BlockShape values are the sizes themselves (BLOCK_SIZE_32 = 32): ints.
        enum_fields={
            "acc_type": {v: d.value for v, d in dtypes.items()},
            "nan_mode": _enum_names(tosa.NanPropagationMode.NanPropagationMode),
            "mode": _enum_names(tosa.ResizeMode.ResizeMode),
            "rounding_mode": _enum_names(tosa.RoundingMode.RoundingMode),
        },
        fields=fields,
        voffsets=voffsets,
        op_name_table=_table(op_names, ""),
        dtype_table=_table(dtypes, DType.UNKNOWN),
    )


def _table(by_code: dict[int, Any], missing: Any) -> Array:
    """``by_code`` as an object array indexed by code, ``missing`` where it has no entry."""
    table = np.full(max(by_code) + 1, missing, object)
    for code, value in by_code.items():
        table[code] = value
    return table


def _snake(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).lower()


@dataclasses.dataclass(frozen=True, slots=True)
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
    cls: type = getattr(__import__(f"tosa.{type_name}", fromlist=[type_name]), type_name)
    members = vars(cls)
    suffixes = ("Length", "IsNone", "AsNumpy")
    skip = {"Init", "GetRootAs", f"GetRootAs{type_name}", f"{type_name}BufferHasIdentifier"}
    enums = schema().enum_fields
    voffsets: list[int] = []
    fields: list[AttrField] = []
    for method in members:
        if method.startswith("_") or method in skip or method.endswith(suffixes):
            continue
        snake = _snake(method)
        if f"{method}AsNumpy" in members:
            f = field(cls, f"{method}AsNumpy")
            packer = f.flags.packer_type
            kind = "bytes" if packer.format in ("<B", "B") else "ints"
            fields.append(
                AttrField(snake, kind, None, packer.format[-1], packer.size, None, b"", None)
            )
        elif f"{method}Length" in members:
            raise UnsupportedError(
                f"{type_name}.{snake}: attribute fields that are vectors of strings or tables "
                "are not read"
            )
        else:
            f = field(cls, method)
            if f.kind not in ("scalar", "string"):
                raise UnsupportedError(
                    f"{type_name}.{snake}: attribute fields that are tables are not read"
                )
            if f.kind == "string":
                fields.append(AttrField(snake, "string", None, "", 0, None, None, None))
            else:
                packer = f.flags.packer_type
                convert = bool if f.flags.py_type is bool else None
                fields.append(
                    AttrField(
                        snake,
                        "scalar",
                        packer.unpack_from,
                        packer.format[-1],
                        packer.size,
                        convert,
                        f.default,
                        enums.get(snake),
                    )
                )
        voffsets.append(f.voffset)
    return tuple(voffsets), tuple(fields)
