"""Turning the bytes of a field into IR values, for the one-at-a-time reader
(:mod:`vgfc.read.reader`) and the bulk reads (:mod:`vgfc.read.bulk`) alike: names and texts held
to :data:`vgfc.limits.LIMITS`, the byte count constant data needs, attribute tables, and CLAMP
bounds as numbers. Both readers use these, so that a field reads, and fails, the same either way;
neither reader is imported here.
"""

from __future__ import annotations

import math
import struct
from types import MappingProxyType

from vgfc.diagnostics import InputError
from vgfc.ir import AttrValue, Data, DType, Operator, Tensor
from vgfc.limits import LIMITS, quote
from vgfc.read.buffer import Corrupt
from vgfc.read.schema import attribute_layout, schema
from vgfc.record import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.read.buffer import Buffer

__all__ = [
    "NO_ATTRS",
    "attributes",
    "decode_name",
    "decode_text",
    "needed_bytes",
    "typed_clamp",
]

NO_ATTRS: MappingProxyType[str, AttrValue] = MappingProxyType({})
"""The attributes of an operator without any (shared: there is no need for one each)."""


def decode_name(value: bytes | None, what: str = "tensor name", key: str | None = None) -> str:
    """A string that names something (tensor, region, custom operator): at most
    ``LIMITS.name_length_max`` characters."""
    text = decode_text(value)
    if len(text) > LIMITS.name_length_max:
        shown = f"{what} '{quote(text)}'" if what else f"'{quote(text)}'"
        raise InputError(
            f"{shown} is longer than the {LIMITS.name_length_max} characters vgfc reads", key=key
        )
    return text


def decode_text(value: bytes | None) -> str:
    """A string as text (``""`` for none); an error when it is not UTF-8."""
    if value is None:
        return ""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"string {value[:40]!r} is not valid UTF-8") from None


def needed_bytes(name: str, dtype: DType, shape: tuple[int, ...] | None, size: int) -> int:
    """Bytes that ``shape`` elements of ``dtype`` take; an error when ``size`` is fewer."""
    if shape is None:
        raise InputError("an unranked tensor cannot hold constant data", tensor=name)
    # Dynamic (negative) dimensions count as written: a constant has none in a valid model,
    # and such a count is refused below or by the stage that meets it.
    count = math.prod(shape)
    need = (count * dtype.storage_bits + 7) // 8 if count > 0 else 0
    if size < need:
        raise InputError(
            f"constant data has {size} bytes, shape {list(shape)} of {dtype.value} needs {need}",
            tensor=name,
        )
    return need


def attributes(buffer: Buffer, kind: int, at: int) -> MappingProxyType[str, AttrValue]:
    """The fields of the attribute table (of union type ``kind``) an offset at ``at`` (0:
    none) of ``buffer`` points to."""
    type_name = schema().attribute_names.get(kind)
    if type_name is None:
        raise InputError(f"unknown attribute type code {kind}")
    voffsets, layout = attribute_layout(type_name)
    if not at:
        return NO_ATTRS
    table = buffer.table(at)
    view = buffer.view
    attrs: dict[str, AttrValue] = {}
    for f, where in zip(layout, buffer.fields(table, voffsets), strict=True):
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
            value = decode_name(buffer.string(table + where), "", f.name) if where else None
        elif not where:
            value = b""  # what the generated code gives for an absent vector
        elif f.kind == "bytes":
            # Raw value bytes (CLAMP bounds, CUSTOM implementation_attrs): decoded later,
            # where the element type is known.
            start, count = buffer.ubytes(table + where)
            value = bytes(buffer.view[start : start + count])
        else:
            start, count = buffer.vector(table + where)
            if start + count * f.size > buffer.size:
                raise Corrupt(f"vector of {count} values at {start} runs past the buffer")
            value = struct.unpack_from(f"<{count}{f.code}", view, start)
        attrs[f.name] = value
    return MappingProxyType(attrs)


def typed_clamp(op: Operator, tensors: dict[str, Tensor]) -> Operator:
    """CLAMP bounds are raw bytes of the input's element type: read them as numbers."""
    if not op.inputs or op.inputs[0] not in tensors:
        return op
    dtype = tensors[op.inputs[0]].dtype
    attrs = dict(op.attrs)
    for key in ("min_val", "max_val"):
        raw = attrs.get(key)
        if isinstance(raw, bytes) and raw:
            try:
                attrs[key] = _scalar(op.outputs[0] if op.outputs else "", dtype, raw)
            except InputError as e:
                raise e.at(op.where(), key=key) from None
    return replace(op, attrs=MappingProxyType(attrs))


_SCALARS = {
    DType.BOOL: struct.Struct("<?"),
    DType.INT8: struct.Struct("<b"),
    DType.INT16: struct.Struct("<h"),
    DType.INT32: struct.Struct("<i"),
    DType.INT64: struct.Struct("<q"),
    DType.SHAPE: struct.Struct("<q"),
    DType.FP16: struct.Struct("<e"),
    DType.FP32: struct.Struct("<f"),
}
"""How one element of the common types is read without numpy."""


def _scalar(name: str, dtype: DType, raw: bytes) -> Any:
    """The first element of ``raw`` (a CLAMP bound's bytes) as a Python number."""
    need = needed_bytes(name, dtype, (), len(raw))
    reader = _SCALARS.get(dtype)
    if reader is not None:
        return reader.unpack_from(raw)[0]
    # INT48, INT4, BF16 and FP8 bounds are rare: numpy (and ml_dtypes) read them.
    return Data(memoryview(raw[:need]), dtype, ()).array.item()
