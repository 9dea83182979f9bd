"""MediaPipe's TFLite custom ops through the bundled kernel library (``--kernels mediapipe``).

Each single-op model of ``tests/data/mediapipe_ops`` and both real networks of
``tests/data/real/mediapipe`` compile, run on the CPU stack (validation layer on) and match an
independent oracle: the numpy references of :mod:`oracles.mediapipe_ops` (written from
MediaPipe's semantics, separately from the shaders) for the custom ops, and the TOSA reference
model for the built-in parts of the networks (:mod:`oracles.regions`). The error of every
output is printed (``pytest -s``) and held to a bound.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from oracles.mediapipe_ops import evaluate
from oracles.regions import evaluate_network
from paths import DATA

from vgfc.compiler import Options, compile_model
from vgfc.runner import run_vgf

OPS = DATA / "mediapipe_ops"
NETWORKS = DATA / "real" / "mediapipe"
MANIFEST = json.loads((OPS / "manifest.json").read_text())["models"]


def _compile(model: Path, tmp_path: Path) -> Path:
    options = Options(kernels=("mediapipe",))
    result = compile_model(model, options)
    assert result.vgf is not None
    out = tmp_path / (model.stem + ".vgf")
    out.write_bytes(result.vgf)
    return out


def _inputs(entry: dict[str, Any], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Inputs each op is meant to see: indices an argmax pool could give, an affine matrix,
    landmarks inside the image."""
    shapes = {n: tuple(entry["tensors"][n]["shape"]) for n in entry["inputs"]}
    name = entry["operator_name"]
    params = entry["params"]
    out: dict[str, np.ndarray] = {}
    for i, (tensor, shape) in enumerate(shapes.items()):
        if name == "MaxUnpooling2D" and i == 1:
            window = params["filter_width"] * params["filter_height"]
            out[tensor] = (rng.integers(0, window, shape) + 0.1).astype(np.float32)
        elif shape[1:] == (4, 4):
            angle = rng.uniform(-0.5, 0.5)
            scale = rng.uniform(0.6, 1.4)
            m = np.eye(4, dtype=np.float32)
            m[0, :2] = scale * math.cos(angle), -scale * math.sin(angle)
            m[1, :2] = scale * math.sin(angle), scale * math.cos(angle)
            m[0, 3], m[1, 3] = rng.uniform(-1.0, 2.0, 2)
            out[tensor] = m.reshape(shape)
        elif name.startswith("Landmarks2") or name.startswith("TransformLandmarks"):
            out[tensor] = rng.uniform(0.0, 8.0, shape).astype(np.float32)
        else:
            out[tensor] = rng.standard_normal(shape).astype(np.float32)
    return out


def _error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0))


@pytest.mark.parametrize("entry", MANIFEST, ids=lambda e: e["file"].removesuffix(".tosa"))
def test_single_op_matches_numpy(entry: dict[str, Any], tmp_path: Path) -> None:
    model = OPS / entry["file"]
    vgf = _compile(model, tmp_path)
    rng = np.random.default_rng(11)
    inputs = _inputs(entry, rng)
    got = run_vgf(vgf, [inputs[n] for n in entry["inputs"]], validate=True)
    (op,) = entry["custom_ops"]
    constants: dict[str, np.ndarray] = {}
    if op["inputs"] and any(i["name"] not in inputs for i in op["inputs"]):
        from vgfc.read.reader import load

        graph = load(model)
        for i in op["inputs"]:
            data = graph.tensors[i["name"]].data
            if data is not None:
                constants[i["name"]] = np.asarray(data)
    want = evaluate(
        op["operator_name"],
        bytes.fromhex(op["implementation_attrs"]),
        [inputs.get(i["name"], constants.get(i["name"])) for i in op["inputs"]],
        [o["shape"] for o in op["outputs"]],
    )
    for name, expected in zip(entry["outputs"], want, strict=True):
        err = _error(got[name], expected)
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        print(f"{entry['file']}: {name}: max abs error {err:.3g} (scale {scale:.3g})")
        assert err <= 1e-4 * scale, (name, err)


NETWORK_INPUTS = {
    "selfie_segmentation": {"TosaInput_0": (1, 256, 256, 3)},
    "face_landmark_with_attention": {"TosaInput_0": (1, 192, 192, 3)},
}


@pytest.mark.slow
@pytest.mark.parametrize("network", sorted(NETWORK_INPUTS))
def test_network_matches_reference_model_and_numpy(network: str, tmp_path: Path) -> None:
    model = NETWORKS / f"{network}.tosa"
    vgf = _compile(model, tmp_path)
    rng = np.random.default_rng(5)
    inputs = {
        n: rng.uniform(0.0, 1.0, shape).astype(np.float32)
        for n, shape in NETWORK_INPUTS[network].items()
    }
    # The face network's one big graph segment binds more uniform buffers than lavapipe allows
    # per stage (the emulation layer's own pipeline layout), which the validation layer reports;
    # the numbers are checked all the same.
    got = run_vgf(vgf, list(inputs.values()), validate=network != "face_landmark_with_attention")
    want = evaluate_network(
        model, inputs, lambda name, attrs, xs, shapes: evaluate(name, attrs, xs, shapes)
    )
    assert set(got) == set(want)
    for name in sorted(want):
        err = _error(got[name], want[name])
        scale = max(1.0, float(np.max(np.abs(want[name]), initial=0.0)))
        print(
            f"{network}: {name} {list(want[name].shape)}: "
            f"max abs error {err:.3g} (scale {scale:.3g})"
        )
        assert err <= 1e-3 * scale, (name, err)


def test_bundled_library_checks_clean() -> None:
    from click.testing import CliRunner

    from vgfc.cli import cli

    result = CliRunner().invoke(cli, ["kernels", "mediapipe"])
    assert result.exit_code == 0, result.output
    assert "6 kernel(s), 0 error(s)" in result.output
