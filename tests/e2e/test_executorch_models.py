"""Models exported through ExecuTorch's Arm VGF backend, compiled and run with vgfc.

``tests/data/executorch/`` holds, per model, the TOSA flatbuffer that ExecuTorch 1.5.1 handed to
its converter (``vgfc-model-converter`` through ``MODEL_CONVERTER_PATH``), a seeded input and the
expected output (PyTorch eager's, but for the grid_sample model; ``manifest.json`` says which),
all written by ``scripts/export_executorch_models.py``. No ExecuTorch or torch is needed here.
With ``VGFC_EXECUTORCH_MODELS=DIR`` the same checks run on a fresh export in ``DIR`` instead
(``make test-executorch``).

For each model, ``vgfc compile`` succeeds (with a warning for each binding its shaders declare
and never use, and no other), so does ``vgfc compile --target executorch`` (the rules of
ExecuTorch's VGF runtime), and ``vgfc run`` on lavapipe gives the expected output within the
manifest's tolerance, under the Khronos validation layer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import DATA

EXPORTS = DATA / "executorch"
FOLDER = Path(os.environ.get("VGFC_EXECUTORCH_MODELS") or EXPORTS)
MANIFEST: dict[str, Any] = json.loads((FOLDER / "manifest.json").read_text())
MODELS: list[dict[str, Any]] = MANIFEST["models"]
NAMES = ["conv_net", "custom_scale_add", "custom_rgba_bias", "grid_sample_buffer"]

NOT_VALIDATION_CLEAN = {
    # The scenario runner (0.11.0) binds the intermediate image that aliases the first graph
    # segment's output tensor as a combined image sampler while it is still in
    # VK_IMAGE_LAYOUT_UNDEFINED (VUID-VkWriteDescriptorSet-descriptorType-04150/04152). The
    # runner creates those intermediates itself, and the reference converter's file for the
    # same TOSA file draws the same messages. lavapipe computes the right numbers regardless.
    "custom_rgba_bias": "VUID-VkWriteDescriptorSet-descriptorType-04150",
}


def _files(model: dict[str, Any]) -> list[str]:
    files = [model["tosa"]]
    for key in ("inputs", "expected_outputs", "eager_outputs"):
        files.extend(model.get(key, {}).values())
    return files


def test_manifest_describes_the_folder() -> None:
    assert [m["name"] for m in MODELS] == NAMES
    assert MANIFEST["versions"]["executorch"] == "1.5.1"
    assert MANIFEST["versions"]["torch"].split("+")[0] == "2.13.0"
    listed = {f for m in MODELS for f in _files(m)}
    on_disk = {p.name for p in FOLDER.iterdir()} - {"manifest.json"}
    assert on_disk == listed


def test_committed_data_stays_small() -> None:
    assert sum(p.stat().st_size for p in EXPORTS.iterdir()) < 256 * 1024


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ": warning: " in f": {line}"]


def _check_compiled(model: dict[str, Any], code: int, stderr: str) -> None:
    assert code == 0, stderr
    warnings = _warnings(stderr)
    assert warnings == stderr.splitlines(), "stderr holds more than warnings"
    assert len(warnings) == len(model["unused_bindings"]), stderr
    for (set_, binding), warning in zip(model["unused_bindings"], warnings, strict=True):
        assert f"set {set_} binding {binding} " in warning
        assert "never uses it" in warning


@pytest.mark.parametrize("model", MODELS, ids=[m["name"] for m in MODELS])
def test_compile(model: dict[str, Any], tmp_path: Path, vgfc_exe: Any) -> None:
    out = tmp_path / "model.vgf"
    run = vgfc_exe("compile", "-q", str(FOLDER / model["tosa"]), "-o", str(out))
    _check_compiled(model, run.code, run.err)
    assert out.stat().st_size > 0


@pytest.mark.parametrize("model", MODELS, ids=[m["name"] for m in MODELS])
def test_compile_for_executorch_runtime(
    model: dict[str, Any], tmp_path: Path, vgfc_exe: Any
) -> None:
    out = tmp_path / "model.vgf"
    args = ["compile", "-q", "--target", "executorch", str(FOLDER / model["tosa"])]
    run = vgfc_exe(*args, "-o", str(out))
    _check_compiled(model, run.code, run.err)
    assert out.stat().st_size > 0


@pytest.mark.parametrize("model", MODELS, ids=[m["name"] for m in MODELS])
def test_run_matches_expected_output(model: dict[str, Any], tmp_path: Path, vgfc_exe: Any) -> None:
    vgf = tmp_path / "model.vgf"
    compiled = vgfc_exe("compile", "-q", str(FOLDER / model["tosa"]), "-o", str(vgf))
    assert compiled.code == 0, compiled.err
    inputs = [f"{name}={FOLDER / file}" for name, file in model["inputs"].items()]
    validate = [] if model["name"] in NOT_VALIDATION_CLEAN else ["--validate"]
    out = tmp_path / "out"
    run = vgfc_exe(
        "run", str(vgf), *validate, *(a for i in inputs for a in ("-i", i)), "-o", str(out)
    )
    assert run.code == 0, run.err
    if validate:
        assert "validation-clean" in run.err + run.out
    expected: dict[str, str] = model["expected_outputs"]
    assert {p.stem for p in out.glob("*.npy")} == set(expected)
    bound = model["tolerance"]["max_abs"]
    for name, file in expected.items():
        got = np.load(out / f"{name}.npy")
        want = np.load(FOLDER / file)
        assert got.shape == want.shape and got.dtype == want.dtype, name
        err = float(np.max(np.abs(got.astype(np.float64) - want), initial=0.0))
        print(f"{model['name']}: {name}: max abs error {err:.3g} vs {model['expected_is']}")
        assert err <= bound, (name, err, bound)


@pytest.mark.parametrize("name", sorted(NOT_VALIDATION_CLEAN))
def test_the_scenario_runners_own_fault_stays_visible(
    name: str, tmp_path: Path, vgfc_exe: Any
) -> None:
    """The model left out of --validate above still draws its message, from the reference
    converter's file too: when a scenario runner release fixes the layout, this fails, and the
    exception above can go."""
    from reference_tools import reference_convert

    (model,) = (m for m in MODELS if m["name"] == name)
    ours = tmp_path / "model.vgf"
    assert vgfc_exe("compile", "-q", str(FOLDER / model["tosa"]), "-o", str(ours)).code == 0
    theirs = reference_convert(FOLDER / model["tosa"], tmp_path / "reference.vgf")
    # In model order, without names: the reference converter names inputs input_0, input_1 ...
    inputs = [a for f in model["inputs"].values() for a in ("-i", str(FOLDER / f))]
    for vgf in (ours, theirs):  # the reference converter's file draws the same message
        run = vgfc_exe("run", str(vgf), "--validate", *inputs, "-o", str(tmp_path / vgf.stem))
        assert run.code == 1, vgf
        assert NOT_VALIDATION_CLEAN[name] in run.err, vgf
