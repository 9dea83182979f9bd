"""An entry's ``torch:`` schema, read and held to the entry without torch.

``vgfc kernels`` checks a library where torch is not installed, and ``vgfc.executorch.load``
must say which token of a schema is wrong (torch's own parser stops at ``unexpected type, file
a bug report:`` without it), so the schema is read here, by a small parser of the part of
PyTorch's schema language an entry can use, and the same checks serve both:

    ns::name(Tensor x, float beta=1.0, *, int[] sizes=[1, 2], str mode="a") -> Tensor

Every base type PyTorch's schema language knows is recognised, so a type torch would accept
but an entry cannot carry (``Scalar``, ``Tensor?``) is refused by the entry check with what the
parameter is instead, and a misspelt one (``flaot``) is named with the closest type. (torch takes
an unknown lower-case name without a default for a type variable, and one with a default for a
bug in itself; an entry has no use for type variables, so here it is an error either way.) After
these checks pass, ``load`` hands the text to torch to define the op.
"""

from __future__ import annotations

import re

from vgfc.diagnostics import InputError, Location, did_you_mean
from vgfc.limits import quote
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.resolve.library.records import Entry

__all__ = ["Argument", "TorchSchema", "check_torch", "parse_torch"]

_BASE_TYPES = frozenset(
    {
        "Tensor", "int", "float", "bool", "str", "complex", "Scalar", "ScalarType", "Layout",
        "Device", "MemoryFormat", "SymInt", "SymFloat", "SymBool", "Generator", "Storage",
        "Stream", "Dimname", "QScheme", "Any", "t", "AnyEnumType", "GraphModule",
    }
)  # fmt: skip
"""The base types of PyTorch's schema language (torch/csrc/jit/frontend/schema_type_parser)."""

_SCALARS = {
    "float": ("f32", "f64"),
    "int": ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"),
    "bool": ("bool",),
    "str": ("str",),
}
"""A schema argument's type and the parameter types it may carry."""

_TOKEN = re.compile(
    r"\s*(?:(?P<arrow>->)|(?P<scope>::)|(?P<string>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<number>-?[0-9][0-9.eE+-]*)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>[()\[\],=*?!.|]))"
)


@record
class Argument:
    name: str
    type: str
    """As torch prints it: ``Tensor``, ``float``, ``int[]``, ``Tensor?``, ``Tensor(a!)``."""
    has_default: bool


@record
class TorchSchema:
    qualname: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: tuple[str, ...]


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                column = len(text) - len(text[pos:].lstrip()) + 1
                raise self.error(f"unexpected '{quote(text[column - 1])}'", column)
            kind = m.lastgroup or "punct"
            self.tokens.append((kind, m.group(kind), m.start(kind) + 1))
            pos = m.end()
        self.i = 0

    def error(self, message: str, column: int | None = None) -> InputError:
        if column is None:
            column = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text) + 1
        return InputError(f"not a PyTorch operator schema: {message} (column {column})")

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def take(self, expected: str | None = None, kind: str | None = None) -> str:
        if self.i >= len(self.tokens):
            raise self.error(f"expected {expected or kind or 'more'} at the end")
        k, value, _ = self.tokens[self.i]
        if (expected is not None and value != expected) or (kind is not None and k != kind):
            raise self.error(f"expected {expected or kind}, found '{quote(value)}'")
        self.i += 1
        return value

    def type(self) -> str:
        column = self.tokens[self.i][2] if self.i < len(self.tokens) else len(self.text) + 1
        base = self.take(kind="name")
        if base not in _BASE_TYPES:
            raise self.error(
                f"unknown type '{quote(base)}'{did_you_mean(base, _BASE_TYPES)}", column
            )
        shown = base
        if self.peek() == "(":  # an alias annotation: Tensor(a!)
            start = self.i
            while self.take() != ")":
                pass
            shown += "".join(v for _, v, _ in self.tokens[start : self.i])
        while self.peek() == "[":
            self.take("[")
            size = self.take(kind="number") if self.peek() != "]" else ""
            self.take("]")
            shown += f"[{size}]"
        if self.peek() == "?":
            shown += self.take("?")
        return shown

    def default(self) -> None:
        depth = 0
        while self.i < len(self.tokens):
            value = self.peek()
            if depth == 0 and value in (",", ")"):
                return
            depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(value, 0)
            self.take()
        raise self.error("a default runs to the end")


def parse_torch(text: str) -> TorchSchema:
    """``text`` as a schema; raises :class:`InputError` naming the token and its column."""
    r = _Reader(text)
    qualname = r.take(kind="name")
    if r.peek() == "::":
        qualname += r.take("::") + r.take(kind="name")
    overload = ""
    if r.peek() == ".":
        r.take(".")
        overload = r.take(kind="name")
    r.take("(")
    arguments: list[Argument] = []
    separated = False  # whether the next argument (or *) needs a comma before it
    while r.peek() != ")":
        if separated:
            r.take(",")
        separated = True
        if r.peek() == "*":  # keyword-only arguments follow
            r.take("*")
            continue
        kind = r.type()
        name = r.take(kind="name")
        has_default = r.peek() == "="
        if has_default:
            r.take("=")
            r.default()
        arguments.append(Argument(name, kind, has_default))
    r.take(")")
    r.take("->")
    returns: list[str] = []
    if r.peek() == "(":
        r.take("(")
        while r.peek() != ")":
            if returns:
                r.take(",")
            returns.append(r.type())
            if r.peek() not in (",", ")"):
                r.take(kind="name")  # a named result
        r.take(")")
    else:
        returns.append(r.type())
        if r.i < len(r.tokens) and r.tokens[r.i][0] == "name":
            r.take(kind="name")  # a named result
    if r.i < len(r.tokens):
        raise r.error(f"unexpected '{quote(r.peek())}' after the result")
    return TorchSchema(qualname, overload, tuple(arguments), tuple(returns))


def check_torch(entry: Entry) -> TorchSchema:
    """``entry``'s schema, read and held to the entry: tensor arguments are the inputs, in
    order; every other argument is a parameter of a matching type; parameters the schema lacks
    have defaults; one tensor result, the entry's one output, which a kernel (not a composed
    graph) computes. Raises :class:`InputError` at ``lib.yaml:LINE: entry: torch``."""
    assert entry.torch is not None
    where = Location(key=f"{entry.label}: torch").merged(
        entry.where(entry.torch_line, entry.torch_column)
    )
    try:
        schema = parse_torch(entry.torch)
        _check(entry, schema)
    except InputError as e:
        raise e.at(where) from None
    return schema


def _check(entry: Entry, schema: TorchSchema) -> None:
    if "::" not in schema.qualname or schema.overload:
        overload = f".{schema.overload}" if schema.overload else ""
        raise InputError(
            f"the schema names '{schema.qualname}{overload}': write namespace::name, without an "
            "overload name"
        )
    tensors = [a.name for a in schema.arguments if a.type == "Tensor"]
    if tensors != list(entry.inputs):
        raise InputError(
            f"the schema's tensor arguments ({', '.join(tensors) or 'none'}) are not the "
            f"entry's inputs ({', '.join(entry.inputs)}), in order"
        )
    fields = {f.name: f for f in entry.params.fields}
    for argument in schema.arguments:
        kind = argument.type
        if kind == "Tensor":
            continue
        field = fields.get(argument.name)
        if field is None:
            known = ", ".join(fields) or "none"
            raise InputError(
                f"argument '{argument.name}' is not a parameter of the entry (it has {known})"
                f"{did_you_mean(argument.name, fields)}"
            )
        base = kind.removesuffix("[]")
        allowed = _SCALARS.get(base)
        listed = kind.endswith("[]")
        if field.values and base == "str":
            allowed = (field.type,)  # an enum: the name goes in, its code to the kernel
        if (
            allowed is None
            or field.type not in allowed
            or listed != bool(field.count or field.variable)
        ):
            shape = f"{field.type} x {field.count}" if field.count else field.type
            raise InputError(f"argument '{argument.name}' is {kind}, the parameter is {shape}")
    given = {a.name for a in schema.arguments}
    for field in entry.params.fields:
        if field.name not in given and not field.has_default:
            raise InputError(
                f"parameter '{field.name}' has no default and the schema does not pass it"
            )
    if entry.params.fields and entry.params.encoding not in ("json", "none"):
        raise InputError(
            f"a PyTorch op passes its parameters as JSON; the entry decodes "
            f"{entry.params.encoding} (params.encoding: json)"
        )
    if list(schema.returns) != ["Tensor"] or len(entry.outputs) != 1:
        raise InputError(
            f"the schema returns {' , '.join(schema.returns) or 'nothing'} and the entry has "
            f"{len(entry.outputs)} output(s): an ExecuTorch custom op returns one Tensor "
            "(tosa.CUSTOM takes a single output)"
        )
    if entry.compose is not None or not entry.kernels:
        raise InputError("only an entry with kernels can be a PyTorch op, not a composed one")
    rule = entry.infer.get(entry.outputs[0])
    if rule is None or rule.dtype is None or rule.shape is None:
        raise InputError(
            f"the entry's infer gives no dtype and shape for '{entry.outputs[0]}': a PyTorch op "
            "needs both (infer: {y: {same_as: x}})"
        )
