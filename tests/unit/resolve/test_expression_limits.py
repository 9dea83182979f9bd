"""Kernel-library expressions are evaluated with bounded values: each of these once hung (a
number of 10^8 digits), crashed the encoder (an integer of 309 digits) or went through as NaN."""

from __future__ import annotations

import pytest

from vgfc.resolve.expr import Expr, ExprError, LimitError

INT = " (expression_int_max)"
POWER = " (expression_power_max)"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("round(N, -100000000)", "round to -100000000 digits: at most 64 either way" + POWER),
        ("round(1.5, 10**8)", "round to 100000000 digits: at most 64 either way" + POWER),
        ("ceil(1e308)", "a number beyond 2**64" + INT),
        ("floor(-1e308)", "a number beyond 2**64" + INT),
        ("round(1e308)", "a number beyond 2**64" + INT),
        ("2 ** 64 * 2", "the result goes beyond 2**64" + INT),
        ("(2 ** 64) ** 64", "the result goes beyond 2**64" + INT),
        ("2 ** 100", "a power above 64 is not allowed" + POWER),
        ("2 ** -100000000", "a power below -64 is not allowed" + POWER),
        ("1e308 * 10", "inf is not a finite number"),
        ("N * 1e308 * 1e308", "inf is not a finite number"),
    ],
)
def test_values_beyond_the_limits_are_limit_errors(source: str, message: str) -> None:
    with pytest.raises(LimitError) as caught:
        Expr.parse(source).evaluate({"N": 7})
    assert str(caught.value) == f"'{source}': {message}"


@pytest.mark.parametrize("literal", [10**30, float("nan"), float("inf"), -float("inf")])
def test_literals_beyond_the_limits_are_refused_when_parsed(literal: object) -> None:
    with pytest.raises(LimitError):
        Expr.parse(literal)


def test_a_huge_literal_inside_an_expression_is_refused_when_parsed() -> None:
    with pytest.raises(LimitError, match="a number beyond 2\\*\\*64"):
        Expr.parse("N + " + "9" * 400)
    with pytest.raises(LimitError, match="inf is not a finite number"):
        Expr.parse("N + 1e999")


def test_other_failures_are_plain_expression_errors() -> None:
    for source in ("max()", "N // 0", "x[9]"):
        with pytest.raises(ExprError) as caught:
            Expr.parse(source).evaluate({"N": 1, "x": (1, 2)})
        assert not isinstance(caught.value, LimitError)


def test_values_within_the_limits_still_evaluate() -> None:
    assert Expr.parse("2 ** 64").evaluate({}) == 2**64
    assert Expr.parse("round(N / 3, 2)").evaluate({"N": 10}) == 3.33
    assert Expr.parse("ceil(N / 4) * 4").whole({"N": 10}) == 12
