"""``--validate``: the Khronos validation layer under the emulation layers judges vgfc's files.

Every sample, the real network and a spread of conformance tests compiled by vgfc run without
a validation message on lavapipe; the reference converter's ``custom(x, x)`` file, which drops a
binding its shader uses, is caught. ``make test`` installs the layer (Debian
vulkan-validationlayers), so nothing here is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from reference_tools import reference_convert
from samples_module import SAMPLES_DIR

from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError
from vgfc.ir import Array
from vgfc.runner import read_vgf, run_vgf
from vgfc.runner.formats import element_format
from vgfc.runner.validation import Message, emulation_layer_own, find_layer, read_messages
from vgfc.vgf.model import Model

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = sorted((ROOT / "tests" / "data" / "conformance").glob("*/test.tosa"))
MODELS = [
    *sorted(SAMPLES_DIR.glob("*.tosa")),
    ROOT / "tests" / "data" / "real" / "tflite" / "face_detection_short_range.tosa",
    *CONFORMANCE[::40],
]


def _inputs(model: Model) -> list[Array]:
    rng = np.random.default_rng(0)
    arrays = []
    for x in model.inputs:
        resource = model.resource_of(x)
        dtype = element_format(resource.format).dtype
        if dtype.kind == "f":
            arrays.append(rng.uniform(-1, 1, resource.shape).astype(dtype))
        else:
            arrays.append(rng.integers(-3, 3, resource.shape).astype(dtype))
    return arrays


def _run(vgf: Path) -> None:
    model = read_vgf(vgf)
    pushes = {
        i: b"\0" * s.push_constant_size
        for i, s in enumerate(model.segments)
        if s.push_constant_size
    }
    run_vgf(vgf, _inputs(model), pushes, validate=True)


def test_the_layer_is_installed() -> None:
    assert find_layer().is_file()


@pytest.mark.parametrize("path", MODELS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_vgfc_files_are_validation_clean(path: Path, tmp_path: Path) -> None:
    vgf = tmp_path / "m.vgf"
    result = compile_model(path)
    assert result.vgf is not None
    vgf.write_bytes(result.vgf)
    _run(vgf)


def test_the_reference_converters_duplicated_binding_is_caught(tmp_path: Path) -> None:
    ref = reference_convert(SAMPLES_DIR / "dup.tosa", tmp_path / "ref.vgf")
    with pytest.raises(VgfcError) as err:
        _run(ref)
    assert "VUID-VkComputePipelineCreateInfo-layout-00703" in str(err.value)
    assert len(str(err.value)) < 1000  # one bounded line, however many messages


def test_cli_says_where_it_ran_and_that_it_validated(cli, tmp_path: Path) -> None:
    vgf = tmp_path / "m.vgf"
    assert cli("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(vgf), "-q").code == 0
    x = tmp_path / "x.npy"
    np.save(x, _inputs(read_vgf(vgf))[0])
    run = cli("run", str(vgf), "-i", str(x), "--validate", "--device", "cpu")
    assert run.code == 0, run.err
    assert "ran on lavapipe (CPU)" in run.out and "validation-clean" in run.out
    run = cli("run", str(vgf), "-i", str(x), "--validate", "--json")
    doc = json.loads(run.out)
    assert doc["validated"] is True and doc["device"] == "cpu"


def test_log_parsing(tmp_path: Path) -> None:
    log = tmp_path / "v.log"
    log.write_text(
        "VUID-VkComputePipelineCreateInfo-layout-00703(ERROR / SPEC): msgNum: 1 - Validation "
        "Error: [ VUID-VkComputePipelineCreateInfo-layout-00703 ] | Push constant buffer: "
        "member:0 out of range\n    Objects: 1\n        [0] 0x1, type: 15, name: NULL\n"
        "UNASSIGNED-Threading-MultipleThreads(WARN / SPEC): msgNum: 2 - second\n"
    )
    messages = read_messages(log)
    assert [m.id for m in messages] == [
        "VUID-VkComputePipelineCreateInfo-layout-00703",
        "UNASSIGNED-Threading-MultipleThreads",
    ]
    assert messages[0].level == "ERROR" and "Objects" not in messages[0].text
    assert read_messages(tmp_path / "none.log") == []
    # The emulation layer's own pipelines: cleared only when the file has no push constants.
    assert emulation_layer_own(messages[0], file_has_push_constants=False)
    assert not emulation_layer_own(messages[0], file_has_push_constants=True)
    other = Message("VUID-VkComputePipelineCreateInfo-layout-00703", "ERROR", "descriptor 2")
    assert not emulation_layer_own(other, file_has_push_constants=False)


def test_verify_names_the_model_not_its_temporary_vgf(monkeypatch: pytest.MonkeyPatch) -> None:
    import vgfc.runner
    from vgfc.numeric import random_inputs
    from vgfc.oracle import verify_numbers

    def fails(path: Path, *args: object, **kwargs: object) -> None:
        raise VgfcError("Vulkan validation reported 1 message(s)", file=str(path))

    monkeypatch.setattr(vgfc.runner, "run_vgf", fails)
    model = SAMPLES_DIR / "mixed.tosa"
    result = compile_model(model)
    assert result.graph is not None
    inputs = random_inputs(result.graph)
    with pytest.raises(VgfcError) as err:
        verify_numbers(model, result, inputs, against="expected", expected={"x": inputs["input-0"]})
    assert str(err.value).startswith(f"{model}: Vulkan validation")
