"""The operands a graph instruction takes only as constants, checked before a graph is built.

Some operands of TOSA.001000.1 instructions must be constant instructions (``OpConstant*``,
``OpGraphConstantARM``): zero points, MUL's shift, PAD's pad value, RESIZE's parameters and the
shape operands. Which ones is one table, :attr:`vgfc.spirv.tosa_ops.Lowering.constants`. The
TOSA dynamic extension lets a model give them as graph inputs (or compute them), and a graph
module that reads one from an input or an earlier instruction is well formed but is rejected
when the runtime builds it (``Missing declared constant for id``). So every such operand must
be a constant after all, found through IDENTITY ops (which lowering folds away), or lowered
another way (PAD's pad value: :mod:`vgfc.lower.pad_value`), or the op is refused here, naming
the operand and where its value comes from, before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping

from vgfc.diagnostics import UnsupportedError
from vgfc.ir import Graph, Operator
from vgfc.spirv.tosa_ops import TOSA_LOWERINGS, constant_inputs

__all__ = ["LOWERED_OTHERWISE", "ConstantOperands"]

LOWERED_OTHERWISE = {"PAD": "pad_const"}
"""Constant operands whose op lowers another way when they are not constants (an op whose
``pad_const`` is its last input: :mod:`vgfc.lower.pad_value`)."""


class ConstantOperands:
    """Follows the ops of one ML partition in order, checking each op's constant operands.

    ``check`` is called on every op of the partition, producers before consumers (the
    partition's dependency order)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.aliases: dict[str, str] = {}
        """IDENTITY output -> the tensor whose value it names (followed to the end)."""
        self.computed: dict[str, Operator] = {}
        """Tensor -> the op of this partition that computes it at run time."""

    def check(self, op: Operator) -> None:
        """Raise :class:`UnsupportedError` for the first input of ``op`` its instruction needs
        as a constant that is not one; then note what ``op`` produces."""
        if op.op in TOSA_LOWERINGS:
            for index, operand in constant_inputs(op.op):
                if index < len(op.inputs) and LOWERED_OTHERWISE.get(op.op) != operand:
                    self._check_input(op, index, operand)
        if op.op == "IDENTITY" and len(op.inputs) == 1 and len(op.outputs) == 1:
            self.aliases[op.outputs[0]] = self.aliases.get(op.inputs[0], op.inputs[0])
            return
        for name in op.outputs:
            self.computed[name] = op

    def _check_input(self, op: Operator, index: int, operand: str) -> None:
        given = op.inputs[index]
        name = self.aliases.get(given, given)
        tensor = self.graph.tensors.get(name)
        if tensor is None or tensor.data is not None:
            return  # a constant (or a name the emitter reports as undefined)
        if tensor.is_shape and tensor.shape == (0,):
            return  # the shape of a rank-0 tensor: no values, a constant of nothing
        raise UnsupportedError(
            f"input {index} '{operand}' must be a constant: TOSA.001000.1 takes {op.op}'s "
            f"{operand} only as a constant (the runtime rejects a graph that reads it at run "
            f"time), but {_source(self.graph, name, self.computed)}; give it as a CONST",
            tensor=given,
        )


def _source(graph: Graph, name: str, computed: Mapping[str, Operator]) -> str:
    """Where the value of tensor ``name`` comes from, for the message."""
    producer = computed.get(name)
    if producer is not None:
        return f"op #{producer.file_index} {producer.op} computes it"
    if name in graph.inputs:
        return "it is a graph input (the TOSA dynamic extension)"
    return "it is computed outside this graph (by another segment)"
