"""Expressions of a kernel library: shape rules, dispatch sizes, defines and composed attributes.

A library writes small arithmetic over an op's dimensions and parameters, e.g. ``[W, H, C / 4]``
or ``(H - 1) * stride_h + kernel_h``. Python's own ``eval`` would run anything a library file
says, so expressions are parsed with :mod:`ast` and only a small language is accepted:

* numbers, strings (to compare with enum parameters), names, and ``name[i]`` for one element of
  a list (an operand's shape, a list parameter);
* ``+ - * / // % **``, unary ``-``, comparisons, ``and``/``or``/``not``, ``a if c else b``;
* the functions ``min``, ``max``, ``abs``, ``ceil``, ``floor``, ``round``, ``len``, ``prod``
  (of a list or of numbers) and ``numel`` (an operand's element count, any rank).

``/`` is true division. Where a whole number is needed (a shape, a dispatch size) the caller
decides how a fraction is taken: dispatch sizes round up so that every element is covered, a
shape must come out whole or it is an error.

Every name is checked when the library is loaded (:meth:`Expr.names` against what the entry
defines), so a rule over an unknown dimension fails before any model is read.

A library is untrusted, so evaluation is bounded (the limits are in :mod:`vgfc.limits`): every
integer read or computed, intermediate values included, stays within ``expression_int_max``;
every float is finite; ``**`` takes exponents up to ``expression_power_max`` and ``round`` at
most that many digits (``round(N, -10**8)`` would compute a number of 10^8 digits); lists and
strings stay within ``expression_items_max``. Beyond those an expression is an error, never a
hang or a number the encoder cannot take.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

from vgfc.limits import LIMITS
from vgfc.record import record

__all__ = ["Expr", "ExprError", "LimitError", "Value"]

Value = Any
"""What an expression yields: an int, float, bool, str or a tuple of them."""


class ExprError(ValueError):
    """An expression that does not parse or cannot be evaluated; the message says why."""


class LimitError(ExprError):
    """An expression that goes beyond a limit of :mod:`vgfc.limits` (a huge number, a power,
    a round to too many digits): wrong whatever the model's shapes are."""


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_MAX_LENGTH = LIMITS.expression_length_max
_MAX_POWER = LIMITS.expression_power_max
_MAX_INT = LIMITS.expression_int_max
"""Integers an expression may reach: far above any dimension, far below a slow big number."""
_MAX_ITEMS = LIMITS.expression_items_max
"""Elements a list an expression builds may have (a list parameter plus a few more)."""


def _round(value: Any, digits: Any = None) -> Any:
    """``round`` with ``digits`` bounded: ``round(N, -d)`` computes ``10**d``."""
    if digits is not None:
        if isinstance(digits, bool) or not isinstance(digits, int):
            raise ExprError(f"round takes a whole number of digits, not {digits!r}")
        if abs(digits) > _MAX_POWER:
            raise LimitError(
                f"round to {digits} digits: at most {_MAX_POWER} either way (expression_power_max)"
            )
        return round(value, digits)
    return round(value)


def _prod(*args: Any) -> Any:
    """The product of a list (``prod(x)``: an operand's element count, whatever its rank) or of
    several numbers, held to ``expression_int_max`` at each step so that a long list of large
    numbers fails at the first step beyond it instead of building a huge number."""
    items = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
    result: Any = 1
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise ExprError(f"prod multiplies numbers, not {_shown(item)}")
        result = _bounded(result * item)
    return result


def _numel(shape: Any) -> Any:
    """The element count of an operand (``numel(x)``): the product of its shape."""
    if not isinstance(shape, tuple):
        raise ExprError(f"numel takes an operand's shape (a list), not {_shown(shape)}")
    return _prod(shape)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "ceil": math.ceil,
    "floor": math.floor,
    "round": _round,
    "len": len,
    "prod": _prod,
    "numel": _numel,
}


@record
class Expr:
    """A parsed expression, or a plain number / string written as such in the library."""

    text: str
    tree: ast.expr | None
    """``None`` for a literal (``value`` holds it)."""
    value: Value = None

    @classmethod
    def parse(cls, source: object) -> Expr:
        """An expression from a library value: a number or bool stays itself, a string is
        parsed. Raises :class:`ExprError`."""
        if isinstance(source, bool | int | float):
            try:
                _bounded(source)
            except ExprError as e:
                raise type(e)(f"{_shown(source)}: {e}") from None
            return cls(_shown(source), None, source)
        if not isinstance(source, str):
            raise ExprError(f"expected a number or an expression, got {type(source).__name__}")
        if len(source) > _MAX_LENGTH:
            raise ExprError(f"longer than the {_MAX_LENGTH} characters an expression may have")
        try:
            tree = ast.parse(source.strip(), mode="eval").body
        except SyntaxError as e:
            raise ExprError(f"'{source}' is not an expression: {e.msg}") from None
        _check(tree, source)
        return cls(source, tree)

    def names(self) -> frozenset[str]:
        """Every variable the expression reads (not function names)."""
        if self.tree is None:
            return frozenset()
        called = {id(n.func) for n in ast.walk(self.tree) if isinstance(n, ast.Call)}
        return frozenset(
            n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name) and id(n) not in called
        )

    def evaluate(self, scope: Mapping[str, Value]) -> Value:
        """The value under ``scope``. Raises :class:`ExprError`."""
        if self.tree is None:
            return self.value
        try:
            return _eval(self.tree, scope)
        except ExprError as e:
            raise type(e)(f"'{self.text}': {e}") from None
        except ZeroDivisionError:
            raise ExprError(f"'{self.text}' divides by zero") from None
        except (TypeError, ValueError, OverflowError, RecursionError) as e:
            from vgfc.limits import quote

            raise ExprError(f"'{self.text}' cannot be evaluated: {quote(str(e), 200)}") from None

    def whole(self, scope: Mapping[str, Value], *, round_up: bool = False) -> int:
        """The value as an integer: fractions are rounded up with ``round_up``, an error
        otherwise."""
        value = self.evaluate(scope)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ExprError(f"'{self.text}' gives {value!r}, not a number")
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ExprError(f"'{self.text}' gives {value}")
            if round_up:
                return math.ceil(value)
            if not value.is_integer():
                raise ExprError(f"'{self.text}' gives {value:g}, not a whole number")
        return int(value)

    def __str__(self) -> str:
        return self.text


def _check(tree: ast.expr, source: str) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
                raise ExprError(
                    f"'{source}' calls something other than {', '.join(sorted(_FUNCTIONS))}"
                )
            if node.keywords:
                raise ExprError(f"'{source}': functions take no keyword arguments")
        elif isinstance(node, ast.Subscript):
            if not isinstance(node.value, ast.Name):
                raise ExprError(f"'{source}': only a name can be indexed, as in in0[1]")
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, complex | bytes) or node.value is None:
                raise ExprError(f"'{source}': {node.value!r} is not a number or a string")
            try:
                _bounded(node.value)
            except ExprError as e:
                raise type(e)(f"'{source}': {e}") from None
        elif not isinstance(
            node,
            ast.BinOp
            | ast.UnaryOp
            | ast.BoolOp
            | ast.Compare
            | ast.IfExp
            | ast.Name
            | ast.Load
            | ast.operator
            | ast.unaryop
            | ast.boolop
            | ast.cmpop
            | ast.Tuple
            | ast.List,
        ):
            raise ExprError(f"'{source}': {type(node).__name__} is not allowed in an expression")
        if isinstance(node, ast.BinOp) and type(node.op) not in _BINARY:
            raise ExprError(f"'{source}': the operator {type(node.op).__name__} is not allowed")


def _shown(value: object) -> str:
    """A literal for a message: a huge integer by its size, not its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_INT:
        return f"an integer of {value.bit_length()} bits"
    return repr(value) if isinstance(value, float) else str(value)


def _bounded(value: Value) -> Value:
    """``value`` if it is within the limits; else :class:`ExprError`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if abs(value) > _MAX_INT:
            raise LimitError("a number beyond 2**64 (expression_int_max)")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise LimitError(f"{value} is not a finite number")
    elif isinstance(value, tuple | str) and len(value) > _MAX_ITEMS:
        raise LimitError(f"a list or string longer than {_MAX_ITEMS} (expression_items_max)")
    return value


def _eval(node: ast.expr, scope: Mapping[str, Value]) -> Value:
    return _bounded(_eval_unbounded(node, scope))


def _eval_unbounded(node: ast.expr, scope: Mapping[str, Value]) -> Value:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in scope:
            known = ", ".join(sorted(scope)) or "none"
            raise ExprError(f"unknown name '{node.id}' (known: {known})")
        return scope[node.id]
    if isinstance(node, ast.Subscript):
        base = _eval(node.value, scope)
        index = _eval(node.slice, scope)
        if not isinstance(base, tuple | list):
            raise ExprError(f"'{ast.unparse(node.value)}' is not a list")
        if isinstance(index, bool) or not isinstance(index, int):
            raise ExprError(f"index {index!r} is not an integer")
        if not -len(base) <= index < len(base):
            raise ExprError(
                f"index {index} is out of range: '{ast.unparse(node.value)}' has "
                f"{len(base)} elements"
            )
        return base[index]
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left, scope), _eval(node.right, scope)
        if isinstance(node.op, ast.Pow) and isinstance(right, int | float) and right > _MAX_POWER:
            raise LimitError(f"a power above {_MAX_POWER} is not allowed (expression_power_max)")
        if (
            isinstance(node.op, ast.Pow)
            and isinstance(left, float | int)
            and isinstance(right, int | float)
            and right < -_MAX_POWER
        ):
            raise LimitError(f"a power below -{_MAX_POWER} is not allowed (expression_power_max)")
        if isinstance(left, str | tuple) or isinstance(right, str | tuple):
            if not (isinstance(node.op, ast.Add) and type(left) is type(right)):
                raise ExprError("strings and lists can only be joined with +")
            if len(left) + len(right) > _MAX_ITEMS:
                raise LimitError(f"a list or string longer than {_MAX_ITEMS}")
        for value in (left, right):
            if isinstance(value, int) and abs(value) > _MAX_INT:
                raise LimitError("a number beyond 2**64 (expression_int_max)")
        result = _BINARY[type(node.op)](left, right)
        if isinstance(result, int) and abs(result) > _MAX_INT:
            raise LimitError("the result goes beyond 2**64 (expression_int_max)")
        return result
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, scope)
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        raise ExprError(f"the operator {type(node.op).__name__} is not allowed")
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, scope) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, scope)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _eval(right_node, scope)
            compare = _COMPARE.get(type(op))
            if compare is None:
                raise ExprError(f"the comparison {type(op).__name__} is not allowed")
            if not compare(left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, scope) else node.orelse, scope)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return _FUNCTIONS[node.func.id](*(_eval(a, scope) for a in node.args))
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_eval(e, scope) for e in node.elts)
    raise ExprError(f"{type(node).__name__} is not allowed in an expression")
