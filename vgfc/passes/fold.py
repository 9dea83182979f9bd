"""Constant folding: an operator whose inputs are all constants becomes a CONST of its result,
computed now (:mod:`vgfc.passes.evaluate`, exactly as the TOSA reference model computes it).

The folded operator keeps its place and its output's name; the constants it read are left to the
``dead-code`` pass. Not folded: an operator whose result is a graph output (the VGF's outputs are
computed by its segments) or is read by a CUSTOM operator (a shader's operands stay as the model
wrote them), a variable's value, shape values, a result larger than ``folded_constant_bytes_max``
or larger than the constants it reads by more than ``folded_growth_bytes_max``
(:data:`vgfc.limits.LIMITS`: folding must not grow the VGF), and every case its evaluator
refuses.
"""

from __future__ import annotations

from vgfc.ir import Data, Graph, Operator, Tensor
from vgfc.limits import LIMITS
from vgfc.passes.edit import in_order, rebuild
from vgfc.passes.evaluate import FOLDABLE, SAME_BYTES, evaluators
from vgfc.passes.records import Rewrite, Rewritten
from vgfc.record import replace

__all__ = ["fold"]


def _constant(tensor: Tensor) -> bool:
    return tensor.data is not None and not tensor.is_variable and not tensor.is_shape


def fold(graph: Graph) -> Rewritten:
    """``graph`` with every operator it can fold made a CONST (see the module docstring)."""
    tensors = graph.tensors
    constant = {n for n, t in tensors.items() if t.data is not None and not t.is_variable}
    if not any(
        op.op in FOLDABLE and op.inputs and constant.issuperset(op.inputs) for op in graph.operators
    ):
        return Rewritten(graph)  # nothing to fold (while folding, only what this finds becomes so)
    kept = set(graph.outputs)
    kept.update(n for op in graph.operators if op.op == "CUSTOM" for n in op.inputs)
    table: dict[str, Tensor] | None = None
    folded: dict[int, Operator] = {}
    rewrites: list[Rewrite] = []
    for op in in_order(graph):
        if op.op not in FOLDABLE or len(op.outputs) != 1 or op.outputs[0] in kept:
            continue
        ins = [tensors[n] if table is None else table[n] for n in op.inputs]
        out = tensors[op.outputs[0]]
        if (
            not ins
            or not all(t.data is not None and not t.is_variable for t in ins)
            or not _constant(ins[0])
            or out.is_shape
            or out.is_variable
            or out.element_count is None
        ):
            continue
        # The limits first, on the bytes the file would store: a fold they refuse costs nothing
        # (numpy loads only for one that happens).
        size = -(-out.element_count * out.dtype.storage_bits // 8)
        read = sum(t.data.raw.nbytes for t in ins if t.data is not None and not t.is_shape)
        if size > LIMITS.folded_constant_bytes_max or size > read + LIMITS.folded_growth_bytes_max:
            continue
        data = _same_bytes(op, ins[0], out) if op.op in SAME_BYTES else _evaluated(op, ins, out)
        if data is None:
            continue
        if table is None:
            table = dict(tensors)
        table[out.name] = replace(out, data=data)
        folded[op.index] = Operator(
            op.index,
            "CONST",
            (),
            op.outputs,
            location_text=op.location_text,
            source_index=op.source_index,
            inserted=op.inserted,
        )
        rewrites.append(Rewrite("fold", op.file_index, op.op, "folded", "into a constant"))
    if not folded:
        return Rewritten(graph)
    operators = [folded.get(op.index, op) for op in graph.operators]
    return Rewritten(rebuild(graph, operators, table), tuple(rewrites))


def _same_bytes(op: Operator, source: Tensor, out: Tensor) -> Data | None:
    """A :data:`SAME_BYTES` op's result: ``source``'s bytes under ``out``'s shape."""
    data = source.data
    if data is None or out.shape is None or source.dtype is not out.dtype:
        return None
    if source.element_count != out.element_count:
        return None
    return Data(data.raw, out.dtype, out.shape)


def _evaluated(op: Operator, ins: list[Tensor], out: Tensor) -> Data | None:
    """The result of ``op`` computed by its evaluator, with numpy; ``None`` where it declines."""
    from vgfc.dtypes import numpy_dtype

    target = numpy_dtype(out.dtype)
    if target is None or any(numpy_dtype(t.dtype) is None for t in ins):
        return None
    args = [t.data.array for t in ins if t.data is not None]
    value = evaluators()[op.op](op, args, out, ins)
    if value is None or tuple(value.shape) != out.shape or value.dtype != target:
        return None
    return Data.of(value, out.dtype)
