"""The specification's conditions on COND_IF and WHILE_LOOP: each graph they run takes and
gives exactly the operator's inputs and outputs (shape and element type), and the condition is
one BOOL.

Checked for both branches of a COND_IF, whichever one a constant condition would take: a branch
that does not fit its operator makes the graph invalid even where it never runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

from vgfc.ir import DType, Graph, Tensor
from vgfc.verify.conditions import dims
from vgfc.verify.view import OpView, Violation, shape_of

__all__ = ["CONTROL_RULES"]


def _fits(
    outer: Sequence[Tensor], inner: Sequence[Tensor | None], kind: str, what: str
) -> Iterator[Violation]:
    if len(outer) != len(inner):
        yield Violation(kind, f"{what}: {len(inner)} tensors where the operator has {len(outer)}")
        return
    for i, (o, t) in enumerate(zip(outer, inner, strict=True)):
        if t is None:
            continue
        if o.dtype is not t.dtype or (
            shape_of(o) is not None and shape_of(t) is not None and o.shape != t.shape
        ):
            yield Violation(
                kind,
                f"{what}: tensor {i} '{t.name}' is {dims(t.shape)} {t.dtype.value}, the "
                f"operator's '{o.name}' {dims(o.shape)} {o.dtype.value}",
                tensor=o.name,
            )
            return


def _boolean(
    tensor: Tensor | None, kind_type: str, kind_shape: str, what: str
) -> Iterator[Violation]:
    if tensor is None:
        return
    if tensor.dtype is not DType.BOOL:
        yield Violation(kind_type, f"{what} is {tensor.dtype.value}, not BOOL", tensor=tensor.name)
    elif shape_of(tensor) is not None and math.prod(tensor.shape) != 1:  # type: ignore[arg-type]
        yield Violation(
            kind_shape, f"{what} has shape {dims(tensor.shape)}, not one value", tensor=tensor.name
        )


def _region(v: OpView, key: str) -> Graph | None:
    name = v.attr(key)
    return v.regions.get(name) if isinstance(name, str) else None


def _ends(g: Graph) -> tuple[list[Tensor | None], list[Tensor | None]]:
    return (
        [g.tensors.get(n) for n in g.inputs],
        [g.tensors.get(n) for n in g.outputs],
    )


def _cond_if(v: OpView) -> Iterator[Violation]:
    inputs = v.inputs
    if not inputs:
        return
    yield from _boolean(
        inputs[0], "CondIfCondNotMatchingBool", "CondIfCondShapeNotSizeOne", "the condition"
    )
    outputs = [t for t in (v.output(i) for i in range(len(v.op.outputs))) if t is not None]
    for key, branch in (("then_graph", "Then"), ("else_graph", "Else")):
        g = _region(v, key)
        if g is None:
            continue
        ins, outs = _ends(g)
        yield from _fits(inputs[1:], ins, f"CondIfInputList{branch}GraphMismatch", f"{key} inputs")
        yield from _fits(outputs, outs, f"CondIfOutputList{branch}GraphMismatch", f"{key} outputs")


def _while_loop(v: OpView) -> Iterator[Violation]:
    inputs = v.inputs
    outputs = [t for t in (v.output(i) for i in range(len(v.op.outputs))) if t is not None]
    yield from _fits(inputs, outputs, "InputListOutputListMismatch", "outputs")
    cond, body = _region(v, "cond_graph"), _region(v, "body_graph")
    if cond is not None:
        ins, outs = _ends(cond)
        yield from _fits(inputs, ins, "InputListCondGraphMismatch", "cond_graph inputs")
        if len(outs) != 1:
            yield Violation(
                "CondGraphOutputNotMatchingBool",
                f"cond_graph has {len(outs)} outputs, not one BOOL",
            )
        else:
            yield from _boolean(
                outs[0],
                "CondGraphOutputNotMatchingBool",
                "CondGraphOutputShapeNotSizeOne",
                "cond_graph's output",
            )
    if body is not None:
        ins, outs = _ends(body)
        yield from _fits(inputs, ins, "InputListBodyGraphInputMismatch", "body_graph inputs")
        yield from _fits(inputs, outs, "InputListBodyGraphOutputMismatch", "body_graph outputs")


CONTROL_RULES = {"COND_IF": _cond_if, "WHILE_LOOP": _while_loop}
"""Op -> the function that yields its violations."""
