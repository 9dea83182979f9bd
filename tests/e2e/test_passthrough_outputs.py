"""A model that hands an input back as an output (ExecuTorch's ``unfold`` and ``fold`` tests
do): vgfc's VGF, run on the CPU emulation stack, gives that input back, next to what the rest of
the graph computes (checked against the TOSA reference model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tosa_factory import Op, T, build

from vgfc.compiler import compile_to
from vgfc.read import load
from vgfc.runner import run_vgf
from vgfc.runner.numeric import random_inputs, run_reference_model

SHAPE = (1, 64)
MODELS = {
    # outputs: the input x and x + y (one graph segment)
    "with-add": build(
        [T("x", SHAPE), T("y", SHAPE), T("z", SHAPE)],
        [Op("ADD", ["x", "y"], ["z"])],
        ["x", "y"],
        ["x", "z"],
    ),
    # nothing but the input
    "only-input": build([T("x", SHAPE)], [], ["x"], ["x"]),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_input_comes_back_as_the_output(stack, tmp_path: Path, name: str) -> None:
    tosa = tmp_path / f"{name}.tosa"
    tosa.write_bytes(MODELS[name])
    vgf = tmp_path / f"{name}.vgf"
    compile_to(tosa, vgf)
    graph = load(tosa)
    inputs = random_inputs(graph, seed=3)
    got = run_vgf(vgf, [inputs[n] for n in graph.inputs])
    assert list(got) == list(graph.outputs)
    np.testing.assert_array_equal(got["x"], inputs["x"])
    if name == "with-add":
        want = run_reference_model(MODELS[name], graph, inputs, graph.outputs)
        np.testing.assert_array_equal(want["x"], inputs["x"])
        np.testing.assert_array_equal(got["z"], want["z"])
