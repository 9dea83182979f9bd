"""One kernel-library entry as a PyTorch op: :class:`TorchOp`, the ops defined in this process,
and what a call of one is in vgfc's terms (its operands as IR tensors, its outputs as the entry
infers them).

The element types PyTorch and TOSA share are here too: every other module of
:mod:`vgfc.executorch` converts through :data:`DTYPES` and :data:`TORCH`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch

from vgfc.diagnostics import InputError, Location
from vgfc.ir import DType, Tensor
from vgfc.record import record

if TYPE_CHECKING:
    from vgfc.resolve.library.records import Entry

__all__ = ["DEFINED", "DTYPES", "TORCH", "TorchOp", "current", "operands", "outputs"]

DTYPES: dict[torch.dtype, DType] = {
    torch.float32: DType.FP32,
    torch.float16: DType.FP16,
    torch.bfloat16: DType.BF16,
    torch.int8: DType.INT8,
    torch.int16: DType.INT16,
    torch.int32: DType.INT32,
    torch.int64: DType.INT64,
    torch.bool: DType.BOOL,
}
"""PyTorch element types and the TOSA ones they are."""
TORCH = {v: k for k, v in DTYPES.items()}


@record
class TorchOp:
    """One kernel-library entry as a PyTorch op."""

    entry: Entry
    qualname: str
    """``my_ops::swish``."""
    schema: Any
    """The parsed ``torch._C.FunctionSchema``."""

    @property
    def overload(self) -> Any:
        """``torch.ops.my_ops.swish.default``: what the partitioner keeps in the delegate."""
        namespace, name = self.qualname.split("::")
        return getattr(getattr(torch.ops, namespace), name).default

    @property
    def operator_name(self) -> str:
        """The ``operator_name`` of the ``tosa.CUSTOM`` op it becomes (also the name of the
        VGF module vgfc writes for it)."""
        return self.qualname.replace("::", ".")

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments by name, defaults filled in (an export drops the arguments
        that equal their defaults, and passes keyword arguments by position)."""
        bound: dict[str, Any] = {}
        for i, argument in enumerate(self.schema.arguments):
            if i < len(args):
                bound[argument.name] = args[i]
            elif argument.name in kwargs:
                bound[argument.name] = kwargs[argument.name]
            elif argument.has_default_value():
                bound[argument.name] = argument.default_value
        return bound

    def params(self, bound: Mapping[str, Any]) -> dict[str, Any]:
        """The entry's parameters of a call (the schema's non-tensor arguments)."""
        return {f.name: bound[f.name] for f in self.entry.params.fields if f.name in bound}

    def where(self) -> Location:
        return self.entry.where()


DEFINED: dict[str, tuple[str, Any, TorchOp]] = {}
"""Qualified name -> (schema text, the torch.library.Library holding it, the op): an op is
defined once per process; loading the same entry again reuses it."""


def current(qualname: str) -> TorchOp:
    """The op as the library loaded last defines it (a library loaded again replaces its
    entry; the torch op, defined once, follows)."""
    return DEFINED[qualname][2]


def operands(op: TorchOp, bound: Mapping[str, Any]) -> dict[str, Tensor]:
    """The entry's inputs as IR tensors (shape and type of the tensors of the call)."""
    found = {}
    for name in op.entry.inputs:
        value = bound[name]
        dtype = DTYPES.get(value.dtype)
        if dtype is None:
            raise InputError(
                f"input '{name}' is {value.dtype}, which no TOSA tensor holds",
                op.where(),
            )
        found[name] = Tensor(name, tuple(int(d) for d in value.shape), dtype)
    return found


def outputs(op: TorchOp, bound: Mapping[str, Any]) -> list[Tensor]:
    """The entry's outputs as the entry infers them for the call."""
    from vgfc.resolve.bind import infer_outputs

    inferred = infer_outputs(op.entry, operands(op, bound), op.params(bound))
    found = []
    for name, (dtype, shape) in zip(op.entry.outputs, inferred, strict=True):
        assert dtype is not None and shape is not None  # load() refuses an entry without them
        found.append(Tensor(name, shape, dtype))
    return found
