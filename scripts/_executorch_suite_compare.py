"""Judge every TOSA file ExecuTorch's tests handed the converter: both converters, one oracle.

For each ``OUT/keep/<test>/call-<n>.tosa`` kept by ``scripts/executorch_suite.py run``: seeded
inputs (:func:`seeded_inputs`: gather and scatter indices in range), the TOSA reference model's
outputs (:func:`vgfc.runner.numeric.run_reference_model`), then vgfc and model-converter each
compile the file (``tests/support/conformance_harness.py``'s ``compile_vgfc`` /
``compile_reference``) and the VGF runs on the CPU emulation stack (:func:`vgfc.runner.run_vgf`).
Outputs are compared by position: integers within 1, fp32 within 1e-3 (absolute plus
relative), fp16 1e-2, bf16 5e-2, NaN and infinity at the same places.

A converter's class on a file:

* ``pass``: it compiled and every output agrees with the reference model;
* ``wrong``: it compiled and ran, and an output does not agree;
* ``run-error``: it compiled, the run failed;
* ``refused``: it did not compile (its message kept);
* ``accepted-invalid``: it compiled a graph the reference model rejects;
* ``refused-invalid``: it refused a graph the reference model rejects (as it should);
* ``ran``: it compiled and ran, and there is no oracle (a CUSTOM op, inputs that cannot be made
  up, or inputs that break an operator's REQUIRE: the reference model says UNPREDICTABLE or
  aborts): then ``same`` says whether the two
  converters' outputs are bit-identical.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))
import conformance_harness as harness  # tests/support: the converters' compile steps
from _executorch_suite_table import CONVERTERS, markdown, write_table

from vgfc.diagnostics import VgfcError
from vgfc.dtypes import numpy_dtype
from vgfc.ir import Array, Graph
from vgfc.read import load
from vgfc.runner import read_vgf, run_vgf
from vgfc.runner.numeric import random_inputs, run_reference_model

PYTEST_OUTCOMES = "pytest.json"
REPLACED = "replaced.json"
# Tolerance (absolute and relative) by element type; integers within one step.
TOLERANCE = {"float32": 1e-3, "float16": 1e-2, "bfloat16": 5e-2}
MESSAGE = 240


@dataclass(frozen=True)
class Kept:
    """A kept converter input, as the harness's compile steps take it (``.model``)."""

    model: Path


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MESSAGE else line[: MESSAGE - 3] + "..."


def bits(array: Array, dtype: np.dtype[Any]) -> Array:
    """``array`` seen as ``dtype`` when only the name of its bits differs: signedness
    (``harness._same_bits``), or a type numpy has no arithmetic for (bf16, fp8) that the runner
    moves as unsigned integers of its width and the reference model writes as voids."""
    array = harness._same_bits(np.asarray(array), dtype)
    same_width = array.dtype != dtype and array.dtype.itemsize == dtype.itemsize
    if (
        same_width
        and "V" in (array.dtype.kind, dtype.kind)
        and "b" not in (array.dtype.kind, dtype.kind)
    ):
        return array.view(dtype)
    return array


def disagreement(got: Array, want: Array) -> str | None:
    """Why ``got`` is not ``want`` within the suite's tolerances; ``None`` when it is."""
    if got.size != want.size:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    got = bits(got, want.dtype).reshape(want.shape)
    if want.dtype.kind in "iub":
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        worst = int(diff.max()) if diff.size else 0
        return None if worst <= 1 else f"integers differ by up to {worst}"
    a, b = got.astype(np.float64), want.astype(np.float64)
    for what, test in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        if np.any(test(a) != test(b)):
            return f"{what} at other places"
    finite = np.isfinite(b)
    tol = TOLERANCE.get(str(want.dtype), TOLERANCE["float32"])
    diff = np.abs(a[finite] - b[finite])
    if np.all(diff <= tol + tol * np.abs(b[finite])):
        return None
    return f"max abs error {float(diff.max()):.3g} ({want.dtype})"


def run(vgf: Path, arrays: list[Array]) -> list[Array]:
    """``vgf``'s outputs in order, run on ``arrays`` (the model's inputs in order; integers
    handed over as the same bits where a converter declares them unsigned, bf16 as its bits)."""
    model = read_vgf(vgf)
    given = [bits(a, harness._dtype(model, i)) for a, i in zip(arrays, model.inputs, strict=False)]
    return list(run_vgf(vgf, given, timeout=harness.RUN_TIMEOUT).values())


def seeded_inputs(graph: Graph, seed: int) -> dict[str, Array]:
    """:func:`random_inputs`, with a graph input that is GATHER's or SCATTER's indices drawn in
    their range (``[0, K)`` of the values' ``[N, K, C]``; SCATTER's distinct within a batch):
    the operators REQUIRE it, and integers drawn at random are mostly out of range."""
    inputs = random_inputs(graph, seed)
    rng = np.random.default_rng([seed, 1])
    for op in graph.operators:
        if op.op not in ("GATHER", "SCATTER") or len(op.inputs) < 2:
            continue
        index, values = op.inputs[1], graph.tensors[op.inputs[0]].shape
        if index not in inputs or values is None or len(values) != 3:
            continue
        shape, k = inputs[index].shape, values[1]
        if len(shape) != 2 or k < 1 or (op.op == "SCATTER" and shape[1] > k):
            continue
        if op.op == "GATHER":
            drawn = rng.integers(0, k, shape)
        else:
            drawn = np.stack([rng.permutation(k)[: shape[1]] for _ in range(shape[0])])
        inputs[index] = drawn.reshape(shape).astype(inputs[index].dtype)
    return inputs


def oracle(tosa: Path, graph: Graph | None, seed: int) -> tuple[str, Any, list[Array] | None]:
    """(``ok`` | ``invalid`` | ``none``, the outputs or why not, the inputs)."""
    if graph is None:
        return "none", "vgfc cannot read the file", None
    try:
        inputs = seeded_inputs(graph, seed)
    except VgfcError as e:
        return "none", str(e), None
    arrays = [inputs[n] for n in graph.inputs]
    if any(op.op == "CUSTOM" for op in graph.operators):
        return "none", "CUSTOM operators", arrays
    try:
        outs = run_reference_model(tosa.read_bytes(), graph, inputs, list(graph.outputs))
    except VgfcError as e:
        # A REQUIRE broken by these inputs (a GATHER index out of range, POW of a negative
        # base: UNPREDICTABLE, or an abort) is about the data, not the graph, which passed the
        # ERROR_IF checks: the converters are held to each other instead.
        said = str(e)
        on_data = "REQUIRE() fails" in said or "UNPREDICTABLE" in said
        kind = "none" if on_data and "ERROR_IF" not in said else "invalid"
        return kind, _short(str(e)), arrays
    return "ok", [_typed(outs[n], graph, n) for n in graph.outputs], arrays


def _typed(array: Array, graph: Graph, name: str) -> Array:
    """The reference model's output as its tensor's element type (it writes bf16 as voids)."""
    dtype = numpy_dtype(graph.tensors[name].dtype)
    return bits(array, dtype) if dtype is not None else array


def judge(tosa: Path, seed: int) -> dict[str, Any]:
    """Both converters' class and message on one kept file."""
    try:
        graph: Graph | None = load(tosa)
    except VgfcError:
        graph = None
    verdict, expected, arrays = oracle(tosa, graph, seed)
    result: dict[str, Any] = {"oracle": verdict}
    if verdict != "ok":
        result["oracle_note"] = expected
    outputs: dict[str, list[Array]] = {}
    for name in CONVERTERS:
        with tempfile.TemporaryDirectory(prefix="vgfc-etsuite-") as tmp:
            vgf = Path(tmp) / "out.vgf"
            try:
                harness.COMPILE[name](Kept(tosa), vgf)  # type: ignore[arg-type]
            except harness.CompileError as e:
                kind = "refused-invalid" if verdict == "invalid" else "refused"
                result[name] = {"class": kind, "error": _short(str(e))}
                continue
            if verdict == "invalid":
                result[name] = {"class": "accepted-invalid", "error": ""}
                continue
            if arrays is None:
                result[name] = {"class": "ran", "error": "no inputs to run it on"}
                continue
            try:
                outputs[name] = run(vgf, arrays)
            except Exception as e:  # a runner failure is a result, whatever raised it
                said = str(e).replace(f"{tmp}/", "")  # no temporary folder in the tables
                result[name] = {"class": "run-error", "error": _short(said)}
                continue
        if verdict != "ok":
            result[name] = {"class": "ran", "error": ""}
            continue
        problems = [
            f"output {i}: {why}"
            for i, (got, want) in enumerate(zip(outputs[name], expected, strict=False))
            if (why := disagreement(got, want)) is not None
        ]
        if len(outputs[name]) != len(expected):
            problems.insert(0, f"{len(outputs[name])} outputs, expected {len(expected)}")
        result[name] = {"class": "wrong" if problems else "pass", "error": "; ".join(problems)}
    if len(outputs) == len(CONVERTERS):
        a, b = (outputs[n] for n in CONVERTERS)
        result["same"] = len(a) == len(b) and all(
            x.size == y.size and x.tobytes() == harness._same_bits(y, x.dtype).tobytes()
            for x, y in zip(a, b, strict=False)
        )
    return result


def judge_all(out: Path, seed: int) -> dict[str, Any]:
    """Every kept file of ``out``, with pytest's outcome of each test."""
    said = (
        json.loads((out / PYTEST_OUTCOMES).read_text()) if (out / PYTEST_OUTCOMES).exists() else {}
    )
    pytest_of = said.get("tests", {})
    tests: dict[str, Any] = {}
    folders = sorted({*pytest_of, *(p.name for p in (out / "keep").iterdir() if p.is_dir())})
    for k, name in enumerate(folders, 1):
        folder = out / "keep" / name
        calls = []
        for tosa in sorted(folder.glob("call-*.tosa"), key=lambda p: int(p.stem.split("-")[1])):
            start = time.monotonic()
            calls.append({"call": tosa.stem, **judge(tosa, seed)})
            print(
                f"[{k}/{len(folders)}] {name} {tosa.stem}: "
                + ", ".join(f"{c} {calls[-1][c]['class']}" for c in CONVERTERS)
                + f" ({time.monotonic() - start:.1f} s)",
                flush=True,
            )
        tests[name] = {"pytest": pytest_of.get(name, {}), "calls": calls}
    replaced = out / REPLACED
    return {
        "run": said.get("run", {}),
        "replaced": json.loads(replaced.read_text()) if replaced.is_file() else [],
        "input_seed": seed,
        "tests": tests,
        "summary": summary(tests),
    }


def summary(tests: dict[str, Any]) -> dict[str, Any]:
    calls = [c for t in tests.values() for c in t["calls"]]
    counts = {n: dict(Counter(c[n]["class"] for c in calls)) for n in CONVERTERS}
    good = ("pass", "refused-invalid", "ran")
    worse = sorted(
        f"{name} {c['call']}"
        for name, t in tests.items()
        for c in t["calls"]
        if c["reference"]["class"] in good and c["vgfc"]["class"] not in good
    )
    both_ran = [c for c in calls if "same" in c]
    return {
        "tests": len(tests),
        "tests_without_converter_call": sum(1 for t in tests.values() if not t["calls"]),
        "converter_calls": len(calls),
        "classes": counts,
        "vgfc_worse": worse,
        "both_ran": len(both_ran),
        "bit_identical": sum(1 for c in both_ran if c["same"]),
    }


def verdict(summary: dict[str, Any]) -> int:
    """The exit status of a comparison: 1 where vgfc is worse than the reference on a call, or
    computes other numbers than it where both ran; else 0."""
    return 1 if summary["vgfc_worse"] or summary["bit_identical"] < summary["both_ran"] else 0


def main(
    out: Path, results_path: Path | None, table: Path | None, seed: int, part: str | None = None
) -> int:
    results = judge_all(out, seed)
    print(json.dumps(results["summary"], indent=1))
    if results_path is not None:
        results_path.write_text(json.dumps(results, indent=1) + "\n")
    if table is not None:
        write_table(table, markdown(results, part), part)
    return verdict(results["summary"])
