"""vgfc's own VGF files, run on the CPU emulation stack, give the numbers numpy gives.

Every bundled sample: graph -> shader -> graph, shader chains, image + sampler, duplicated input,
several descriptor sets, HLSL (compiled ahead of time by vgfc, so no substitution is needed,
unlike the reference converter's files), base64 SPIR-V, push constants and int8 graph ops.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from paths import DATA
from samples_module import SAMPLES_DIR, load_samples_module

from vgfc.compiler import compile_model
from vgfc.runner import run_vgf

samples = load_samples_module()
NAMES = sorted(samples.SAMPLES)
# Float results may differ from numpy in the last bits (transcendentals, summation order).
TOLERANCE = {"mixed": 1e-6}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_sample_runs_and_matches_numpy(stack, tmp_path: Path, name: str, seed: int) -> None:
    sample = samples.SAMPLES[name]
    result = compile_model(SAMPLES_DIR / sample.filename)
    vgf = tmp_path / f"{name}.vgf"
    vgf.write_bytes(result.vgf)
    inputs = samples.random_inputs(sample.build().inputs, seed)
    push = None
    if sample.push_constants:
        (segment,) = [i for i, s in enumerate(result.model.segments) if s.push_constant_ranges]
        push = {segment: samples.push_constant_bytes(sample)}
    outputs = run_vgf(vgf, [inputs[n] for n in result.graph.inputs], push, workdir=tmp_path / "w")
    expected = sample.reference(inputs)
    assert set(outputs) == set(expected)  # outputs keep the graph's tensor names
    for key, want in expected.items():
        got = outputs[key]
        assert got.shape == want.shape and got.dtype == want.dtype, key
        if np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=0, atol=TOLERANCE.get(name, 0.0))
        else:
            np.testing.assert_array_equal(got, want)


REAL = DATA / "real" / "tflite"


def test_real_network_matches_the_tosa_reference_model(stack, tmp_path: Path) -> None:
    """A TFLite face detector from a PyPI wheel, converted to TOSA: 230 operators (CONV2D,
    DEPTHWISE_CONV2D, PAD, MAX_POOL2D, CAST fp16, ...), compiled by vgfc, run on the CPU."""
    from vgfc.runner.numeric import compare, random_inputs, tosa_reference_outputs

    model = REAL / "face_detection_short_range.tosa"
    result = compile_model(model)
    vgf = tmp_path / "face.vgf"
    vgf.write_bytes(result.vgf)
    inputs = random_inputs(result.graph, seed=7)
    got = run_vgf(vgf, [inputs[n] for n in result.graph.inputs], workdir=tmp_path / "w")
    want = tosa_reference_outputs(model, result.graph, inputs)
    rows = compare(got, want, atol=1e-5, rtol=1e-5)
    assert [r.name for r in rows] == ["TosaOutput_0", "TosaOutput_1"]
    assert all(r.ok for r in rows), rows


def test_rank_0_tensors_run(stack, tmp_path: Path) -> None:
    from tosa_factory import Op, T, build

    model = tmp_path / "scalar.tosa"
    model.write_bytes(build([T("x", ()), T("y", ())], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]))
    vgf = tmp_path / "scalar.vgf"
    vgf.write_bytes(compile_model(model).vgf)
    out = run_vgf(vgf, [np.array(-3.0, np.float32)])
    assert out["y"].shape == () and out["y"] == 3.0
