"""Arithmetic that leaves its operand as it is, removed, and SELECT of a LOGICAL_NOT swapped.

Each rewrite keeps every bit of every result; where it would not in some case, it is made only
where that case cannot arise:

- MUL by a constant of ones (shift 0), either operand: ``x * 1`` is ``x``. For an integer, always.
  For a float, IEEE multiplication returns ``x`` itself for every number, infinity and quiet NaN
  (payload included); only a signalling NaN comes back quieted. Arithmetic never makes a
  signalling NaN, so the float case is taken only where ``x`` is the result of an operator that
  computes (not a graph input, a variable, or a layout change of one).
- ADD of a constant of zeros, either operand, and SUB of one as the second: for an integer,
  always. For a float, ``x + (-0.0)`` and ``x - (+0.0)`` are ``x`` for every ``x``;
  ``x + (+0.0)`` and ``x - (-0.0)`` are too except that ``-0.0`` becomes ``+0.0``. That case is
  taken only where the sign of a zero cannot show: every reader of the result (through
  RESHAPE, TRANSPOSE, IDENTITY and SLICE) is the input of a float convolution whose bias holds no
  ``-0.0``. A convolution's result is a sum of terms that includes the bias; an input zero makes
  zero products, which change a sum only where every other term is a zero as well, and the
  sum is then ``-0.0`` only if every term is, the bias included.
- SELECT(LOGICAL_NOT(c), a, b) becomes SELECT(c, b, a) (the LOGICAL_NOT left to ``dead-code``
  when nothing else reads it).

The constant must not broadcast the operand: the result has the operand's shape and type. An
operator stays where removing it would rename a graph output or a value a CUSTOM operator
reads, or where its operand is a variable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from vgfc.ir import Data, DType, Graph, Operator, Tensor
from vgfc.passes.edit import edited, in_order, readers, renamed
from vgfc.passes.records import Rewrite, Rewritten
from vgfc.record import replace

__all__ = ["identities"]

_FLOATS = frozenset({DType.FP16, DType.BF16, DType.FP32})
_INTEGERS = frozenset({DType.INT8, DType.INT16, DType.INT32})
_THROUGH = frozenset({"RESHAPE", "TRANSPOSE", "IDENTITY"})
"""Operators that move values without looking at them: a zero's sign passes through."""
_CONVOLUTIONS = frozenset({"CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"})
_MOVES = _THROUGH | {"SLICE", "TILE", "PAD", "REVERSE", "GATHER"}
"""Operators whose result holds values of their first operand (PAD's pad value is a number)."""
_UNCOMPUTED = frozenset({"CONST", "CUSTOM", "CONCAT", "SELECT", "SCATTER", "COND_IF", "WHILE_LOOP"})
"""Producers whose result may hold a value no arithmetic made (CONCAT and SELECT not followed)."""
_CANDIDATES = frozenset({"MUL", "ADD", "SUB", "SELECT"})


def _splat(tensor: Tensor) -> float | None:
    """The one value every element of a constant holds, with the sign of a zero kept as
    ``-0.0``; ``None`` for a non-constant or a constant of several values.

    Read from the bytes (every element the same bit pattern), not with numpy: this runs on
    every compile whose graph multiplies or adds a constant, where importing numpy would cost
    more than the compile (zeros of both signs, or NaNs of several payloads, are several
    values)."""
    data = tensor.data
    if data is None or tensor.is_variable or tensor.is_shape:
        return None
    if tensor.dtype not in _FLOATS | _INTEGERS or data.size == 0:
        return None
    width = tensor.dtype.storage_bits // 8
    raw = bytes(data.raw[: data.size * width])
    if len(raw) != data.size * width or raw != raw[:width] * data.size:
        return None
    first = Data(memoryview(raw[:width]), tensor.dtype, (1,)).numbers()[0]
    return float(first) if tensor.dtype in _FLOATS else int(first)


def _negative_zero(value: float) -> bool:
    return value == 0 and math.copysign(1.0, value) < 0


def _blind_to_zero_sign(
    name: str, users: Mapping[str, list[Operator]], tensors: Mapping[str, Tensor], fixed: set[str]
) -> bool:
    """Whether no reader of ``name`` can tell ``-0.0`` from ``+0.0`` (see the module docstring).
    A bias is read as Python numbers (:meth:`vgfc.ir.Data.numbers`), as :func:`_splat` reads
    a constant: this runs on compiles that load no numpy otherwise."""
    todo, seen = [name], set()
    while todo:
        value = todo.pop()
        if value in fixed or value in seen or not users.get(value):
            return False
        seen.add(value)
        for op in users[value]:
            if (
                op.op in _THROUGH | {"SLICE"}
                and op.inputs[0] == value
                and value not in op.inputs[1:]
            ):
                todo.extend(op.outputs)
                continue
            if op.op not in _CONVOLUTIONS or op.inputs[0] != value or value in op.inputs[1:]:
                return False
            bias = tensors[op.inputs[2]] if len(op.inputs) > 2 else None
            if bias is None or bias.data is None or bias.is_variable or bias.dtype not in _FLOATS:
                return False
            if any(_negative_zero(v) for v in bias.data.numbers()):
                return False
    return True


def _computed(name: str, producer: Mapping[str, Operator], graph: Graph) -> bool:
    """Whether ``name`` is the result of an operator that computes, followed back through the
    operators that only move the values of their first operand."""
    while True:
        op = producer.get(name)
        if op is None or op.op in _UNCOMPUTED or graph.tensors[name].is_variable:
            return False
        if op.op not in _MOVES:
            return True
        name = op.inputs[0]


def _kept_operand(
    op: Operator,
    tensors: Mapping[str, Tensor],
    producer: Mapping[str, Operator],
    graph: Graph,
    blind: Callable[[str], bool],
    splats: dict[str, float | None],
) -> str | None:
    """The operand ``op``'s result equals, bit for bit, or ``None``."""
    out = tensors[op.outputs[0]]
    dtype = out.dtype
    if dtype not in _FLOATS | _INTEGERS:
        return None
    pairs = [(0, 1), (1, 0)] if op.op in ("MUL", "ADD") else [(0, 1)]
    for keep, other in pairs:
        x, c = tensors[op.inputs[keep]], tensors[op.inputs[other]]
        if x.dtype is not dtype or c.dtype is not dtype or x.shape != out.shape or x.is_variable:
            continue
        value = splats[c.name] if c.name in splats else splats.setdefault(c.name, _splat(c))
        if value is None:
            continue
        if op.op == "MUL":
            shift = _splat(tensors[op.inputs[2]]) if len(op.inputs) > 2 else 0
            if value != 1 or shift != 0:
                continue
            if dtype in _FLOATS and not _computed(x.name, producer, graph):
                continue
            return x.name
        if value != 0:
            continue
        if dtype in _INTEGERS:
            return x.name
        exact = _negative_zero(value) if op.op == "ADD" else not _negative_zero(value)
        if exact or blind(op.outputs[0]):
            return x.name
    return None


def identities(graph: Graph) -> Rewritten:
    """``graph`` with the rewrites of the module docstring made."""
    if not any(op.op in _CANDIDATES for op in graph.operators):
        return Rewritten(graph)
    tensors = graph.tensors
    fixed = set(graph.outputs)
    fixed.update(n for op in graph.operators if op.op == "CUSTOM" for n in op.inputs)
    fixed.update(name for name, t in tensors.items() if t.is_variable)
    producer = {n: op for op in graph.operators for n in op.outputs}
    users: list[dict[str, list[Operator]]] = []  # built when first asked for

    def blind(name: str) -> bool:
        if not users:
            users.append(readers(graph.operators))
        return _blind_to_zero_sign(name, users[0], tensors, fixed)

    splats: dict[str, float | None] = {}
    rename: dict[str, str] = {}
    changed: dict[int, Operator | None] = {}
    rewrites: list[Rewrite] = []
    for original in in_order(graph):
        op = renamed(original, rename)
        if op.op == "SELECT" and len(op.inputs) == 3:
            negation = producer.get(op.inputs[0])
            if negation is not None and negation.op == "LOGICAL_NOT" and negation.inputs:
                op = replace(op, inputs=(negation.inputs[0], op.inputs[2], op.inputs[1]))
                why = f"selects by the operand of LOGICAL_NOT #{negation.file_index}, swapped"
                rewrites.append(Rewrite("identities", op.file_index, op.op, "replaced", why))
        elif op.op in ("MUL", "ADD", "SUB") and len(op.outputs) == 1 and op.outputs[0] not in fixed:
            constant = any(tensors[n].data is not None for n in op.inputs[:2])
            kept = _kept_operand(op, tensors, producer, graph, blind, splats) if constant else None
            if kept is not None and kept not in fixed:
                rename[op.outputs[0]] = kept
                changed[original.index] = None
                why = "multiplies by one" if op.op == "MUL" else "adds zero"
                rewrites.append(Rewrite("identities", op.file_index, op.op, "removed", why))
                continue
        if op is not original:
            changed[original.index] = op
    return Rewritten(edited(graph, changed, rename), tuple(rewrites))
