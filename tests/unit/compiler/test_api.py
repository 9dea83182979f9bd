"""``vgfc.compile``: the command in the caller's process, with its options and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR

import vgfc

KERNELS = SAMPLES_DIR / "kernels"


def test_the_api_writes_the_bytes_the_command_writes(tmp_path: Path, cli) -> None:
    model = SAMPLES_DIR / "mixed.tosa"
    assert cli("compile", str(model), "-o", str(tmp_path / "cli.vgf"), "-q").code == 0
    result = vgfc.compile(model, tmp_path / "api.vgf", report=tmp_path / "api.json")
    assert (tmp_path / "api.vgf").read_bytes() == (tmp_path / "cli.vgf").read_bytes()
    assert result.size == (tmp_path / "api.vgf").stat().st_size and result.vgf is None
    assert [name for name, _ in result.timings] == list(vgfc.compiler.STAGES)
    report = json.loads((tmp_path / "api.json").read_text())
    assert report["vgf_bytes"] == result.size
    assert list(report["timings"]) == list(vgfc.compiler.STAGES)  # encode's time included
    in_memory = vgfc.compile(model)
    assert in_memory.vgf == (tmp_path / "cli.vgf").read_bytes()


def test_options_are_the_commands(tmp_path: Path, cli) -> None:
    model = KERNELS / "model.tosa"
    library = KERNELS / "example_ops.yaml"
    assert cli("compile", str(model), "-o", str(tmp_path / "cli.vgf"), "--kernels", str(library))
    result = vgfc.compile(model, kernels=[library], defines={"UNUSED": "1"}, cache=False)
    assert result.vgf == (tmp_path / "cli.vgf").read_bytes()
    assert result.kernels  # the library bound the model's custom op


def test_errors_are_the_commands(tmp_path: Path, cli) -> None:
    broken = tmp_path / "broken.tosa"
    broken.write_bytes(b"\x10\0\0\0ONNX" + bytes(16))
    run = cli("compile", str(broken), "-o", str(tmp_path / "x.vgf"))
    with pytest.raises(vgfc.VgfcError) as caught:
        vgfc.compile(broken, tmp_path / "x.vgf")
    assert run.code == 1 and caught.value.diagnostic.lines()[0] in run.err
    assert not (tmp_path / "x.vgf").exists()


@pytest.mark.parametrize(
    ("keyword", "value", "message"),
    [
        ("target", "vulkan", "target must be one of"),
        ("target_env", "vulkan9", "target_env must be one of"),
        ("shader_timeout", -1, "shader_timeout must be"),
        ("shader_timeout", float("nan"), "shader_timeout must be"),
        ("defines", ["1X=2"], "is not NAME or NAME=VALUE"),
    ],
)
def test_a_value_the_command_line_refuses_is_a_value_error(
    keyword: str, value: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        vgfc.compile(SAMPLES_DIR / "simple.tosa", **{keyword: value})


def test_a_report_needs_an_output_file() -> None:
    with pytest.raises(ValueError, match="a report needs an output file"):
        vgfc.compile(SAMPLES_DIR / "simple.tosa", report="r.json")
