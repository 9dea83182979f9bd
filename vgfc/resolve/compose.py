"""Expand a custom op by its kernel library entry's ``compose``: the TOSA built-ins (and the
constants and intermediate tensors they use) that take its place.

Every op made here carries an :class:`~vgfc.diagnostics.Origin` of kind ``compose``: a later
stage's error at one (a lowering error) names the entry and the op it made. The library's own
check of these ops, before any model, is :mod:`vgfc.resolve.compose_check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vgfc.diagnostics import InputError, Location, Origin
from vgfc.dtypes import DType
from vgfc.ir import Data, Graph, Operator, Tensor, TensorsAdded
from vgfc.resolve.convert import Names, added_op
from vgfc.resolve.expr import Expr, ExprError
from vgfc.resolve.infer import evaluate_rule
from vgfc.resolve.library.records import Constant, Entry
from vgfc.resolve.library.values import build_constant

__all__ = ["attr_value", "expand"]


def expand(
    op: Operator,
    graph: Graph,
    entry: Entry,
    names: Mapping[str, str],
    tensors: Mapping[str, Tensor],
    scope: Mapping[str, Any],
    where: Location,
) -> tuple[tuple[Operator, ...], dict[str, Tensor]]:
    """The built-in ops (in dependency order) and new tensors that ``op`` expands into by
    ``entry``'s ``compose`` (``names``: the entry's operand names -> the op's tensors; ``scope``:
    parameters and shapes). Raises :class:`InputError` naming the entry."""
    compose = entry.compose
    assert compose is not None
    fresh = Names(graph)
    base = op.outputs[0] if op.outputs else f"op{op.index}"
    mapping = dict(names)
    new: dict[str, Tensor] = {}
    operators: list[Operator] = []
    why = f"expanded from {entry.label}"
    origin = Origin("compose", entry.label, entry.library.shown, entry.line, column=entry.column)
    try:
        for cname, c in compose.constants.items():
            tname = fresh(f"{base}.{cname}")
            mapping[cname] = tname
            dtype_name = tensors[c.dtype].dtype.value if c.dtype in tensors else c.dtype
            new[tname] = _constant(tname, dtype_name, c.shape, c.value, scope)
            kind = "CONST_SHAPE" if c.dtype == "SHAPE" else "CONST"
            operators.append(added_op(op, kind, (), (tname,), {}, why, origin))
        for iname, rule in compose.tensors.items():
            inner_dtype, shape = evaluate_rule(rule, tensors, scope)
            if inner_dtype is None or shape is None:
                raise ExprError(f"intermediate '{iname}' needs both a dtype and a shape")
            tname = fresh(f"{base}.{iname}")
            mapping[iname] = tname
            new[tname] = Tensor(tname, shape, inner_dtype)
        for o in compose.ops:
            attrs = {k: attr_value(v, scope) for k, v in o.attrs.items()}
            operators.append(
                added_op(
                    op,
                    o.op,
                    tuple(mapping[n] for n in o.inputs),
                    tuple(mapping[n] for n in o.outputs),
                    attrs,
                    why,
                    origin,
                )
            )
    except ExprError as e:
        raise InputError(f"{e} ({entry.where().render()}: compose)", where) from None
    every = TensorsAdded(graph.tensors, new)  # a view: one op's work stays its own size
    for added in operators:
        floats = {
            every[n].dtype.value
            for n in (*added.inputs, *added.outputs)
            if every[n].dtype.is_float and added.op != "CAST"
        }
        if len(floats) > 1:
            raise InputError(
                f"{entry.label} composes {added.op} over {' and '.join(sorted(floats))} values "
                f"({entry.where().render()}: compose): TOSA takes one float type per op; give "
                "constants the dtype of an operand (dtype: <operand name>) or CAST",
                where,
            )
    return tuple(operators), new


def attr_value(value: Any, scope: Mapping[str, Any]) -> Any:
    """An attribute of a composed op as the expansion gives it: expressions evaluated (a
    whole float that an expression computed becomes an int), lists item by item."""
    if isinstance(value, tuple):
        return tuple(attr_value(v, scope) for v in value)
    if isinstance(value, Expr):
        out = value.evaluate(scope)
        if isinstance(out, float) and out.is_integer() and value.tree is not None:
            return int(out)
        return out
    return value


def _constant(
    name: str,
    dtype_name: str,
    shape: tuple[Expr, ...] | None,
    value: Expr | tuple[Expr, ...],
    scope: Mapping[str, Any],
) -> Tensor:
    dtype = DType.SHAPE if dtype_name == "SHAPE" else DType[dtype_name]
    data = build_constant(Constant(dtype_name, shape, value), dtype, scope)
    return Tensor(name, data.shape, dtype, data=Data.of(data, dtype), is_shape=dtype is DType.SHAPE)
