"""The type-narrowing pass (``--type-narrowing full|partial``): what becomes FP16, what keeps FP32
and what it inserts at the edge, the option on the command line and in the report.

The expectations are the reference converter's (model-converter 0.11.0, read from its
``--dump-mlir`` after ``TosaNarrowF32ToF16Pass`` and from its VGFs): inputs, outputs and
constants FP16, every FP32 ``acc_type`` FP16 under ``full`` and kept under ``partial``, CLAMP's
bounds FP16. Where it fails (FFT2D, BF16, custom shaders) vgfc keeps FP32 behind CASTs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from pass_graphs import pass_graph
from tosa_catalogue import CASES

import vgfc
from vgfc.compilation import make_options
from vgfc.compiler import compile_model
from vgfc.ir import CUSTOM_SHADER_DOMAIN, DType, Graph
from vgfc.passes import run_passes
from vgfc.read import loads
from vgfc.report import load_schema
from vgfc.spirv.spirv_tools import validate
from vgfc.verify import verify

F32, F16 = DType.FP32, DType.FP16
BY_NAME = {c.name: c for c in CASES}
ACCUMULATING = [
    "CONV2D_FP32_FP32",
    "CONV3D_FP32_FP32",
    "DEPTHWISE_CONV2D_FP32_FP32",
    "TRANSPOSE_CONV2D_FP32_FP32",
    "AVG_POOL2D_FP32_FP32",
]


def _narrowed(case: str, mode: str, optimize: bool = True) -> Graph:
    graph = loads(BY_NAME[case].model(), case)
    done = run_passes(graph, optimize, mode).graph
    verify(done)
    return done


def _float_types(graph: Graph) -> set[DType]:
    return {t.dtype for t in graph.tensors.values() if t.dtype.is_float}


@pytest.mark.parametrize("mode", ["full", "partial"])
@pytest.mark.parametrize("case", ACCUMULATING)
def test_full_narrows_the_accumulator_and_partial_keeps_it(case: str, mode: str) -> None:
    graph = _narrowed(case, mode)
    assert _float_types(graph) == {F16}
    (op,) = [op for op in graph.operators if "acc_type" in op.attrs]
    assert op.attrs["acc_type"] == ("FP16" if mode == "full" else "FP32")


@pytest.mark.parametrize("mode", ["full", "partial"])
@pytest.mark.parametrize(
    "case", ["MATMUL_FP32_FP32", "MATMUL_FP16_FP32", "REDUCE_SUM_FP32", "REDUCE_PRODUCT_FP32"]
)
def test_matmul_and_reductions_have_no_accumulator_type_and_are_fp16_in_both_modes(
    case: str, mode: str
) -> None:
    assert _float_types(_narrowed(case, mode)) == {F16}


def test_full_narrows_an_fp32_accumulator_of_fp16_operands_as_the_reference_does() -> None:
    (op,) = [op for op in _narrowed("CONV2D_FP16_FP32", "full").operators if op.op == "CONV2D"]
    assert op.attrs["acc_type"] == "FP16"
    (op,) = [op for op in _narrowed("CONV2D_FP16_FP32", "partial").operators if op.op == "CONV2D"]
    assert op.attrs["acc_type"] == "FP32"


def test_constants_are_rounded_once_to_nearest_even_and_clamp_bounds_too() -> None:
    values = np.array(
        [0.1, 1e6, -1e6, 65519.0, 65520.0, 2.98e-8, 1.000732421875, np.nan], np.float32
    )
    graph = pass_graph(
        [("ADD", ["x", "c"], ["a"], {}),
         ("CLAMP", ["a"], ["y"], {"min_val": -3.4e38, "max_val": 1.00048828125,
                                  "nan_mode": "PROPAGATE"})],
        {"x": ((8,), F32, None), "c": ((8,), F32, values), "a": ((8,), F32, None),
         "y": ((8,), F32, None)},
        ["x"], ["y"],
    )  # fmt: skip
    done = run_passes(graph, True, "full")
    verify(done.graph)
    got = np.asarray(done.graph.tensors["c"].data.array)
    assert got.dtype == np.float16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, values.astype(np.float16))  # inf past the range
    assert got[5] == 0 and got[6] == np.float16(1.0009765625)  # ties and underflow, even
    (clamp,) = [op for op in done.graph.operators if op.op == "CLAMP"]
    assert clamp.attrs["min_val"] == -np.inf and clamp.attrs["max_val"] == 1.0
    assert {t.dtype for t in done.graph.tensors.values()} == {F16}
    actions = {(r.kind, r.action) for r in done.rewrites if r.pass_name == "type-narrowing"}
    assert actions == {("CONST", "narrowed"), ("ADD", "narrowed"), ("CLAMP", "narrowed")}


def test_a_cast_between_fp16_and_fp32_becomes_an_identity_even_under_o0() -> None:
    for case in ("CAST_FP16_FP32", "CAST_FP32_FP16"):
        graph = _narrowed(case, "full", optimize=False)
        assert [op.op for op in graph.operators] == ["IDENTITY"]
        assert _float_types(graph) == {F16}


def test_an_op_with_no_fp16_form_keeps_fp32_behind_casts() -> None:
    """The reference converter fails on FFT2D narrowed; vgfc converts at its edges."""
    shape = (1, 4, 8)
    graph = pass_graph(
        [("ABS", ["x"], ["a"], {}),
         ("FFT2D", ["a", "a"], ["re", "im"], {"inverse": False, "local_bound": False}),
         ("ADD", ["re", "im"], ["y"], {})],
        {n: (shape, F32, None) for n in ("x", "a", "re", "im", "y")},
        ["x"], ["y", "im"],
    )  # fmt: skip
    done = run_passes(graph, True, "partial")
    g = done.graph
    verify(g)
    types = {n: t.dtype for n, t in g.tensors.items()}
    assert types["x"] is F16 and types["y"] is F16  # the interface as the reference's
    assert types["a"] is types["re"] is types["im"] is F32  # what FFT2D reads and writes
    (fft,) = [op for op in g.operators if op.op == "FFT2D"]
    assert fft.inputs == ("a", "a") and fft.outputs == ("re", "im")
    casts = {(op.inputs[0], op.outputs[0]) for op in g.operators if op.op == "CAST"}
    assert casts == {("a.fp16", "a"), ("re", "re.fp16"), ("im", "im.fp16")}
    (add,) = [op for op in g.operators if op.op == "ADD"]
    assert add.inputs == ("re.fp16", "im.fp16")
    assert sum(r.action == "inserted" for r in done.rewrites) == 3


def test_a_custom_shader_keeps_its_operands_and_a_constant_it_shares_is_copied() -> None:
    shader = {"operator_name": "blur", "domain_name": CUSTOM_SHADER_DOMAIN}
    graph = pass_graph(
        [("ADD", ["x", "c"], ["a"], {}),
         ("CUSTOM", ["a", "c"], ["b"], shader),
         ("MUL", ["b", "c", "s"], ["y"], {})],
        {"x": ((4,), F32, None), "c": ((4,), F32, [1.5, 2.5, 1e-9, 7.0]),
         "s": ((1,), DType.INT8, [0]), "a": ((4,), F32, None), "b": ((4,), F32, None),
         "y": ((4,), F32, None)},
        ["x"], ["y"],
    )  # fmt: skip
    g = run_passes(graph, True, "full").graph
    verify(g)
    (custom,) = [op for op in g.operators if op.op == "CUSTOM"]
    assert custom.inputs == ("a", "c") and custom.outputs == ("b",)
    assert {n: g.tensors[n].dtype for n in ("a", "b", "c")} == dict.fromkeys("abc", F32)
    assert g.tensors["c.fp16"].data is not None and g.tensors["c.fp16"].dtype is F16
    (mul,) = [op for op in g.operators if op.op == "MUL"]
    assert mul.inputs == ("b.fp16", "c.fp16", "s")
    assert g.tensors["y"].dtype is F16


def test_none_changes_nothing() -> None:
    graph = loads(BY_NAME["CONV2D_FP32_FP32"].model())
    assert run_passes(graph, False, "none").graph is graph


@pytest.mark.parametrize("mode", ["full", "partial"])
def test_every_module_validates_and_the_report_lists_what_was_narrowed(
    cli: Any, tmp_path: Path, mode: str
) -> None:
    model = tmp_path / "conv.tosa"
    model.write_bytes(BY_NAME["CONV2D_FP32_FP32"].model())
    out, report = tmp_path / "m.vgf", tmp_path / "m.json"
    run = cli(
        "compile", "--type-narrowing", mode, str(model), "-o", str(out), "--report", str(report)
    )
    assert run.code == 0, run.err
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, load_schema("report.schema.json"))
    narrowed = {(p["kind"], p["why"]) for p in doc["passes"] if p["pass"] == "type-narrowing"}
    acc = "accumulator FP16" if mode == "full" else "accumulator kept FP32"
    assert ("CONV2D", f"FP32 -> FP16; {acc}") in narrowed
    assert ("CONST", "rounded to FP16") in narrowed
    result = compile_model(model, make_options(type_narrowing=mode))
    assert result.modules
    for module in result.modules:
        if module.spirv is not None:
            validate(module.spirv)


@pytest.mark.parametrize("command", ["compile", "check"])
@pytest.mark.parametrize("value", ["bogus", "", "Full"])
def test_a_broken_value_is_a_usage_error(
    cli: Any, tmp_path: Path, command: str, value: str
) -> None:
    model = tmp_path / "conv.tosa"
    model.write_bytes(BY_NAME["CONV2D_FP32_FP32"].model())
    out = ["-o", str(tmp_path / "m.vgf")] if command == "compile" else []
    run = cli(command, "--type-narrowing", value, str(model), *out)
    assert run.code == 2
    assert "--type-narrowing" in run.err and "'none', 'full', 'partial'" in run.err
    assert not (tmp_path / "m.vgf").exists()
    with pytest.raises(ValueError, match="type_narrowing must be one of none, full, partial"):
        vgfc.compile(model, tmp_path / "m.vgf", type_narrowing=value)


def test_check_takes_it(cli: Any, tmp_path: Path) -> None:
    model = tmp_path / "conv.tosa"
    model.write_bytes(BY_NAME["FFT2D_FP32"].model())
    assert cli("check", "--type-narrowing", "full", str(model)).code == 0
