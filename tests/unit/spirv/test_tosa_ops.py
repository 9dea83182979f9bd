"""The TOSA lowering table (``vgfc.spirv.tosa_ops.TOSA_LOWERINGS``) against the SPIR-V TOSA
grammar and tosa-tools' schema: one entry per instruction, every attribute a grammar operand and a
schema field, and a catalogue model for every instruction."""

from __future__ import annotations

import pytest
from tosa_catalogue import CASES, Case, attribute_table


def test_catalogue_covers_every_instruction() -> None:
    from vgfc.spirv.extinst import tosa_instructions

    assert set(tosa_instructions()) <= {c.op for c in CASES}


def test_table_has_one_entry_per_instruction() -> None:
    from vgfc.spirv.extinst import tosa_instructions
    from vgfc.spirv.tosa_ops import TOSA_LOWERINGS

    assert len(tosa_instructions()) == 66
    assert set(TOSA_LOWERINGS) == set(tosa_instructions())


ONE_PER_OP = list({c.op: c for c in CASES if c.op != "IDENTITY"}.values())


@pytest.mark.parametrize("case", ONE_PER_OP, ids=[c.op for c in ONE_PER_OP])
def test_table_attributes_are_grammar_operands_and_schema_fields(case: Case) -> None:
    import importlib

    from vgfc.spirv.extinst import tosa_instructions
    from vgfc.spirv.tosa_ops import TOSA_LOWERINGS

    operands = tosa_instructions()[case.op].operands
    attributes = TOSA_LOWERINGS[case.op].attributes
    assert set(attributes) <= {o.name for o in operands}
    table = attribute_table(case.op)
    schema = getattr(importlib.import_module(f"tosa.{table}"), table)
    for name in attributes:
        assert hasattr(schema, "".join(w.capitalize() for w in name.split("_"))), name
    tensors = [o for o in operands if o.name not in attributes]
    variadic = any(o.variadic for o in tensors)
    assert len(case.inputs) >= len(tensors) if variadic else len(case.inputs) == len(tensors)
