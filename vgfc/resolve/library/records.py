"""What a kernel library is, once read: typed records of its entries, kernels and composed
graphs, and the names the file format fixes (dimensions, shader languages, descriptor kinds).

The records are built by :mod:`vgfc.resolve.library.read_entry` and used by the bind step
(:mod:`vgfc.resolve.bind`), ``vgfc kernels`` and ``vgfc verify``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vgfc.diagnostics import Location
from vgfc.dtypes import DType
from vgfc.ir import Sampler
from vgfc.record import field, record
from vgfc.resolve.expr import Expr
from vgfc.resolve.params import Params

__all__ = [
    "BUNDLED",
    "DESCRIPTORS",
    "DIMENSIONS",
    "LANGUAGES",
    "ArgMeta",
    "Compose",
    "ComposeOp",
    "Constant",
    "Entry",
    "Kernel",
    "Library",
    "Resource",
    "Shader",
    "TensorRule",
    "iter_entries",
]

BUNDLED = ("mediapipe",)
"""Libraries shipped in the package (``vgfc/kernels/<name>/<name>.yaml``, data only), by the
name ``--kernels`` takes."""

DIMENSIONS = ("N", "H", "W", "C")
"""Names for the first output's dimensions in kernel expressions."""

LANGUAGES = {".comp": "GLSL", ".glsl": "GLSL", ".hlsl": "HLSL", ".spv": "SPIR-V"}
DESCRIPTORS = {
    "storage_buffer": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
    "uniform_buffer": "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER",
    "storage_image": "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
    "sampled_image": "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE",
    "combined_image_sampler": "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
    "tensor": "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
}


@record
class TensorRule:
    """An output's dtype and shape, from an operand or from expressions."""

    dtype: str | None
    """A DType name, or an operand name to copy; ``None``: not checked."""
    shape: str | tuple[Expr, ...] | None
    """An operand name to copy, or one expression per dimension; ``None``: not checked."""


@record
class ArgMeta:
    """What a kernel accepts for one operand: ``None`` fields accept anything."""

    dtypes: tuple[DType, ...] | None
    alias: str | None
    """The type alias named (operands naming one alias get one dtype)."""
    layouts: tuple[str, ...] | None


@record
class Resource:
    set: int
    binding: int
    descriptor: str
    """``VK_DESCRIPTOR_TYPE_*`` name."""
    format: str | None
    sampler: Sampler | None = None
    """A combined image sampler's sampler state (which it must have)."""


@record
class Shader:
    path: Path
    language: str
    entry_point: str
    include_dirs: tuple[Path, ...]
    defines: tuple[tuple[str, Expr], ...]


@record
class Kernel:
    name: str
    arg_meta: Mapping[str, ArgMeta]
    """Operand name -> what it accepts; a missing operand accepts anything."""
    shader: Shader
    resources: Mapping[str, Resource]
    global_size: tuple[Expr, ...] | None
    workgroups: tuple[Expr, ...] | None
    line: int
    column: int | None = None
    """The column of the kernel's item in ``kernels`` (``line``'s), for gcc's first line."""
    allow_lossy: frozenset[str] = frozenset()
    """Operands kernel selection may convert with a CAST that loses information
    (``allow_lossy: true`` names them all)."""


@record
class Constant:
    dtype: str
    shape: tuple[Expr, ...] | None
    value: Expr | tuple[Expr, ...]


@record
class ComposeOp:
    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any]
    """Attribute name -> :class:`Expr`, tuple of them, or a literal (enum name)."""


@record
class Compose:
    ops: tuple[ComposeOp, ...]
    """In dependency order."""
    constants: Mapping[str, Constant]
    tensors: Mapping[str, TensorRule]


@record
class Entry:
    """One custom operator of a library."""

    domain: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    layout: str
    params: Params
    infer: Mapping[str, TensorRule]
    kernels: tuple[Kernel, ...]
    compose: Compose | None
    library: Library = field(compare=False, repr=False)
    line: int = 0
    example: Mapping[str, Any] = field(default_factory=dict)
    """``example`` of the file: ``params`` and ``shapes`` for ``vgfc kernels``."""
    reference: str | None = None
    """``module:function``: a Python reference of the operator (numpy in, numpy out) that
    ``vgfc verify`` checks the kernels against (:func:`vgfc.resolve.reference.load_reference`)."""
    torch: str | None = None
    """A PyTorch schema, ``my_ops::swish(Tensor x, float beta=1.0) -> Tensor``: the op
    :func:`vgfc.executorch.load` defines for the entry."""
    torch_line: int = 0
    torch_column: int | None = None
    """The line and column of the ``torch:`` key (0 and ``None``: no schema)."""
    column: int | None = None
    """The column of the entry's item in ``operators`` (``line``'s), for gcc's first line."""

    @property
    def label(self) -> str:
        return f"{self.domain}/{self.name}"

    @property
    def operands(self) -> tuple[str, ...]:
        return self.inputs + self.outputs

    def where(self, line: int | None = None, column: int | None = None) -> Location:
        """The library file and line (the entry's, or ``line`` and ``column`` of something in
        it), for diagnostics."""
        return Location(
            file=self.library.shown,
            file_line=line or self.line,
            file_column=column if line else self.column,
            key=self.label,
        )


@record
class Library:
    path: Path
    shown: str
    """The path as the user gave it (or ``mediapipe`` for a bundled one)."""
    name: str
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)

    def find(self, domain: str, name: str) -> Entry | None:
        return self.entries.get((domain, name))


def iter_entries(libraries: Sequence[Library]) -> Iterator[Entry]:
    for library in libraries:
        yield from library.entries.values()
