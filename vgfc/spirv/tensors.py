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

import numpy as np

from vgfc.diagnostics import UnsupportedError
from vgfc.dtypes import SpirvElement, from_ml_dtypes, numpy_dtype, spirv_element, stored_as
from vgfc.ir import Array, DType
from vgfc.spirv.builder import ModuleBuilder

__all__ = [
    "BASE_CAPABILITIES",
    "BASE_EXTENSIONS",
    "as_array",
    "constant_buffer",
    "constant_bytes",
    "element_type",
    "scalar_constant",
    "spirv_shape",
    "storage_dtype",
    "tensor_constant",
    "tensor_type",
]

BASE_CAPABILITIES = ("Shader", "TensorsARM", "GraphARM", "VulkanMemoryModel", "Matrix", "Int8")
"""Declared by every graph module. Matrix (implied by Shader) and Int8 are what the reference
converter declares on every module too; keeping the same set keeps device requirements equal."""

BASE_EXTENSIONS = ("SPV_ARM_tensors", "SPV_ARM_graph", "SPV_KHR_vulkan_memory_model")


def as_array(dtype: DType, values: object) -> Array:
    """``values`` as a numpy array of the element type the IR uses for ``dtype``."""
    target = numpy_dtype(dtype) or np.dtype(np.int64)
    if from_ml_dtypes(dtype):
        return np.asarray(values, dtype=np.float32).astype(target)
    return np.asarray(values).astype(target)


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


def _bits(dtype: DType, values: Array) -> Array:
    """Each element's bit pattern as an unsigned 64-bit integer, at the SPIR-V width."""
    e = _element(dtype)
    flat = np.ascontiguousarray(values).reshape(-1)
    if e.kind == "bool":
        nonzero: Array = np.not_equal(flat, 0)
        return nonzero.astype(np.uint64)
    if e.kind == "int":
        masked: Array = flat.astype(np.int64).view(np.uint64) & np.uint64((1 << e.width) - 1)
        return masked
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32}[flat.dtype.itemsize]
    return flat.view(unsigned).astype(np.uint64)


def _scalar_from_bits(b: ModuleBuilder, dtype: DType, type_id: int, bits: int) -> int:
    if _element(dtype).kind == "bool":
        return b.constant_bool(bool(bits))
    if _element(dtype).width == 64:
        return b.constant(type_id, bits & 0xFFFFFFFF, bits >> 32)
    return b.constant(type_id, bits)


def scalar_constant(b: ModuleBuilder, dtype: DType, value: Array) -> int:
    """A scalar ``OpConstant`` (or ``OpConstantTrue/False``) holding a one-element array."""
    bits = int(_bits(dtype, value)[0])
    return _scalar_from_bits(b, dtype, element_type(b, dtype), bits)


def _is_zero(dtype: DType, values: Array) -> bool:
    if dtype.is_float:
        return bool(np.all(values.astype(np.float32) == 0))
    return bool(np.all(_bits(dtype, values) == 0))


def tensor_constant(
    b: ModuleBuilder, dtype: DType, shape: tuple[int, ...], values: Array, *, replicate: bool
) -> int:
    """An inline tensor constant of ``values`` (a numpy array of ``dtype``'s IR element type).

    ``replicate`` allows ``OpConstantCompositeReplicateEXT``: the reference converter uses it for
    constant operands (CONST, CONST_SHAPE) but never for attribute lists such as ``stride``.
    """
    dims = spirv_shape(shape, dtype)
    type_id = tensor_type(b, dtype, shape)
    if dtype is DType.SHAPE and values.size == 0:
        # The shape of a rank-0 tensor, which SPIR-V holds as shape [1]: so the value is [1].
        values = np.ones(1, np.int64)
    if _is_zero(dtype, values):
        return b.constant_null(type_id)
    bits = _bits(dtype, values)
    scalar = element_type(b, dtype)
    if replicate and bits.size > 1 and bool(np.all(bits == bits[0])):
        return b.constant_replicate(type_id, _scalar_from_bits(b, dtype, scalar, int(bits[0])))
    return _composite(b, dtype, scalar, dims, [int(x) for x in bits])


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


def storage_dtype(dtype: DType) -> DType:
    """The element type a graph constant of ``dtype`` is stored as (see :func:`constant_bytes`)."""
    _element(dtype)
    return stored_as(dtype)


def constant_bytes(dtype: DType, values: Array) -> bytes:
    """A constant's data as a graph constant holds it: packed little-endian elements.

    INT48 values become 8-byte integers and INT4 values bytes (the widths of their SPIR-V
    types, and what the reference converter stores); BOOL is one byte per element, 0xFF for
    true; shape values are 32-bit integers; floating-point types keep their bits.
    """
    stored = storage_dtype(dtype)
    flat = np.ascontiguousarray(values).reshape(-1)
    if stored is DType.BOOL:
        # All bits set for true, as the reference converter writes: a reader testing either
        # "non-zero" or "lowest bit" sees the same value.
        return np.where(flat != 0, 0xFF, 0).astype(np.uint8).tobytes()
    little = numpy_dtype(stored)
    if _element(stored).kind == "int" and little is not None:
        return flat.astype(little).tobytes()
    if flat.dtype.byteorder == ">":
        flat = flat.byteswap().view(flat.dtype.newbyteorder("<"))
    return flat.tobytes()


def constant_buffer(dtype: DType, values: Array) -> bytes | memoryview:
    """:func:`constant_bytes` without the copy where those bytes are the array's own memory
    (contiguous little-endian elements of the stored type): then a read-only byte view of
    ``values``, which for a constant read from a file is a view of the file itself. The VGF
    encoder streams such a view to the output, so a constant is never copied in between."""
    stored = storage_dtype(dtype)
    flat = np.ascontiguousarray(values).reshape(-1)
    if stored is not DType.BOOL and flat.dtype.byteorder != ">":
        little = numpy_dtype(stored)
        if _element(stored).kind != "int" or little is None or flat.dtype == little:
            view = flat.view(np.uint8).data
            return view if view.readonly else view.toreadonly()
    return constant_bytes(dtype, values)
