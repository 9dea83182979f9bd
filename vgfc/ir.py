"""The in-memory model: immutable tensors, operators and graphs.

The reader builds these from a TOSA flatbuffer; every later stage reads them and returns new
values. Operators keep their index in the source block so that every diagnostic can point at the
exact operator the user wrote. Constant data stays a read-only numpy view of the input buffer.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Union

import numpy as np

from vgfc.diagnostics import Location

__all__ = [
    "CUSTOM_SHADER_DOMAIN",
    "Array",
    "AttrValue",
    "DType",
    "Graph",
    "Operator",
    "Tensor",
    "Version",
]

CUSTOM_SHADER_DOMAIN = "com.arm.VulkanCustomShader"
"""``domain_name`` that marks a CUSTOM op as a Vulkan compute shader."""


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
        return _STORAGE_BITS[self]


_STORAGE_BITS = {
    DType.UNKNOWN: 0,
    DType.BOOL: 8,
    DType.INT4: 4,
    DType.INT8: 8,
    DType.INT16: 16,
    DType.INT32: 32,
    DType.INT48: 48,
    DType.INT64: 64,
    DType.FP32: 32,
    DType.FP16: 16,
    DType.BF16: 16,
    DType.SHAPE: 64,
    DType.FP8E4M3: 8,
    DType.FP8E5M2: 8,
    DType.FP6E2M3: 6,
    DType.FP6E3M2: 6,
    DType.FP4E2M1: 4,
    DType.FP8UE8M0: 8,
    DType.MXINT8: 8,
}


@dataclass(frozen=True, slots=True, order=True)
class Version:
    """A TOSA specification version as written in the flatbuffer header."""

    major: int
    minor: int
    patch: int
    draft: bool

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}{' draft' if self.draft else ''}"


Array = np.ndarray[Any, np.dtype[Any]]
"""A numpy array of any element type."""

AttrValue = Union[int, float, bool, str, bytes, tuple[int, ...], Array, None]  # noqa: UP007
"""An operator attribute: scalars, enum names (str), int lists (tuple) or raw values (ndarray)."""


@dataclass(frozen=True, slots=True)
class Tensor:
    """A value in the graph: a graph input, an operator result, or a constant."""

    name: str
    shape: tuple[int, ...] | None
    """Dimensions; ``None`` for an unranked tensor. ``-1`` marks a dynamic dimension."""
    dtype: DType
    data: Array | None = field(default=None, compare=False, repr=False)
    """Constant contents, a read-only view shaped like ``shape`` (``None`` unless constant)."""
    is_variable: bool = False
    is_shape: bool = False
    """True for TOSA shape values (``shapes`` table or DType SHAPE): compile-time int64 lists."""

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def element_count(self) -> int | None:
        if self.shape is None or any(d < 0 for d in self.shape):
            return None
        return int(np.prod(self.shape, dtype=np.int64))

    def describe(self) -> str:
        """``name: 1x8x8x4 FP32`` for tables and messages."""
        dims = "?" if self.shape is None else ("x".join(map(str, self.shape)) or "scalar")
        return f"{self.name}: {dims} {self.dtype.value}"


@dataclass(frozen=True, slots=True)
class Operator:
    """One TOSA operator. ``index`` is its position in the source block's operator list."""

    index: int
    op: str
    """TOSA op name, e.g. ``ADD`` or ``CUSTOM``."""
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, AttrValue] = field(default_factory=lambda: MappingProxyType({}))
    """Attribute fields by schema name (``pad``, ``acc_type``, ``implementation_attrs`` ...)."""
    location_text: str | None = None
    """The opaque location string the producer stored (often an MLIR location)."""

    @property
    def custom_name(self) -> str | None:
        """``operator_name`` of a CUSTOM op, else ``None``."""
        value = self.attrs.get("operator_name") if self.op == "CUSTOM" else None
        return value if isinstance(value, str) else None

    @property
    def domain(self) -> str | None:
        """``domain_name`` of a CUSTOM op, else ``None``."""
        value = self.attrs.get("domain_name") if self.op == "CUSTOM" else None
        return value if isinstance(value, str) else None

    @property
    def is_shader(self) -> bool:
        """True for a CUSTOM op in the Vulkan custom shader domain."""
        return self.op == "CUSTOM" and self.domain == CUSTOM_SHADER_DOMAIN

    @property
    def is_constant(self) -> bool:
        return self.op in ("CONST", "CONST_SHAPE")

    def where(self, file: str | None = None) -> Location:
        """The location of this operator, for diagnostics."""
        return Location(
            file=file,
            op_index=self.index,
            op=self.op,
            name=self.custom_name,
            domain=self.domain,
        )

    def label(self) -> str:
        """``#3 CUSTOM 'blur'`` for tables and reports."""
        name = self.custom_name
        return f"#{self.index} {self.op}" + (f" '{name}'" if name else "")


@dataclass(frozen=True, slots=True)
class Graph:
    """The main block of a TOSA model."""

    tensors: Mapping[str, Tensor]
    operators: tuple[Operator, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    version: Version
    source: str | None = None
    """The file this graph was read from (for diagnostics), if any."""
    block_name: str = "main"
    regions: tuple[str, ...] = ("main",)
    """Names of every region in the file; control-flow ops refer to the others by name."""

    def tensor(self, name: str) -> Tensor:
        return self.tensors[name]

    def where(self, op: Operator | None = None) -> Location:
        return op.where(self.source) if op is not None else Location(file=self.source)

    def producers(self) -> dict[str, Operator]:
        """Map from tensor name to the operator that writes it."""
        return {out: op for op in self.operators for out in op.outputs}

    def op_histogram(self) -> dict[str, int]:
        """How many operators of each kind the graph holds, most frequent first."""
        counts: dict[str, int] = {}
        for op in self.operators:
            counts[op.op] = counts.get(op.op, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
