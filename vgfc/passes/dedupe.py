"""Duplicates made one: constants with the same type, shape and bytes, and operators with the
same op, the same operands and the same attributes (common subexpressions). The first stays and
the later ones' readers read its results; the later ones are left to the ``dead-code`` pass.

Never merged: CUSTOM operators, control flow, variables and what reads or writes them, an
operator whose results are graph outputs or read by a CUSTOM operator.
"""

from __future__ import annotations

from collections.abc import Hashable

from vgfc.ir import Graph, Operator
from vgfc.passes.edit import in_order, rebuild, renamed
from vgfc.passes.records import Rewrite, Rewritten

__all__ = ["dedupe"]

_STATEFUL = frozenset({"CUSTOM", "VARIABLE", "VARIABLE_READ", "VARIABLE_WRITE", "COND_IF",
                       "WHILE_LOOP"})  # fmt: skip


def _attr_key(value: object) -> Hashable:
    tobytes = getattr(value, "tobytes", None)
    if callable(tobytes):  # an array
        return ("array", str(getattr(value, "dtype", "")), getattr(value, "shape", ()), tobytes())
    return value if isinstance(value, Hashable) else repr(value)


def _key(graph: Graph, op: Operator) -> Hashable:
    """What makes two operators compute the same values (for a constant: what makes it worth
    comparing its bytes with another's)."""
    outputs = tuple((graph.tensors[n].dtype, graph.tensors[n].shape) for n in op.outputs)
    if op.is_constant:
        (name,) = op.outputs
        data = graph.tensors[name].data
        if data is None:
            return None
        head = data.raw[:64].tobytes()
        return ("const", op.op, outputs, graph.tensors[name].is_shape, data.raw.nbytes, head)
    if not op.attrs:
        return (op.op, op.inputs, outputs)
    attrs = tuple(sorted((k, _attr_key(v)) for k, v in op.attrs.items()))
    return (op.op, op.inputs, attrs, outputs)


def _same_as(graph: Graph, op: Operator, candidates: list[Operator]) -> Operator | None:
    """The first of ``candidates`` (of ``op``'s key) that computes what ``op`` does."""
    if not op.is_constant:
        return candidates[0]
    data = graph.tensors[op.outputs[0]].data
    for other in candidates:
        known = graph.tensors[other.outputs[0]].data
        if data is not None and known is not None and known.raw == data.raw:
            return other
    return None


def dedupe(graph: Graph) -> Rewritten:
    """``graph`` with its duplicates made one (see the module docstring)."""
    tensors = graph.tensors
    # Two ops can only be the same where they read the same (or, constants, are of one size):
    # where none do, there is nothing to merge (merging is what makes more such pairs).
    rough: set[Hashable] = set()
    for op in graph.operators:
        out = tensors[op.outputs[0]] if op.outputs else None
        data = out.data if out is not None else None
        read: Hashable = data.raw.nbytes if op.is_constant and data is not None else op.inputs
        if (op.op, read) in rough:
            break
        rough.add((op.op, read))
    else:
        return Rewritten(graph)
    fixed = set(graph.outputs)
    fixed.update(n for op in graph.operators if op.op == "CUSTOM" for n in op.inputs)
    variables = {name for name, t in tensors.items() if t.is_variable}
    seen: dict[Hashable, list[Operator]] = {}
    rename: dict[str, str] = {}
    rewrites: list[Rewrite] = []
    for original in in_order(graph):
        op = renamed(original, rename)
        if (
            op.op in _STATEFUL
            or not op.outputs
            or any(n in fixed or n in variables for n in op.outputs)
            or any(n in variables for n in op.inputs)
        ):
            continue
        try:
            key = _key(graph, op)
            candidates = seen.get(key) if key is not None else None
        except TypeError:  # an attribute no key can hold: never merged
            continue
        first = _same_as(graph, op, candidates) if candidates else None
        if first is None:
            if key is not None:
                seen.setdefault(key, []).append(op)
            continue
        rename.update(zip(op.outputs, first.outputs, strict=True))
        why = f"the same as #{first.file_index} {first.op}"
        rewrites.append(Rewrite("dedupe", op.file_index, op.op, "replaced", why))
    if not rename:
        return Rewritten(graph)
    operators = [renamed(op, rename) for op in graph.operators]
    return Rewritten(rebuild(graph, operators), tuple(rewrites))
