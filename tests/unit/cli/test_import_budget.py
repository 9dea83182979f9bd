"""What a command loads: on a small model, start-up is most of what a compile costs.

Each check runs the command in a fresh interpreter (the modules a test process has imported would
hide what a command imports) and reads ``sys.modules`` and the process's memory map at the end.
The budget: ``vgfc --version`` loads none of the compiler; a compile of a model without shaders
loads no numpy, no ``flatbuffers``/``tosa`` package, no rich (its output is not a terminal), no
YAML, jsonschema, glslang or SPIRV-Tools; a compile whose shaders are all in the cache loads
neither glslang nor SPIRV-Tools.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import atexit, gc, json, sys
sys.argv = json.loads(sys.argv[1])
entry = {"vgfc": "vgfc.cli", "vgfc-model-converter": "vgfc.cli.model_converter"}[sys.argv[0]]
main = __import__(entry, fromlist=["main"]).main
code = 0

def report():
    with open("/proc/self/maps") as f:
        maps = f.read()
    sys.stdout.write(json.dumps({
        "modules": sorted(sys.modules),
        "libraries": [n for n in ("libglslang", "libSPIRV-Tools", "libSPIRV.so") if n in maps],
        "threshold": gc.get_threshold(),
        "code": code,
    }) + "\\n")

# An exit handler: the command then exits through the interpreter's teardown, which runs it.
atexit.register(report)
try:
    main()
except SystemExit as e:
    code = e.code
"""

NEVER = ("numpy", "flatbuffers", "tosa", "ml_dtypes", "yaml", "jsonschema", "rich", "click")
"""Packages no compile of a model without custom ops loads (click: the quick path,
:mod:`vgfc.cli.quick`, parses the usual command lines)."""
START_UP = ("typing", "dataclasses", "inspect", "hashlib", "sysconfig")
"""What the command's own start-up left out (vgfc.record, vgfc.cli.quick, the shader cache's
SHA-256): modules of the standard library that cost 3 to 12 ms each to import."""
COMPILERS = (
    "vgfc.shader.glslang",
    "vgfc.shader.glslang_abi",
    "vgfc.shader.includer",
    "vgfc.spirv.spirv_tools",
    "vgfc.processes",
    "vgfc.processes_worker",
    "vgfc.processes_framing",
)
"""vgfc's glslang (its compile entry, its C interface, its includer) and SPIRV-Tools bindings,
and the worker processes glslang runs in."""


def _command(
    args: list[str], folder: Path, cache: Path, program: str = "vgfc"
) -> dict[str, object]:
    env = {**os.environ, "VGFC_CACHE_DIR": str(cache)}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps([program, *args])],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    result: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def _loaded(seen: dict[str, object], names: tuple[str, ...]) -> list[str]:
    modules = set(seen["modules"])  # type: ignore[call-overload]
    return [n for n in names if n in modules or any(m.startswith(n + ".") for m in modules)]


@pytest.mark.parametrize("program", ["vgfc", "vgfc-model-converter"])
def test_the_version_loads_none_of_the_compiler(tmp_path: Path, program: str) -> None:
    seen = _command(["--version"], tmp_path, tmp_path / "cache", program=program)
    assert seen["code"] == 0
    assert _loaded(seen, (*NEVER, *COMPILERS, "vgfc.compiler", "vgfc.read", "vgfpy")) == []


@pytest.mark.parametrize("quiet", [True, False], ids=["quiet", "summary"])
def test_a_compile_without_shaders_stays_within_the_budget(
    chain_model: Path, tmp_path: Path, quiet: bool
) -> None:
    args = ["compile", str(chain_model), "-o", "plain.vgf", *(["-q"] if quiet else [])]
    seen = _command(args, tmp_path, tmp_path / "cache")
    assert seen["code"] == 0 and (tmp_path / "plain.vgf").is_file()
    assert _loaded(seen, (*NEVER, *COMPILERS, "vgfc.resolve", "vgfc.vgf.profiles")) == []
    assert _loaded(seen, START_UP) == []
    assert seen["libraries"] == []


def test_the_model_converter_command_ExecuTorch_runs_stays_within_the_budget(
    chain_model: Path, tmp_path: Path
) -> None:
    # ExecuTorch's VGF backend runs [binary, *flags, "-i", X.tosa, "-o", X.tosa.vgf]
    args = ["-i", str(chain_model), "-o", "plain.vgf"]
    seen = _command(args, tmp_path, tmp_path / "cache", program="vgfc-model-converter")
    assert seen["code"] == 0 and (tmp_path / "plain.vgf").is_file()
    assert _loaded(seen, (*NEVER, *COMPILERS, "importlib.metadata", *START_UP)) == []


def test_a_compile_that_folds_a_reshape_and_looks_for_no_ops_and_identities_loads_no_numpy(
    tmp_path: Path,
) -> None:
    # As ExecuTorch exports a network: a weight reshaped by an operator, which folding makes a
    # constant on its bytes; a SLICE of everything, whose start and size simplify reads; and
    # x + 0.0, which is x only where no reader tells -0.0 from +0.0: the pass looks at the
    # readers (a convolution, whose bias it reads). None of them needs numpy.
    import numpy as np
    import tosa.DType as fb_dtype
    from tosa_factory import Op, T, build

    f32 = np.float32
    tensors = [
        T("x", (1, 2, 2, 1)),
        T("whole", (1, 2, 2, 1)),
        T("zero", (1, 1, 1, 1), data=np.zeros((1, 1, 1, 1), f32)),
        T("a", (1, 2, 2, 1)),
        T("flat", (1,), data=np.ones(1, f32)),
        T("w", (1, 1, 1, 1)),
        T("b", (1,), data=np.array([0.5], f32)),
        T("zp", (1,), data=np.zeros(1, f32)),
        T("y", (1, 2, 2, 1)),
    ]
    ops = [
        *(Op("CONST", [], [n]) for n in ("zero", "flat", "b", "zp")),
        *(Op("CONST_SHAPE", [], [n], "ConstShapeAttribute") for n in ("shape", "start", "size")),
        Op("RESHAPE", ["flat", "shape"], ["w"]),
        Op("SLICE", ["x", "start", "size"], ["whole"]),
        Op("ADD", ["whole", "zero"], ["a"]),
        Op(
            "CONV2D",
            ["a", "w", "b", "zp", "zp"],
            ["y"],
            "Conv2dAttribute",
            {"pad": [0] * 4, "stride": [1, 1], "dilation": [1, 1], "acc_type": fb_dtype.DType.FP32},
        ),
    ]
    model = tmp_path / "reshaped.tosa"
    model.write_bytes(
        build(
            tensors,
            ops,
            ["x"],
            ["y"],
            shapes=[("shape", 4, [1, 1, 1, 1]), ("start", 4, [0] * 4), ("size", 4, [1, 2, 2, 1])],
        )
    )
    report = tmp_path / "r.json"
    args = ["compile", "-q", str(model), "-o", "out.vgf", "--report", str(report)]
    seen = _command(args, tmp_path, tmp_path / "c")
    assert seen["code"] == 0 and (tmp_path / "out.vgf").is_file()
    assert ("fold", "RESHAPE") in [
        (r["pass"], r["kind"]) for r in json.loads(report.read_text())["passes"]
    ]
    assert _loaded(seen, ("numpy",)) == []


def test_a_compile_with_every_shader_cached_loads_no_shader_compiler(tmp_path: Path) -> None:
    from samples_module import SAMPLES_DIR

    cache = tmp_path / "cache"
    model = str(SAMPLES_DIR / "chain.tosa")  # two GLSL shaders between graph ops
    cold = _command(["compile", "-q", model, "-o", "cold.vgf"], tmp_path, cache)
    assert cold["code"] == 0 and _loaded(cold, COMPILERS) != []  # the first run compiles
    warm = _command(["compile", "-q", model, "-o", "warm.vgf"], tmp_path, cache)
    assert warm["code"] == 0
    assert (tmp_path / "warm.vgf").read_bytes() == (tmp_path / "cold.vgf").read_bytes()
    assert _loaded(warm, (*COMPILERS, "numpy", "jsonschema", "rich", "click", *START_UP)) == []
    assert warm["libraries"] == []


def test_a_command_collects_garbage_in_fewer_larger_passes(
    chain_model: Path, tmp_path: Path
) -> None:
    seen = _command(["compile", "-q", str(chain_model), "-o", "plain.vgf"], tmp_path, tmp_path)
    assert seen["threshold"][0] >= 10_000  # type: ignore[index]
    # ... and a library user's process keeps its own collector settings.
    run = subprocess.run(
        [sys.executable, "-c", "import gc, vgfc, vgfc.compiler; print(gc.get_threshold()[0])"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(run.stdout) == 700
