"""What a rule of the specification sees of one operator.

:class:`OpView` names an operator's operands as the specification and the SPIR-V grammar do
(``input``, ``weight``, ``input_zp``: :func:`vgfc.spirv.tosa_ops.signature`, the one home of those
names), and gives their shapes, element types, constant values and the operator's attributes, so
that a rule reads like the specification's pseudocode. A rule yields :class:`Violation` records;
the driver (:mod:`vgfc.verify.spec`) turns them into diagnostics that name the operator.

Constant values are read with :meth:`vgfc.ir.Data.numbers` (no numpy: these checks run on every
compile) and only for small constants; a value that is not a constant (a graph input under the
dynamic extension) is ``None``, and every condition on it is left to the device
(docs/limits.md lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from vgfc.ir import AttrValue, DType, Graph, Operator, Tensor
from vgfc.record import record

__all__ = ["SMALL_CONSTANT", "OpView", "Rule", "Violation", "dtype_of", "name_of", "shape_of"]

SMALL_CONSTANT = 4096
"""Elements of the largest constant whose values a rule reads (shapes, zero points,
multipliers, permutations); a larger one is treated as unknown, so no check costs more than
reading that many numbers."""


@record
class Violation:
    """One broken condition of one operator."""

    kind: str
    """The condition's name: tosa-tools' name of the ``ERROR_IF`` where it has one (the
    official negative tests carry it in their names, ``conv2d_ERRORIF_DilationSmallerOne_...``),
    else a name in the same style."""
    message: str
    """What is wrong, with the values: the specification's condition in words."""
    tensor: str | None = None
    key: str | None = None


Rule = Callable[["OpView"], Iterator[Violation]]
"""A rule: the violations of one operator."""


class OpView:
    """One operator of a graph, as a rule of the specification reads it."""

    __slots__ = ("_names", "graph", "op", "regions")

    def __init__(
        self,
        graph: Graph,
        op: Operator,
        names: tuple[str, ...],
        regions: Mapping[str, Graph] | None = None,
    ) -> None:
        self.graph = graph
        self.op = op
        self._names = names
        """The grammar's names of the operator's inputs, in order."""
        self.regions: Mapping[str, Graph] = regions if regions is not None else graph.blocks
        """The graphs of the model's other regions, by name (what control flow runs)."""

    # -- tensors -------------------------------------------------------------------------------

    def input(self, name: str) -> Tensor | None:
        """The input the specification calls ``name``; ``None`` where the operator lacks it
        (the structural checks and the lowering report a missing operand)."""
        try:
            i = self._names.index(name)
        except ValueError:
            raise KeyError(f"{self.op.op} has no operand {name!r}") from None
        return self.graph.tensors[self.op.inputs[i]] if i < len(self.op.inputs) else None

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """Every input tensor, in order (CONCAT's list)."""
        return tuple(self.graph.tensors[n] for n in self.op.inputs)

    def output(self, i: int = 0) -> Tensor | None:
        outputs = self.op.outputs
        return self.graph.tensors[outputs[i]] if i < len(outputs) else None

    def ints(self, tensor: Tensor | None) -> tuple[int, ...] | None:
        """The values of a small integer constant (a CONST_SHAPE, a zero point, a permutation);
        ``None`` for anything else."""
        values = self.numbers(tensor)
        if values is None or any(isinstance(v, float) for v in values):
            return None
        return tuple(int(v) for v in values)

    def numbers(self, tensor: Tensor | None) -> tuple[int | float, ...] | None:
        """The values of a small constant of any numeric type; ``None`` for anything else."""
        if tensor is None or tensor.data is None or tensor.data.size > SMALL_CONSTANT:
            return None
        try:
            return tuple(tensor.data.numbers())
        except ValueError:  # an element type without plain numbers (FP8, the 1.1 draft's)
            return None

    def nonzero(self, tensor: Tensor | None) -> bool | None:
        """Whether a small constant holds a value other than zero (``-0.0`` is zero), read from
        its bytes, so that every element type answers (FP8 too); ``None`` for anything else."""
        if tensor is None or tensor.data is None or tensor.data.size > SMALL_CONSTANT:
            return None
        data = tensor.data
        bits = data.element.storage_bits
        if bits % 8:  # INT4: two to a byte
            values = self.numbers(tensor)
            return None if values is None else any(x != 0 for x in values)
        width, sign = bits // 8, (1 << (bits - 1)) if data.element.is_float else 0
        raw = bytes(data.raw[: data.size * width])
        return any(
            int.from_bytes(raw[i : i + width], "little") & ~sign for i in range(0, len(raw), width)
        )

    # -- attributes ----------------------------------------------------------------------------

    def attr(self, key: str) -> AttrValue:
        return self.op.attrs.get(key)

    def int_list(self, key: str) -> tuple[int, ...] | None:
        """An integer-list attribute (``pad``, ``stride``, ``kernel``), or ``None``."""
        value = self.op.attrs.get(key)
        if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
            return value
        return None


def shape_of(tensor: Tensor | None) -> tuple[int, ...] | None:
    """A tensor's static shape; ``None`` when unknown (unranked, a dynamic dimension) or absent,
    so that a condition on it is not checked."""
    if tensor is None:
        return None
    shape = tensor.shape
    if shape is None or (shape and min(shape) < 0):
        return None
    return shape


def name_of(tensor: Tensor | None) -> str | None:
    return None if tensor is None else tensor.name


def dtype_of(tensor: Tensor | None) -> DType | None:
    return None if tensor is None else tensor.dtype
