"""Numbers from an oracle, and how far vgfc's results are from them.

``vgfc verify`` (:mod:`vgfc.runner.oracle`) compiles a model, runs it on the CPU emulation stack
and compares each output with: the TOSA reference model (the built-in operators, whole or piece
by piece), the reference converter's VGF run on the same stack, or arrays the user supplies.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from vgfc.diagnostics import InputError, UnsupportedError
from vgfc.dtypes import numpy_dtype
from vgfc.ir import Array, DType, Graph
from vgfc.record import record

__all__ = [
    "Comparison",
    "compare",
    "random_inputs",
    "reference_converter_outputs",
    "run_reference_model",
    "tosa_reference_outputs",
]

# The input types random_inputs can fill; the user gives any other input (-i).
_RANDOM = frozenset(
    {
        DType.BOOL,
        DType.INT8,
        DType.INT16,
        DType.INT32,
        DType.INT64,
        DType.FP16,
        DType.FP32,
        DType.BF16,
    }
)


def random_inputs(graph: Graph, seed: int = 0) -> dict[str, Array]:
    """Reproducible inputs for every graph input: floats in [-1, 1], integers over a small
    range that keeps arithmetic exact, booleans at random."""
    rng = np.random.default_rng(seed)
    inputs: dict[str, Array] = {}
    for name in graph.inputs:
        tensor = graph.tensors[name]
        dtype = numpy_dtype(tensor.dtype) if tensor.dtype in _RANDOM else None
        if dtype is None or tensor.shape is None or any(d < 0 for d in tensor.shape):
            raise UnsupportedError(
                f"cannot make random {tensor.dtype.value} data of shape {tensor.shape}: give the "
                "input with -i",
                tensor=name,
            )
        if tensor.dtype is DType.BOOL:
            inputs[name] = rng.integers(0, 2, tensor.shape).astype(np.bool_)
        elif tensor.dtype.is_float:
            inputs[name] = rng.uniform(-1.0, 1.0, tensor.shape).astype(dtype)
        else:
            inputs[name] = rng.integers(-100, 100, tensor.shape).astype(dtype)
    return inputs


@record
class Comparison:
    """How one output compares with its expected value."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    max_abs: float
    max_rel: float
    ok: bool


# Default tolerances (atol, rtol) by element type: a few units in the last place of each.
TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}


def compare(
    got: Mapping[str, Array],
    expected: Mapping[str, Array],
    atol: float | None = None,
    rtol: float | None = None,
) -> list[Comparison]:
    """Compare every expected output; exact for integers and booleans, ``atol + rtol * |want|``
    for floats (defaults by element type, :data:`TOLERANCES`); NaN matches NaN."""
    rows = []
    for name, want in expected.items():
        if name not in got:
            raise InputError(f"the VGF has no output '{name}' (it has {', '.join(got)})")
        have = got[name]
        if have.shape != want.shape and have.size == want.size:
            have = have.reshape(want.shape)
        if have.shape != want.shape:
            rows.append(Comparison(name, have.shape, str(have.dtype), np.inf, np.inf, False))
            continue
        a, b = have.astype(np.float64), want.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(b)
        a, b = np.where(both_nan, 0.0, a), np.where(both_nan, 0.0, b)
        diff = np.abs(a - b)
        max_abs = float(diff.max()) if diff.size else 0.0
        rel = diff / np.maximum(np.abs(b), np.finfo(np.float64).tiny)
        max_rel = float(rel.max()) if rel.size else 0.0
        if want.dtype.kind == "f" or str(want.dtype) in TOLERANCES:
            default = TOLERANCES.get(str(want.dtype), TOLERANCES["float32"])
            tol_a = default[0] if atol is None else atol
            tol_r = default[1] if rtol is None else rtol
            # NaN on one side only never passes: diff is NaN and the comparison is False.
            ok = bool(np.all(diff <= tol_a + tol_r * np.abs(b)))
        else:
            ok = max_abs == 0.0
        rows.append(Comparison(name, have.shape, str(have.dtype), max_abs, max_rel, ok))
    return rows


def _program(name: str, package: str) -> str:
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise UnsupportedError(f"{name} is not installed: pip install {package}")
    return found


def tosa_reference_outputs(
    model: Path, graph: Graph, inputs: Mapping[str, Array]
) -> dict[str, Array]:
    """Run the TOSA reference model (tosa-tools) on ``inputs``."""
    if any(op.op == "CUSTOM" for op in graph.operators):
        raise UnsupportedError(
            "the TOSA reference model cannot run CUSTOM operators: compare with the reference "
            "converter (--against reference) or give --expected arrays"
        )
    from vgfc.read import load_flatbuffer

    return run_reference_model(
        load_flatbuffer(model), graph, {n: inputs[n] for n in graph.inputs}, list(graph.outputs)
    )


def run_reference_model(
    tosa: bytes,
    graph: Graph,
    inputs: Mapping[str, Array],
    outputs: Sequence[str],
) -> dict[str, Array]:
    """Run the TOSA file ``tosa`` on the reference model: ``inputs`` by tensor name (each
    converted to the element type ``graph`` gives the tensor), the ``outputs`` named back."""
    exe = _program("tosa_reference_model", "tosa-tools")
    with tempfile.TemporaryDirectory(prefix="vgfc-ref-") as tmp:
        work = Path(tmp)
        (work / "model.tosa").write_bytes(tosa)
        files = []
        for i, (name, array) in enumerate(inputs.items()):
            path = work / f"in{i}.npy"
            dtype = numpy_dtype(graph.tensors[name].dtype)
            np.save(path, np.asarray(array).astype(dtype) if dtype is not None else array)
            files.append(path.name)
        outs = [f"out{i}.npy" for i in range(len(outputs))]
        # A test descriptor, not --ifm_name/--ifm_file: with no inputs those are empty, which
        # the reference model refuses ("Unable to load test json"); a graph may have none.
        test = {
            "tosa_file": "model.tosa",
            "ifm_name": list(inputs),
            "ifm_file": files,
            "ofm_name": list(outputs),
            "ofm_file": outs,
            "expected_failure": False,
        }
        (work / "desc.json").write_text(json.dumps(test))
        run = subprocess.run(
            [
                exe,
                f"--test_desc={work / 'desc.json'}",
                f"--flatbuffer_dir={work}",
                f"--output_dir={work}",
            ],
            capture_output=True,
            text=True,
            cwd=work,
            timeout=600,
        )
        if run.returncode != 0 or not all((work / f).is_file() for f in outs):
            # It exits 0 when it refuses a graph ("Failed to validate graph"), writing nothing.
            raise UnsupportedError(f"the TOSA reference model failed: {_reference_error(run)}")
        return {name: np.load(work / f) for name, f in zip(outputs, outs, strict=True)}


def _reference_error(run: subprocess.CompletedProcess[str]) -> str:
    """The reference model's own error lines; on a crash it prints a debugger's backtrace
    after them, which says nothing to a user. A graph it rejects says ``ERROR_IF() fails``;
    inputs an operator has no answer for (a GATHER index out of range) say ``REQUIRE() fails``,
    then the reason, and may abort without more."""
    lines = [line.strip() for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    errors = [
        line
        for line in lines
        if "ERROR" in line or "Failed" in line or line.startswith("REQUIRE() fails")
    ]
    if errors:
        at = lines.index(errors[0])
        return " | ".join(lines[at : at + 2])
    return " | ".join(lines[-3:]) or f"exit code {run.returncode}"


def reference_converter_outputs(
    model: Path,
    graph: Graph,
    inputs: Mapping[str, Array],
    push_by_op: Mapping[int, bytes] | None = None,
) -> dict[str, Array]:
    """Convert with the reference converter and run its VGF on the same stack.

    Its VGF names inputs and outputs by position and keeps HLSL as source, which the scenario
    runner cannot compile: the HLSL is compiled here with vgfc's glslang binding. Push-constant
    values are given per shader op index; the reference runs shader ops in program order, one
    compute segment each.
    """
    from vgfc.runner import run_vgf
    from vgfc.shader.glslang import Language, compile_shader
    from vgfc.vgf.decode import decode
    from vgfc.vgf.model import ModuleType

    exe = _program("model-converter", "ai-ml-sdk-model-converter")
    with tempfile.TemporaryDirectory(prefix="vgfc-refconv-") as tmp:
        vgf = Path(tmp) / "reference.vgf"
        run = subprocess.run(
            [exe, "--input", os.path.realpath(model), "--output", str(vgf)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if run.returncode != 0:
            last = (run.stdout + run.stderr).strip().splitlines()[-3:]
            raise UnsupportedError(f"the reference converter failed: {' | '.join(last)}")
        f = decode(vgf.read_bytes())
        compute = [i for i, s in enumerate(f.segments) if s.type is ModuleType.COMPUTE]
        shader_ops = sorted(op.index for op in graph.operators if op.is_shader)
        segment_of = dict(zip(shader_ops, compute, strict=False))
        pushes = {segment_of[op]: data for op, data in (push_by_op or {}).items()}
        shaders = {}
        for m in f.modules:
            if m.code == "HLSL" and m.source is not None:
                shaders[m.name] = compile_shader(m.source, Language.HLSL, m.entry_point)
        outputs = run_vgf(
            vgf,
            [inputs[n] for n in graph.inputs],
            pushes,
            shaders=shaders or None,
        )
    # Its outputs are named output_<i>, in the graph's output order.
    return dict(zip(graph.outputs, outputs.values(), strict=True))
