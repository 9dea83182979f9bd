"""Operators that compute nothing, removed, and chains of layout changes made one.

- Removed, their readers reading the operand instead: IDENTITY; a RESHAPE, CAST, PAD, SLICE
  or TILE whose result is its operand (same shape, same type; zero padding; the whole tensor;
  multiples of one); a TRANSPOSE by the identity permutation; a CLAMP whose bounds hold every
  value of its type (an integer type's whole range, as the fused ReLU of an int8 TFLite layer
  whose zero point is -128 gives; a float's -inf and +inf with NaNs propagated).
- SLICE of CONCAT whose window lies in one of CONCAT's operands: the SLICE reads that operand
  (where the window starts at the operand's start along the axis; the operand itself where the
  window is all of it). MLIR's canonicaliser does the same, so the reference converter's LSTM
  and GRU graphs do not slice the time steps they joined.
- RESHAPE of RESHAPE: the second reshapes the first one's operand.
- TRANSPOSE of TRANSPOSE: one TRANSPOSE by the composed permutation (removed when that is the
  identity).

An operator stays where removing it would rename a graph output or a value a CUSTOM operator
reads, or where its operand or result is a variable. The operators left unread are the
``dead-code`` pass's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vgfc.ir import DType, Graph, Operator, Tensor
from vgfc.passes.edit import edited, in_order, renamed
from vgfc.passes.records import Rewrite, Rewritten
from vgfc.record import replace

__all__ = ["simplify"]

_LAYOUT = frozenset({"IDENTITY", "RESHAPE", "TRANSPOSE", "CAST", "PAD", "SLICE", "TILE", "CLAMP"})
_RANGE = {DType.INT8: 8, DType.INT16: 16, DType.INT32: 32}
_FLOATS = frozenset({DType.FP16, DType.BF16, DType.FP32})


def _values(tensor: Tensor) -> tuple[int, ...] | None:
    """The integers of a constant operand (a shape value or a constant tensor), read without
    numpy where the element type allows (:meth:`vgfc.ir.Data.numbers`): a compile that only
    looks at a SLICE's start loads none."""
    if tensor.data is None or tensor.is_variable:
        return None
    try:
        values = tensor.data.numbers()
    except ValueError:  # an element type only numpy reads
        values = tensor.data.array.reshape(-1).tolist()
    return tuple(int(v) for v in values)


def _no_op(op: Operator, tensors: Mapping[str, Tensor]) -> bool:
    """Whether ``op``'s result is its first operand, element for element."""
    source, result = tensors[op.inputs[0]], tensors[op.outputs[0]]
    if (
        source.shape is None
        or source.shape != result.shape
        or source.dtype is not result.dtype
        or any(d < 0 for d in source.shape)
    ):
        return False
    if op.op in ("IDENTITY", "RESHAPE", "CAST"):
        return True
    if op.op == "CLAMP":
        return _whole_range(op, source.dtype)
    if op.op == "TRANSPOSE":
        return op.attrs.get("perms") == tuple(range(len(source.shape)))
    operand = _values(tensors[op.inputs[1]]) if len(op.inputs) > 1 else None
    if operand is None:
        return False
    if op.op == "PAD":
        return not any(operand)
    if op.op == "SLICE":
        size = _values(tensors[op.inputs[2]]) if len(op.inputs) > 2 else None
        return not any(operand) and size == source.shape
    return op.op == "TILE" and all(m == 1 for m in operand)


def simplify(graph: Graph) -> Rewritten:
    """``graph`` simplified (see the module docstring)."""
    if not any(op.op in _LAYOUT for op in graph.operators):
        return Rewritten(graph)
    tensors = graph.tensors
    fixed = set(graph.outputs)
    fixed.update(n for op in graph.operators if op.op == "CUSTOM" for n in op.inputs)
    fixed.update(name for name, t in tensors.items() if t.is_variable)
    producer: dict[str, Operator] = {}
    rename: dict[str, str] = {}
    changed: dict[int, Operator | None] = {}
    rewrites: list[Rewrite] = []
    for original in in_order(graph):
        op = renamed(original, rename)
        if op.op in _LAYOUT and len(op.outputs) == 1 and op.inputs:
            first = producer.get(op.inputs[0])
            if op.op == first_op(first) == "RESHAPE" and first is not None:
                op = replace(op, inputs=(first.inputs[0], *op.inputs[1:]))
                why = f"reshapes the operand of RESHAPE #{first.file_index}"
                rewrites.append(Rewrite("simplify", op.file_index, op.op, "replaced", why))
            elif op.op == first_op(first) == "TRANSPOSE" and first is not None:
                op = _composed(op, first)
                why = f"composed with TRANSPOSE #{first.file_index}"
                rewrites.append(Rewrite("simplify", op.file_index, op.op, "replaced", why))
            elif op.op == "SLICE" and first_op(first) == "CONCAT" and first is not None:
                inner = _sliced_operand(op, first, tensors)
                if inner is not None and inner[1] and op.outputs[0] not in fixed:
                    rename[op.outputs[0]] = inner[0]
                    changed[original.index] = None
                    why = f"takes a whole operand of CONCAT #{first.file_index}"
                    rewrites.append(Rewrite("simplify", op.file_index, op.op, "removed", why))
                    continue
                if inner is not None and not inner[1]:
                    op = replace(op, inputs=(inner[0], *op.inputs[1:]))
                    why = f"slices an operand of CONCAT #{first.file_index}"
                    rewrites.append(Rewrite("simplify", op.file_index, op.op, "replaced", why))
            if op.outputs[0] not in fixed and op.inputs[0] not in fixed and _no_op(op, tensors):
                rename[op.outputs[0]] = op.inputs[0]
                changed[original.index] = None
                rewrites.append(Rewrite("simplify", op.file_index, op.op, "removed", "no-op"))
                continue
        if op is not original:
            changed[original.index] = op
        for name in op.outputs:
            producer[name] = op
    return Rewritten(edited(graph, changed, rename), tuple(rewrites))


def _whole_range(op: Operator, dtype: DType) -> bool:
    """Whether CLAMP ``op`` on ``dtype`` changes no value."""
    low, high = op.attrs.get("min_val"), op.attrs.get("max_val")
    if not isinstance(low, int | float) or not isinstance(high, int | float):
        return False
    bits = _RANGE.get(dtype)
    if bits is not None:
        return low <= -(1 << (bits - 1)) and high >= (1 << (bits - 1)) - 1
    # -inf and +inf keep every number (and -0.0); a NaN passes only when propagated.
    inf = float("inf")
    return (
        dtype in _FLOATS
        and (low, high) == (-inf, inf)
        and op.attrs.get("nan_mode")
        in (
            None,
            "PROPAGATE",
        )
    )


def _sliced_operand(
    op: Operator, concat: Operator, tensors: Mapping[str, Tensor]
) -> tuple[str, bool] | None:
    """The operand of ``concat`` whose values SLICE ``op`` takes, and whether it takes all of
    them. Only an operand it takes whole, or one that starts where the CONCAT's result does
    (so that the SLICE's start holds for it as it is), is given."""
    if len(op.inputs) != 3 or not concat.inputs:
        return None
    start, size = _values(tensors[op.inputs[1]]), _values(tensors[op.inputs[2]])
    axis = concat.attrs.get("axis")
    if start is None or size is None or not isinstance(axis, int):
        return None
    offset = 0
    for name in concat.inputs:
        operand = tensors[name]
        shape = operand.shape
        if shape is None or not 0 <= axis < len(shape) or len(start) != len(shape):
            return None
        if start[axis] >= offset and start[axis] + size[axis] <= offset + shape[axis]:
            if operand.is_variable:
                return None
            whole = (
                start[axis] == offset
                and size == shape
                and not any(s for i, s in enumerate(start) if i != axis)
            )
            return (name, whole) if whole or offset == 0 else None
        offset += shape[axis]
    return None


def first_op(op: Operator | None) -> str | None:
    return None if op is None else op.op


def _composed(second: Operator, first: Operator) -> Operator:
    """TRANSPOSE ``second`` of TRANSPOSE ``first``'s result, as one TRANSPOSE of its operand."""
    outer, inner = second.attrs.get("perms"), first.attrs.get("perms")
    if not isinstance(outer, tuple) or not isinstance(inner, tuple) or len(outer) != len(inner):
        return second
    perms = tuple(inner[i] for i in outer)
    attrs = MappingProxyType({**second.attrs, "perms": perms})
    return replace(second, inputs=(first.inputs[0], *second.inputs[1:]), attrs=attrs)
