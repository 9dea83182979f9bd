"""Running VGF files on the CPU emulation stack (lavapipe, Arm's ML emulation layers, the
scenario runner), checked against the numpy references of the bundled samples.

The VGFs come from the reference converter (model-converter 0.11), so these tests check the
runner itself, independently of vgfc's own VGF writer. The converter stores GLSL and HLSL as
source text. The scenario runner compiles GLSL itself; it cannot compile HLSL on Linux ("HLSL
shaders are not supported on this platform"), so for HLSL modules the tests compile the VGF's
own HLSL text with vgfc's glslang binding and pass the SPIR-V as a substitution.

Tests that need the stack or the converter skip when they are missing, except in CI
(``CI=true``), where they fail: the stack is part of what ``make test`` installs.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest
from click.testing import CliRunner
from needs import missing
from reference_tools import reference_convert
from samples_module import SAMPLES_DIR, load_samples_module

from vgfc.diagnostics import InputError, UnsupportedError, VgfcError
from vgfc.runner import Inputs, Stack, find_stack, match_inputs, read_vgf, run_vgf
from vgfc.runner import stack as stack_module
from vgfc.runner.scenario import read_dds
from vgfc.vgf.model import Model as VgfModel

samples = load_samples_module()


@pytest.fixture(scope="session")
def converter() -> Callable[[Path, Path], Path]:
    """``(model.tosa, out.vgf) -> out.vgf`` with the reference converter."""
    exe = Path(sys.executable).parent / "model-converter"
    if not exe.is_file() and shutil.which("model-converter") is None:
        missing("model-converter is not installed: pip install -e '.[test]'")
    return reference_convert


@pytest.fixture(scope="session")
def reference_vgf(
    converter: Callable[[Path, Path], Path], tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], Path]:
    """``name -> path`` of the reference converter's VGF for ``samples/<name>.tosa``."""
    folder = tmp_path_factory.mktemp("reference_vgf")
    made: dict[str, Path] = {}

    def convert(name: str) -> Path:
        if name not in made:
            made[name] = converter(SAMPLES_DIR / f"{name}.tosa", folder / f"{name}.vgf")
        return made[name]

    return convert


def _hlsl_as_spirv(model: VgfModel) -> dict[str, bytes]:
    from vgfc.shader.glslang import Language, compile_shader

    return {
        m.name: compile_shader(m.source or "", Language.HLSL, m.entry_point)
        for m in (model.module_of(s) for s in model.segments)
        if m.code == "HLSL"
    }


def _first_shader(model: VgfModel) -> int:
    return next(i for i, s in enumerate(model.segments) if s.type.name == "COMPUTE")


def _assert_matches(got: np.ndarray, want: np.ndarray) -> float:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0))


# ---------------------------------------------------------------------------------------------
# Every bundled sample, end to end


@pytest.mark.parametrize("name", list(samples.SAMPLES))
def test_reference_vgf_matches_numpy(
    name: str, stack: Stack, reference_vgf: Callable[[str], Path]
) -> None:
    sample = samples.SAMPLES[name]
    built = sample.build()
    vgf = reference_vgf(name)
    model = read_vgf(vgf)
    inputs = samples.random_inputs(built.inputs, seed=7)
    pushes = {}
    if sample.push_constants:
        pushes[_first_shader(model)] = samples.push_constant_bytes(sample)

    outputs = run_vgf(vgf, list(inputs.values()), pushes, shaders=_hlsl_as_spirv(model))

    expected = sample.reference(inputs)
    assert len(outputs) == len(built.outputs)
    for tensor, got in zip(built.outputs, outputs.values(), strict=True):
        _assert_matches(got, expected[tensor])


def test_push_constant_values_reach_the_shader(
    stack: Stack, reference_vgf: Callable[[str], Path]
) -> None:
    vgf = reference_vgf("push")
    x = samples.random_inputs(samples.SAMPLES["push"].build().inputs, seed=3)
    values = np.array([3.0, -1.0], "<f4").tobytes()  # scale, bias
    (got,) = run_vgf(vgf, list(x.values()), {_first_shader(read_vgf(vgf)): values}).values()
    _assert_matches(got, samples.reference_push(x, scale=3.0, bias=-1.0)["result-0"])


def test_inputs_by_vgf_name_or_index(stack: Stack, reference_vgf: Callable[[str], Path]) -> None:
    vgf = reference_vgf("hlsl")
    model = read_vgf(vgf)
    a, b = samples.random_inputs(samples.SAMPLES["hlsl"].build().inputs, seed=1).values()
    shaders = _hlsl_as_spirv(model)
    by_name = run_vgf(vgf, {"input_1": b, "input_0": a}, shaders=shaders)
    by_index = run_vgf(vgf, {"1": b, "0": a}, shaders=shaders)
    assert list(by_name) == ["output_0"]
    _assert_matches(by_name["output_0"], a + b * np.float32(0.5))
    _assert_matches(by_index["output_0"], by_name["output_0"])


def test_workdir_keeps_the_scenario(
    stack: Stack, reference_vgf: Callable[[str], Path], tmp_path: Path
) -> None:
    vgf = reference_vgf("image")
    x = samples.random_inputs(samples.SAMPLES["image"].build().inputs, seed=2)["input-0"]
    run_vgf(vgf, [x[0]], workdir=tmp_path)  # an image may also be given as [H, W, C]
    scenario = json.loads((tmp_path / "scenario.json").read_text())
    resources = {next(iter(r.values()))["uid"]: r for r in scenario["resources"]}
    image = resources["input_0"]["image"]
    assert image["dims"] == [1, 8, 4, 1]  # width first
    assert image["shader_access"] == "readonly"  # SAMPLED usage, as a combined image sampler needs
    assert image["min_filter"] == "NEAREST" and image["border_address_mode"] == "CLAMP_EDGE"
    assert resources["output_1"]["image"]["dst"].endswith(".dds")
    (command,) = scenario["commands"]
    assert [b["id"] for b in command["dispatch_vgf"]["bindings"]] == [0, 1, 2]
    layers = sorted(p.name for p in (tmp_path / "layers").iterdir())
    assert layers == ["0_VK_LAYER_ML_Graph_Emulation", "1_VK_LAYER_ML_Tensor_Emulation"]


def test_element_types_round_trip(
    stack: Stack, converter: Callable[[Path, Path], Path], tmp_path: Path
) -> None:
    """bool, float16, int16 in and bool, float16, int32 out, through graph-only tensors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from serializer.tosa_serializer import TosaSerializer
    from tosa.DType import DType
    from tosa.Op import Op

    ser = TosaSerializer("", tosa_version_major=1, tosa_version_minor=0, tosa_version_patch=0)
    x = ser.addPlaceholder([1, 4], DType.FP32, None).name
    flags = ser.addPlaceholder([1, 4], DType.BOOL, None).name
    halves = ser.addPlaceholder([2, 3], DType.FP16, None).name
    shorts = ser.addPlaceholder([5], DType.INT16, None).name
    outs = [
        ser.addOutput(shape, dtype).name
        for shape, dtype in (([1, 4], DType.BOOL), ([1, 4], DType.BOOL), ([2, 3], DType.FP16))
    ]
    wide = ser.addOutput([5], DType.INT32).name
    zero = ser.addConst([1, 4], DType.FP32, np.zeros((1, 4), np.float32)).name
    ser.addOperator(Op.GREATER, [x, zero], [outs[0]], None)
    ser.addOperator(Op.LOGICAL_NOT, [flags], [outs[1]], None)
    ser.addOperator(Op.ABS, [halves], [outs[2]], None)
    ser.addOperator(Op.CAST, [shorts], [wide], None)
    model = tmp_path / "types.tosa"
    model.write_bytes(bytes(ser.serialize()))

    inputs = [
        np.array([[-1, 2, 0, 3]], np.float32),
        np.array([[True, False, True, False]]),
        np.array([[-1.5, 2, -3], [4, -5, 6.25]], np.float16),
        np.array([-3, 4, -32767, 0, 9], np.int16),
    ]
    got = list(run_vgf(converter(model, tmp_path / "types.vgf"), inputs).values())
    _assert_matches(got[0], inputs[0] > 0)
    _assert_matches(got[1], ~inputs[1])
    _assert_matches(got[2], np.abs(inputs[2]))
    _assert_matches(got[3], inputs[3].astype(np.int32))


# ---------------------------------------------------------------------------------------------
# Errors


def test_runner_failure_is_one_line_with_the_runners_message(
    stack: Stack, reference_vgf: Callable[[str], Path]
) -> None:
    vgf = reference_vgf("simple")
    not_a_module = b"\x03\x02\x23\x07" + bytes(16)  # a SPIR-V header with nothing after it
    x = np.zeros((1, 8, 8, 4), np.float32)
    with pytest.raises(VgfcError) as info:
        run_vgf(vgf, [x], shaders={"graph_partition_1": not_a_module})
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(f"{vgf}: the scenario runner failed (exit code ")
    assert "Failed to validate SPIR-V module" in text


def test_hlsl_module_needs_a_substitution(reference_vgf: Callable[[str], Path]) -> None:
    vgf = reference_vgf("hlsl")
    x = np.zeros((1, 8, 8, 4), np.float32)
    with pytest.raises(UnsupportedError, match=r"holds HLSL source.*shaders=\{'graph_partition_1'"):
        run_vgf(vgf, [x, x])


@pytest.mark.parametrize(
    ("inputs", "pushes", "message"),
    [
        ({"input-0": "x"}, {}, r"no input 'input-0' \(did you mean input_0\?\)"),
        ([], {}, r"missing input\(s\): input_0"),
        (["x", "x"], {}, r"2 inputs given, the model takes 1"),
        (["wide"], {}, r"has shape \[1, 8, 8, 5\], the model expects \[1, 8, 8, 4\]"),
        (["x"], {0: b"1234"}, r"segment 0 'graph_segment_0': it is a graph segment"),
        (["x"], {1: b"123"}, r"3 bytes; Vulkan needs a multiple of 4"),
        (["x"], {5: b"1234"}, r"the model has segments 0\.\.1"),
    ],
)
def test_input_errors_name_the_problem(
    reference_vgf: Callable[[str], Path],
    inputs: dict[str, str] | list[str],
    pushes: dict[int, bytes],
    message: str,
) -> None:
    arrays = {"x": np.zeros((1, 8, 8, 4), np.float32), "wide": np.zeros((1, 8, 8, 5), np.float32)}
    vgf = reference_vgf("push")
    if isinstance(inputs, dict):
        given: Inputs = {k: arrays[v] for k, v in inputs.items()}
    else:
        given = [arrays[v] for v in inputs]
    with pytest.raises(InputError, match=message) as info:
        run_vgf(vgf, given, pushes)
    assert str(info.value).startswith(f"{vgf}: ")


def test_inputs_convert_when_no_value_changes(reference_vgf: Callable[[str], Path]) -> None:
    model = read_vgf(reference_vgf("simple"))
    (converted,) = match_inputs(model, [np.arange(256, dtype=np.int64).reshape(8, 8, 4)])
    assert converted.dtype == np.float32 and converted.shape == (1, 8, 8, 4)
    assert converted[0, 7, 7, 3] == 255


def test_int8_model_refuses_float_input(reference_vgf: Callable[[str], Path]) -> None:
    x = np.zeros((1, 8, 8, 4), np.float32)
    with pytest.raises(
        InputError, match=r"is float32, the model expects int8 \(VK_FORMAT_R8_SINT\)"
    ):
        run_vgf(reference_vgf("int8"), [x])


def test_not_a_vgf_file() -> None:
    with pytest.raises(InputError, match=r"simple\.tosa: not a VGF file \(bad header\)"):
        run_vgf(SAMPLES_DIR / "simple.tosa", [])


def test_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> NoReturn:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(stack_module.metadata, "distribution", not_installed)
    with pytest.raises(
        UnsupportedError, match=r"ai-ml-sdk-scenario-runner.*pip install 'vgfc\[run\]'"
    ):
        find_stack()


def test_executorchs_pinned_layers_are_named_with_the_install_that_replaces_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """executorch[vgf] 1.5.1 pins the 0.10.0 layers, which do not load on glibc 2.36: the
    scenario runner then failed with 'Cannot find queue index'. ``pip install 'vgfc[run]'``
    replaces them (pip check stays clean: ExecuTorch needs them only under its extra)."""
    real = stack_module.metadata.distribution

    class Old:
        def __init__(self, dist: metadata.Distribution) -> None:
            self.files, self.version = dist.files, "0.10.0"

    def pinned(name: str) -> object:
        dist = real(name)
        return Old(dist) if name == stack_module.LAYER_PACKAGE else dist

    monkeypatch.setattr(stack_module.metadata, "distribution", pinned)
    with pytest.raises(UnsupportedError) as caught:
        find_stack()
    assert str(caught.value) == (
        "ai-ml-emulation-layer-for-vulkan 0.10.0 is installed and running VGF files needs 0.11.0 "
        "or later (executorch[vgf] 1.5.1 pins 0.10.0; its VGF backend does not need it, see "
        "docs/pytorch.md): pip install 'vgfc[run]'"
    )


def test_missing_lavapipe_says_what_to_install(stack: Stack, tmp_path: Path) -> None:
    with pytest.raises(UnsupportedError, match=r"apt-get install mesa-vulkan-drivers libvulkan1"):
        find_stack(icd_dirs=[tmp_path])


def test_environment_puts_the_graph_layer_above_the_tensor_layer(
    stack: Stack, tmp_path: Path
) -> None:
    env = stack.environment(tmp_path, base={})
    folders = env["VK_LAYER_PATH"].split(os.pathsep)
    names = []
    for folder in folders:
        manifest = json.loads((Path(folder) / "layer.json").read_text())
        assert Path(manifest["layer"]["library_path"]).is_file()
        names.append(manifest["layer"]["name"])
    assert names == ["VK_LAYER_ML_Graph_Emulation", "VK_LAYER_ML_Tensor_Emulation"]
    assert env["VK_INSTANCE_LAYERS"] == ":".join(names)
    assert env["VK_DRIVER_FILES"] == str(stack.icd)
    assert stack.icd.name.startswith("lvp_icd")


# ---------------------------------------------------------------------------------------------
# Pieces


def test_read_dds_skips_the_dx10_header(tmp_path: Path) -> None:
    pixels = np.arange(8, dtype="<f4").tobytes()
    header = bytearray(128)
    header[:8] = b"DDS " + struct.pack("<I", 124)
    header[84:88] = b"DX10"
    path = tmp_path / "x.dds"
    path.write_bytes(bytes(header) + bytes(20) + pixels)
    assert read_dds(path) == pixels
    path.write_bytes(b"PNG" + bytes(200))
    with pytest.raises(InputError, match="not a DDS file"):
        read_dds(path)


def test_reader_decodes_the_converters_vgf(reference_vgf: Callable[[str], Path]) -> None:
    model = read_vgf(reference_vgf("image"))
    (image,) = model.inputs
    assert image.name == "input_0" and image.binding == 0
    resource = model.resource_of(image)
    assert resource.format == "VK_FORMAT_R32G32B32A32_SFLOAT"
    assert resource.shape == (1, 4, 8, 4) and resource.sampler is not None
    (segment,) = model.segments
    module = model.module_of(segment)
    assert (segment.type.name, module.code, segment.dispatch) == ("COMPUTE", "GLSL", (2, 1, 1))


# ---------------------------------------------------------------------------------------------
# Command line


def _invoke(*args: str) -> tuple[int, str, str]:
    from vgfc.cli import cli

    result = CliRunner().invoke(cli, ["run", *args], prog_name="vgfc")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_cli_runs_and_writes_outputs(
    stack: Stack, reference_vgf: Callable[[str], Path], tmp_path: Path
) -> None:
    sample = samples.SAMPLES["push"]
    x = samples.random_inputs(sample.build().inputs, seed=5)
    np.save(tmp_path / "x.npy", x["input-0"])
    (tmp_path / "pc.bin").write_bytes(samples.push_constant_bytes(sample))
    out = tmp_path / "out"
    code, stdout, stderr = _invoke(
        str(reference_vgf("push")),
        "-i",
        f"input_0={tmp_path / 'x.npy'}",
        "--push-constants",
        f"1={tmp_path / 'pc.bin'}",
        "-o",
        str(out),
    )
    assert code == 0, stderr
    assert "output_0: float32 [1, 8, 8, 4]" in stdout
    _assert_matches(np.load(out / "output_0.npy"), sample.reference(x)["result-0"])


def test_cli_error_is_one_line(reference_vgf: Callable[[str], Path], tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((1, 8, 8, 4), np.float32))
    vgf = reference_vgf("simple")
    code, _, stderr = _invoke(str(vgf), "-i", f"nope={tmp_path / 'x.npy'}")
    assert code == 1
    assert stderr == f"{vgf}: error: the model has no input 'nope' (its inputs: input_0)\n"
