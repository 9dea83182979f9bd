"""Check a kernel library's composed ops against the TOSA instructions, before any model.

A composed entry (``compose.ops``) expands into TOSA built-ins when a model uses it; without
these checks a misspelt op (``op: MULL``), a missing operand (MUL without its ``shift``) or an
attribute of the wrong kind surfaced only at lowering, naming the model's op instead of the
library line that is wrong. Here each op is held to the lowering table
(:func:`vgfc.spirv.tosa_ops.signature`): the op is one vgfc lowers, it has as many inputs and
outputs as its instruction takes, every attribute it needs is given, none it does not know, and
each literal value is of the attribute's kind. Values that are expressions are checked when the
op is expanded (and by ``vgfc kernels`` with the entry's example).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from vgfc.diagnostics import InputError, did_you_mean
from vgfc.limits import quote
from vgfc.resolve.expr import Expr

__all__ = ["check_compose_ops", "kind_problem"]

Fail = Callable[[str, list[Any]], InputError]
"""Makes the error for a message and a path of keys into the library document."""

_FOLDED = {"IDENTITY": "folded away"}
"""Ops that compose although they have no instruction of their own."""


def check_compose_ops(ops: Sequence[Any], fail: Fail, at: list[Any]) -> None:
    """Raise ``fail(message, path)`` for the first op of ``ops`` (:class:`ComposeOp`) that
    no TOSA instruction takes as it is written."""
    from vgfc.spirv.tosa_ops import TOSA_LOWERINGS, signature

    for k, op in enumerate(ops):
        here = [*at, k]
        if op.op in _FOLDED:
            if len(op.inputs) != 1 or len(op.outputs) != 1:
                raise fail(f"{op.op} takes one input and one output", [*here, "inputs"])
            continue
        if op.op not in TOSA_LOWERINGS:
            raise fail(_unknown(op.op, TOSA_LOWERINGS), [*here, "op"])
        sig = signature(op.op)
        _check_counts(op, sig, fail, here)
        for key, value in op.attrs.items():
            if key not in sig.attributes:
                takes = ", ".join(sig.attributes) or "none"
                raise fail(
                    f"{op.op} has no attribute '{quote(key)}' (it takes {takes})"
                    f"{did_you_mean(key, sig.attributes)}",
                    [*here, "attrs", key],
                )
            problem = kind_problem(value, sig.attributes[key])
            if problem:
                raise fail(f"{op.op} {key}: {problem}", [*here, "attrs", key])
        missing = [key for key in sig.attributes if key not in op.attrs]
        if missing:
            raise fail(
                f"{op.op} needs the attribute '{missing[0]}' (it takes "
                f"{', '.join(sig.attributes)})",
                [*here, "attrs"] if op.attrs else here,
            )


def _unknown(name: str, lowered: Any) -> str:
    from vgfc.lower.graph import STRUCTURAL_LOWERINGS

    shown = quote(name)
    if name in STRUCTURAL_LOWERINGS or name in ("CONST", "CONST_SHAPE"):
        return (
            f"'{shown}' cannot be composed (constants are declared under constants; control "
            "flow, state and custom ops have no TOSA.001000.1 instruction)"
        )
    if name in _newer_ops():
        return (
            f"'{shown}' is not a TOSA 1.0 operator (TOSA 1.1 draft), so TOSA.001000.1 has no "
            "instruction for it"
        )
    return f"'{shown}' is not a TOSA operator{did_you_mean(name, lowered)}"


def _newer_ops() -> frozenset[str]:
    from vgfc.read.schema import schema

    return frozenset(schema().op_names.values())


def _check_counts(op: Any, sig: Any, fail: Fail, here: list[Any]) -> None:
    given = len(op.inputs)
    names = ", ".join(sig.inputs)
    if sig.variadic:
        fixed = len(sig.inputs) - 1
        if given < fixed + 1:
            raise fail(
                f"{op.op} takes at least {fixed + 1} input(s) ({names}...), op gives {given}",
                [*here, "inputs"],
            )
    elif given != len(sig.inputs):
        missing = f": '{sig.inputs[given]}' is missing" if given < len(sig.inputs) else ""
        raise fail(
            f"{op.op} takes {len(sig.inputs)} input(s) ({names}), the op gives {given}{missing}",
            [*here, "inputs"],
        )
    if len(op.outputs) != sig.results:
        raise fail(
            f"{op.op} gives {sig.results} output(s), the op names {len(op.outputs)}",
            [*here, "outputs"],
        )


def kind_problem(value: Any, kind: str | tuple[str, ...]) -> str | None:
    """Why a literal ``value`` cannot be an attribute of ``kind``; ``None`` when it can (an
    expression is checked when it is evaluated)."""
    if isinstance(value, Expr):
        if value.names():
            return None  # known only with a model's shapes and parameters
        literal = value.evaluate({})
        if isinstance(literal, float) and literal.is_integer() and value.tree is not None:
            literal = int(literal)  # as the expansion takes it (vgfc.resolve.compose)
        if isinstance(literal, tuple):
            literal = tuple(Expr(repr(v), None, v) for v in literal)
    else:
        literal = value
    if isinstance(kind, tuple):
        if isinstance(literal, str) and literal in kind:
            return None
        return f"{quote(literal)} is not one of {', '.join(kind)}"
    if kind == "integer list":
        if not isinstance(literal, tuple) or not literal:
            return f"expects a list of integers, not {quote(literal)}"
        for item in literal:
            problem = kind_problem(item, "integer")
            if problem:
                return problem
        return None
    if kind == "boolean":
        return None if isinstance(literal, bool) else f"expects true or false, not {quote(literal)}"
    if kind == "integer":
        if isinstance(literal, bool) or not isinstance(literal, int):
            return f"expects an integer, not {quote(literal)}"
        return None if literal >= 0 else f"expects an integer of 0 or more, not {literal}"
    if isinstance(literal, bool) or not isinstance(literal, int | float):
        return f"expects a number, not {quote(literal)}"
    return None
