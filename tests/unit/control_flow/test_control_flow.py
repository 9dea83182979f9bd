"""COND_IF and WHILE_LOOP written out as plain operators (vgfc/control_flow.py).

The oracles are independent of vgfc: official tests made by tosa-tools' generator and judged
against tosa_reference_model's results, and models written by tosa-tools' serializer judged
against numpy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from control_flow_models import cond_if_select, while_loop
from paths import DATA
from reference_tools import tool

import vgfc
from vgfc.control_flow import inline_control_flow
from vgfc.diagnostics import InputError, UnsupportedError
from vgfc.limits import LIMITS
from vgfc.read import load
from vgfc.runner import run_vgf

OFFICIAL = DATA / "control_flow"
COND_IF_TESTS = sorted(p.name for p in OFFICIAL.iterdir())


def _compile(model: Path, out: Path, *, optimize: bool = True) -> tuple[Path, dict[str, Any]]:
    vgf = out / "model.vgf"
    vgfc.compile(model, vgf, report=out / "report.json", optimize=optimize)
    return vgf, json.loads((out / "report.json").read_text())


def _reference_results(test: Path, work: Path) -> list[np.ndarray]:
    """tosa_reference_model's results for an official test (run on a copy of it)."""
    desc = json.loads((test / "desc.json").read_text())
    for f in ["desc.json", desc["tosa_file"], *desc["ifm_file"]]:
        shutil.copyfile(test / f, work / f)
    ref = tool("tosa_reference_model", "tosa-tools")
    subprocess.run(
        [ref, "--test_desc", work / "desc.json", "--tosa_level", "EIGHTK"],
        check=True,
        capture_output=True,
    )
    return [np.load(work / f) for f in desc["ofm_file"]]


@pytest.mark.parametrize("name", COND_IF_TESTS)
def test_official_cond_if_tests_match_the_reference_model(
    stack: object, name: str, tmp_path: Path
) -> None:
    test = OFFICIAL / name
    vgf, report = _compile(test / "test.tosa", tmp_path)
    assert report["inserted"] and all("COND_IF #" in i["why"] for i in report["inserted"])
    desc = json.loads((test / "desc.json").read_text())
    inputs = []
    for f in desc["ifm_file"]:
        array = np.load(test / f)
        inputs.append(array.view(np.uint16) if array.dtype.kind == "V" else array)
    got = list(run_vgf(vgf, inputs).values())
    want = _reference_results(test, tmp_path)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        assert g.tobytes() == w.tobytes()  # the same bits: add, sub and shifts are exact


@pytest.mark.parametrize("condition", [True, False])
def test_if_conversion_selects_the_branch_the_condition_names(
    stack: object, condition: bool, tmp_path: Path
) -> None:
    model = cond_if_select(tmp_path, [2, 3])
    vgf, report = _compile(model, tmp_path)
    whys = {i["kind"]: i["why"] for i in report["inserted"]}
    assert whys["SELECT"] == "if-conversion of COND_IF #0: picks each result by its condition"
    assert "then branch of COND_IF #0 (if-converted)" in whys.values()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 0.5, np.float32)
    (got,) = run_vgf(vgf, [np.array(condition), a, b]).values()
    np.testing.assert_array_equal(got, a + b if condition else a - b)


def test_a_condition_of_any_single_element_shape_is_reshaped(tmp_path: Path) -> None:
    graph = inline_control_flow(load(cond_if_select(tmp_path, [2, 3], cond_shape=[1, 1])))
    assert not [op for op in graph.operators if op.op == "RESHAPE"]  # of the result's rank
    graph = inline_control_flow(load(cond_if_select(tmp_path, [4], cond_shape=[1, 1, 1])))
    (reshape,) = [op for op in graph.operators if op.op == "RESHAPE"]
    assert graph.tensors[reshape.outputs[0]].shape == (1,)
    select = next(op for op in graph.operators if op.op == "SELECT")
    assert select.inputs[0] == reshape.outputs[0]


def test_branches_that_disagree_with_the_op_are_refused(tmp_path: Path) -> None:
    model = cond_if_select(tmp_path, [2, 3], else_shape=[3, 2])
    with pytest.raises(InputError) as e:
        vgfc.compile(model, tmp_path / "x.vgf")
    text = e.value.diagnostic.render()
    assert "op #0 COND_IF" in text and "else_graph" in text
    assert "3x2 FP32" in text and "2x3 FP32" in text
    assert text.endswith("[CondIfOutputListElseGraphMismatch]")
    assert not (tmp_path / "x.vgf").exists()


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_a_loop_with_a_constant_trip_count_is_unrolled(
    stack: object, trips: int, tmp_path: Path
) -> None:
    model = while_loop(tmp_path, trips)
    vgf, report = _compile(model, tmp_path, optimize=False)
    whys = [i["why"] for i in report["inserted"]]
    computed = [i["kind"] for i in report["inserted"] if i["kind"] in ("ADD", "SUB")]
    assert computed == ["SUB", "ADD"] * trips  # the body's operators, once per trip
    assert f"unrolled {trips} time" in whys[-1]
    acc = np.array([10, 20, 30, 40], np.float32)
    (got,) = run_vgf(vgf, [acc]).values()
    np.testing.assert_array_equal(got, acc + trips * np.arange(1, 5, dtype=np.float32))
    # Optimised, the loop counter's SUBs are computed at compile time; the results are the same.
    (tmp_path / "opt").mkdir()
    folded, report = _compile(model, tmp_path / "opt")
    folds = [r["kind"] for r in report["passes"] if r["action"] == "folded"]
    assert folds.count("SUB") == trips
    (again,) = run_vgf(folded, [acc]).values()
    np.testing.assert_array_equal(again, got)


def test_a_loop_whose_count_is_a_graph_input_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError) as e:
        vgfc.compile(while_loop(tmp_path, None), tmp_path / "x.vgf")
    text = e.value.diagnostic.render()
    assert "op #0 WHILE_LOOP: cond_graph: cannot unroll WHILE_LOOP #0" in text
    assert "'input-0' (loop value 0), which is not known at compile time" in text


def test_official_while_loop_tests_are_refused_by_check_too(tmp_path: Path) -> None:
    """The generator's loops count down a graph input: no trip count at compile time. (Made
    here, not kept under tests/data, where every model is expected to compile.)"""
    from click.testing import CliRunner

    from vgfc.cli.group import cli as main

    generator = tool("tosa_verif_build_tests", "tosa-tools")
    which = ["--profile", "tosa-pro-int", "--extension", "tosa-ext-controlflow"]
    which += ["--target-dtype", "int32", "--seed", "42", "--test-type", "positive"]
    subprocess.run(
        [generator, "--filter", "^while_loop$", "-o", tmp_path, *which],
        check=True,
        capture_output=True,
    )
    models = sorted(tmp_path.rglob("*.tosa"))
    assert models
    for model in models:
        result = CliRunner().invoke(main, ["check", str(model)])
        assert result.exit_code == 1
        assert "cannot unroll WHILE_LOOP #" in result.output
        assert "which is not known at compile time" in result.output
        assert "Traceback" not in result.output


def test_a_loop_longer_than_the_limit_is_refused(tmp_path: Path) -> None:
    trips = LIMITS.loop_trips_max
    with pytest.raises(UnsupportedError, match=f"more than {trips} trips"):
        vgfc.compile(while_loop(tmp_path, trips + 1), tmp_path / "x.vgf")


def test_written_out_control_flow_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vgfc.limits import Limits

    monkeypatch.setattr("vgfc.control_flow.LIMITS", Limits(written_out_ops_max=5))
    with pytest.raises(UnsupportedError, match="would add more than 5 operators"):
        vgfc.compile(while_loop(tmp_path, 3), tmp_path / "x.vgf")  # 4 per trip


def test_an_all_zero_constant_output_is_written(stack: object, tmp_path: Path) -> None:
    # The official test whose branch gives `false`: an output set to OpConstantNull came back
    # unwritten from the emulation layer.
    test = OFFICIAL / "cond_if_const_0_b_cond0"
    vgf, _ = _compile(test / "test.tosa", tmp_path)
    (got,) = run_vgf(vgf, []).values()
    assert got.dtype == np.bool_ and not got.any()


@pytest.mark.parametrize("which", ["cond_if", "while_loop"])
def test_verify_agrees_with_the_reference_model(stack: object, which: str, tmp_path: Path) -> None:
    """`vgfc verify` runs the written-out graph and the file's own control flow on
    tosa_reference_model: they must agree."""
    from click.testing import CliRunner

    from vgfc.cli.group import cli as main

    model = cond_if_select(tmp_path, [2, 3]) if which == "cond_if" else while_loop(tmp_path, 3)
    result = CliRunner().invoke(main, ["verify", str(model)])
    assert result.exit_code == 0, result.output
    assert "ok: every output agrees" in result.output
