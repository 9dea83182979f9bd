"""ML partitions lowered to SPIR-V graph modules.

Every module vgfc writes passes ``spirv-val --target-env vulkan1.3`` (SPIRV-Tools in-process):
each one-op model of the catalogue (``tosa_catalogue``) and the bundled samples (the real
models in ``tests/differential/test_tosa_lowering.py``, beside the reference converter's).
What cannot be lowered is refused with an error naming the op; IDENTITY chains, constants, graph
constant ids and bindings come out as they should.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from paths import DATA
from samples_module import SAMPLES_DIR
from tosa_catalogue import ACC, CASE_IDS, CASES, Case, X, lower_model, structure
from tosa_factory import Op, T, build

import vgfc
from vgfc.diagnostics import UnsupportedError
from vgfc.lower.graph import lower_partition
from vgfc.partition import PartitionKind
from vgfc.spirv.spirv_tools import disassemble, validate

REAL = DATA / "real"

# -- the catalogue: every module validates ----------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_lowers_and_validates(case: Case) -> None:
    _, (module,) = lower_model(case.model())
    validate(module.spirv, "vulkan1.3")
    ops = [i[0] for i in structure(module.spirv)["instructions"]]
    assert ops == ([] if case.op == "IDENTITY" else [case.op])
    assert module.inputs == tuple(f"in{i}" for i, x in enumerate(case.inputs) if isinstance(x, X))
    assert module.outputs == tuple(f"out{i}" for i in range(len(case.outputs)))


# -- real models and samples ----------------------------------------------------------------


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES_DIR.glob("*.tosa")))
def test_sample_partitions_lower_and_validate(sample: str) -> None:
    graph, modules = lower_model((SAMPLES_DIR / sample).read_bytes())
    ml = [p for p in vgfc.partition(graph).partitions if p.kind is PartitionKind.ML]
    assert [m.name for m in modules] == [f"graph_partition_{p.id}" for p in ml]
    for module in modules:
        validate(module.spirv, "vulkan1.3")


def test_stateful_model_is_refused() -> None:
    with pytest.raises(UnsupportedError, match="stateful variable tensors") as info:
        lower_model((REAL / "tflite" / "hey_jarvis.tosa").read_bytes())
    assert "op #" in str(info.value) and "tensor 'Variable_" in str(info.value)


# -- what cannot be lowered ----------------------------------------------------------------------

F = (2, 4)


def _unsupported(tensors: list[T], op: Op, regions: tuple[str, ...] = ()) -> str:
    data = build([T("x", F), *tensors], [op], ["x"], list(op.outputs), extra_regions=regions)
    with pytest.raises(UnsupportedError) as info:
        lower_model(data)
    return str(info.value)


@pytest.mark.parametrize(
    ("op", "attr", "fields", "regions", "reason"),
    [
        ("COND_IF", "CondIfAttribute", {"then_graph": "a", "else_graph": "b"}, ("a", "b"),
         "control flow"),
        ("WHILE_LOOP", "WhileLoopAttribute", {"cond_graph": "a", "body_graph": "b"}, ("a", "b"),
         "control flow"),
        ("VARIABLE_READ", "VariableReadAttribute", {}, (), "stateful variables"),
        ("MATMUL_T", "MatMulTAttribute", {}, (), "TOSA 1.1 draft"),
        ("ROW_GATHER", "RowGatherAttribute", {}, (), "TOSA 1.1 draft"),
    ],
)  # fmt: skip
def test_operators_outside_the_instruction_set(
    op: str, attr: str, fields: dict[str, Any], regions: tuple[str, ...], reason: str
) -> None:
    message = _unsupported([T("y", F)], Op(op, ["x"], ["y"], attr, fields), regions)
    assert message.startswith(f"m.tosa: op #0 {op}: cannot lower {op} to a SPIR-V graph")
    assert reason in message


def test_shape_operators_of_the_draft_are_refused() -> None:
    message = _unsupported([T("d", (1,), "SHAPE")], Op("DIM", ["x"], ["d"], "DimAttribute", {}))
    assert "op #0 DIM" in message and "TOSA 1.1 draft" in message


def test_custom_operators_of_other_domains_are_refused() -> None:
    from tosa_factory import custom

    message = _unsupported([T("y", F)], custom(["x"], ["y"], "k", domain="com.example.Other"))
    assert "op #0 CUSTOM 'k' (com.example.Other)" in message
    assert "only com.arm.VulkanCustomShader" in message


@pytest.mark.parametrize(
    ("tensor", "words"),
    [
        (T("y", (-1, 4)), "dynamic shape [-1, 4]"),
        (T("y", (2, 0)), "shape [2, 0] has no elements"),
        (T("y", (2, 4), unranked=True), "unranked tensors"),
    ],
)
def test_tensors_without_a_static_shape_are_refused(tensor: T, words: str) -> None:
    message = _unsupported([tensor], Op("ABS", ["x"], ["y"]))
    assert message == f"m.tosa: op #0 ABS: tensor 'y': {words}" + message.split(words, 1)[1]


def test_missing_attribute_names_it() -> None:
    data = build([T("x", F), T("y", (2, 1))], [Op("REDUCE_SUM", ["x"], ["y"])], ["x"], ["y"])
    with pytest.raises(vgfc.VgfcError, match=r"op #0 REDUCE_SUM: axis: attribute is missing"):
        lower_model(data)


def test_wrong_input_count_is_an_input_error() -> None:
    data = build([T("x", F), T("y", F)], [Op("ADD", ["x"], ["y"])], ["x"], ["y"])
    with pytest.raises(vgfc.VgfcError, match=r"op #0 ADD: input 'input2' is missing"):
        lower_model(data)


# -- values: IDENTITY, constants, graph constant ids, bindings -------------------------------


def test_identity_chains_fold_to_their_source() -> None:
    names = ["x", "a", "b", "c", "y"]
    ops = [
        Op("IDENTITY", ["x"], ["a"]),
        Op("ABS", ["a"], ["b"]),
        Op("IDENTITY", ["b"], ["c"]),
        Op("IDENTITY", ["c"], ["y"]),
    ]
    _, (module,) = lower_model(build([T(n, F) for n in names], ops, ["x"], ["y"]))
    validate(module.spirv)
    found = structure(module.spirv)
    assert [i[0] for i in found["instructions"]] == ["ABS"]
    assert found["instructions"][0][2][0] == "OpGraphInputARM"  # ABS reads the graph input
    assert found["outputs"][0][0] == ("result", 0)


def test_identity_of_an_input_is_the_output() -> None:
    data = build([T("x", F), T("y", F)], [Op("IDENTITY", ["x"], ["y"])], ["x"], ["y"])
    _, (module,) = lower_model(data)
    validate(module.spirv)
    assert structure(module.spirv)["outputs"][0][0][0] == "OpGraphInputARM"


def _constant(name: str, n: int, base: float = 0.0) -> T:
    return T(name, (n,), "FP32", np.arange(n, dtype=np.float32) + base)


def test_a_constant_can_be_a_graph_output() -> None:
    tensors = [T("x", (20,)), T("y", (20,)), _constant("big", 20), _constant("small", 3)]
    ops = [
        Op("CONST", [], ["big"]),
        Op("CONST", [], ["small"]),
        Op("ABS", ["x"], ["y"]),
    ]
    _, (module,) = lower_model(build(tensors, ops, ["x"], ["y", "big", "small"]))
    validate(module.spirv)
    assert module.outputs == ("y", "big", "small")
    outputs = [o[0][0] for o in structure(module.spirv)["outputs"]]
    assert outputs == ["result", "OpGraphConstantARM", "OpConstantComposite"]
    (constant,) = module.constants
    assert (constant.id, constant.tensor, constant.shape) == (0, "big", (20,))
    assert constant.data == np.arange(20, dtype="<f4").tobytes()


def _split_model() -> bytes:
    """ADD(x, c1) -> shader -> ADD(s, c1) -> ADD(., c2): two ML partitions share c1."""
    from tosa_factory import custom

    tensors = [T(n, (20,)) for n in ("x", "a", "s", "b", "y")]
    tensors += [_constant("unused", 20), _constant("c1", 20), _constant("c2", 20, 1.0)]
    ops = [
        Op("CONST", [], ["unused"]),
        Op("CONST", [], ["c1"]),
        Op("CONST", [], ["c2"]),
        Op("ADD", ["x", "c1"], ["a"]),
        custom(["a"], ["s"]),
        Op("ADD", ["s", "c1"], ["b"]),
        Op("ADD", ["b", "c2"], ["y"]),
    ]
    return build(tensors, ops, ["x"], ["y"])


def test_graph_constant_ids_are_model_wide() -> None:
    _, (first, second) = lower_model(_split_model())
    # 'unused' is read by nothing, so it has no id; c1 keeps id 0 in both partitions.
    assert [(c.id, c.tensor) for c in first.constants] == [(0, "c1")]
    assert [(c.id, c.tensor) for c in second.constants] == [(0, "c1"), (1, "c2")]
    assert first.constants[0] == second.constants[0]
    for module in (first, second):
        validate(module.spirv)


def test_inline_limit_moves_constants_between_module_and_graph_constants() -> None:
    data = build(
        [T("x", (20,)), T("y", (20,)), _constant("c", 20)],
        [Op("CONST", [], ["c"]), Op("ADD", ["x", "c"], ["y"])],
        ["x"],
        ["y"],
    )
    _, (inline,) = lower_model(data, inline_limit=20)
    _, (outside,) = lower_model(data, inline_limit=19)
    assert inline.constants == () and len(outside.constants) == 1
    assert len(inline.spirv) > len(outside.spirv)
    for module in (inline, outside):
        validate(module.spirv)


def test_bindings_decorate_the_interface_variables() -> None:
    graph = vgfc.loads(build([T("x", F), T("y", F)], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]))
    (part,) = vgfc.partition(graph).partitions
    module = lower_partition(graph, part, {"x": 7, "y": 3}, name="net")
    validate(module.spirv)
    interface = structure(module.spirv)["interface"]
    assert [d for _, d in interface] == [
        {"Binding": ["7"], "DescriptorSet": ["0"]},
        {"Binding": ["3"], "DescriptorSet": ["0"]},
    ]
    assert module.name == "net" and '"net"' in disassemble(module.spirv)
    with pytest.raises(vgfc.VgfcError, match="no binding for graph output 'y'"):
        lower_partition(graph, part, {"x": 0})


def test_output_is_deterministic() -> None:
    data = (REAL / "tflite" / "face_detection_short_range.tosa").read_bytes()
    first, second = lower_model(data)[1][0], lower_model(data)[1][0]
    assert first == second


def test_reshape_to_a_scalar_uses_the_shape_of_one() -> None:
    """A rank-0 tensor is a [1] tensor in SPIR-V, so its (empty) TOSA shape becomes [1]."""
    data = build(
        [T("x", (1,)), T("y", ())],
        [Op("CONST_SHAPE", [], ["s"]), Op("RESHAPE", ["x", "s"], ["y"])],
        ["x"],
        ["y"],
        shapes=[("s", 0, ())],
    )
    _, (module,) = lower_model(data)
    validate(module.spirv)
    shape = structure(module.spirv)["instructions"][0][3]
    assert shape[0] == "OpConstantComposite" and shape[2] == (
        "OpConstant",
        ("OpTypeInt", "32", "0"),
        "1",
    )


def test_int4_weights_widen_to_bytes() -> None:
    """EXT-INT4: the reference converter asserts on INT4 constants; vgfc widens them to INT8."""
    weights = np.array([-8, 7, 0, -1] * 4, np.int8)
    packed = ((weights[0::2] & 0xF) | ((weights[1::2] & 0xF) << 4)).astype(np.uint8).tobytes()
    tensors = [
        T("x", (1, 4, 4, 2), "INT8"),
        T("w", (4, 1, 2, 2), "INT4", packed),
        T("b", (4,), "INT32", np.zeros(4, np.int32)),
        T("xz", (1,), "INT8", np.zeros(1, np.int8)),
        T("wz", (1,), "INT4", b"\0"),
        T("y", (1, 4, 3, 4), "INT32"),
    ]
    fields = {"pad": [0] * 4, "stride": [1, 1], "dilation": [1, 1], "local_bound": False}
    ops = [Op("CONST", [], [n]) for n in ("w", "b", "xz", "wz")]
    ops.append(Op("CONV2D", ["x", "w", "b", "xz", "wz"], ["y"], "Conv2dAttribute",
                  {**fields, "acc_type": ACC["INT32"]}))  # fmt: skip
    _, (module,) = lower_model(build(tensors, ops, ["x"], ["y"]), inline_limit=8)
    validate(module.spirv)
    (constant,) = module.constants
    assert constant.dtype.value == "INT8" and constant.data == weights.tobytes()
    assert "OpTypeInt 4" not in disassemble(module.spirv)
