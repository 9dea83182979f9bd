"""Official conformance tests beside the main corpus (``test_conformance.py``):
``tests/data/conformance_int4``, ``tests/data/conformance_dynamic`` and
``tests/data/conformance_sample``.

The first two are made by ``scripts/make_conformance.py``, the sample by
``scripts/conformance_suite.py`` (the commands are in their manifests); all run by the same
harness: compiled by vgfc and the reference converter, run on the CPU emulation stack, judged by
``tosa_verify`` against the reference model's results.

* INT4 (``tosa-ext-int4``): INT4 tensors and constants are bytes, one sign-extended value each
  (``R8_SINT``), as the reference converter writes them. Both converters pass every test.
* Dynamic (``tosa-ext-dynamic``, the ``_dyn`` variants): zero points, shifts, multipliers, pad
  values, tables come as graph inputs. No VGF vgfc writes may fail at run time: each test either
  passes, or is refused at compile time with one line naming the operator, the operand and why;
  where the reference converter passes (TABLE: the runtime reads the table from an input), so
  does vgfc. RESCALE's multiplier and shift as graph inputs give the numbers of the same model
  with them as constants.
* The sample: one test of every operator, generation group of the config (profile or extension)
  and dynamic-or-not, chosen with a recorded seed among the tests with at most 4096 operand
  elements: every operator and every extension of TOSA 1.0. vgfc passes every test the reference
  converter passes (whose results are recorded, so a broken stack cannot make that hold for
  free); no VGF vgfc writes computes wrong numbers or fails at run time: what it cannot compile
  it refuses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import conformance_harness as harness
import pytest
from needs import missing

ROOTS = {"int4": harness.DATA.parent / "conformance_int4",
         "dynamic": harness.DATA.parent / "conformance_dynamic",
         "sample": harness.DATA.parent / "conformance_sample"}  # fmt: skip
RECORDED = harness.load_reference_results(ROOTS["sample"] / "reference_results.json")
TESTS = {kind: harness.load_tests(root) for kind, root in ROOTS.items()}
PARAMS = [(kind, t.name) for kind, tests in TESTS.items() for t in tests]


def harness_ready() -> None:
    why = harness.tools_missing()
    if why is not None:
        missing(why)


@pytest.fixture(scope="module")
def results() -> Mapping[tuple[str, str], Any]:
    harness_ready()
    return harness.run_all([t for tests in TESTS.values() for t in tests])


def test_the_sample_covers_every_operator_and_extension() -> None:
    manifest = harness.load_manifest(ROOTS["sample"])
    assert manifest["sample_seed"] == 33 and set(RECORDED) == {t.name for t in TESTS["sample"]}
    assert len({t.op for t in TESTS["sample"]}) == 70
    extensions = {e for t in manifest["tests"] for e in t["extensions"]}
    assert extensions >= {"tosa-ext-int16", "tosa-ext-int4", "tosa-ext-bf16", "tosa-ext-fp8e4m3",
                          "tosa-ext-fp8e5m2", "tosa-ext-fft", "tosa-ext-dynamic",
                          "tosa-ext-controlflow"}  # fmt: skip


def test_the_corpora_cover_what_they_are_for() -> None:
    assert {t.op for t in TESTS["int4"]} >= {"CONST", "IDENTITY", "CONV2D", "DEPTHWISE_CONV2D"}
    for test in TESTS["int4"]:
        assert "INT4" in test.desc.read_text(), test.name
    from vgfc.spirv.tosa_ops import constant_inputs

    dynamic = {t.op for t in TESTS["dynamic"]}
    assert all(t.name.endswith("_dyn") for t in TESTS["dynamic"])
    # The operators whose compile-time constants the generator makes graph inputs.
    assert dynamic >= {"RESCALE", "MUL", "PAD", "TABLE", "NEGATE", "MATMUL", "CONV2D"}
    assert all(constant_inputs(op) for op in dynamic - {"TABLE"})


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "name"), PARAMS, ids=[n for _, n in PARAMS])
def test_vgfc(kind: str, name: str, results: Mapping[tuple[str, str], Any]) -> None:
    ours = results[(name, "vgfc")]
    reference = results[(name, "reference")]
    if kind == "sample":
        assert reference.status.value == RECORDED[name], (
            f"the reference converter's result changed: {reference.summary()}"
        )
        if reference.passed:
            assert ours.passed, f"the reference converter passes, vgfc does not: {ours.summary()}"
        assert ours.passed or ours.stage == "compile", f"vgfc's VGF: {ours.summary()}"
        return
    if kind == "int4":
        assert reference.passed, f"the emulation stack or the reference: {reference.summary()}"
        assert ours.passed, ours.summary()
        return
    if ours.passed:
        return
    assert not reference.passed, f"the reference converter passes, vgfc does not: {ours.summary()}"
    # Refused before anything is written, in one line naming the op, the operand and why.
    assert ours.stage == "compile", f"vgfc wrote a VGF that does not work: {ours.summary()}"
    test = next(t for t in TESTS[kind] if t.name == name)
    pattern = rf"op #\d+ {test.op}: tensor '[^']+': input \d+ '\w+' must be a constant: "
    assert re.search(pattern, ours.message), ours.message
    assert "\n" not in ours.message.strip()


def test_check_says_the_same() -> None:
    from click.testing import CliRunner

    from vgfc.cli.group import cli

    test = next(t for t in TESTS["dynamic"] if t.op == "RESCALE")
    done = CliRunner().invoke(cli, ["check", str(test.model)])
    assert done.exit_code == 1
    assert re.search(r"op #0 RESCALE: tensor '[^']+': input 3 'input_zp' must be a constant",
                     done.output), done.output  # fmt: skip


def test_rescale_multiplier_and_shift_may_be_graph_inputs(tmp_path: Path) -> None:
    """The runtime reads RESCALE's multiplier and shift from graph inputs: same numbers as
    with constants (the dynamic tests make the zero points inputs too, which it cannot)."""
    import dataclasses

    import numpy as np
    from tosa_catalogue import CASES, C, X

    import vgfc
    from vgfc.runner import run_vgf

    harness_ready()
    rng = np.random.default_rng(5)
    case = next(c for c in CASES if c.name == "RESCALE_INT8_INT32_3")  # per channel
    x, multiplier, shift, input_zp, output_zp = case.inputs
    assert isinstance(multiplier, C) and isinstance(shift, C)
    m = rng.integers(1 << 13, 1 << 15, multiplier.shape).astype(np.int32)
    s = rng.integers(10, 30, shift.shape).astype(np.int8)
    xs = rng.integers(-128, 128, x.shape).astype(np.int8)
    given = [C(multiplier.dtype, multiplier.shape, m), C("INT8", shift.shape, s)]
    taken = [X(multiplier.dtype, multiplier.shape), X("INT8", shift.shape)]
    results = []
    for i, (operands, arrays) in enumerate(
        ((given, {"in0": xs}), (taken, {"in0": xs, "in1": m, "in2": s}))
    ):
        model = tmp_path / f"{i}.tosa"
        model.write_bytes(
            dataclasses.replace(case, inputs=(x, *operands, input_zp, output_zp)).model()
        )
        vgfc.compile(model, tmp_path / f"{i}.vgf")
        results.append(run_vgf(tmp_path / f"{i}.vgf", arrays)["out0"])
    assert np.array_equal(results[0], results[1])
    assert np.count_nonzero(results[0]) > results[0].size // 2


@pytest.mark.parametrize(
    ("dtype", "replicated"),
    [("INT8", True), ("FP32", True), ("BOOL", True), ("FP8E5M2", True), ("INT8", False)],
)
def test_pad_with_its_value_from_an_input_runs_and_pads_with_it(
    dtype: str, replicated: bool, tmp_path: Path
) -> None:
    """The generator's dynamic PAD tests add no padding; this one does, on three sides (and with
    ``--disable-replicated-composites``, whose mask of the input's shape is spelt out)."""
    import dataclasses

    import ml_dtypes
    import numpy as np
    from tosa_catalogue import CASES, X

    import vgfc
    from vgfc.runner import run_vgf
    from vgfc.vgf.decode import read_vgf
    from vgfc.vgf.profiles import uses_capability

    harness_ready()
    # No SELECT of fp8 in the emulation layer: vgfc selects fp8 as fp16 (the FP32 case, retyped).
    case = next(c for c in CASES if c.name == f"PAD_{'FP32' if dtype == 'FP8E5M2' else dtype}")
    x, padding, value = case.inputs
    assert isinstance(x, X)
    x, value = X(dtype, x.shape), X(dtype, value.shape)
    outputs = tuple(X(dtype, o.shape) for o in case.outputs)
    model = tmp_path / "m.tosa"
    model.write_bytes(
        dataclasses.replace(case, inputs=(x, padding, value), outputs=outputs).model()
    )
    vgfc.compile(model, tmp_path / "m.vgf", replicated_composites=replicated)
    spirv = [m.spirv for m in read_vgf(tmp_path / "m.vgf").modules if m.spirv is not None]
    assert any(uses_capability(m, "ReplicatedCompositesEXT") for m in spirv) is replicated
    rng = np.random.default_rng(3)
    kind = {"INT8": np.int8, "FP32": np.float32, "BOOL": np.bool_,
            "FP8E5M2": ml_dtypes.float8_e5m2}[dtype]  # fmt: skip
    xs = (rng.integers(1, 100, x.shape) if dtype != "BOOL" else np.zeros(x.shape)).astype(kind)
    pad_value = np.array([-7 if dtype != "BOOL" else True], kind)
    bits = (lambda a: a.view(np.uint8)) if dtype == "FP8E5M2" else (lambda a: a)
    got = run_vgf(tmp_path / "m.vgf", {"in0": bits(xs), "in2": bits(pad_value)})["out0"]
    want = np.pad(xs, ((0, 0), (1, 2), (3, 0)), constant_values=pad_value[0])
    assert got.shape == want.shape
    assert np.array_equal(bits(got), bits(want))
