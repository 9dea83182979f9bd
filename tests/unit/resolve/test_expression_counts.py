"""``numel`` and ``prod`` count the elements of an operand of any rank, bounded like every other
value of an expression."""

from __future__ import annotations

import math

import pytest

from vgfc.resolve.expr import Expr, ExprError, LimitError


@pytest.mark.parametrize("shape", [(), (7,), (2, 3), (1, 4, 5), (2, 3, 4, 5), (1, 2, 1, 3, 2, 2)])
def test_numel_and_prod_count_elements_at_any_rank(shape: tuple[int, ...]) -> None:
    scope = {"x": shape}
    assert Expr.parse("numel(x)").whole(scope) == math.prod(shape)
    assert Expr.parse("prod(x)").whole(scope) == math.prod(shape)
    assert Expr.parse("ceil(numel(x) / 64)").whole(scope, round_up=True) == math.ceil(
        math.prod(shape) / 64
    )


def test_prod_of_numbers_and_of_a_list_slice_of_the_scope() -> None:
    assert Expr.parse("prod(N, H, 2)").evaluate({"N": 3, "H": 5}) == 30
    assert Expr.parse("prod(x) // x[0]").evaluate({"x": (4, 3, 2)}) == 6


def test_a_product_beyond_the_limit_stops_at_the_first_step_beyond_it() -> None:
    with pytest.raises(LimitError, match="beyond 2\\*\\*64"):
        Expr.parse("numel(x)").evaluate({"x": (2**32,) * 64})


@pytest.mark.parametrize(
    ("source", "scope", "message"),
    [
        ("numel(n)", {"n": 4}, "numel takes an operand's shape (a list), not 4"),
        ("prod(s)", {"s": ("a", "b")}, "prod multiplies numbers, not a"),
        ("prod(x, 2)", {"x": (1, 2)}, "prod multiplies numbers, not (1, 2)"),
    ],
)
def test_wrong_arguments_are_expression_errors(
    source: str, scope: dict[str, object], message: str
) -> None:
    with pytest.raises(ExprError) as caught:
        Expr.parse(source).evaluate(scope)
    assert message in str(caught.value)
