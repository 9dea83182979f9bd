"""TOSA element types and values as SPIR-V types and constants.

The encodings are those of the reference converter (model-converter 0.11, which lowers through
MLIR's TOSA -> SPIR-V conversion), read from its output:

* integers are signless (``OpTypeInt N 0``); INT48 widens to 64 bits and INT4 to 8 bits; BOOL is
  ``OpTypeBool``; BF16 and FP8 are ``OpTypeFloat`` with an FPEncoding;
* a rank-0 tensor becomes shape ``[1]`` (tensor types have rank >= 1); a TOSA shape value of
  rank r is a 32-bit integer tensor of shape ``[max(r, 1)]``, and the empty shape is ``[1]``;
* an inline tensor constant whose elements are all zero is ``OpConstantNull`` (``-0.0`` counts as
  zero, as in MLIR), one whose elements are all equal is ``OpConstantCompositeReplicateEXT`` of
  the scalar when replication is allowed and it has more than one element, and any other is an
  ``OpConstantComposite`` nesting one level per dimension, scalars innermost;
* scalar literals narrower than a word are zero-extended (signless integers have no sign to
  extend), 64-bit ones take two words, low-order first.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from vgfc.diagnostics import UnsupportedError
from vgfc.dtypes import SpirvElement, spirv_element, stored_as
from vgfc.ir import Data, DType
from vgfc.spirv.builder import ModuleBuilder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BASE_CAPABILITIES",
    "BASE_EXTENSIONS",
    "constant_buffer",
    "constant_bytes",
    "data_bits",
    "element_type",
    "scalar_constant",
    "spirv_shape",
    "storage_dtype",
    "tensor_constant",
    "tensor_type",
    "value_bits",
]

BASE_CAPABILITIES = ("Shader", "TensorsARM", "GraphARM", "VulkanMemoryModel", "Matrix", "Int8")
"""Declared by every graph module. Matrix (implied by Shader) and Int8 are what the reference
converter declares on every module too; keeping the same set keeps device requirements equal."""

BASE_EXTENSIONS = ("SPV_ARM_tensors", "SPV_ARM_graph", "SPV_KHR_vulkan_memory_model")


def _element(dtype: DType) -> SpirvElement:
    found = spirv_element(dtype)
    if found is None:
        raise UnsupportedError(
            f"element type {dtype.value} has no SPIR-V tensor type in TOSA.001000.1"
        )
    return found


def element_type(b: ModuleBuilder, dtype: DType) -> int:
    """The SPIR-V scalar type of ``dtype``, declaring the capability it needs."""
    e = _element(dtype)
    if e.capability:
        b.capability(e.capability)
    if e.extension:
        b.extension(e.extension)
    if e.kind == "bool":
        return b.type_bool()
    if e.kind == "int":
        return b.type_int(e.width)
    return b.type_float(e.width, e.encoding)


def spirv_shape(shape: tuple[int, ...], dtype: DType) -> tuple[int, ...]:
    """The shape of the SPIR-V tensor that holds a TOSA value of this shape and type."""
    if dtype is DType.SHAPE:
        # A shape value's IR shape is (rank,): its element count, which may be 0.
        return (max(shape[0] if shape else 0, 1),)
    return shape or (1,)


def tensor_type(b: ModuleBuilder, dtype: DType, shape: tuple[int, ...]) -> int:
    """``OpTypeTensorARM`` of a TOSA tensor (static shape checked by the caller)."""
    return b.memo(
        ("tosa tensor", dtype, shape),
        lambda: b.type_tensor(element_type(b, dtype), spirv_shape(shape, dtype)),
    )


# -- element bit patterns ------------------------------------------------------------------------

_INTEGER_TYPES = frozenset(
    {DType.INT4, DType.INT8, DType.INT16, DType.INT32, DType.INT48, DType.INT64, DType.SHAPE,
     DType.BOOL}
)  # fmt: skip
"""The element types whose values are integers (:meth:`~vgfc.ir.Data.numbers`)."""
_FLOAT_BITS = {DType.FP32: "I", DType.FP16: "H", DType.BF16: "H", DType.FP8E4M3: "B",
               DType.FP8E5M2: "B"}  # fmt: skip
"""``struct`` codes that read a float type's bit patterns."""


def _signed(values: Iterable[int], bits: int) -> list[int]:
    """Unsigned ``bits``-bit fields read as two's-complement integers."""
    top = 1 << (bits - 1)
    return [v - (top << 1) if v & top else v for v in values]


def _integers(data: Data) -> list[int]:
    """The values of an integer (or BOOL) constant, as Python ints."""
    if data.element.is_float or data.element not in _INTEGER_TYPES:
        raise UnsupportedError(f"element type {data.element.value} has no integer values")
    return data.numbers()  # type: ignore[return-value]  # integers for these types


def data_bits(data: Data) -> list[int]:
    """Each element's bit pattern at its SPIR-V width, as an unsigned integer."""
    e = _element(data.element)
    if e.kind == "float":
        return list(struct.unpack_from(f"<{data.size}{_FLOAT_BITS[data.element]}", data.raw))
    return value_bits(data.element, _integers(data))


def value_bits(dtype: DType, values: Sequence[Any]) -> list[int]:
    """The SPIR-V bit patterns of Python values of ``dtype`` (bools, ints, floats)."""
    e = _element(dtype)
    if e.kind == "bool":
        return [1 if v else 0 for v in values]
    if e.kind == "int":
        mask = (1 << e.width) - 1
        return [int(v) & mask for v in values]
    if dtype is DType.FP32:
        return list(struct.unpack(f"<{len(values)}I", struct.pack(f"<{len(values)}f", *values)))
    if dtype is DType.FP16:
        return list(struct.unpack(f"<{len(values)}H", struct.pack(f"<{len(values)}e", *values)))
    # BF16 and FP8 values round as ml_dtypes rounds them: rare enough to take numpy for.
    import numpy as np

    from vgfc.dtypes import numpy_dtype

    target = numpy_dtype(dtype)
    floats = np.asarray(values, dtype=np.float32).astype(target)
    unsigned = {1: np.uint8, 2: np.uint16}[floats.dtype.itemsize]
    return [int(v) for v in floats.view(unsigned)]


def _scalar_from_bits(b: ModuleBuilder, dtype: DType, type_id: int, bits: int) -> int:
    if _element(dtype).kind == "bool":
        return b.constant_bool(bool(bits))
    if _element(dtype).width == 64:
        return b.constant(type_id, bits & 0xFFFFFFFF, bits >> 32)
    return b.constant(type_id, bits)


def scalar_constant(b: ModuleBuilder, dtype: DType, bits: int) -> int:
    """A scalar ``OpConstant`` (or ``OpConstantTrue/False``) of the bit pattern ``bits``."""
    return _scalar_from_bits(b, dtype, element_type(b, dtype), bits)


def _is_zero(dtype: DType, bits: Sequence[int]) -> bool:
    """Every element is zero; a float's sign does not count (``-0.0`` is zero, as in MLIR)."""
    e = _element(dtype)
    if e.kind == "float":
        magnitude = (1 << (e.width - 1)) - 1
        return all(not (v & magnitude) for v in bits)
    return not any(bits)


def tensor_constant(
    b: ModuleBuilder,
    dtype: DType,
    shape: tuple[int, ...],
    bits: Sequence[int],
    *,
    replicate: bool,
    null: bool = True,
) -> int:
    """An inline tensor constant whose elements have the SPIR-V bit patterns ``bits``
    (:func:`data_bits`, :func:`value_bits`).

    ``replicate`` allows ``OpConstantCompositeReplicateEXT``: the reference converter uses it for
    constant operands (CONST, CONST_SHAPE) but never for attribute lists such as ``stride``; a
    builder whose ``replicated_composites`` is off spells every element out instead.
    ``null`` allows ``OpConstantNull`` for an all-zero value.
    """
    dims = spirv_shape(shape, dtype)
    type_id = tensor_type(b, dtype, shape)
    if dtype is DType.SHAPE and not bits:
        # The shape of a rank-0 tensor, which SPIR-V holds as shape [1]: so the value is [1].
        bits = [1]
    if null and _is_zero(dtype, bits):
        return b.constant_null(type_id)
    scalar = element_type(b, dtype)
    if replicate and b.replicated_composites and len(bits) > 1 and all(v == bits[0] for v in bits):
        return b.constant_replicate(type_id, _scalar_from_bits(b, dtype, scalar, bits[0]))
    return _composite(b, dtype, scalar, dims, list(bits))


def _composite(
    b: ModuleBuilder, dtype: DType, scalar: int, dims: tuple[int, ...], bits: list[int]
) -> int:
    """Rank-n constant = composite of ``dims[0]`` rank-(n-1) constants; scalars at rank 1."""
    if len(dims) == 1:
        parts = [_scalar_from_bits(b, dtype, scalar, v) for v in bits]
    else:
        step = len(bits) // dims[0]
        parts = [
            _composite(b, dtype, scalar, dims[1:], bits[i * step : (i + 1) * step])
            for i in range(dims[0])
        ]
    return b.constant_composite(b.type_tensor(scalar, dims), parts)


# -- graph constants -----------------------------------------------------------------------------


def storage_dtype(dtype: DType) -> DType:
    """The element type a graph constant of ``dtype`` is stored as (see :func:`constant_bytes`)."""
    _element(dtype)
    return stored_as(dtype)


_TRUE_BYTES = bytes([0] + [0xFF] * 255)
"""``bytes.translate`` table: a BOOL byte as a graph constant holds it (0xFF for true)."""


def constant_bytes(data: Data) -> bytes:
    """A constant's data as a graph constant holds it: packed little-endian elements.

    INT48 values become 8-byte integers and INT4 values bytes (the widths of their SPIR-V
    types, and what the reference converter stores); BOOL is one byte per element, 0xFF for
    true; shape values are 32-bit integers; every other type keeps its bytes.
    """
    stored = storage_dtype(data.element)
    if data.element is DType.BOOL:
        # All bits set for true, as the reference converter writes: a reader testing either
        # "non-zero" or "lowest bit" sees the same value.
        return bytes(data.raw[: data.size]).translate(_TRUE_BYTES)
    if stored is data.element:
        return bytes(data.raw)
    width = _element(stored).width
    code = {8: "b", 32: "i", 64: "q"}[width]
    values = _signed((v & ((1 << width) - 1) for v in _integers(data)), width)
    return struct.pack(f"<{len(values)}{code}", *values)


def constant_buffer(data: Data) -> bytes | memoryview:
    """:func:`constant_bytes` without the copy where those bytes are the constant's own (every
    type but BOOL, INT48, INT4 and shape values): then :attr:`Data.raw` itself, a read-only
    view, which for a constant read from a file is a view of the file. The VGF encoder streams
    such a view to the output, so a constant is never copied in between."""
    if storage_dtype(data.element) is data.element and data.element is not DType.BOOL:
        return data.raw
    return constant_bytes(data)
