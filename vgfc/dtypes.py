"""TOSA element types and every per-type fact the compiler relies on, in one table.

Each stage needs something different from an element type: the reader how many bits a constant
takes in the flatbuffer and which numpy type decodes it, the SPIR-V emitter the scalar type and
the capability it needs, the resource planner a VkFormat, the custom-shader contract the formats
a shader may view it through. Kept in one row per type, these facts cannot drift apart (a type
that gains a SPIR-V element but no Vulkan format shows up as a gap in one place), and the tests
check the rows against numpy and the Vulkan format tables.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from vgfc.diagnostics import UnsupportedError
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    import numpy as np

    ElementKind: TypeAlias = Literal["bool", "int", "float"]
else:
    ElementKind = str  # a type alias for type checkers (vgfc.ir says why)

__all__ = [
    "DType",
    "DTypeInfo",
    "ElementKind",
    "ShaderFormats",
    "SpirvElement",
    "element_format",
    "from_ml_dtypes",
    "info",
    "numpy_dtype",
    "shader_formats",
    "spirv_element",
    "storage_bits",
    "stored_as",
]


class DType(enum.Enum):
    """TOSA element types. Values are the names used by the TOSA schema."""

    UNKNOWN = "UNKNOWN"
    BOOL = "BOOL"
    INT4 = "INT4"
    INT8 = "INT8"
    INT16 = "INT16"
    INT32 = "INT32"
    INT48 = "INT48"
    INT64 = "INT64"
    FP32 = "FP32"
    FP16 = "FP16"
    BF16 = "BF16"
    SHAPE = "SHAPE"
    FP8E4M3 = "FP8E4M3"
    FP8E5M2 = "FP8E5M2"
    FP6E2M3 = "FP6E2M3"
    FP6E3M2 = "FP6E3M2"
    FP4E2M1 = "FP4E2M1"
    FP8UE8M0 = "FP8UE8M0"
    MXINT8 = "MXINT8"

    @property
    def is_float(self) -> bool:
        return self.name.startswith(("FP", "BF"))

    @property
    def storage_bits(self) -> int:
        """Bits one element takes in a TOSA constant buffer (INT48 is stored in 6 bytes)."""
        return _TABLE[self].storage_bits


@record
class SpirvElement:
    """The SPIR-V scalar type of a tensor element, as the reference converter encodes it."""

    kind: ElementKind
    width: int
    encoding: str | None = None
    """``FPEncoding`` operand of ``OpTypeFloat`` (BF16, FP8)."""
    capability: str | None = None
    extension: str | None = None


@record
class ShaderFormats:
    """The formats a shader resource may view a tensor of this type through."""

    bits: int
    """Channel width of the format."""
    numerics: frozenset[str]
    """Numeric kinds (``FormatInfo.numeric``) that read the element's bits unchanged."""


_ML_DTYPES = "ml_dtypes."


@record
class DTypeInfo:
    """One row of the table: everything vgfc knows about one TOSA element type."""

    dtype: DType
    storage_bits: int
    """Bits one element takes in a TOSA constant buffer."""
    numpy: str | None = None
    """The numpy dtype the IR holds values in (a little-endian dtype string, or ``ml_dtypes.``
    and the name of an ml_dtypes type); ``None`` where values stay packed bytes."""
    spirv: SpirvElement | None = None
    """``None`` where TOSA.001000.1 gives the type no SPIR-V tensor type."""
    widened_to: DType | None = None
    """The type a graph constant's bytes hold, where it differs from this one."""
    vk_format: str | None = None
    """``VK_FORMAT_*`` name graph tensors of this type use (the signed one for integers)."""
    shader: ShaderFormats | None = None
    """``None`` where no shader resource may hold the type."""


_INTEGER = frozenset({"SINT", "UINT"})
_FLOAT = frozenset({"SFLOAT"})
_FP8 = "Float8EXT", "SPV_EXT_float8"

_ROWS = (
    DTypeInfo(DType.UNKNOWN, 0),
    DTypeInfo(
        DType.BOOL,
        8,
        "bool",
        SpirvElement("bool", 8),
        vk_format="VK_FORMAT_R8_BOOL_ARM",
        shader=ShaderFormats(8, frozenset({"BOOL", "UINT", "SINT"})),
    ),
    # Packed two to a byte in the flatbuffer; the IR, SPIR-V and the VGF's tensors hold INT4
    # elements as bytes, one sign-extended value each (R8_SINT), as the reference converter does.
    DTypeInfo(
        DType.INT4,
        4,
        "<i1",
        SpirvElement("int", 8),
        widened_to=DType.INT8,
        vk_format="VK_FORMAT_R8_SINT",
        shader=ShaderFormats(8, _INTEGER),
    ),
    DTypeInfo(
        DType.INT8,
        8,
        "<i1",
        SpirvElement("int", 8),
        vk_format="VK_FORMAT_R8_SINT",
        shader=ShaderFormats(8, _INTEGER),
    ),
    DTypeInfo(
        DType.INT16,
        16,
        "<i2",
        SpirvElement("int", 16, capability="Int16"),
        vk_format="VK_FORMAT_R16_SINT",
        shader=ShaderFormats(16, _INTEGER),
    ),
    DTypeInfo(
        DType.INT32,
        32,
        "<i4",
        SpirvElement("int", 32),
        vk_format="VK_FORMAT_R32_SINT",
        shader=ShaderFormats(32, _INTEGER),
    ),
    # Six bytes in the flatbuffer; everywhere else a 64-bit integer.
    DTypeInfo(
        DType.INT48,
        48,
        "<i8",
        SpirvElement("int", 64, capability="Int64"),
        widened_to=DType.INT64,
        vk_format="VK_FORMAT_R64_SINT",
        shader=ShaderFormats(64, _INTEGER),
    ),
    DTypeInfo(
        DType.INT64,
        64,
        "<i8",
        SpirvElement("int", 64, capability="Int64"),
        vk_format="VK_FORMAT_R64_SINT",
        shader=ShaderFormats(64, _INTEGER),
    ),
    DTypeInfo(
        DType.FP32,
        32,
        "<f4",
        SpirvElement("float", 32),
        vk_format="VK_FORMAT_R32_SFLOAT",
        shader=ShaderFormats(32, _FLOAT),
    ),
    DTypeInfo(
        DType.FP16,
        16,
        "<f2",
        SpirvElement("float", 16, capability="Float16"),
        vk_format="VK_FORMAT_R16_SFLOAT",
        shader=ShaderFormats(16, _FLOAT),
    ),
    DTypeInfo(
        DType.BF16,
        16,
        _ML_DTYPES + "bfloat16",
        SpirvElement("float", 16, "BFloat16KHR", "BFloat16TypeKHR", "SPV_KHR_bfloat16"),
        vk_format="VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM",
        shader=ShaderFormats(16, frozenset({"BFLOAT16"})),
    ),
    # Shape values are int64 in the flatbuffer and the IR, but 32-bit SPIR-V tensors.
    DTypeInfo(DType.SHAPE, 64, "<i8", SpirvElement("int", 32), widened_to=DType.INT32),
    DTypeInfo(
        DType.FP8E4M3,
        8,
        _ML_DTYPES + "float8_e4m3fn",
        SpirvElement("float", 8, "Float8E4M3EXT", *_FP8),
        vk_format="VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E4M3_ARM",
        shader=ShaderFormats(8, frozenset({"FLOAT8E4M3"})),
    ),
    DTypeInfo(
        DType.FP8E5M2,
        8,
        _ML_DTYPES + "float8_e5m2",
        SpirvElement("float", 8, "Float8E5M2EXT", *_FP8),
        vk_format="VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E5M2_ARM",
        shader=ShaderFormats(8, frozenset({"FLOAT8E5M2"})),
    ),
    # The 1.1 draft's packed sub-byte formats: the reader keeps their raw bytes.
    DTypeInfo(DType.FP6E2M3, 6),
    DTypeInfo(DType.FP6E3M2, 6),
    DTypeInfo(DType.FP4E2M1, 4),
    DTypeInfo(DType.FP8UE8M0, 8, _ML_DTYPES + "float8_e8m0fnu"),
    DTypeInfo(DType.MXINT8, 8),
)
_TABLE: Mapping[DType, DTypeInfo] = MappingProxyType({row.dtype: row for row in _ROWS})


def info(dtype: DType) -> DTypeInfo:
    """The table row of ``dtype``."""
    return _TABLE[dtype]


def storage_bits(dtype: DType) -> int:
    """Bits one element takes in a TOSA constant buffer (INT48 is stored in 6 bytes)."""
    return _TABLE[dtype].storage_bits


def from_ml_dtypes(dtype: DType) -> bool:
    """True where the numpy dtype comes from ml_dtypes (BF16 and FP8), not numpy itself."""
    name = _TABLE[dtype].numpy
    return name is not None and name.startswith(_ML_DTYPES)


@cache
def numpy_dtype(dtype: DType) -> np.dtype[Any] | None:
    """The numpy dtype the IR holds ``dtype`` values in; ``None`` for packed formats."""
    import numpy as np

    name = _TABLE[dtype].numpy
    if name is None:
        return None
    if name.startswith(_ML_DTYPES):
        import ml_dtypes  # shipped with tosa-tools; imported only when these types appear

        return np.dtype(getattr(ml_dtypes, name.removeprefix(_ML_DTYPES)))
    return np.dtype(name)


def spirv_element(dtype: DType) -> SpirvElement | None:
    """The SPIR-V scalar type of ``dtype``; ``None`` where SPIR-V has none."""
    return _TABLE[dtype].spirv


def stored_as(dtype: DType) -> DType:
    """The type a graph constant of ``dtype`` holds per element: INT4 -> INT8, INT48 -> INT64,
    SHAPE -> INT32, every other type itself."""
    return _TABLE[dtype].widened_to or dtype


def element_format(dtype: DType, unsigned: bool = False) -> str:
    """The scalar VkFormat name of a TOSA element type, as graph tensors use it; ``unsigned``
    picks the UINT format of the same width for integers a RESCALE reads or writes unsigned."""
    name = _TABLE[dtype].vk_format
    if name is None:
        raise UnsupportedError(f"{dtype.value} tensors have no Vulkan tensor format")
    return name.replace("_SINT", "_UINT") if unsigned else name


def shader_formats(dtype: DType) -> ShaderFormats | None:
    """The formats a shader resource may view ``dtype`` through; ``None`` where it may not."""
    return _TABLE[dtype].shader
