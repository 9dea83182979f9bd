"""`vgfc verify`: compile, run on the CPU, compare with an independent oracle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from paths import DATA
from samples_module import SAMPLES_DIR

CONFORMANCE = DATA / "real" / "conformance"


def test_model_with_shaders_against_the_reference_converter(cli, stack) -> None:
    """The reference converter runs the same shaders: the numbers agree, but the shader ops
    stay unverified (exit 4), labelled as not independent."""
    args = ("--json", "--seed", "3", "--against", "reference")
    run = cli("verify", str(SAMPLES_DIR / "mixed.tosa"), *args)
    assert run.code == 4, run.err
    doc = json.loads(run.out)
    assert doc["oracle"] == "reference" and not doc["ok"]
    assert {o["name"] for o in doc["outputs"]} == {"result-0", "result-1"}
    assert all(o["max_abs_error"] <= 1e-6 and o["ok"] for o in doc["outputs"])
    shaders = [o for o in doc["ops"] if " CUSTOM " in o["label"]]
    assert shaders and all(o["status"] == "not independent" for o in shaders)


def test_plain_model_against_the_tosa_reference_model(cli, stack) -> None:
    (model,) = CONFORMANCE.glob("conv2d_*/test.tosa")
    run = cli("verify", str(model), "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["oracle"] == "tosa" and doc["ok"]


def test_wrong_expectation_fails_with_the_error_size(cli, stack, tmp_path: Path) -> None:
    model = SAMPLES_DIR / "chain.tosa"
    x = np.linspace(-1, 1, 256, dtype=np.float32).reshape(1, 8, 8, 4)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", np.zeros_like(x))  # relu then 2x+1 is never all zero
    run = cli(
        "verify",
        str(model),
        "-i",
        f"input-0={tmp_path / 'x.npy'}",
        "-e",
        f"result-0={tmp_path / 'y.npy'}",
    )
    assert run.code == 1
    assert "FAIL" in run.out
    assert run.err.strip().startswith(
        f"{model}: error: 1 of 1 outputs differ from the expected oracle beyond the tolerance"
    )
    right = 2 * np.maximum(x, 0) + 1
    np.save(tmp_path / "y.npy", right)
    run = cli(
        "verify",
        str(model),
        "-i",
        f"input-0={tmp_path / 'x.npy'}",
        "-e",
        f"result-0={tmp_path / 'y.npy'}",
    )
    assert run.code == 0, run.err


def test_push_constants_are_checked_against_the_shader(cli, tmp_path: Path) -> None:
    (tmp_path / "pc.bin").write_bytes(b"\0" * 4)
    run = cli(
        "verify",
        str(SAMPLES_DIR / "push.tosa"),
        "--push-constants",
        f"push_affine={tmp_path / 'pc.bin'}",
    )
    assert run.code == 1
    assert "holds 4 bytes of push constants, the shader's block has 8" in run.err


def test_the_tosa_reference_model_cannot_run_shaders(cli, stack) -> None:
    run = cli("verify", str(SAMPLES_DIR / "simple.tosa"), "--against", "tosa")
    assert run.code == 4
    assert "a custom shader is its own only description" in run.err


def test_a_model_without_inputs_and_names_with_commas(cli, stack, tmp_path: Path) -> None:
    """A graph may have no input (ExecuTorch's ``torch.full`` test: one CONST, the output), and
    a tensor's name may hold a comma: the reference model is given them in a test descriptor,
    where its command line's lists would be empty or split ("Unable to load test json")."""
    from tosa_factory import Op, T, build

    full = np.full((3, 3), 4.5, np.float32)
    model = tmp_path / "full.tosa"
    model.write_bytes(
        build([T("full", (3, 3), data=full)], [Op("CONST", [], ["full"])], [], ["full"])
    )
    run = cli("verify", str(model), "--json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["ok"]

    commas = tmp_path / "commas.tosa"
    tensors = [T("x,0", (1, 4)), T("y,1", (1, 4))]
    commas.write_bytes(build(tensors, [Op("ABS", ["x,0"], ["y,1"])], ["x,0"], ["y,1"]))
    run = cli("verify", str(commas), "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    assert doc["oracle"] == "tosa" and doc["ok"] and [o["name"] for o in doc["outputs"]] == ["y,1"]
