"""vgfc.record against the standard dataclasses, the oracle: for generated classes and values, a
record and the dataclass declared alike construct, compare, hash, order, print, replace, copy and
pickle alike."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vgfc import record as records
from vgfc.record import FrozenInstanceError, field, record, replace

values = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.none(), st.tuples(st.integers()))
names = st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=5, unique=True)


def _declare(kind: str, spec: list[tuple[str, Any, bool]], frozen: bool, order: bool) -> type:
    """A class with fields ``spec`` (name, default or MISSING, compared), made by ``kind``."""
    annotations = {}
    namespace: dict[str, Any] = {}
    for name, default, compared in spec:
        annotations[name] = "object"
        if kind == "record":
            if default is not records.MISSING or not compared:
                namespace[name] = field(default=default, compare=compared)
        elif default is not records.MISSING or not compared:
            kwargs: dict[str, Any] = {"compare": compared}
            if default is not records.MISSING:
                kwargs["default"] = default
            namespace[name] = dataclasses.field(**kwargs)
    namespace["__annotations__"] = annotations
    namespace["__qualname__"] = "Thing"
    cls = type("Thing", (), namespace)
    if kind == "record":
        return record(frozen=frozen, order=order)(cls)  # type: ignore[no-any-return]
    return dataclasses.dataclass(frozen=frozen, order=order, slots=True)(cls)


@st.composite
def classes(draw: st.DrawFn) -> tuple[list[tuple[str, Any, bool]], bool, bool]:
    fields = draw(names)
    required = draw(st.integers(0, len(fields)))
    spec = []
    for i, name in enumerate(fields):
        default = draw(values) if i >= required else records.MISSING
        spec.append((name, default, draw(st.booleans())))
    return spec, draw(st.booleans()), draw(st.booleans())


@given(classes(), st.data())
def test_records_behave_as_dataclasses(
    declared: tuple[list[tuple[str, Any, bool]], bool, bool], data: st.DataObject
) -> None:
    spec, frozen, order = declared
    mine = _declare("record", spec, frozen, order)
    theirs = _declare("dataclass", spec, frozen, order)
    required = [name for name, default, _ in spec if default is records.MISSING]
    args = [data.draw(values) for _ in required]
    other = [data.draw(values) for _ in required]
    a, b = mine(*args), theirs(*args)
    a2, b2 = mine(*other), theirs(*other)

    assert repr(a) == repr(b)
    assert (a == a2) == (b == b2)
    assert (a == mine(*args)) and (b == theirs(*args))
    assert a != b  # another class: never equal
    assert records.fields(mine) == tuple(f.name for f in dataclasses.fields(theirs))
    assert records.asdict(a) == dataclasses.asdict(b)
    assert records.astuple(a) == dataclasses.astuple(b)
    if frozen:
        assert hash(a) == hash(b)
        with pytest.raises(FrozenInstanceError):
            a.x = 1
    else:
        assert type(a).__hash__ is None and type(b).__hash__ is None
    if order:
        try:
            expected = b < b2
        except TypeError:
            pass  # values of kinds that do not order (None against an int)
        else:
            assert (a < a2) == expected and (a >= a2) == (b >= b2)
    if spec:
        name = spec[0][0]
        changed = data.draw(values)
        assert repr(replace(a, **{name: changed})) == repr(
            dataclasses.replace(b, **{name: changed})
        )
    for clone in (copy.copy(a), copy.deepcopy(a)):
        assert clone == a and clone is not a


Point = record(type("Point", (), {"__annotations__": {"x": "int", "y": "int"}}))
"""A record pickle can find by name (a class made in a test function cannot be pickled)."""


def test_pickle_keeps_the_values_and_does_not_run_post_init_again() -> None:
    point = Point(1, 2)
    assert pickle.loads(pickle.dumps(point)) == point


def test_post_init_runs_last_and_may_set_a_frozen_field() -> None:
    @record
    class Clipped:
        text: str
        limit: int = 3

        def __post_init__(self) -> None:
            object.__setattr__(self, "text", self.text[: self.limit])

    assert Clipped("abcdef").text == "abc"
    assert replace(Clipped("abcdef"), limit=1).text == "a"


def test_default_factory_makes_one_value_per_instance() -> None:
    @record(frozen=False)
    class Bag:
        items: list[int] = field(default_factory=list)

    one, two = Bag(), Bag()
    one.items.append(1)
    assert two.items == [] and Bag([5]).items == [5]


def test_methods_the_class_defines_are_kept() -> None:
    @record
    class Loud:
        a: int

        def __repr__(self) -> str:
            return "loud"

    assert repr(Loud(1)) == "loud" and Loud(1) == Loud(1)


def test_misdeclared_records_are_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        @record
        class Late:
            a: int = 1
            b: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="inherit"):
        record(type("Child", (Point,), {"__annotations__": {"z": "int"}}))
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(Point(1, 2), z=3)
    with pytest.raises(ValueError, match="not both"):
        field(default=1, default_factory=list)


def test_class_variables_are_not_fields() -> None:
    @record
    class Counted:
        a: int
        total: ClassVar[int] = 0

    assert records.fields(Counted) == ("a",) and Counted.total == 0


def test_a_class_with_its_own_eq_is_hashed_as_a_dataclass_is() -> None:
    def eq(self: Any, other: Any) -> bool:
        return True

    spec = {"__annotations__": {"a": "int"}, "__eq__": eq}
    mine = record(type("Same", (), dict(spec)))
    theirs = dataclasses.dataclass(frozen=True)(type("Same", (), dict(spec)))
    assert hash(mine(1)) == hash(theirs(1))


@record(frozen=False)
class Node:
    """Records that lead back to each other (a library and its entries)."""

    name: str
    others: dict[str, Any] = field(default_factory=dict)


def test_copies_keep_a_record_that_leads_back_to_itself() -> None:
    a, b = Node("a"), Node("b")
    a.others["b"], b.others["a"] = b, a
    for copied in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert copied.others["b"].others["a"] is copied and copied is not a
