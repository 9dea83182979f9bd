"""scripts/executorch_suite.py and its converter wrapper, without ExecuTorch: the sample it
picks, the files it keeps, pytest's verdicts it reads back and the tolerances it judges by."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from paths import ROOT
from tosa_factory import Op, T, build, chain

sys.path.insert(0, str(ROOT / "scripts"))
import _executorch_suite_compare as compare
import _executorch_suite_table as table
import executorch_suite as suite
import executorch_suite_converter as wrapper

from vgfc.read import load

NODES = [
    f"ops/test_{op}.py::test_{op}_vgf_{k}[case{i}]" for op in "abc" for k in "xy" for i in range(5)
]


def test_the_sample_has_every_file_and_is_the_same_for_the_same_seed() -> None:
    picked = suite.sample(NODES, 10, seed=4)
    assert len(picked) == 10 and len(set(picked)) == 10
    assert {n.split("::")[0] for n in picked} == {n.split("::")[0] for n in NODES}
    assert picked == suite.sample(NODES, 10, seed=4)
    assert picked != suite.sample(NODES, 10, seed=5)
    assert len(suite.sample(NODES, 1, seed=4)) == 3  # one per file, whatever the size
    assert sorted(suite.sample(NODES, 10_000, seed=4)) == sorted(NODES)


@pytest.mark.parametrize(
    ("test", "folder"),
    [
        ("a/ops/test_add.py::test_add_vgf[4d x/y] (call)", "test_add__test_add_vgf[4d_x_y]"),
        ("test_add.py::test_add_vgf", "test_add__test_add_vgf"),
        ("unknown", "unknown"),
        ("m.py::t[" + "x" * 300 + "]", ("m__t[" + "x" * 300)[:200]),
    ],
)
def test_a_test_names_its_folder(test: str, folder: str) -> None:
    assert wrapper.folder_name(test) == folder


def _wrap(tmp_path: Path, args: list[str], keep: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTEST_CURRENT_TEST="ops/test_abs.py::test_abs_vgf[x] (call)")
    env.pop("VGFC_SUITE_KEEP", None)
    if keep:
        env["VGFC_SUITE_KEEP"] = str(tmp_path / "keep")
    script = ROOT / "scripts" / "executorch_suite_converter.py"
    return subprocess.run(
        [sys.executable, str(script), *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_the_wrapper_keeps_each_input_and_converts_it(tmp_path: Path) -> None:
    model = tmp_path / "in.tosa"
    model.write_bytes(chain(2))
    for n in range(2):
        done = _wrap(tmp_path, ["-i", str(model), "-o", str(tmp_path / f"{n}.vgf")])
        assert done.returncode == 0, done.stderr
        assert (tmp_path / f"{n}.vgf").read_bytes()[:4] == b"VGF1"
    folder = tmp_path / "keep" / "test_abs__test_abs_vgf[x]"
    assert sorted(p.name for p in folder.iterdir()) == [
        "call-0.json",
        "call-0.tosa",
        "call-1.json",
        "call-1.tosa",
    ]
    assert (folder / "call-1.tosa").read_bytes() == model.read_bytes()
    assert json.loads((folder / "call-0.json").read_text())["returncode"] == 0


def test_the_wrapper_records_a_refusal_and_passes_its_exit_code_on(tmp_path: Path) -> None:
    empty = tmp_path / "empty.tosa"
    empty.write_bytes(b"")
    done = _wrap(tmp_path, ["-i", str(empty), "-o", str(tmp_path / "out.vgf")])
    assert done.returncode == 1 and "file is empty" in done.stderr
    said = json.loads((tmp_path / "keep" / "test_abs__test_abs_vgf[x]" / "call-0.json").read_text())
    assert said["returncode"] == 1 and "file is empty" in said["stderr"]
    assert not (tmp_path / "out.vgf").exists()


def test_without_a_keep_folder_or_an_input_the_wrapper_only_converts(tmp_path: Path) -> None:
    done = _wrap(tmp_path, ["--version"])
    assert done.returncode == 0 and json.loads(done.stdout)["version"]
    missing = _wrap(tmp_path, ["-i", str(tmp_path / "absent.tosa"), "-o", str(tmp_path / "o.vgf")])
    assert missing.returncode != 0 and not (tmp_path / "keep").exists()


def test_pytest_verdicts_are_read_back_by_folder(tmp_path: Path) -> None:
    xml = tmp_path / "pytest.xml"
    xml.write_text(
        "<testsuites><testsuite>"
        '<testcase classname="executorch.backends.arm.test.ops.test_abs" name="test_a[x]">'
        f'<failure message="FileNotFoundError: {suite.NO_RUNTIME} or executor_runner">tb'
        "</failure></testcase>"
        '<testcase classname="executorch.backends.arm.test.ops.test_abs" name="test_b">'
        '<failure message="RuntimeError: Vgf compiler failed.">tb</failure></testcase>'
        '<testcase classname="x.test_c" name="test_c"><skipped message="no MXFP"/></testcase>'
        '<testcase classname="x.test_d" name="test_d"/>'
        "</testsuite></testsuites>"
    )
    assert suite.outcomes(xml) == {
        "test_abs__test_a[x]": {
            "outcome": "converted",
            "message": f"FileNotFoundError: {suite.NO_RUNTIME} or executor_runner",
        },
        "test_abs__test_b": {"outcome": "failure", "message": "RuntimeError: Vgf compiler failed."},
        "test_c__test_c": {"outcome": "skipped", "message": "no MXFP"},
        "test_d__test_d": {"outcome": "passed", "message": ""},
    }


def test_a_sample_of_none_is_a_usage_error() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "executorch_suite.py"),
            "run",
            "x",
            "--sample",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "--sample must be at least 1" in done.stderr


@pytest.mark.parametrize(
    ("got", "want", "why"),
    [
        (np.array([3, 5], np.int8), np.array([4, 5], np.int8), None),
        (np.array([2, 5], np.int8), np.array([4, 5], np.int8), "integers differ by up to 2"),
        (np.array([200], np.uint8), np.array([-56], np.int8), None),  # the same bits
        (np.float32([1.0005, 2]), np.float32([1, 2]), None),
        (np.float32([1.01, 2]), np.float32([1, 2]), "max abs error 0.01 (float32)"),
        (np.float32([np.nan, 1]), np.float32([np.nan, 1]), None),
        (np.float32([np.nan, 1]), np.float32([1, 1]), "NaN at other places"),
        (np.float32([np.inf]), np.float32([-np.inf]), "+inf at other places"),
        (np.float16([1.005]), np.float16([1]), None),
        (np.float32([1, 2, 3]), np.float32([1, 2]), "shape [3], expected [2]"),
    ],
)
def test_outputs_are_judged_by_the_suites_tolerances(
    got: np.ndarray, want: np.ndarray, why: str | None
) -> None:
    assert compare.disagreement(got, want) == why


def test_a_plain_model_passes_with_both_converters(stack, reference_model, tmp_path: Path) -> None:
    model = tmp_path / "call-0.tosa"
    model.write_bytes(chain(3))
    found = compare.judge(model, seed=0)
    assert found["oracle"] == "ok"
    assert found["vgfc"] == {"class": "pass", "error": ""}
    assert found["reference"] == {"class": "pass", "error": ""}
    assert found["same"] is True


def _bf16_abs() -> bytes:
    tensors = [T("x", (2, 3), "BF16"), T("y", (2, 3), "BF16")]
    return build(tensors, [Op("ABS", ["x"], ["y"])], ["x"], ["y"])


def test_bf16_travels_as_its_bits_and_is_judged_as_bf16(
    stack, reference_model, tmp_path: Path
) -> None:
    # The runner takes and gives bf16 as uint16 bits, the reference model writes it as voids:
    # handed over as bfloat16 the run failed ("convert it first"), read back as integers or
    # voids it could not be compared.
    model = tmp_path / "call-0.tosa"
    model.write_bytes(_bf16_abs())
    found = compare.judge(model, seed=0)
    assert found["oracle"] == "ok"
    assert found["vgfc"] == {"class": "pass", "error": ""}
    assert found["reference"] == {"class": "pass", "error": ""}
    assert found["same"] is True


def test_bf16_bits_are_compared_as_bf16() -> None:
    want = np.array([1.0, -2.0], ml_dtypes.bfloat16)
    as_void = want.view("V2")
    assert compare.disagreement(want.view(np.uint16), compare.bits(as_void, want.dtype)) is None
    off = np.array([1.0, -2.5], ml_dtypes.bfloat16).view(np.uint16)
    assert compare.disagreement(off, want) == "max abs error 0.5 (bfloat16)"


def _gather(indices_through_abs: bool) -> bytes:
    """y = GATHER(v, i) with 4 values per batch; ``i`` through an ABS first if asked, so that
    the indices are computed, not a graph input."""
    tensors = [T("v", (1, 4, 2)), T("i", (1, 3), "INT32"), T("y", (1, 3, 2))]
    ops = [Op("GATHER", ["v", "k" if indices_through_abs else "i"], ["y"])]
    if indices_through_abs:
        tensors.append(T("k", (1, 3), "INT32"))
        ops.insert(0, Op("ABS", ["i"], ["k"]))
    return build(tensors, ops, ["v", "i"], ["y"])


def test_inputs_that_break_a_require_leave_no_oracle_not_an_invalid_graph(
    stack, reference_model, tmp_path: Path
) -> None:
    # The seeded indices (|i| up to 100) are out of GATHER's range: the reference model says
    # "REQUIRE() fails" and aborts. That is about the data; the graph is valid.
    model = tmp_path / "call-0.tosa"
    model.write_bytes(_gather(indices_through_abs=True))
    found = compare.judge(model, seed=0)
    assert found["oracle"] == "none" and "REQUIRE() fails" in found["oracle_note"]
    assert found["vgfc"]["class"] == "ran" and found["reference"]["class"] == "ran"


def test_a_graph_that_breaks_an_error_if_is_invalid(reference_model, tmp_path: Path) -> None:
    model = tmp_path / "call-0.tosa"
    tensors = [T("a", (1, 4)), T("b", (1, 2, 4)), T("y", (1, 4))]
    model.write_bytes(build(tensors, [Op("ADD", ["a", "b"], ["y"])], ["a", "b"], ["y"]))
    verdict, why, _ = compare.oracle(model, load(model), seed=0)
    assert verdict == "invalid" and "ERROR_IF() fails" in why


def _scatter() -> bytes:
    tensors = [T("v", (2, 5, 3)), T("i", (2, 4), "INT32"), T("x", (2, 4, 3)), T("y", (2, 5, 3))]
    return build(tensors, [Op("SCATTER", ["v", "i", "x"], ["y"])], ["v", "i", "x"], ["y"])


@pytest.mark.parametrize("which", ["gather", "scatter"])
def test_gather_and_scatter_indices_given_as_inputs_are_drawn_in_range(
    stack, reference_model, tmp_path: Path, which: str
) -> None:
    # Drawn like any integer input, they broke the operator's REQUIRE and left no oracle.
    model = tmp_path / "call-0.tosa"
    model.write_bytes(_gather(indices_through_abs=False) if which == "gather" else _scatter())
    indices = compare.seeded_inputs(load(model), seed=3)["i"]
    assert indices.dtype == np.int32 and indices.min() >= 0
    if which == "scatter":
        assert indices.max() < 5 and all(len(set(row)) == len(row) for row in indices)
    else:
        assert indices.max() < 4
    found = compare.judge(model, seed=3)
    assert found["oracle"] == "ok"
    assert found["vgfc"] == {"class": "pass", "error": ""}
    assert found["reference"] == {"class": "pass", "error": ""}


def _summary(vgfc: str, reference: str, same: bool | None) -> dict:
    call: dict = {"call": "call-0", "vgfc": {"class": vgfc}, "reference": {"class": reference}}
    if same is not None:
        call["same"] = same
    return compare.summary({"t": {"calls": [call]}})


@pytest.mark.parametrize(
    ("vgfc", "reference", "same", "status"),
    [
        ("pass", "pass", True, 0),
        ("refused", "refused", None, 0),
        ("refused", "pass", None, 1),  # vgfc refuses what the reference compiles
        ("pass", "pass", False, 1),  # other numbers where both ran
        ("pass", "refused", None, 0),  # better than the reference
    ],
)
def test_the_comparison_fails_where_vgfc_is_worse(
    vgfc: str, reference: str, same: bool | None, status: int
) -> None:
    assert compare.verdict(_summary(vgfc, reference, same)) == status


COLLECTION = """\
executorch/backends/arm/test/models/test_lstm_arm.py::test_lstm_vgf_quant
==================================== ERRORS ====================================
____ ERROR collecting executorch/backends/arm/test/models/test_conformer.py ____
ImportError while importing test module '/x/test_conformer.py'.
Traceback:
E   ModuleNotFoundError: No module named 'torchaudio'
_ ERROR collecting executorch/backends/arm/test/models/Gemma3n/test_gemma3nModel.py _
E   ModuleNotFoundError: No module named 'transformers'
"""


def test_the_modules_that_did_not_import_are_read_from_pytests_report() -> None:
    assert suite.import_errors(COLLECTION) == {
        "executorch/backends/arm/test/models/test_conformer.py": (
            "ModuleNotFoundError: No module named 'torchaudio'"
        ),
        "executorch/backends/arm/test/models/Gemma3n/test_gemma3nModel.py": (
            "ModuleNotFoundError: No module named 'transformers'"
        ),
    }
    assert suite.import_errors("a.py::test_a\n") == {}


def _results(calls: int) -> dict:
    call = {"call": "call-0", "vgfc": {"class": "pass", "error": ""}}
    call |= {"reference": {"class": "pass", "error": ""}, "same": True}
    tests = {f"test_m{i}": {"pytest": {}, "calls": [call]} for i in range(calls)}
    return {
        "run": {"selected": calls, "collected": calls, "not_imported": {"m/test_x.py": "E: no"}},
        "replaced": [
            {"test": "test_mv2 (import)", "replaced": "torchvision W.V2 (url)", "seed": 7},
            {"test": "test_mv2 (import)", "replaced": "torchvision W.V2 (url)", "seed": 7},
            {"test": "test_nss__t", "replaced": "huggingface a/b.json: not built", "seed": None},
        ],
        "input_seed": 0,
        "tests": tests,
        "summary": compare.summary(tests),
    }


def test_the_tables_list_each_weight_replaced_once_and_the_modules_not_imported() -> None:
    text = table.markdown(_results(1), "models")
    assert text.startswith("## Model tests\n")
    assert "### Every call" in text and "\n## Every" not in text
    assert text.count("| `test_mv2 (import)` | torchvision W.V2 (url) | 7 |") == 1
    assert "| `test_nss__t` | huggingface a/b.json: not built | not built |" in text
    assert "### Test modules that did not import" in text
    assert "| `m/test_x.py` | E: no |" in text
    whole = table.markdown(_results(1))
    assert whole.startswith(table.TITLE) and "\n## Every call" in whole


def test_a_part_replaces_its_own_section_and_keeps_the_others(tmp_path: Path) -> None:
    path = tmp_path / "suite.md"
    table.write_table(path, table.markdown(_results(1), "ops"), "ops")
    table.write_table(path, table.markdown(_results(2), "models"), "models")
    first = path.read_text()
    assert first.startswith(table.TITLE) and first.count(table.TITLE) == 1
    assert first.index("<!-- part:ops -->") < first.index("<!-- part:models -->")
    table.write_table(path, table.markdown(_results(3), "ops"), "ops")
    text = path.read_text()
    assert text.count("<!-- part:ops -->") == 1 and "3 of 3 vgf tests" in text
    assert text.split("<!-- part:models -->")[1] == first.split("<!-- part:models -->")[1]
    assert "1 of 1 vgf tests" not in text
    table.write_table(path, "whole\n", None)
    assert path.read_text() == "whole\n"


def test_every_part_the_run_takes_has_a_section_title() -> None:
    assert set(suite.PARTS) == set(table.PARTS)


@pytest.mark.parametrize(
    "args",
    [
        ["run", "x", "--only", "nothing"],
        ["run", "x", "--only"],
        ["run", "x", "--only", ""],
        ["run", "x", "-k", " "],
        ["run", "x", "-k"],
        ["compare", "x", "--section", "Models"],
        ["compare", "x", "--section"],
    ],
)
def test_an_unknown_part_is_a_usage_error(args: list[str]) -> None:
    script = str(ROOT / "scripts" / "executorch_suite.py")
    done = subprocess.run(
        [sys.executable, script, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and args[2] in done.stderr
