"""Run the TOSA conformance tests of ``tests/data/conformance`` through a compiler and the CPU
emulation stack, and judge the results by each test's own compliance rule.

For one test and one compiler (``reference``: model-converter, the reference converter; ``vgfc``:
:func:`vgfc.compiler.compile_model`) the harness

1. compiles ``test.tosa`` to a VGF file,
2. runs it with :func:`vgfc.runner.run_vgf` (lavapipe, the ML emulation layers, the scenario
   runner) on the test's input files (bf16 travels as its bits; an integer tensor a compiler
   declares unsigned, as the reference converter does for RESCALE's unsigned operands, gets the
   same bits: TOSA integers are signless),
3. checks every output with ``tosa_verify``, the compliance checker of tosa-tools (the one its own
   conformance runner ``tosa_verif_run_tests`` uses). It implements every rule a ``desc.json`` can
   name (EXACT, ULP, ABS_ERROR, DOT_PRODUCT, REDUCE_PRODUCT, MAX_RELATIVE, PRECOMPUTED,
   FP_SPECIAL, RESCALE_INEXACT) against the reference model's precise FP64 results and, where the
   rule needs them, its bounds files; those were stored by ``scripts/make_conformance.py``.

A result is ``pass`` (every output complies), ``fail`` (the VGF ran, an output does not comply or
has the wrong type or shape) or ``error`` (compiling or running failed; the message says why).
Nothing here raises for a broken compiler: a crash inside vgfc becomes an ``error`` result too.

It is named ``conformance_harness`` so that, with ``tests/support/`` on ``sys.path``, it does not
hide tosa-tools' top-level ``conformance`` package.

Command line (prints one line per test and a summary)::

    python tests/support/conformance_harness.py [--compiler reference|vgfc] [--op ADD ...]
        [--jobs N]
    python tests/support/conformance_harness.py --record     # rewrite reference_results.json
    python tests/support/conformance_harness.py --root tests/data/conformance_int4  # another corpus
"""

from __future__ import annotations

import argparse
import enum
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from reference_tools import run_reference

if TYPE_CHECKING:
    from vgfc.vgf.model import Interface, Model

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance"
MANIFEST = DATA / "manifest.json"
REFERENCE_RESULTS = DATA / "reference_results.json"
"""The reference converter's result on every test, as last recorded (``--record``)."""

Array = npt.NDArray[Any]
COMPILERS = ("reference", "vgfc")
RUN_TIMEOUT = 120.0
"""Seconds one VGF may run (the largest test takes about a second)."""

# numpy type an implementation's result must have, per TOSA type of desc.json. The scenario
# runner moves raw bytes: bf16 comes back as its bits (uint16), int48 in 64-bit elements.
_RESULT_DTYPES = {
    "BOOL": np.dtype("bool"),
    "INT4": np.dtype("int8"),  # one sign-extended value per byte, as tosa-tools stores it
    "INT8": np.dtype("int8"),
    "INT16": np.dtype("int16"),
    "INT32": np.dtype("int32"),
    "INT48": np.dtype("int64"),
    "SHAPE": np.dtype("int64"),
    "FP16": np.dtype("float16"),
    "FP32": np.dtype("float32"),
    "BF16": np.dtype("uint16"),
    "FP8E4M3": np.dtype("uint8"),
    "FP8E5M2": np.dtype("uint8"),
}
# How tosa_verify wants the bits of a type numpy has no name for: bf16 and fp8e4m3 as voids with
# a little-endian header numpy never writes for them (it writes '|V2'); fp8e5m2 as plain uint8.
_VOID_DESCR = {
    "BF16": (b"'descr': '<u2'", b"'descr': '<V2'"),
    "FP8E4M3": (b"'descr': '|u1'", b"'descr': '<V1'"),
}


# --- Tests ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Output:
    """One result tensor of a test and what it is checked against."""

    name: str
    data_type: str
    shape: tuple[int, ...]
    mode: str
    expected: Path
    bounds: Path | None


@dataclass(frozen=True)
class ConformanceTest:
    """One test of the manifest."""

    name: str
    op: str
    combination: str
    folder: Path
    model: Path
    desc: Path
    inputs: tuple[tuple[str, Path], ...]
    outputs: tuple[Output, ...]

    @property
    def compliance(self) -> tuple[str, ...]:
        return tuple(sorted({o.mode for o in self.outputs}))


def load_manifest(root: Path = DATA) -> dict[str, Any]:
    """``root/manifest.json`` as written by ``scripts/make_conformance.py``."""
    manifest: dict[str, Any] = json.loads((root / "manifest.json").read_text())
    return manifest


def load_tests(root: Path = DATA) -> list[ConformanceTest]:
    """Every test of ``root/manifest.json``, in manifest order."""
    tests = []
    for entry in load_manifest(root)["tests"]:
        outputs = tuple(
            Output(
                name=o["name"],
                data_type=o["data_type"],
                shape=tuple(o["shape"]),
                mode=o["mode"],
                expected=root / o["expected"],
                bounds=root / o["bounds"] if o["bounds"] else None,
            )
            for o in entry["outputs"]
        )
        tests.append(
            ConformanceTest(
                name=entry["name"],
                op=entry["op"],
                combination=entry["combination"],
                folder=root / entry["name"],
                model=root / entry["model"],
                desc=root / entry["desc"],
                inputs=tuple((i["name"], root / i["file"]) for i in entry["inputs"]),
                outputs=outputs,
            )
        )
    return tests


# --- Tools ------------------------------------------------------------------------------------


def _beside_python(name: str) -> Path | None:
    """A console script of this environment, else one on PATH."""
    exe = Path(sys.executable).parent / name
    if exe.is_file():
        return exe
    found = shutil.which(name)
    return Path(found) if found else None


@functools.cache
def model_converter() -> Path:
    """The reference converter (PyPI ``ai-ml-sdk-model-converter``)."""
    exe = _beside_python("model-converter")
    if exe is None:
        raise FileNotFoundError("model-converter is missing: pip install -e '.[test]'")
    return exe


def tools_missing() -> str | None:
    """Why the harness cannot run here (the CPU run stack, the reference converter or
    tosa_verify is missing, with how to install it), or ``None``."""
    from vgfc.diagnostics import UnsupportedError
    from vgfc.runner import find_stack

    try:
        find_stack()
        model_converter()
        tosa_verify()
    except (UnsupportedError, FileNotFoundError) as e:
        return str(e)
    return None


@functools.cache
def tosa_verify() -> Path:
    """tosa-tools' compliance checker: the native program in the distribution's ``bin/`` (the
    console script of the same name is a Python shim that starts it, 30 times slower)."""
    # Not through tosa-tools' ``conformance.model_files``: this file, on sys.path as
    # ``conformance``, hides that package (see the module docstring).
    try:
        native = Path(str(metadata.distribution("tosa-tools").locate_file("bin/tosa_verify")))
    except metadata.PackageNotFoundError:
        native = None
    exe = native if native is not None and native.is_file() else _beside_python("tosa_verify")
    if exe is None:
        raise FileNotFoundError("tosa_verify is missing: pip install tosa-tools")
    return exe


def tool_versions() -> dict[str, str]:
    """Versions of what decides a reference result (recorded next to the results)."""
    names = (
        "ai-ml-sdk-model-converter",
        "ai-ml-sdk-scenario-runner",
        "ai-ml-emulation-layer-for-vulkan",
        "tosa-tools",
    )
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "missing"
    return versions


# --- Compilers --------------------------------------------------------------------------------


class CompileError(Exception):
    """A compiler refused or crashed; the message says how."""


def compile_reference(test: ConformanceTest, out: Path) -> Path:
    """``model-converter --input test.tosa --output out``; its last lines when it fails (run
    once per test run: see :func:`reference_tools.run_reference`)."""
    model_converter()  # missing: FileNotFoundError, as before
    code, output = run_reference(test.model, out)
    if code != 0 or not out.is_file():
        lines = [line.strip() for line in output.splitlines()]
        detail = " | ".join(line for line in lines if line)[-600:] or "no output"
        raise CompileError(f"model-converter exit code {code}: {detail}")
    return out


# vgfc's compiler was not written with threads in mind; compiles are milliseconds, so one at a
# time costs nothing measurable while the runs (seconds, in subprocesses) overlap.
_VGFC_LOCK = threading.Lock()


def compile_vgfc(test: ConformanceTest, out: Path) -> Path:
    """:func:`vgfc.compiler.compile_model`, in this process; the VGF bytes go to ``out``."""
    try:
        from vgfc.compiler import compile_model
        from vgfc.diagnostics import VgfcError
    except ImportError as e:  # the compiler is still being written: an error, not a crash
        raise CompileError(f"cannot import vgfc's compiler: {e}") from None
    with _VGFC_LOCK:
        try:
            vgf = compile_model(test.model).vgf
        except VgfcError as e:
            # The operator and tensor it names, without the model's path.
            raise CompileError(f"vgfc: {e.render().removeprefix(f'{test.model}: ')}") from None
        except Exception as e:
            # A crash is still a result: say where it happened, the way a bug report would.
            frame = traceback.extract_tb(e.__traceback__)[-1]
            where = f"{Path(frame.filename).name}:{frame.lineno}"
            raise CompileError(f"vgfc crashed: {type(e).__name__}: {e} (at {where})") from None
    out.write_bytes(vgf)
    return out


COMPILE: dict[str, Callable[[ConformanceTest, Path], Path]] = {
    "reference": compile_reference,
    "vgfc": compile_vgfc,
}


# --- Running and checking ---------------------------------------------------------------------


class Status(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"


@dataclass
class Result:
    """What happened to one test with one compiler."""

    test: str
    op: str
    compiler: str
    status: Status
    stage: str
    """Where it stopped: ``compile``, ``run``, ``check`` or ``done``."""
    message: str = ""
    compile_seconds: float = 0.0
    run_seconds: float = 0.0
    outputs: dict[str, str] = field(default_factory=dict)
    """Per output: ``ok`` or why it does not comply."""

    @property
    def passed(self) -> bool:
        return self.status is Status.PASS

    def summary(self) -> str:
        return self.status.value + (f" ({self.stage}): {self.message}" if self.message else "")


def read_inputs(test: ConformanceTest) -> list[tuple[str, Array]]:
    """The test's input arrays; bf16 and fp8e4m3 (stored by tosa-tools as 2- and 1-byte voids)
    as their raw bits."""
    arrays = []
    for name, path in test.inputs:
        array = np.load(path)
        if array.dtype.kind == "V" and array.dtype.itemsize in (1, 2):
            array = array.view(np.uint16 if array.dtype.itemsize == 2 else np.uint8)
        arrays.append((name, array))
    return arrays


def _dtype(model: Model, iface: Interface) -> np.dtype[Any]:
    """The numpy element type of a model input, from its resource's format."""
    from vgfc.runner.formats import element_format

    return element_format(model.resource_of(iface).format).dtype


def run_model(vgf: Path, test: ConformanceTest, workdir: Path) -> dict[str, Array]:
    """Run ``vgf`` on the test's inputs; returns the outputs by the test's output names.

    Inputs go by name when the VGF keeps the graph's tensor names, else in graph order; outputs
    likewise.
    """
    from vgfc.runner import read_vgf, run_vgf

    model = read_vgf(vgf)
    arrays = read_inputs(test)
    by_name = {i.name: i for i in model.inputs}
    given: Mapping[str, Array] | list[Array]
    if arrays and all(n in by_name for n, _ in arrays):
        given = {n: _same_bits(a, _dtype(model, by_name[n])) for n, a in arrays}
    else:
        given = [
            _same_bits(a, _dtype(model, i)) for (_, a), i in zip(arrays, model.inputs, strict=False)
        ]
    got = run_vgf(vgf, given, workdir=workdir, timeout=RUN_TIMEOUT)
    wanted = [o.name for o in test.outputs]
    if all(n in got for n in wanted):
        return {n: got[n] for n in wanted}
    if len(got) != len(wanted):
        raise RuntimeError(f"the VGF has {len(got)} outputs, the test {len(wanted)}")
    return dict(zip(wanted, got.values(), strict=True))


def _same_bits(array: Array, dtype: np.dtype[Any]) -> Array:
    """``array`` seen as ``dtype`` when the two differ in signedness only.

    TOSA integers are signless: RESCALE's ``input_unsigned`` / ``output_unsigned`` read the same
    bits as unsigned, and a compiler may declare such a tensor with an unsigned format (the
    reference converter does: R8_UINT, R16_UINT). The bits are what count, so they are handed
    over and read back unchanged; any other type difference is left for the checks to report.
    """
    if (
        array.dtype != dtype
        and array.dtype.kind in "iu"
        and dtype.kind in "iu"
        and array.dtype.itemsize == dtype.itemsize
    ):
        return array.view(dtype)
    return array


def _as_result(output: Output, array: Array) -> Array | str:
    """``array`` as the file tosa_verify reads for ``output``, or why it cannot be."""
    want = _RESULT_DTYPES.get(output.data_type)
    if want is None:
        return f"no check for {output.data_type} results"
    if output.data_type.startswith("FP8") and array.dtype.itemsize == 1:
        array = array.view(np.uint8)  # an fp8 array of ml_dtypes, or raw bytes: the bits count
    array = _same_bits(array, want)
    if array.dtype != want:
        return f"{output.name} is {array.dtype}, the test expects {output.data_type} ({want})"
    if array.shape != output.shape:
        # A VGF cannot always say the same shape (a rank-0 tensor becomes [1]); sizes and
        # non-unit dimensions must still agree.
        same = [d for d in array.shape if d != 1] == [d for d in output.shape if d != 1]
        if not same:
            return f"{output.name} has shape {list(array.shape)}, the test {list(output.shape)}"
        array = array.reshape(output.shape)
    return array.copy(order="C")  # np.ascontiguousarray would make rank 0 into [1]


def _save(path: Path, array: Array, data_type: str) -> None:
    """Write ``array`` as tosa_verify reads it.

    bf16 and fp8e4m3 are special cases: tosa-tools stores them as voids, and tosa_verify accepts
    only a header numpy does not write for them (``'<V2'``, ``'<V1'``). The file is written as
    unsigned integers and its type string swapped: both strings have the same length. fp8e5m2
    it reads as uint8.
    """
    swap = _VOID_DESCR.get(data_type)
    if swap is None:
        np.save(path, array)
        return
    buffer = io.BytesIO()
    np.save(buffer, array.astype(_RESULT_DTYPES[data_type].newbyteorder("<"), copy=False))
    data = buffer.getvalue()
    end = data.index(b"\n") + 1  # the header ends with the first newline
    header = data[:end].replace(*swap, 1)
    assert len(header) == end and header != data[:end], "unexpected .npy header"
    path.write_bytes(header + data[end:])


_VERIFIER_LINE = re.compile(r"^\[Verifier\]")


def check_output(test: ConformanceTest, output: Output, array: Array, workdir: Path) -> str:
    """``ok``, or why ``array`` does not comply with ``output``'s rule (tosa_verify's words)."""
    result = _as_result(output, array)
    if isinstance(result, str):
        return result
    imp = workdir / f"imp-{output.name}.npy"
    _save(imp, result, output.data_type)
    cmd = [str(tosa_verify()), "--test_desc", str(test.desc), "--ofm_name", output.name]
    cmd += ["--imp_result_file", str(imp), "--ref_result_file", str(output.expected)]
    if output.bounds is not None:
        cmd += ["--bnd_result_file", str(output.bounds)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode == 0:
        return "ok"
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines()]
    reasons = [line for line in lines if _VERIFIER_LINE.match(line)]
    detail = "; ".join(reasons[:3]) or " | ".join(line for line in lines if line)[-400:]
    verdict = "non-compliant" if done.returncode == 2 else f"tosa_verify error {done.returncode}"
    return f"{output.name} {output.mode} {verdict}: {detail}"


def _clean(message: str, workdir: Path) -> str:
    """Messages without this machine's temporary paths, so that they can be recorded."""
    return message.replace(str(workdir), "<work>").replace(str(DATA), "<data>")


def run_test(test: ConformanceTest, compiler: str, workdir: Path) -> Result:
    """Compile, run and check ``test`` with ``compiler``; files go to ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    result = Result(test.name, test.op, compiler, Status.ERROR, "compile")
    start = time.perf_counter()
    try:
        vgf = COMPILE[compiler](test, workdir / f"{compiler}.vgf")
    except (CompileError, OSError, subprocess.SubprocessError) as e:
        result.message = _clean(str(e), workdir)
        return result
    finally:
        result.compile_seconds = time.perf_counter() - start
    result.stage = "run"
    start = time.perf_counter()
    try:
        outputs = run_model(vgf, test, workdir / "run")
    except Exception as e:
        # VgfcError from the runner (with the scenario runner's own message), or a crash.
        text = getattr(e, "message", None) or f"{type(e).__name__}: {e}"
        result.message = _clean(text, workdir)
        return result
    finally:
        result.run_seconds = time.perf_counter() - start
    result.stage = "check"
    for output in test.outputs:
        result.outputs[output.name] = _clean(
            check_output(test, output, outputs[output.name], workdir), workdir
        )
    bad = [v for v in result.outputs.values() if v != "ok"]
    result.stage = "done"
    result.status = Status.FAIL if bad else Status.PASS
    result.message = "; ".join(bad)
    return result


def run_all(
    tests: Sequence[ConformanceTest],
    compilers: Iterable[str] = COMPILERS,
    jobs: int | None = None,
    workdir: Path | None = None,
    progress: Callable[[Result], None] | None = None,
) -> dict[tuple[str, str], Result]:
    """Every test with every compiler, ``jobs`` at a time; by (test name, compiler)."""
    pairs = [(t, c) for t in tests for c in compilers]
    # The work is subprocesses (converter, scenario runner, tosa_verify): threads overlap it.
    jobs = jobs or max(2, os.cpu_count() or 1)
    with tempfile.TemporaryDirectory(prefix="vgfc-conformance-") as tmp:
        root = workdir or Path(tmp)

        def one(pair: tuple[ConformanceTest, str]) -> Result:
            test, compiler = pair
            folder = root / test.name / compiler
            result = run_test(test, compiler, folder)
            if workdir is None:
                shutil.rmtree(folder, ignore_errors=True)
            if progress is not None:
                progress(result)
            return result

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(one, pairs))
    return {(r.test, r.compiler): r for r in results}


# --- Recorded reference results ---------------------------------------------------------------


def load_reference_results(path: Path = REFERENCE_RESULTS) -> dict[str, str]:
    """Recorded reference results: status (``pass``, ``fail``, ``error``) by test name."""
    if not path.is_file():
        return {}
    recorded: dict[str, str] = json.loads(path.read_text())["results"]
    return recorded


def _flat(mapping: Mapping[str, str]) -> str:
    """A flat JSON object with one entry per line (a readable diff when results change)."""
    entries = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in mapping.items()]
    return "{\n" + ",\n".join(entries) + "\n  }" if entries else "{}"


def record_reference_results(
    results: Mapping[tuple[str, str], Result],
    path: Path = REFERENCE_RESULTS,
    recorded_by: str = "python tests/support/conformance_harness.py --record",
) -> None:
    """Write the reference converter's results, with the messages of those not passing."""
    mine = {name: r for (name, compiler), r in sorted(results.items()) if compiler == "reference"}
    text = (
        "{\n"
        f'  "recorded_by": {json.dumps(recorded_by)},\n'
        f'  "tools": {json.dumps(tool_versions())},\n'
        f'  "messages": {_flat({n: r.message[:300] for n, r in mine.items() if not r.passed})},\n'
        f'  "results": {_flat({n: r.status.value for n, r in mine.items()})}\n'
        "}\n"
    )
    json.loads(text)  # the hand-made layout must still be JSON
    path.write_text(text)


# --- Command line -----------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: run, print, and with ``--record`` rewrite the reference results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compiler", choices=COMPILERS, action="append", help="default: both")
    parser.add_argument("--op", action="append", help="only these operators (e.g. ADD)")
    parser.add_argument("--test", action="append", help="only these tests (by name)")
    parser.add_argument("--jobs", type=int, help="tests run at the same time")
    parser.add_argument("--keep", type=Path, help="keep VGFs and run files in this folder")
    parser.add_argument("--record", action="store_true", help="rewrite reference_results.json")
    parser.add_argument("--root", type=Path, default=DATA, help="another corpus's folder")
    args = parser.parse_args(argv)
    compilers = tuple(args.compiler or COMPILERS)
    if args.record and "reference" not in compilers:
        parser.error("--record needs the reference compiler")
    tests = [
        t
        for t in load_tests(args.root)
        if (not args.op or t.op in {o.upper() for o in args.op})
        and (not args.test or t.name in args.test)
    ]
    lock = threading.Lock()

    def show(result: Result) -> None:
        with lock:
            print(f"{result.compiler:<9} {result.test:<70} {result.summary()[:200]}", flush=True)

    start = time.perf_counter()
    results = run_all(tests, compilers, args.jobs, args.keep, show)
    elapsed = time.perf_counter() - start
    for compiler in compilers:
        mine = [r for r in results.values() if r.compiler == compiler]
        counts = {s.value: sum(r.status is s for r in mine) for s in Status}
        print(f"{compiler}: {counts} of {len(mine)}")
    print(f"{len(results)} runs in {elapsed:.1f} s")
    if args.record:
        if args.op or args.test or args.root != DATA:
            parser.error("--record needs every test of the main corpus (no --op / --test / --root)")
        record_reference_results(results)
        print(f"wrote {REFERENCE_RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
