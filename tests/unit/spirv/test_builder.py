"""The SPIR-V module builder and the TOSA value encodings on top of it.

Modules are checked with SPIRV-Tools (in-process, ``vulkan1.3`` rules) and read back through
its disassembler (the hypothesis properties are in ``tests/property/test_spirv.py``).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from spirv_modules import graph_module, lines

from vgfc.diagnostics import InternalError, UnsupportedError
from vgfc.ir import Data, DType
from vgfc.spirv.builder import MAGIC, ModuleBuilder, Section
from vgfc.spirv.extinst import tosa_instructions
from vgfc.spirv.grammar import enumerant, opcode
from vgfc.spirv.spirv_tools import disassemble, validate
from vgfc.spirv.tensors import (
    BASE_CAPABILITIES,
    BASE_EXTENSIONS,
    constant_bytes,
    data_bits,
    scalar_constant,
    storage_dtype,
    tensor_constant,
    value_bits,
)

# -- grammar lookups ----------------------------------------------------------------------------


def test_opcodes_and_enumerants_come_from_the_grammar() -> None:
    assert opcode("OpTypeTensorARM") == 4163
    assert opcode("OpGraphConstantARM") == 4181
    assert enumerant("Capability", "GraphARM") == 4191
    assert enumerant("FPEncoding", "BFloat16KHR") == 0
    with pytest.raises(KeyError, match="OpNope"):
        opcode("OpNope")
    with pytest.raises(KeyError, match="Capability 'Nope'"):
        enumerant("Capability", "Nope")


def test_the_tosa_instruction_set_lists_66_operators_attributes_first() -> None:
    table = tosa_instructions()
    assert len(table) == 66
    conv = [o.name for o in table["CONV2D"].operands]
    assert conv[:5] == ["pad", "stride", "dilation", "acc_type", "local_bound"]
    assert [o.variadic for o in table["CONCAT"].operands] == [False, True]
    assert sorted(i.opcode for i in table.values()) == list(range(66))


# -- the builder ----------------------------------------------------------------------------


def test_smallest_graph_module_validates() -> None:
    data = graph_module().to_bytes()
    validate(data, "vulkan1.3")
    words = np.frombuffer(data, "<u4")
    assert words[0] == MAGIC and words[1] == 0x00010500
    assert words[3] == max_id(data) + 1  # the bound is one past the largest id


def max_id(data: bytes) -> int:
    return max(int(tok[1:]) for tok in disassemble(data).split() if tok[1:].isdigit())


def test_sections_follow_the_logical_layout_whatever_the_call_order() -> None:
    b = ModuleBuilder()
    b.type_int(32)  # a type before any capability
    b.name(b.type_int(32), "u32")
    graph_module(b)
    b.capability("Int16")  # a capability after the graph
    text = lines(b)
    first = {op: next(i for i, line in enumerate(text) if op in line) for op in _ORDER}
    assert list(first.values()) == sorted(first.values())
    validate(b.to_bytes(), "vulkan1.3")


_ORDER = (
    "OpCapability",
    "OpExtension",
    "OpExtInstImport",
    "OpMemoryModel",
    "OpName",
    "OpDecorate",
    "OpTypeInt",
    "OpGraphEntryPointARM",
    "OpGraphARM",
    "OpGraphEndARM",
)


def test_types_and_constants_are_shared() -> None:
    b = ModuleBuilder()
    assert b.type_int(32) == b.type_int(32) != b.type_int(32, signed=True)
    assert b.type_float(16) != b.type_float(16, "BFloat16KHR") == b.type_float(16, "BFloat16KHR")
    assert b.constant_u32(5) == b.constant_u32(5) != b.constant_u32(6)
    f = b.type_float(32)
    assert b.type_tensor(f, (2, 3)) == b.type_tensor(f, [2, 3]) != b.type_tensor(f, (3, 2))
    assert b.constant_bool(True) == b.constant_bool(True) != b.constant_bool(False)
    # Variables and graph-body results never are.
    p = b.type_pointer("UniformConstant", b.type_tensor(f, (2,)))
    assert b.variable(p, "UniformConstant") != b.variable(p, "UniformConstant")


def test_malformed_instructions_are_internal_errors() -> None:
    b = ModuleBuilder()
    with pytest.raises(InternalError, match="needs more operands"):
        b.emit(Section.GLOBAL, "OpTypeInt", b.new_id())
    with pytest.raises(InternalError, match="does not fit in a 32-bit word"):
        b.constant(b.type_int(32), 1 << 32)
    with pytest.raises(InternalError, match="static shape"):
        b.type_tensor(b.type_int(32), (2, 0))
    b.memory_model("Logical", "Vulkan")
    with pytest.raises(InternalError, match="memory model is already set"):
        b.memory_model("Logical", "Vulkan")


def test_the_same_calls_give_the_same_bytes() -> None:
    assert graph_module().to_bytes() == graph_module().to_bytes()


# -- TOSA values ------------------------------------------------------------------------------


def definition(b: ModuleBuilder, result: int) -> tuple[str, list[int]]:
    """The opcode name and the operand words after the result id of the instruction defining
    ``result`` (for instructions with a result type: ``OpConstant*``)."""
    words = b.words()
    names = {code: name for name, code in _OPCODES.items()}
    i = 5
    while i < len(words):
        count, code = words[i] >> 16, words[i] & 0xFFFF
        if code in names and count > 2 and words[i + 2] == result:
            return names[code], words[i + 3 : i + count]
        i += count
    raise AssertionError(f"%{result} is not defined")


_OPCODES = {
    name: opcode(name)
    for name in (
        "OpConstant",
        "OpConstantTrue",
        "OpConstantNull",
        "OpConstantComposite",
        "OpConstantCompositeReplicateEXT",
    )
}


def test_scalar_literals() -> None:
    b = ModuleBuilder()
    int8 = scalar_constant(b, DType.INT8, value_bits(DType.INT8, [-2])[0])
    int48 = scalar_constant(b, DType.INT48, value_bits(DType.INT48, [-1])[0])
    bf16 = scalar_constant(b, DType.BF16, value_bits(DType.BF16, [1.5])[0])
    true = scalar_constant(b, DType.BOOL, value_bits(DType.BOOL, [True])[0])
    validate(graph_module(b).to_bytes(), "vulkan1.3")
    assert definition(b, int8) == ("OpConstant", [254])  # signless: zero-extended
    assert definition(b, int48) == ("OpConstant", [0xFFFFFFFF, 0xFFFFFFFF])  # low word first
    assert definition(b, bf16) == ("OpConstant", [0x3FC0])
    assert definition(b, true) == ("OpConstantTrue", [])


@pytest.mark.parametrize(
    ("dtype", "values", "shape", "replicate", "expected", "operands"),
    [
        (DType.FP32, [0.0, 0.0], (2,), True, "OpConstantNull", 0),
        (DType.FP32, [-0.0], (1,), True, "OpConstantNull", 0),  # -0.0 is zero, as in MLIR
        (DType.INT32, [7, 7, 7], (3,), True, "OpConstantCompositeReplicateEXT", 1),
        (DType.INT32, [7, 7, 7], (3,), False, "OpConstantComposite", 3),
        (DType.INT32, [7], (1,), True, "OpConstantComposite", 1),  # one element: no replication
        (DType.INT16, [[1, 2], [3, 4]], (2, 2), True, "OpConstantComposite", 2),  # two rows
        (DType.BOOL, [True, False], (2,), True, "OpConstantComposite", 2),
        (DType.SHAPE, [4, -1], (2,), True, "OpConstantComposite", 2),
        (DType.SHAPE, [], (0,), True, "OpConstantComposite", 1),  # the shape of a scalar: [1]
    ],
)
def test_tensor_constant_forms(
    dtype: DType, values: Any, shape: tuple[int, ...], replicate: bool, expected: str, operands: int
) -> None:
    b = ModuleBuilder()
    array = np.asarray(values, dtype=np.int64 if dtype is DType.SHAPE else None)
    result = tensor_constant(b, dtype, shape, data_bits(Data.of(array, dtype)), replicate=replicate)
    validate(graph_module(b).to_bytes(), "vulkan1.3")
    name, words = definition(b, result)
    assert (name, len(words)) == (expected, operands)


def test_graph_constant_bytes() -> None:
    def stored(dtype: DType, values: Any) -> bytes:
        return constant_bytes(Data.of(values, dtype))

    assert stored(DType.BOOL, np.array([True, False])) == b"\xff\x00"
    assert stored(DType.INT48, np.array([-2])) == (-2).to_bytes(8, "little", signed=True)
    assert stored(DType.INT4, np.array([-8, 7], np.int8)) == b"\xf8\x07"
    assert stored(DType.SHAPE, np.array([3, -1])) == np.array([3, -1], "<i4").tobytes()
    bf16 = np.array([1.5, -2.0], ml_dtypes.bfloat16)
    assert stored(DType.BF16, bf16) == bf16.tobytes()
    assert storage_dtype(DType.INT48) is DType.INT64 and storage_dtype(DType.FP16) is DType.FP16
    with pytest.raises(UnsupportedError, match="FP4E2M1"):
        storage_dtype(DType.FP4E2M1)


# -- copies of a prologue, and the graph body's deferred range check --------------------------


def test_a_copy_goes_on_as_the_original_would_and_leaves_it_alone() -> None:
    prologue = ModuleBuilder()
    prologue.capability(*BASE_CAPABILITIES)
    prologue.extension(*BASE_EXTENSIONS)
    before = prologue.to_bytes()

    assert graph_module(prologue.copy()).to_bytes() == graph_module().to_bytes()
    other = prologue.copy()
    other.capability("Int16")
    other.type_int(16)
    other.constant_u32(7)
    assert prologue.to_bytes() == before
    # Ids continue from the copy's own count, not the original's.
    assert prologue.copy().new_id() == other.new_id() - 3


@pytest.mark.parametrize("word", [1 << 32, -1])
def test_a_graph_body_operand_out_of_range_is_an_internal_error(word: int) -> None:
    b = graph_module()
    b.ext_inst(word, 1, 0, [])
    with pytest.raises(InternalError, match="does not fit in a 32-bit word"):
        b.to_bytes()
