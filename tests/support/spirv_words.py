"""SPIR-V graph modules read word by word, for comparing vgfc's with the reference converter's
where SPIRV-Tools cannot disassemble them (Arm.ExperimentalMLOperations.1, whose grammar it lacks).

:func:`described` gives every instruction of the module with each id operand replaced by what
defines it, recursively (types, constants, the graph inputs and instructions that compute a
value), so two modules compare equal instruction by instruction whatever ids they chose."""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable
from typing import Any

from vgfc.spirv.grammar import core_grammar

CALL_SET = "Arm.ExperimentalMLOperations.1"

# Operand positions (after the opcode word) that are literals rather than ids, per instruction;
# the others are ids. OpExtInst is handled on its own (its instruction number is a literal, and
# so is the first operand of a CALL).
_LITERALS: dict[str, Callable[[int], bool]] = {
    "OpTypeInt": lambda i: True,
    "OpTypeFloat": lambda i: True,
    "OpConstant": lambda i: i >= 2,
    "OpTypePointer": lambda i: i == 1,
    "OpVariable": lambda i: i == 2,
    "OpTypeGraphARM": lambda i: i == 1,
    "OpCompositeExtract": lambda i: i >= 3,
    "OpGraphConstantARM": lambda i: i == 2,
    "OpDecorate": lambda i: i >= 1,
}


def _text(words: list[int]) -> str:
    return array("I", words).tobytes().split(b"\0", 1)[0].decode()


def instructions(spirv: bytes) -> list[tuple[str, list[int]]]:
    """(opname, operand words) of each instruction after the header."""
    g = core_grammar()
    words = array("I", spirv)
    found = []
    i = 5
    while i < len(words):
        count, code = words[i] >> 16, words[i] & 0xFFFF
        found.append((g.opnames.get(code, str(code)), list(words[i + 1 : i + count])))
        i += count
    return found


def described(spirv: bytes) -> list[tuple[Any, ...]]:
    """Every instruction but debug names and decorations, ids replaced by their definitions."""
    insts = instructions(spirv)
    imports = {ops[0]: _text(ops[1:]) for name, ops in insts if name == "OpExtInstImport"}
    strings = {ops[0]: _text(ops[1:]) for name, ops in insts if name == "OpString"}
    defining: dict[int, tuple[str, list[int]]] = {}
    for name, ops in insts:
        result = _result_position(name)
        if result is not None and len(ops) > result:
            defining[ops[result]] = (name, ops)

    @functools.cache
    def describe(id_: int) -> Any:
        if id_ in imports:
            return ("set", imports[id_])
        if id_ in strings:
            return ("string", strings[id_])
        if id_ not in defining:
            return ("undefined", id_)
        name, ops = defining[id_]
        return (name, *_operands(name, ops, describe, imports, skip=_result_position(name)))

    kept = []
    for name, ops in insts:
        if name in ("OpName", "OpDecorate", "OpExtInstImport", "OpString"):
            continue
        if name in ("OpCapability", "OpExtension", "OpMemoryModel"):
            kept.append((name, _text(ops) if name == "OpExtension" else tuple(ops)))
            continue
        kept.append((name, *_operands(name, ops, describe, imports, skip=_result_position(name))))
    return kept


def _result_position(name: str) -> int | None:
    if name.startswith("OpType") or name in ("OpExtInstImport", "OpString"):
        return 0
    if name in (
        "OpConstant",
        "OpConstantComposite",
        "OpConstantCompositeReplicateEXT",
        "OpConstantNull",
        "OpVariable",
        "OpExtInst",
        "OpCompositeExtract",
        "OpGraphInputARM",
        "OpGraphConstantARM",
        "OpGraphARM",
    ):
        return 1
    return None


def _operands(
    name: str,
    ops: list[int],
    describe: Callable[[int], Any],
    imports: dict[int, str],
    skip: int | None,
) -> list[Any]:
    out: list[Any] = []
    literal = _LITERALS.get(name, lambda i: False)
    for i, word in enumerate(ops):
        if i == skip:
            continue
        if name == "OpExtInst":
            is_literal = i == 3 or (i == 4 and imports.get(ops[2]) == CALL_SET)
        elif name in ("OpGraphEntryPointARM", "OpExtension", "OpString"):
            is_literal = True
        else:
            is_literal = literal(i)
        out.append(("literal", word) if is_literal else describe(word))
    return out


def calls(spirv: bytes) -> list[tuple[Any, ...]]:
    """The described CALL instructions of the module, in order."""
    return [d for d in described(spirv) if d[0] == "OpExtInst" and d[2] == ("set", CALL_SET)]
