"""TOSA flatbuffer -> :class:`vgfc.ir.Graph`.

This is the only module that touches the generated ``tosa`` package of tosa-tools. It reads the
main block of the main region, keeps constant data as read-only numpy views of the input buffer
(the file is memory-mapped, so nothing is copied until a later stage needs it) and turns every
structural problem into an :class:`~vgfc.diagnostics.InputError` that names the file and the
operator or tensor. Names, string attributes, ranks, element counts and shape values are held to
:data:`vgfc.limits.LIMITS` as they are read, so no later stage meets a value it cannot hold.
"""

from __future__ import annotations

import dataclasses
import math
import mmap
import os
import re
import struct
from collections.abc import Callable
from functools import cache
from types import MappingProxyType
from typing import Any

import numpy as np
import tosa.Attribute
import tosa.DType
import tosa.NanPropagationMode
import tosa.Op
import tosa.ResizeMode
import tosa.RoundingMode
from tosa.TosaGraph import TosaGraph

from vgfc.diagnostics import InputError, Location, UnsupportedError, VgfcError
from vgfc.dtypes import numpy_dtype
from vgfc.ir import Array, AttrValue, DType, Graph, Operator, Tensor, Version
from vgfc.limits import LIMITS, quote

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


def _enum_names(cls: type) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


_OP_NAMES = _enum_names(tosa.Op.Op)
_DTYPES = {value: DType[name] for value, name in _enum_names(tosa.DType.DType).items()}
_ATTRIBUTE_NAMES = _enum_names(tosa.Attribute.Attribute)

# Attribute fields whose integer value is a schema enum: read back as the enum's name.
_ENUM_FIELDS: dict[str, dict[int, str]] = {
    "acc_type": {v: d.value for v, d in _DTYPES.items()},
    "nan_mode": _enum_names(tosa.NanPropagationMode.NanPropagationMode),
    "mode": _enum_names(tosa.ResizeMode.ResizeMode),
    "rounding_mode": _enum_names(tosa.RoundingMode.RoundingMode),
}
# BlockSize/BlockShape values are the sizes themselves (BLOCK_SIZE_32 = 32), so they stay ints.


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
    except (struct.error, IndexError, ValueError, TypeError, OverflowError, RecursionError) as e:
        # The generated accessors do no bounds checking of their own: a truncated or corrupted
        # buffer surfaces as an out-of-range read somewhere below.
        raise InputError(
            f"malformed TOSA flatbuffer (truncated or corrupt): {type(e).__name__}: {e}", where
        ) from None


def _snake(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", camel).lower()


FieldReader = Callable[[Any], AttrValue]


@cache
def _attribute_fields(type_name: str) -> tuple[type, tuple[tuple[str, FieldReader], ...]]:
    """The generated class of an attribute table and one reader per field, in schema order."""
    module = __import__(f"tosa.{type_name}", fromlist=[type_name])
    cls: type = getattr(module, type_name)
    members = vars(cls)
    suffixes = ("Length", "IsNone", "AsNumpy")
    skip = {"Init", "GetRootAs", f"GetRootAs{type_name}", f"{type_name}BufferHasIdentifier"}
    fields: list[tuple[str, FieldReader]] = []
    for method in members:
        if method.startswith("_") or method in skip or method.endswith(suffixes):
            continue
        snake = _snake(method)
        if f"{method}AsNumpy" in members:
            fields.append((snake, _vector_reader(method, snake)))
        elif f"{method}Length" in members:
            # Vectors of strings or tables: none exist in attribute tables today.
            fields.append((snake, _list_reader(method)))
        else:
            fields.append((snake, _scalar_reader(method, _ENUM_FIELDS.get(snake))))
    return cls, tuple(fields)


def _vector_reader(method: str, snake: str) -> FieldReader:
    as_numpy = f"{method}AsNumpy"

    def read(table: Any) -> AttrValue:
        array = getattr(table, as_numpy)()
        if isinstance(array, int):  # the generated code returns 0 for an absent vector
            array = np.zeros(0, np.uint8)
        if array.dtype == np.uint8:
            # Raw value bytes (CLAMP bounds, CUSTOM implementation_attrs): decoded later,
            # where the element type is known.
            return bytes(array)
        return tuple(int(v) for v in array)

    return read


def _list_reader(method: str) -> FieldReader:
    length = f"{method}Length"

    def read(table: Any) -> AttrValue:
        items = [getattr(table, method)(j) for j in range(getattr(table, length)())]
        return tuple(items)

    return read


def _scalar_reader(method: str, enum: dict[int, str] | None) -> FieldReader:
    def read(table: Any) -> AttrValue:
        value = getattr(table, method)()
        if isinstance(value, bytes):
            # String fields (a custom op's operator_name, domain_name) are names.
            return _name(value, what="", key=_snake(method))
        if enum is not None and isinstance(value, int) and not isinstance(value, bool):
            if value not in enum:
                raise InputError(f"unknown enum value {value}", key=_snake(method))
            return enum[value]
        return value  # type: ignore[no-any-return]

    return read


class _Reader:
    def __init__(self, buf: Any, source: str | None) -> None:
        self.buf = buf
        self.source = source

    def graph(self) -> Graph:
        root = TosaGraph.GetRootAs(self.buf, 0)
        version = self._version(root)
        regions = [root.Regions(i) for i in range(root.RegionsLength())]
        if not regions:
            raise InputError("the model has no regions (no main graph)")
        names = tuple(
            _name(r.Name(), "region name") or f"region_{i}" for i, r in enumerate(regions)
        )
        main = regions[names.index("main")] if "main" in names else regions[0]
        if main.BlocksLength() == 0:
            raise InputError(f"region '{_text(main.Name())}' has no basic blocks")
        block = main.Blocks(0)

        tensors: dict[str, Tensor] = {}
        for i in range(block.TensorsLength()):
            self._add(tensors, self._tensor(block.Tensors(i)))
        for i in range(block.ShapesLength()):
            self._add(tensors, self._shape(block.Shapes(i)))
        operators = tuple(
            self._operator(i, block.Operators(i)) for i in range(block.OperatorsLength())
        )
        operators = tuple(self._typed_clamp(op, tensors) for op in operators)
        return Graph(
            tensors=MappingProxyType(tensors),
            operators=operators,
            inputs=tuple(_name(block.Inputs(i)) for i in range(block.InputsLength())),
            outputs=tuple(_name(block.Outputs(i)) for i in range(block.OutputsLength())),
            version=version,
            source=self.source,
            regions=names,
        )

    @staticmethod
    def _version(root: TosaGraph) -> Version:
        fb = root.Version()
        if fb is None:
            raise InputError("the model has no TOSA version")
        version = Version(fb._Major(), fb._Minor(), fb._Patch(), bool(fb._Draft()))
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

    def _tensor(self, fb: Any) -> Tensor:
        name = _name(fb.Name())
        code = fb.Type()
        if code not in _DTYPES:
            raise InputError(f"unknown element type code {code}", tensor=name)
        dtype = _DTYPES[code]
        unranked = bool(fb.IsUnranked())
        if not unranked and fb.ShapeLength() > LIMITS.rank_max:
            raise InputError(
                f"rank {fb.ShapeLength()} is more than the {LIMITS.rank_max} vgfc reads",
                tensor=name,
            )
        shape = None if unranked else tuple(int(d) for d in _numpy(fb.ShapeAsNumpy()))
        # Dynamic dimensions (-1) count as 1: the static ones alone must fit.
        elements = math.prod(1 if d < 0 else d for d in shape or ())
        if elements > LIMITS.elements_max:
            raise InputError(
                f"shape {quote(list(shape or ()))} has {elements} elements, more than the "
                f"{LIMITS.elements_max} vgfc reads",
                tensor=name,
            )
        raw: Array | None = None
        if fb.DataLength():
            raw = _numpy(fb.DataAsNumpy())
        elif fb.Offset() > 1:
            raw = self._external(name, fb.Offset(), fb.Size())
        data = _decode(name, dtype, shape, raw) if raw is not None else None
        return Tensor(name, shape, dtype, data, is_variable=bool(fb.Variable()))

    def _external(self, name: str, offset: int, size: int) -> Array:
        """Constant data stored after the flatbuffer (models over 2 GB)."""
        if offset + size > len(self.buf):
            raise InputError(
                f"constant data at offset {offset} with size {size} lies beyond the end of the "
                f"file ({len(self.buf)} bytes)",
                tensor=name,
            )
        return np.frombuffer(self.buf, dtype=np.uint8, count=size, offset=offset)

    @staticmethod
    def _shape(fb: Any) -> Tensor:
        name = _name(fb.Name())
        rank = int(fb.Rank())
        if rank > LIMITS.shape_values_max:
            raise InputError(
                f"a shape value of {rank} values, more than the {LIMITS.shape_values_max} vgfc "
                "reads",
                tensor=name,
            )
        data = None
        if fb.DataLength():
            data = _decode(name, DType.SHAPE, (rank,), _numpy(fb.DataAsNumpy()))
        return Tensor(name, (rank,), DType.SHAPE, data, is_shape=True)

    def _operator(self, index: int, fb: Any) -> Operator:
        code = fb.Op()
        if code not in _OP_NAMES or code == 0:
            raise InputError(f"unknown op code {code}", op_index=index)
        op = _OP_NAMES[code]
        try:
            attrs = self._attributes(op, fb)
            location = fb.Location()
            return Operator(
                index=index,
                op=op,
                inputs=tuple(_name(fb.Inputs(i)) for i in range(fb.InputsLength())),
                outputs=tuple(_name(fb.Outputs(i)) for i in range(fb.OutputsLength())),
                attrs=MappingProxyType(attrs),
                location_text=(_text(location.Text()) or None) if location is not None else None,
            )
        except VgfcError as e:
            raise e.at(op_index=index, op=op) from None

    @staticmethod
    def _attributes(op: str, fb: Any) -> dict[str, AttrValue]:
        kind = fb.AttributeType()
        if kind == 0:
            return {}
        type_name = _ATTRIBUTE_NAMES.get(kind)
        if type_name is None:
            raise InputError(f"unknown attribute type code {kind}")
        cls, fields = _attribute_fields(type_name)
        table = fb.Attribute()
        if table is None:
            return {}
        attr = cls()
        attr.Init(table.Bytes, table.Pos)
        return {name: read(attr) for name, read in fields}

    @staticmethod
    def _typed_clamp(op: Operator, tensors: dict[str, Tensor]) -> Operator:
        """CLAMP bounds are raw bytes of the input's element type: read them as numbers."""
        if op.op != "CLAMP" or not op.inputs or op.inputs[0] not in tensors:
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


def _raw_bytes(data: bytes) -> Array:
    return np.frombuffer(data, dtype=np.uint8)


def _numpy(value: Any) -> Array:
    """The generated ``*AsNumpy`` accessors return 0 for an absent vector."""
    return np.zeros(0, np.uint8) if isinstance(value, int) else value


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
    count = int(np.prod(shape, dtype=np.int64))
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
