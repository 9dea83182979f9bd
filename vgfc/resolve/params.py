"""Decode a custom op's parameters from its ``implementation_attrs`` bytes.

Frameworks store a custom op's parameters in their own encodings and the TOSA converters pass the
bytes through untouched. A kernel library says which encoding an operator uses and which fields
to take from it (``params`` in ``schemas/kernel_library.schema.json``):

* ``json``: a UTF-8 JSON object; fields by key;
* ``flexbuffers``: a FlexBuffers map (TFLite's custom options, MediaPipe's newer ops), read with
  the ``flatbuffers`` package's FlexBuffers reader; fields by key;
* ``struct``: a little-endian C struct (TFLite's builtin ``Tflite*Params`` that older custom ops
  reuse): fields in order at their natural alignment, or at an explicit ``offset``;
* ``none``: the op has no parameters (its bytes are ignored).

Every field has a type; a missing field takes its ``default`` or is an error naming the field.
A field may map integer codes to names (``values``, for enums such as TFLite's padding), so that
rules can say ``padding == 'SAME'``.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from typing import Any

from vgfc.record import field, record

__all__ = ["ENCODINGS", "TYPES", "Field", "ParamError", "Params", "decode_params"]

ENCODINGS = ("none", "json", "flexbuffers", "struct")

TYPES: Mapping[str, str] = {
    "bool": "?",
    "i8": "b",
    "u8": "B",
    "i16": "h",
    "u16": "H",
    "i32": "i",
    "u32": "I",
    "i64": "q",
    "u64": "Q",
    "f32": "f",
    "f64": "d",
}
"""Parameter types and their :mod:`struct` codes; ``str`` (json/flexbuffers only) is extra."""


class ParamError(ValueError):
    """Bytes that do not hold the parameters the library describes; the message says which."""


@record
class Field:
    name: str
    type: str
    """A key of :data:`TYPES`, or ``str``."""
    count: int | None = None
    """A fixed-length list of ``count`` values instead of one."""
    variable: bool = False
    """A list of any length instead of one value (``count: any``; json/flexbuffers only)."""
    default: Any = None
    has_default: bool = False
    key: str | None = None
    """The key in a json/flexbuffers map, when it differs from ``name``."""
    offset: int | None = None
    """Byte offset in a struct, when the natural one is wrong."""
    values: Mapping[int, str] = field(default_factory=dict)
    """Enum codes -> names: the decoded value is the name."""


@record
class Params:
    encoding: str = "none"
    fields: tuple[Field, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)


def decode_params(params: Params, raw: bytes | None) -> dict[str, Any]:
    """The op's parameters by name. Raises :class:`ParamError`."""
    if params.encoding == "none" or not params.fields:
        return {}
    data = raw or b""
    if params.encoding == "struct":
        values = _struct(params.fields, data)
    else:
        table = _json(data) if params.encoding == "json" else _flexbuffers(data)
        values = {}
        for f in params.fields:
            key = f.key or f.name
            if key not in table:
                if not f.has_default:
                    raise ParamError(f"parameter '{key}' is missing and has no default")
                values[f.name] = f.default
                continue
            values[f.name] = _typed(f, table[key])
    return {f.name: _named(f, values[f.name]) for f in params.fields}


def _json(data: bytes) -> dict[str, Any]:
    try:
        table = json.loads(data.decode("utf-8")) if data else {}
    except (UnicodeDecodeError, ValueError) as e:
        raise ParamError(f"the parameters are not JSON: {e}") from None
    if not isinstance(table, dict):
        raise ParamError(f"the parameters must be a JSON object, not {type(table).__name__}")
    return table


def _flexbuffers(data: bytes) -> dict[str, Any]:
    if not data:
        return {}
    from flatbuffers import flexbuffers

    try:
        table = flexbuffers.Loads(data)
    except Exception as e:  # the reader raises whatever its decoding hits on bad bytes
        raise ParamError(f"the parameters are not a FlexBuffers value: {e}") from None
    if not isinstance(table, dict):
        raise ParamError(f"the parameters must be a FlexBuffers map, not {type(table).__name__}")
    return table


def _struct(fields: tuple[Field, ...], data: bytes) -> dict[str, Any]:
    values: dict[str, Any] = {}
    offset = 0
    for f in fields:
        code = TYPES[f.type]
        size = struct.calcsize(code)
        # At the natural alignment, as a C compiler lays the struct out, unless told otherwise.
        offset = f.offset if f.offset is not None else -(-offset // size) * size
        count = f.count or 1
        end = offset + size * count
        if end > len(data):
            if not f.has_default:
                raise ParamError(
                    f"parameter '{f.name}' ({f.type}{f'[{count}]' if f.count else ''} at byte "
                    f"{offset}) lies past the end of the {len(data)} bytes given"
                )
            values[f.name] = f.default
        else:
            unpacked = struct.unpack_from(f"<{count}{code}", data, offset)
            values[f.name] = tuple(unpacked) if f.count else unpacked[0]
        offset = end
    return values


def _typed(f: Field, value: Any) -> Any:
    if f.variable:
        if not isinstance(value, list | tuple):
            raise ParamError(f"parameter '{f.name}' must be a list of {f.type}")
        return tuple(_scalar(f, v) for v in value)
    if f.count is not None:
        if not isinstance(value, list | tuple) or len(value) != f.count:
            raise ParamError(f"parameter '{f.name}' must be a list of {f.count} {f.type}")
        return tuple(_scalar(f, v) for v in value)
    return _scalar(f, value)


def _scalar(f: Field, value: Any) -> Any:
    if f.type == "str":
        if isinstance(value, bytes):
            value = value.decode("utf-8", errors="replace")
        if not isinstance(value, str):
            raise ParamError(f"parameter '{f.name}' must be a string, got {value!r}")
        return value
    if f.type == "bool":
        if not isinstance(value, bool | int):
            raise ParamError(f"parameter '{f.name}' must be a boolean, got {value!r}")
        return bool(value)
    if f.type in ("f32", "f64"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ParamError(f"parameter '{f.name}' must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ParamError(f"parameter '{f.name}' is {value}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(f"parameter '{f.name}' must be an integer, got {value!r}")
    bits = struct.calcsize(TYPES[f.type]) * 8
    low, high = (
        (0, 2**bits - 1) if f.type.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    )
    if not low <= value <= high:
        raise ParamError(f"parameter '{f.name}' = {value} does not fit in {f.type}")
    return value


def _named(f: Field, value: Any) -> Any:
    if not f.values or isinstance(value, tuple) or value in f.values.values():
        return value
    if value not in f.values:
        known = ", ".join(f"{k} ({v})" for k, v in f.values.items())
        raise ParamError(f"parameter '{f.name}' = {value!r} is none of {known}")
    return f.values[value]
