"""The in-memory model: immutable tensors, operators and graphs.

The reader builds these from a TOSA flatbuffer; every later stage reads them and returns new
values. Operators keep their index in the source block so that every diagnostic can point at the
exact operator the user wrote. Constant data (:class:`Data`) stays a read-only view of the input
buffer, read as numbers only where a stage needs numbers: importing numpy costs more than a whole
compile of a small model, so nothing here imports it until a constant's ``array`` is asked for.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from vgfc.diagnostics import Location
from vgfc.dtypes import DType  # re-exported: most stages take it with the IR
from vgfc.options import SHADER_DOMAIN
from vgfc.record import field, record

__all__ = [
    "CONSTANT_OPS",
    "CUSTOM_SHADER_DOMAIN",
    "IMAGE_DESCRIPTORS",
    "REGION_ATTRS",
    "Array",
    "AttrValue",
    "DType",
    "Data",
    "Graph",
    "Operator",
    "PushConstant",
    "Sampler",
    "ShaderResource",
    "ShaderSpec",
    "Tensor",
    "TensorsAdded",
    "Version",
]

CUSTOM_SHADER_DOMAIN = SHADER_DOMAIN
"""``domain_name`` that marks a CUSTOM op as a Vulkan compute shader (named in the option
table, whose ``--custom-op-domain-to-opcode`` refuses it)."""

CONSTANT_OPS = frozenset({"CONST", "CONST_SHAPE"})
"""The ops whose result is constant data (:attr:`Operator.is_constant`)."""

REGION_ATTRS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"COND_IF": ("then_graph", "else_graph"), "WHILE_LOOP": ("cond_graph", "body_graph")}
)
"""The control-flow ops and the attributes that name the regions whose graphs they run."""


@record(order=True)
class Version:
    """A TOSA specification version as written in the flatbuffer header."""

    major: int
    minor: int
    patch: int
    draft: bool

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}{' draft' if self.draft else ''}"


TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap
    from typing import Any, TypeAlias, Union

    import numpy as np

    from vgfc.diagnostics import Origin
    from vgfc.ir_shaders import (
        IMAGE_DESCRIPTORS,
        PushConstant,
        Sampler,
        ShaderResource,
        ShaderSpec,
    )

    Array: TypeAlias = np.ndarray[Any, np.dtype[Any]]
    """A numpy array of any element type."""
    AttrValue: TypeAlias = Union[int, float, bool, str, bytes, tuple[int, ...], Array, None]  # noqa: UP007
    """An operator attribute: scalars, enum names (str), int lists (tuple) or raw values
    (ndarray)."""
else:
    # Type aliases are for type checkers; importing ``typing`` to build them at run time cost a
    # command 5 ms (vgfc.cli.quick). The names stay for the modules that import them.
    Array = AttrValue = object


_STRUCT_CODES = {
    DType.INT8: "b", DType.INT16: "h", DType.INT32: "i", DType.INT64: "q", DType.SHAPE: "q",
    DType.FP32: "f", DType.FP16: "e",
}  # fmt: skip
"""``struct`` codes of the element types whose bytes are plain little-endian numbers."""


class Data:
    """The value of a constant: its little-endian bytes as a TOSA flatbuffer stores them (INT48
    in six bytes, INT4 two to a byte, BOOL one byte, shape values as int64), its element type
    and its shape.

    Lowering reads the few values of a small constant with ``struct`` and hands a large one's
    bytes to the encoder as they are, so a compile needs no numpy. :attr:`array` is the numpy
    view for the stages that compute with values (kernel libraries, ``vgfc run``); any other
    attribute (``shape`` and ``size`` aside, which need no numpy) is the array's, so
    ``data.tolist()`` and ``np.asarray(data)`` work as on an array.
    """

    __slots__ = ("_array", "element", "origin", "raw", "shape")

    def __init__(
        self,
        raw: memoryview,
        dtype: DType,
        shape: tuple[int, ...],
        origin: tuple[mmap.mmap, int] | None = None,
    ) -> None:
        self.raw = raw
        """The bytes, read-only: a view of the input file for a constant read from one."""
        self.element = dtype
        """The TOSA element type (``dtype`` is the numpy array's, as on an array)."""
        self.shape = shape
        self.origin = origin
        """The read-only memory map ``raw`` is a view of, and where in it ``raw`` starts (so
        the encoder can let its pages go once written); ``None`` otherwise."""
        self._array: Array | None = None

    @classmethod
    def of(cls, array: Array, dtype: DType) -> Data:
        """The data of a numpy array (shaped like the tensor), converted to ``dtype``'s IR
        element type where it has another."""
        import numpy as np

        from vgfc.dtypes import numpy_dtype

        target = numpy_dtype(dtype)
        if target is not None and np.asarray(array).dtype != target:
            array = np.asarray(array).astype(target)
        flat = np.ascontiguousarray(array).reshape(-1)
        if dtype is DType.INT48:
            raw = flat.astype("<i8").view(np.uint8).reshape(-1, 8)[:, :6].tobytes()
        elif dtype is DType.INT4:
            nibbles = (flat.astype(np.int8) & 0x0F).astype(np.uint8)
            if nibbles.size % 2:
                nibbles = np.append(nibbles, np.uint8(0))
            raw = (nibbles[0::2] | (nibbles[1::2] << 4)).tobytes()
        elif dtype is DType.BOOL:
            raw = (flat != 0).astype(np.uint8).tobytes()
        else:
            raw = (flat.byteswap() if flat.dtype.byteorder == ">" else flat).tobytes()
        data = cls(memoryview(raw).toreadonly(), dtype, tuple(int(d) for d in array.shape))
        data._array = array
        return data

    @property
    def size(self) -> int:
        """Elements (the product of the static dimensions)."""
        return math.prod(d for d in self.shape if d >= 0)

    def numbers(self) -> list[int] | list[float]:
        """The values as Python numbers, in storage order, without numpy: integers (BOOL as 0
        and 1, INT48 and INT4 sign-extended) or floats (FP32, FP16, BF16). For the few values
        of a small constant (a zero point, a shape): the stages that read those run on every
        compile, where importing numpy would cost more than the compile."""
        raw, count, dtype = self.raw, self.size, self.element
        code = _STRUCT_CODES.get(dtype)
        if code is not None:
            return list(struct.unpack_from(f"<{count}{code}", raw))
        if dtype is DType.BOOL:
            return [1 if v else 0 for v in raw[:count]]
        if dtype is DType.BF16:  # the top half of an FP32
            halves = struct.unpack_from(f"<{count}H", raw)
            return list(
                struct.unpack(f"<{count}f", struct.pack(f"<{count}I", *(h << 16 for h in halves)))
            )
        if dtype is DType.INT48:
            six = bytes(raw[: count * 6])
            return [
                int.from_bytes(six[i : i + 6], "little", signed=True) for i in range(0, len(six), 6)
            ]
        if dtype is DType.INT4:
            nibbles = [n for byte in raw for n in (byte & 0x0F, byte >> 4)][:count]
            return [n - 16 if n & 8 else n for n in nibbles]
        raise ValueError(f"element type {dtype.value} has no numbers without numpy")

    @property
    def array(self) -> Array:
        """The values as a read-only numpy array shaped like the tensor (a view of :attr:`raw`
        where the element type allows; INT48 and INT4 are widened, a copy)."""
        if self._array is None:
            self._array = _decode(self.raw, self.element, self.shape)
        return self._array

    def __array__(self, dtype: Any = None, copy: Any = None) -> Array:
        import numpy as np

        return np.asarray(self.array, dtype=dtype)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in Data.__slots__:
            raise AttributeError(name)
        return getattr(self.array, name)

    def __getitem__(self, key: Any) -> Any:
        return self.array[key]

    def __len__(self) -> int:
        return len(self.array)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.array)

    def __repr__(self) -> str:
        return f"Data({self.element.value}, {list(self.shape)}, {self.raw.nbytes} bytes)"


def _decode(raw: memoryview, dtype: DType, shape: tuple[int, ...]) -> Array:
    """``raw`` (little-endian TOSA constant bytes of ``dtype``) as numpy values shaped ``shape``."""
    import numpy as np

    from vgfc.dtypes import numpy_dtype

    count = math.prod(shape) if min(shape, default=0) >= 0 else int(np.prod(shape, dtype=np.int64))
    data = np.frombuffer(raw, dtype=np.uint8)
    if dtype is DType.INT48:
        # Six little-endian bytes per element, sign-extended into int64 (a copy: INT48 is rare).
        padded = np.zeros((count, 8), np.uint8)
        padded[:, :6] = data[: count * 6].reshape(count, 6)
        padded[:, 6:] = np.where(padded[:, 5:6] & 0x80, 0xFF, 0)
        values = padded.view("<i8").reshape(count)
    elif dtype is DType.INT4:
        # Two elements per byte, low nibble first, sign-extended (a copy).
        nibbles = np.stack([data & 0x0F, data >> 4], axis=-1).reshape(-1)[:count].astype(np.int8)
        values = np.where(nibbles > 7, nibbles - 16, nibbles).astype(np.int8)
    else:
        little = numpy_dtype(dtype)
        if little is None:
            # Packed sub-byte float formats of the 1.1 draft (FP6, FP4, MXINT8): raw bytes.
            data.flags.writeable = False
            return data
        values = data.view(little)
    values = values.reshape(shape)
    values.flags.writeable = False
    return values


@record
class Tensor:
    """A value in the graph: a graph input, an operator result, or a constant."""

    name: str
    shape: tuple[int, ...] | None
    """Dimensions; ``None`` for an unranked tensor. ``-1`` marks a dynamic dimension."""
    dtype: DType
    data: Data | None = field(default=None, compare=False, repr=False)
    """Constant contents (``None`` unless constant)."""
    is_variable: bool = False
    is_shape: bool = False
    """True for TOSA shape values (``shapes`` table or DType SHAPE): compile-time int64 lists."""

    @property
    def element_count(self) -> int | None:
        if self.shape is None or any(d < 0 for d in self.shape):
            return None
        return math.prod(self.shape)  # exact, where numpy's int64 product would wrap


_NO_ATTRS: Mapping[str, AttrValue] = MappingProxyType({})
"""The attributes of an operator that has none (immutable, so one serves every operator)."""


@record
class Operator:
    """One TOSA operator. ``index`` is its position in the source block's operator list."""

    index: int
    op: str
    """TOSA op name, e.g. ``ADD`` or ``CUSTOM``."""
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, AttrValue] = field(default_factory=lambda: _NO_ATTRS)
    """Attribute fields by schema name (``pad``, ``acc_type``, ``implementation_attrs`` ...)."""
    location_text: str | None = None
    """The opaque location string the producer stored (often an MLIR location)."""
    shader: ShaderSpec | None = field(default=None, compare=False, repr=False)
    """What the resolve stage bound a custom op to: the shader that runs it. ``None`` for
    built-in ops and for custom ops not resolved (yet)."""
    source_index: int | None = None
    """The op's index in the file when resolve renumbered the graph (it expanded a composed
    op or inserted conversions); ``None`` while ``index`` is that index. An op vgfc added
    carries the index of the custom op it was added for."""
    inserted: str | None = None
    """Why vgfc added this op (``expanded from ...``, ``inserted by kernel selection ...``);
    ``None`` for an op of the file."""
    origin: Origin | None = field(default=None, compare=False, repr=False)
    """What made this op where a kernel library did: the kernel it runs as, the entry whose
    ``compose`` made it, or the entry whose kernel a conversion was inserted for. Diagnostics
    at the op carry it (:meth:`where`) and show the library's keys."""
    call_opcode: int | None = None
    """What resolve bound a CUSTOM op of a mapped domain to (``--custom-op-domain-to-opcode``,
    ``--enable-bespoke``): the opcode of the Arm.ExperimentalMLOperations.1 CALL its graph
    partition runs it as. ``None`` for every other op."""

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
        """True for an op that runs as a shader: one resolve bound to a shader, or (before
        resolve) a CUSTOM op in the Vulkan custom shader domain."""
        return self.shader is not None or (
            self.op == "CUSTOM" and self.domain == CUSTOM_SHADER_DOMAIN
        )

    @property
    def is_constant(self) -> bool:
        return self.op in CONSTANT_OPS

    def where(self, file: str | None = None, *, origin: bool = True) -> Location:
        """The location of this operator, for diagnostics, with the op's :attr:`origin` unless
        ``origin`` is false (a message about the op as the model has it, not as a library
        made it)."""
        return Location(
            file=file,
            op_index=self.file_index,
            op=self.op,
            name=self.custom_name,
            domain=self.domain,
            origin=self.origin if origin else None,
        )

    @property
    def file_index(self) -> int:
        """The index of this op (or of the custom op it was added for) in the file."""
        return self.index if self.source_index is None else self.source_index

    def label(self) -> str:
        """``#3 CUSTOM 'blur'`` for tables and reports; ``#3 CAST (inserted by ...)`` for an
        op vgfc added for custom op #3."""
        name = self.custom_name
        text = f"#{self.file_index} {self.op}" + (f" '{name}'" if name else "")
        return f"{text} ({self.inserted})" if self.inserted else text


@record
class Graph:
    """The main block of a TOSA model."""

    tensors: Mapping[str, Tensor]
    operators: tuple[Operator, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    version: Version
    source: str | None = None
    """The file this graph was read from (for diagnostics), if any."""
    regions: tuple[str, ...] = ("main",)
    """Names of every region in the file; control-flow ops refer to the others by name."""
    blocks: Mapping[str, Graph] = field(default_factory=lambda: _NO_BLOCKS)
    """The first block of every region but the main one, by region name, where the main block
    has control flow (:data:`REGION_ATTRS`); empty otherwise. Region names are the file's, so
    a block's own control-flow ops find their regions here too."""
    output_names: tuple[str, ...] = ()
    """What the model calls its outputs, one per :attr:`outputs` entry, where a stage gave an
    output a tensor of its own (:mod:`vgfc.passthrough`); empty while :attr:`outputs` are
    those names. The VGF names its sequence outputs from these."""

    def where(self, op: Operator | None = None) -> Location:
        return op.where(self.source) if op is not None else Location(file=self.source)

    def op_histogram(self) -> dict[str, int]:
        """How many operators of each kind the graph holds, most frequent first."""
        counts: dict[str, int] = {}
        for op in self.operators:
            counts[op.op] = counts.get(op.op, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class TensorsAdded(Mapping[str, "Tensor"]):
    """A tensor table with tensors added over it, as a read-only view: what a stage that adds
    tensors op by op hands to the next op's work, so that each op costs its own size, not a copy
    of the whole table (which made binding N library ops take N^2 time). Reads go to ``added``
    first; the two tables are the caller's and may grow."""

    __slots__ = ("_added", "_base")

    def __init__(self, base: Mapping[str, Tensor], added: Mapping[str, Tensor]) -> None:
        self._base = base
        self._added = added

    def __getitem__(self, name: str) -> Tensor:
        found = self._added.get(name)
        return self._base[name] if found is None else found

    def __contains__(self, name: object) -> bool:
        return name in self._added or name in self._base

    def __iter__(self) -> Iterator[str]:
        yield from self._added
        yield from (n for n in self._base if n not in self._added)

    def __len__(self) -> int:
        return len(self._base) + sum(1 for n in self._added if n not in self._base)


_NO_BLOCKS: Mapping[str, Graph] = MappingProxyType({})

_SHADER_TYPES = frozenset(
    {"IMAGE_DESCRIPTORS", "PushConstant", "Sampler", "ShaderResource", "ShaderSpec"}
)


def __getattr__(name: str) -> Any:
    """The resolved-op types (:mod:`vgfc.ir_shaders`), loaded when first asked for: they are
    what the resolve stage binds a custom op to, a concern of their own that a model without
    custom ops never reaches (and so never loads)."""
    if name in _SHADER_TYPES:
        from vgfc import ir_shaders

        value = getattr(ir_shaders, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'vgfc.ir' has no attribute {name!r}")
