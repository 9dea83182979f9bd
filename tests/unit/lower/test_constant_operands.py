"""Operands TOSA.001000.1 takes only as constants (zero points, MUL's shift, pad value, shapes,
...): one table, :attr:`vgfc.spirv.tosa_ops.Lowering.constants`.

The table is held to tosa-tools' own list of compile-time-constant inputs (its test generator's
``ctc_positions``, which decide what the dynamic-extension tests turn into graph inputs), less
the three the runtime takes as graph inputs (TABLE's table, RESCALE's multiplier and shift:
``tests/differential/test_conformance_extensions.py`` runs them). Every
one-op model of the catalogue with such an operand is lowered again with that operand made a
graph input: each is refused naming the op, the operand and the tensor, where a graph that
reads it would be rejected by the runtime (``Missing declared constant``). A constant reached
through IDENTITY is still a constant.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from tosa_catalogue import CASES, C, Case, X, lower_model, structure
from tosa_factory import Op, T, build

from vgfc.diagnostics import UnsupportedError
from vgfc.lower.constant_operands import LOWERED_OTHERWISE
from vgfc.spirv.extinst import tosa_instructions
from vgfc.spirv.spirv_tools import validate
from vgfc.spirv.tosa_ops import TOSA_LOWERINGS, constant_inputs


def test_every_constant_operand_is_a_tensor_operand_of_the_grammar() -> None:
    for name, lowering in TOSA_LOWERINGS.items():
        operands = [o.name for o in tosa_instructions()[name].operands]
        tensors = [o for o in operands if o not in lowering.attributes]
        assert set(lowering.constants) <= set(tensors), name
        assert [n for _, n in constant_inputs(name)] == [
            o for o in tensors if o in lowering.constants
        ]


def _generator_ctc() -> dict[str, tuple[int, ...]]:
    """TOSA op name -> input positions tosa-tools' generator treats as compile-time constants."""
    from generator.tosa_test_gen import TosaTestGen

    found: dict[str, tuple[int, ...]] = {}
    for key, entry in TosaTestGen.TOSA_OP_LIST.items():
        name = key.removesuffix("_TEMPLATE").upper()
        if name in TOSA_LOWERINGS:
            found[name] = tuple(entry.get("ctc_positions", ()))
    return found


RUNTIME_INPUTS = {"TABLE": (1,), "RESCALE": (1, 2)}
"""Compile-time constants of TOSA the runtime reads from graph inputs all the same."""


def test_the_table_is_the_compile_time_constants_of_tosa_the_runtime_needs() -> None:
    expected = {
        name: tuple(i for i in positions if i not in RUNTIME_INPUTS.get(name, ()))
        for name, positions in _generator_ctc().items()
    }
    assert len(expected) == len(TOSA_LOWERINGS)
    ours = {name: tuple(i for i, _ in constant_inputs(name)) for name in TOSA_LOWERINGS}
    assert ours == expected


def _dynamic_cases() -> list[tuple[Case, int, str]]:
    """(catalogue case with one constant operand turned into a graph input, its index, name)."""
    made = []
    for case in CASES:
        if case.op not in TOSA_LOWERINGS:
            continue
        for index, operand in constant_inputs(case.op):
            given = case.inputs[index] if index < len(case.inputs) else None
            if isinstance(given, C) and LOWERED_OTHERWISE.get(case.op) != operand:
                inputs = list(case.inputs)
                inputs[index] = X(given.dtype, given.shape)
                made.append((dataclasses.replace(case, inputs=tuple(inputs)), index, operand))
    return made


DYNAMIC = _dynamic_cases()


def test_every_operator_with_constant_operands_is_tried() -> None:
    tried = {case.op for case, _, _ in DYNAMIC}
    # Shape operands are CONST_SHAPE in the catalogue: no graph input can be a shape; PAD's pad
    # value lowers another way.
    shapes_only = {"RESHAPE", "SLICE", "TILE", "RESIZE", "PAD"}
    assert tried == {n for n in TOSA_LOWERINGS if constant_inputs(n)} - shapes_only


@pytest.mark.parametrize(
    ("case", "index", "operand"),
    DYNAMIC,
    ids=[f"{c.name}-{o}" for c, _, o in DYNAMIC],
)
def test_a_constant_operand_given_as_a_graph_input_is_refused(
    case: Case, index: int, operand: str
) -> None:
    with pytest.raises(UnsupportedError) as info:
        lower_model(case.model())
    message = str(info.value)
    tensor = f"in{index}"
    assert re.search(rf"op #\d+ {case.op}: tensor '{tensor}': input {index} '{operand}'", message)
    assert "must be a constant" in message and "it is a graph input" in message
    assert message.count("\n") == 0


F = (2, 3)


def _mul(shift_ops: list[Op], tensors: list[T]) -> bytes:
    ops = [*shift_ops, Op("MUL", ["a", "b", "s"], ["y"])]
    base = [T("a", F, "INT32"), T("b", F, "INT32"), T("y", F, "INT32")]
    return build(base + tensors, ops, ["a", "b"], ["y"])


@pytest.mark.parametrize(("op", "positions"), sorted(RUNTIME_INPUTS.items()))
def test_what_the_runtime_reads_from_inputs_lowers(op: str, positions: tuple[int, ...]) -> None:
    case = next(c for c in CASES if c.op == op)
    inputs = list(case.inputs)
    for i in positions:
        given = inputs[i]
        assert isinstance(given, C)
        inputs[i] = X(given.dtype, given.shape)
    _, (module,) = lower_model(dataclasses.replace(case, inputs=tuple(inputs)).model())
    validate(module.spirv)
    assert len(module.inputs) == 1 + len(positions)


def test_a_constant_through_identity_is_a_constant() -> None:
    data = _mul(
        [Op("CONST", [], ["c"]), Op("IDENTITY", ["c"], ["i"]), Op("IDENTITY", ["i"], ["s"])],
        [T("c", (1,), "INT8", np.array([3], np.int8)), T("i", (1,), "INT8"), T("s", (1,), "INT8")],
    )
    _, (module,) = lower_model(data)
    validate(module.spirv)
    (mul,) = structure(module.spirv)["instructions"]
    assert mul[0] == "MUL" and mul[-1][0] == "OpConstantComposite"


def test_a_computed_operand_names_the_op_that_computes_it() -> None:
    data = _mul(
        [Op("CONST", [], ["c"]), Op("ABS", ["c"], ["s"])],
        [T("c", (1,), "INT8", np.array([-3], np.int8)), T("s", (1,), "INT8")],
    )
    with pytest.raises(UnsupportedError) as info:
        lower_model(data)
    assert "op #2 MUL: tensor 's': input 2 'shift' must be a constant" in str(info.value)
    assert "but op #1 ABS computes it" in str(info.value)


@pytest.mark.parametrize("case", [c for c in CASES if c.op == "PAD"], ids=lambda c: c.name)
def test_pad_with_its_value_from_an_input_pads_with_zero_and_selects(case: Case) -> None:
    x, padding, value = case.inputs
    assert isinstance(value, C)
    dynamic = dataclasses.replace(case, inputs=(x, padding, X(value.dtype, value.shape)))
    _, (module,) = lower_model(dynamic.model())
    validate(module.spirv)
    found = structure(module.spirv)["instructions"]
    assert [i[0] for i in found] == ["PAD", "PAD", "RESHAPE", "SELECT"]
    assert module.inputs == ("in0", "in2")
    # Both PADs pad with constants; the value reaches SELECT from the graph input, reshaped.
    assert [i[-1][0] for i in found[:2]] == ["OpConstantNull", "OpConstantNull"]
    assert found[2][2][0] == "OpGraphInputARM"


def test_pad_that_adds_nothing_needs_no_value() -> None:
    """Padding all zero: the value is never used, so PAD with zero is the whole result (the
    dynamic-extension conformance tests are all of this kind)."""
    data = build(
        [T("x", F), T("v", (1,)), T("y", F)],
        [Op("CONST_SHAPE", [], ["p"]), Op("PAD", ["x", "p", "v"], ["y"])],
        ["x", "v"],
        ["y"],
        shapes=[("p", 4, (0, 0, 0, 0))],
    )
    _, (module,) = lower_model(data)
    validate(module.spirv)
    assert [i[0] for i in structure(module.spirv)["instructions"]] == ["PAD"]
