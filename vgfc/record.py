"""Record classes: what ``@dataclass(frozen=True, slots=True)`` makes, for a tenth of the cost of
defining one.

Why by hand: a ``vgfc compile`` of a small network is mostly start-up, and defining classes was the
largest part of it. The standard :mod:`dataclasses` builds every method of a class with its own
``exec`` (six for a frozen class) and, with ``slots=True``, builds the class twice: on a 2-core
machine about 1.5 ms a class, 66 ms for the 45 classes a compile defines, and importing
:mod:`dataclasses` brings :mod:`inspect` (12 ms more). ``msgspec.Struct`` defines classes in C, but
importing it costs 15-20 ms (it loads ``uuid``, ``datetime`` and ``decimal``) and a frozen struct
cannot be set up in ``__post_init__``; attrs builds its methods with ``exec`` too.

Here :func:`record` makes one function per class, the ``__init__`` (it is called for every
operator and tensor of a model, so it is as fast as dataclasses' own), and only when the class is
first constructed (a compile constructs about half the classes it imports): from a template
compiled once per shape (number of fields, frozen or not), its names replaced, or with ``exec``
where a field has a ``default_factory``. Every other method
(``__repr__``, ``__eq__``, ``__hash__``, ordering, pickling, copying) is shared, reading the fields
through one :func:`operator.attrgetter` made per class. :func:`replace`, :func:`fields` and
:func:`asdict` stand for their :mod:`dataclasses` namesakes. The semantics are dataclasses': fields
in the order of the annotations, ``ClassVar`` annotations skipped, a default that is a
:func:`field`, ``__post_init__`` called last, methods the class defines itself kept, equality only
between instances of one class, and a frozen record hashable and refusing assignment. Records do
not inherit fields from one another (vgfc has no such class), and that is checked.
"""

from __future__ import annotations

import functools
from operator import attrgetter
from types import CodeType, FunctionType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> Callable[[Any], Any]:
        return lambda f: f


__all__ = ["FrozenInstanceError", "asdict", "astuple", "field", "fields", "record", "replace"]


class FrozenInstanceError(AttributeError):
    """Assignment to a field of a frozen record."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """A field's declaration, as :func:`field` gives it (the class attribute's value)."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(
        self, default: Any, default_factory: Callable[[], Any] | Any, compare: bool, repr: bool
    ) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, default={self.default!r})"


def field(
    *,
    default: Any = MISSING,
    default_factory: Callable[[], Any] | Any = MISSING,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    """A field with a default made per instance (``default_factory``), or left out of the
    comparisons and the hash (``compare=False``) or of the repr (``repr=False``)."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("a field takes a default or a default_factory, not both")
    return Field(default, default_factory, compare, repr)


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return isinstance(text, str) and text.split("[", 1)[0].split(".")[-1] == "ClassVar"


def _blank(cls: type) -> Any:
    """A record not yet set up, for unpickling and copying (``__setstate__`` sets its slots as
    they were; ``__post_init__`` does not run again)."""
    return object.__new__(cls)


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_repr__)
    return f"{type(self).__qualname__}({shown})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return self.__record_key__(self) == other.__record_key__(other)


def _hash(self: Any) -> int:
    return hash(self.__record_key__(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r} of {type(self).__name__}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r} of {type(self).__name__}")


def _reduce(self: Any) -> tuple[Any, ...]:
    # The object first, its fields after: pickle and deepcopy keep it before they go into the
    # fields, so a field that leads back to it (an entry's library) comes back as it.
    return (_blank, (type(self),), tuple(getattr(self, n) for n in self.__record_fields__))


def _setstate(self: Any, values: tuple[Any, ...]) -> None:
    for name, value in zip(self.__record_fields__, values, strict=True):
        object.__setattr__(self, name, value)


def _order(op: str) -> Callable[[Any, Any], Any]:
    def compare(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return getattr(self.__record_key__(self), op)(other.__record_key__(other))

    compare.__name__ = op
    return compare


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A C function giving the tuple of these fields' values (``attrgetter`` of one name gives
    the value itself)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


@functools.cache
def _template(count: int, frozen: bool, post_init: bool) -> CodeType:
    """The code of an ``__init__`` of ``count`` fields with stand-in names (``_v0`` for the
    parameters, ``_f0`` for the fields), compiled once for each shape of record."""
    params = "".join(f", _v{i}" for i in range(count))
    body = [
        f"    _set(self, '_f{i}', _v{i})" if frozen else f"    self._f{i} = _v{i}"
        for i in range(count)
    ]
    if post_init:
        body.append("    self.__post_init__()")
    namespace: dict[str, Any] = {}
    exec(f"def __init__(self{params}):\n" + ("\n".join(body) or "    pass"), {}, namespace)
    return namespace["__init__"].__code__  # type: ignore[no-any-return]


def _from_template(
    names: tuple[str, ...],
    defaults: tuple[Any, ...],
    frozen: bool,
    post_init: bool,
    qualname: str,
) -> Callable[..., None]:
    """An ``__init__`` for ``names`` (the last ``len(defaults)`` with those defaults): the
    template of its shape with the stand-in names replaced by the fields' (the parameters'
    names and the field names, constants of a frozen record's ``_set`` calls, attribute names
    of a mutable one's assignments). Compiling takes 0.15 ms an ``__init__`` on a 2-core
    machine and replacing names a few microseconds; a compile constructs about 40 classes."""
    code = _template(len(names), frozen, post_init)
    fields = {f"_f{i}": name for i, name in enumerate(names)}
    params = {f"_v{i}": name for i, name in enumerate(names)}
    code = code.replace(
        co_varnames=tuple(params.get(v, v) for v in code.co_varnames),
        co_consts=tuple(fields.get(c, c) if isinstance(c, str) else c for c in code.co_consts),
        co_names=tuple(fields.get(n, n) for n in code.co_names),
        co_name="__init__",
    )
    init = FunctionType(code, {"_set": object.__setattr__}, "__init__", defaults or None)
    init.__qualname__ = qualname
    return init


def _build(cls: type, frozen: bool, eq: bool, order: bool) -> type:
    own = cls.__dict__
    for base in cls.__mro__[1:-1]:
        if "__record_fields__" in base.__dict__:
            raise TypeError(f"{cls.__name__}: a record cannot inherit fields from {base.__name__}")
    annotations = own.get("__annotations__", {})
    names = tuple(n for n, a in annotations.items() if not _is_classvar(a))
    namespace = {k: v for k, v in own.items() if k not in names}
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)

    # __init__: one exec, the one method whose speed counts, at the first construction (a run
    # makes only some of the classes it imports).
    params, body, defaults = [], [], []
    globals_: dict[str, Any] = {"_set": object.__setattr__, "MISSING": MISSING}
    compared, shown = [], []
    seen_default = factories = False
    for name in names:
        declared = own.get(name, MISSING)
        spec = declared if isinstance(declared, Field) else Field(declared, MISSING, True, True)
        spec.name = name
        if spec.compare:
            compared.append(name)
        if spec.repr:
            shown.append(name)
        if spec.default_factory is not MISSING:
            globals_[f"_factory_{name}"] = spec.default_factory
            params.append(f"{name}=MISSING")
            value = f"_factory_{name}() if {name} is MISSING else {name}"
            seen_default = factories = True
        elif spec.default is not MISSING:
            globals_[f"_default_{name}"] = spec.default
            defaults.append(spec.default)
            params.append(f"{name}=_default_{name}")
            value = name
            seen_default = True
        else:
            if seen_default:
                raise TypeError(
                    f"{cls.__name__}: field {name!r} without a default follows one with"
                )
            params.append(name)
            value = name
        body.append(
            f"    _set(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}"
        )
    post_init = "__post_init__" in own
    if post_init:
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass")

    def first_init(self: Any, *args: Any, **kwargs: Any) -> None:
        """Make the real ``__init__``, put it in this one's place, and run it."""
        qualname = f"{made.__qualname__}.__init__"
        if factories:
            exec(source, globals_)
            init = globals_["__init__"]
            init.__qualname__ = qualname
        else:
            init = _from_template(names, tuple(defaults), frozen, post_init, qualname)
        made.__init__ = init  # type: ignore[misc]
        init(self, *args, **kwargs)

    namespace["__slots__"] = names
    namespace["__record_fields__"] = names
    namespace["__record_repr__"] = tuple(shown)
    namespace["__record_key__"] = staticmethod(_key(tuple(compared)))
    namespace["__match_args__"] = names
    namespace.setdefault("__init__", first_init)
    namespace.setdefault("__repr__", _repr)
    namespace.setdefault("__reduce__", _reduce)
    namespace.setdefault("__setstate__", _setstate)
    if eq:
        namespace.setdefault("__eq__", _eq)
        # A class that defines __eq__ alone gets __hash__ = None from Python, which is not a
        # hash of its own: it is replaced, as dataclasses do.
        declared = own.get("__hash__", MISSING)
        explicit_hash = not (declared is MISSING or (declared is None and "__eq__" in own))
        if not explicit_hash:
            namespace["__hash__"] = _hash if frozen else None
    if order:
        for op in ("__lt__", "__le__", "__gt__", "__ge__"):
            namespace.setdefault(op, _order(op))
    if frozen:
        namespace["__setattr__"] = _frozen_setattr
        namespace["__delattr__"] = _frozen_delattr
    made = type(cls)(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(
    cls: type[Any] | None = None, /, *, frozen: bool = True, eq: bool = True, order: bool = False
) -> Any:
    """Make ``cls`` a record: slots for its annotated fields, an ``__init__`` taking them in
    order, ``__repr__``, and ``__eq__``/``__hash__`` over the compared fields (``eq=False``:
    identity). Frozen unless ``frozen=False`` (then unhashable, as a dataclass); ``order=True``
    adds ``<``, ``<=``, ``>``, ``>=`` over the compared fields."""

    def wrap(c: type[Any]) -> Any:
        return _build(c, frozen, eq, order)

    return wrap if cls is None else wrap(cls)


def fields(obj: Any) -> tuple[str, ...]:
    """The names of a record's (or record class's) fields, in order."""
    return obj.__record_fields__  # type: ignore[no-any-return]


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record ``obj`` with ``changes`` (``__post_init__`` runs again)."""
    names = obj.__record_fields__  # type: ignore[attr-defined]
    unknown = changes.keys() - set(names)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
    return type(obj)(**{n: changes[n] if n in changes else getattr(obj, n) for n in names})


def asdict(obj: Any) -> Any:
    """A record as a dict of its fields, records within (also in lists, tuples and dicts)
    turned into dicts too, as :func:`dataclasses.asdict` does."""
    if hasattr(type(obj), "__record_fields__"):
        return {n: asdict(getattr(obj, n)) for n in obj.__record_fields__}
    if isinstance(obj, list | tuple):
        return type(obj)(asdict(v) for v in obj)
    if isinstance(obj, dict):
        return {asdict(k): asdict(v) for k, v in obj.items()}
    return obj


def astuple(obj: Any) -> tuple[Any, ...]:
    """A record as the tuple of its fields' values, records within turned into tuples too."""
    return tuple(_astuple(getattr(obj, n)) for n in obj.__record_fields__)


def _astuple(value: Any) -> Any:
    if hasattr(type(value), "__record_fields__"):
        return astuple(value)
    if isinstance(value, list | tuple):
        return type(value)(_astuple(v) for v in value)
    if isinstance(value, dict):
        return {_astuple(k): _astuple(v) for k, v in value.items()}
    return value
