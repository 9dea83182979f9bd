"""Official conformance tests of two TOSA extensions, beside the main corpus
(``test_conformance.py``): ``tests/data/conformance_int4`` and ``tests/data/conformance_dynamic``.

Both are made by ``scripts/make_conformance.py`` (the commands are in their manifests and in
docs/conformance.md) and run by the same harness: compiled by vgfc and the reference converter,
run on the CPU emulation stack, judged by ``tosa_verify`` against the reference model's results.

* INT4 (``tosa-ext-int4``): INT4 tensors and constants are bytes, one sign-extended value each
  (``R8_SINT``), as the reference converter writes them. Both converters pass every test.
* Dynamic (``tosa-ext-dynamic``, the ``_dyn`` variants): zero points, shifts, multipliers, pad
  values, tables come as graph inputs. No VGF vgfc writes may fail at run time: each test either
  passes, or is refused at compile time with one line naming the operator, the operand and why;
  where the reference converter passes (TABLE: the runtime reads the table from an input), so
  does vgfc. RESCALE's multiplier and shift as graph inputs give the numbers of the same model
  with them as constants.
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
         "dynamic": harness.DATA.parent / "conformance_dynamic"}  # fmt: skip
TESTS = {kind: harness.load_tests(root) for kind, root in ROOTS.items()}
PARAMS = [(kind, t.name) for kind, tests in TESTS.items() for t in tests]


def harness_ready() -> None:
    from vgfc.diagnostics import UnsupportedError
    from vgfc.runner import find_stack

    try:
        find_stack()
        harness.model_converter()
        harness.tosa_verify()
    except (UnsupportedError, FileNotFoundError) as e:
        missing(str(e))


@pytest.fixture(scope="module")
def results() -> Mapping[tuple[str, str], Any]:
    harness_ready()
    return harness.run_all([t for tests in TESTS.values() for t in tests])


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


@pytest.mark.parametrize("dtype", ["INT8", "FP32", "BOOL"])
def test_pad_with_its_value_from_an_input_runs_and_pads_with_it(dtype: str, tmp_path: Path) -> None:
    """The generator's dynamic PAD tests add no padding; this one does, on three sides."""
    import dataclasses

    import numpy as np
    from tosa_catalogue import CASES, X

    import vgfc
    from vgfc.runner import run_vgf

    harness_ready()
    case = next(c for c in CASES if c.name == f"PAD_{dtype}")
    x, padding, value = case.inputs
    assert isinstance(x, X)
    model = tmp_path / "m.tosa"
    model.write_bytes(
        dataclasses.replace(case, inputs=(x, padding, X(value.dtype, value.shape))).model()
    )
    vgfc.compile(model, tmp_path / "m.vgf")
    rng = np.random.default_rng(3)
    kind = {"INT8": np.int8, "FP32": np.float32, "BOOL": np.bool_}[dtype]
    xs = (rng.integers(1, 100, x.shape) if dtype != "BOOL" else np.zeros(x.shape)).astype(kind)
    pad_value = np.array([-7 if dtype != "BOOL" else True], kind)
    got = run_vgf(tmp_path / "m.vgf", {"in0": xs, "in2": pad_value})["out0"]
    want = np.pad(xs, ((0, 0), (1, 2), (3, 0)), constant_values=pad_value[0])
    assert got.shape == want.shape and np.array_equal(got, want)
