"""What a kernel library entry infers for an op's outputs: its ``infer`` rules evaluated over the
operands' shapes and the op's parameters.

Binding holds the model's declared outputs to them (:func:`check_inferred`), a composed entry's
intermediate tensors take their dtype and shape from them (:func:`evaluate_rule`), and the
ExecuTorch export asks them what a custom op gives (:func:`infer_outputs`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vgfc.diagnostics import InputError, Location
from vgfc.dtypes import DType
from vgfc.ir import Graph, Operator, Tensor
from vgfc.resolve.expr import ExprError
from vgfc.resolve.library.records import Entry, TensorRule

__all__ = ["check_inferred", "evaluate_rule", "infer_outputs"]


def infer_outputs(
    entry: Entry, inputs: Mapping[str, Tensor], params: Mapping[str, Any]
) -> list[tuple[DType | None, tuple[int, ...] | None]]:
    """Each output's element type and shape as ``entry`` infers them from its ``inputs`` (the
    entry's input names -> tensors) and decoded ``params`` (defaults filled in here); ``None``
    where the entry says nothing. Raises :class:`InputError` naming the entry when a rule cannot
    be evaluated."""
    scope: dict[str, Any] = {
        **{f.name: f.default for f in entry.params.fields if f.has_default},
        **params,
        **{n: t.shape for n, t in inputs.items()},
    }
    found: list[tuple[DType | None, tuple[int, ...] | None]] = []
    for name in entry.outputs:
        rule = entry.infer.get(name)
        if rule is None:
            found.append((None, None))
            continue
        try:
            found.append(evaluate_rule(rule, inputs, scope))
        except (ExprError, KeyError) as e:
            raise InputError(
                f"cannot infer output '{name}': {e}",
                Location(key=entry.label).merged(entry.where()),
            ) from None
    return found


def evaluate_rule(
    rule: TensorRule, tensors: Mapping[str, Tensor], scope: Mapping[str, Any]
) -> tuple[DType | None, tuple[int, ...] | None]:
    dtype = None
    if rule.dtype is not None:
        dtype = tensors[rule.dtype].dtype if rule.dtype in tensors else DType[rule.dtype]
    shape: tuple[int, ...] | None = None
    if isinstance(rule.shape, str):
        shape = tensors[rule.shape].shape
    elif rule.shape is not None:
        shape = tuple(e.whole(scope) for e in rule.shape)
    return dtype, shape


def check_inferred(
    op: Operator,
    graph: Graph,
    entry: Entry,
    tensors: Mapping[str, Tensor],
    scope: Mapping[str, Any],
    where: Location,
) -> None:
    """Raise :class:`InputError` where what ``entry`` infers for an output of ``op`` (its
    operands ``tensors``, the entry's names -> tensors; ``scope``: parameters and shapes) is not
    what the model declares."""
    for name, rule in entry.infer.items():
        tensor = tensors[name]
        at = Location(tensor=tensor.name, key=f"output '{name}'").merged(where)
        try:
            dtype, shape = evaluate_rule(rule, tensors, scope)
        except ExprError as e:
            raise InputError(
                f"cannot infer its shape: {e} ({entry.where().render()})", at
            ) from None
        if dtype is not None and dtype is not tensor.dtype:
            raise InputError(
                f"{entry.label} gives {dtype.value} ({entry.where().render()}), the model "
                f"declares {tensor.dtype.value}",
                at,
            )
        if shape is not None and shape != tensor.shape:
            raise InputError(
                f"{entry.label} infers shape {list(shape)} ({entry.where().render()}), the "
                f"model declares {list(tensor.shape or ())}",
                at,
            )
