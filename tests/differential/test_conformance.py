"""TOSA conformance tests (``tests/data/conformance``): vgfc must pass every test the reference
converter passes.

The tests come from tosa-tools' conformance generator (``scripts/make_conformance.py``: one small
positive test per operator of the TOSA.001000.1 instruction set and data type combination). Each
is compiled by the reference converter (model-converter) and by vgfc, run on the CPU emulation
stack and checked with tosa-tools' ``tosa_verify`` under the test's compliance rule
(``conformance_harness.py`` is the harness). All runs happen once per session, in parallel, for
the tests pytest selected; the per-test functions only look the results up.

* ``test_reference``: the reference converter's result is the one recorded in
  ``reference_results.json`` (``python tests/support/conformance_harness.py --record`` rewrites it).
  This keeps
  the acceptance rule honest: with a broken emulation stack the reference would pass nothing, and
  "vgfc passes what the reference passes" would hold for free.
* ``test_vgfc``: where the reference converter passes, vgfc passes (issue 4's rule).

Missing tools (the emulation stack, model-converter, tosa_verify) skip these tests, except under
``CI=true``, where they fail: ``make test`` installs all of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import conformance_harness as harness
import pytest
from needs import missing

TESTS = harness.load_tests()
BY_NAME = {t.name: t for t in TESTS}
RECORDED: dict[str, str] = harness.load_reference_results()


def _tools_ready() -> None:
    why = harness.tools_missing()
    if why is not None:
        missing(why)


class _Summary:
    """A pytest plugin, registered once results exist: per-operator pass counts at the end."""

    def __init__(self, results: Mapping[tuple[str, str], Any]) -> None:
        self.results = results

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        per_op: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        for (name, compiler), result in self.results.items():
            counts = per_op[BY_NAME[name].op]
            if compiler == "reference":
                counts[0] += 1
            counts[1 if compiler == "reference" else 2] += result.passed
        write = terminalreporter.write_line
        terminalreporter.section("TOSA conformance: passing tests per operator")
        write(f"{'operator':<24}{'tests':>6}{'reference':>11}{'vgfc':>6}")
        for op, (tests, ref, ours) in sorted(per_op.items()):
            write(f"{op:<24}{tests:>6}{ref:>11}{ours:>6}")
        totals = [sum(c[i] for c in per_op.values()) for i in range(3)]
        write(f"{'total':<24}{totals[0]:>6}{totals[1]:>11}{totals[2]:>6}")


@pytest.fixture(scope="session")
def results(request: pytest.FixtureRequest) -> Iterator[Mapping[tuple[str, str], Any]]:
    """Results of both compilers on every conformance test this session selected."""
    _tools_ready()
    selected = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)  # parametrized items only
        if item.path == Path(__file__) and callspec is not None and "name" in callspec.params:
            selected.add(callspec.params["name"])
    tests = [t for t in TESTS if t.name in selected] or TESTS
    found = harness.run_all(tests)
    request.config.pluginmanager.register(_Summary(found), "vgfc-conformance-summary")
    yield found


def _describe(result: Any) -> str:
    return f"{result.compiler}: {result.summary()}"


def test_manifest_matches_the_folders() -> None:
    folders = {p.name for p in harness.DATA.iterdir() if p.is_dir()}
    assert folders == set(BY_NAME)
    for test in TESTS:
        files = [test.model, test.desc, *(p for _, p in test.inputs)]
        files += [o.expected for o in test.outputs]
        files += [o.bounds for o in test.outputs if o.bounds is not None]
        assert all(f.is_file() for f in files), test.name


def test_every_operator_of_the_instruction_set_is_covered() -> None:
    manifest = harness.load_manifest()
    assert len(manifest["operators"]) == 66
    assert {t.op for t in TESTS} == set(manifest["operators"])


def test_reference_results_are_recorded_for_every_test() -> None:
    assert set(RECORDED) == set(BY_NAME), (
        "rerun: python tests/support/conformance_harness.py --record"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_reference(name: str, results: Mapping[tuple[str, str], Any], record_property: Any) -> None:
    got = results[(name, "reference")]
    record_property("reference", got.summary())
    recorded = RECORDED.get(name)
    assert got.status.value == recorded, (
        f"the reference converter's result changed from {recorded!r} to {_describe(got)}; "
        "if the tools changed on purpose: python tests/support/conformance_harness.py --record"
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_vgfc(name: str, results: Mapping[tuple[str, str], Any], record_property: Any) -> None:
    reference = results[(name, "reference")]
    ours = results[(name, "vgfc")]
    record_property("reference", reference.summary())
    record_property("vgfc", ours.summary())
    if reference.passed:
        assert ours.passed, f"the reference converter passes, vgfc does not: {_describe(ours)}"


# The checker itself, without compilers: it must accept the expected results and reject others.


def _as_implementation(output: Any) -> Any:
    """The expected (precise, FP64 for floats) result as an implementation would return it."""
    import numpy as np

    expected = np.load(output.expected)
    if output.data_type == "BF16":
        # Round-to-nearest-even from float32: the top 16 bits after adding the rounding bias.
        bits = expected.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return rounded.astype(np.uint16)
    floats = {"FP32": np.float32, "FP16": np.float16}
    return expected.astype(floats.get(output.data_type, expected.dtype))


CHECKED = [
    ("abs_32_i32", "EXACT"),
    ("abs_55_bf16", "EXACT"),
    ("add_41_bf16", "ULP"),
    ("add_52_f16", "ULP"),
    ("cos_1x9x7x13_f16", "ABS_ERROR"),
    ("avg_pool2d_4x11x7x39_f32_accf32_st11_kern22_pad0000_s1", "DOT_PRODUCT"),
]


@pytest.mark.parametrize(("test_name", "mode"), CHECKED, ids=[m for _, m in CHECKED])
def test_checker_accepts_expected_and_rejects_a_wrong_element(
    test_name: str, mode: str, tmp_path: Path
) -> None:
    import numpy as np

    try:
        harness.tosa_verify()
    except FileNotFoundError as e:
        missing(str(e))
    test = BY_NAME[test_name]
    (output,) = test.outputs
    assert output.mode == mode
    good = _as_implementation(output)
    assert harness.check_output(test, output, good, tmp_path) == "ok"

    wrong = good.copy().reshape(-1)
    if output.data_type == "BF16":
        wrong[0] ^= 0x4000  # an exponent bit: far off under any rule
    elif wrong.dtype.kind == "f":
        i = int(np.flatnonzero(np.isfinite(wrong))[0])
        x = float(wrong[i])
        wrong[i] = -x - 1 if abs(x) < 1e4 else x / 4  # far off, and still finite
    else:
        wrong[0] += 1
    wrong = wrong.reshape(good.shape)
    verdict = harness.check_output(test, output, wrong, tmp_path)
    assert verdict.startswith(f"{output.name} {mode} non-compliant"), verdict

    other_type = good.astype(np.int64 if good.dtype.kind != "i" else np.int16)
    assert "the test expects" in harness.check_output(test, output, other_type, tmp_path)


@pytest.mark.parametrize("crash", [False, True], ids=["refusal", "crash"])
def test_a_compiler_that_cannot_lower_gives_an_error_result(
    crash: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import vgfc.compiler
    from vgfc.diagnostics import UnsupportedError

    def compile_model(path: Any) -> Any:
        if crash:
            raise KeyError("no lowering")
        raise UnsupportedError("operator FOO is not supported")

    monkeypatch.setattr(vgfc.compiler, "compile_model", compile_model)
    result = harness.run_test(TESTS[0], "vgfc", tmp_path)
    assert (result.status, result.stage) == (harness.Status.ERROR, "compile")
    want = "vgfc crashed: KeyError: 'no lowering'" if crash else "operator FOO is not supported"
    assert want in result.message
