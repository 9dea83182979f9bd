"""Run a VGF file on the CPU emulation stack: :func:`run_vgf`."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vgfc.diagnostics import InputError, UnsupportedError, VgfcError, did_you_mean
from vgfc.ir import Array
from vgfc.limits import LIMITS
from vgfc.record import field, record, replace
from vgfc.runner.coverage import Unwritten, canary_array, unwritten, watch
from vgfc.runner.formats import element_format
from vgfc.runner.scenario import build_scenario, read_output, runnable_without_substitution
from vgfc.runner.stack import Stack, find_stack, resolve_device
from vgfc.runner.validation import (
    Message,
    attribute,
    emulation_layer_own,
    read_messages,
    validation_error,
)
from vgfc.vgf.decode import read_vgf
from vgfc.vgf.encode import encode_to
from vgfc.vgf.model import Interface, Model, ModuleType

__all__ = ["DEFAULT_TIMEOUT", "Inputs", "RunResult", "check_dispatches", "match_inputs", "run_vgf"]

Inputs = Mapping[str, Array] | Sequence[Array]
"""Model inputs by name (or by index as a string), or a sequence in model order."""

DEFAULT_TIMEOUT = 600.0
"""Seconds a run may take before it is stopped."""


@record
class RunResult:
    """What :func:`run_vgf` with ``coverage`` found."""

    outputs: dict[str, Array]
    """The model's outputs by name."""
    unwritten: tuple[Unwritten, ...] = ()
    """Outputs and values between segments with elements no segment wrote."""
    between: dict[int, Array] = field(default_factory=dict)
    """What the run computed for each value passed between segments, by logical binding id."""


# "2026-01-01 10:00:00,000 [Scenario-Runner] ERROR: message"
_LOG_LINE = re.compile(r"\[Scenario-Runner\] (\w+): (.*)$")


def run_vgf(
    vgf_path: str | os.PathLike[str], inputs: Inputs, *args: Any, **how: Any
) -> dict[str, Array]:
    """Run ``vgf_path`` with the scenario runner on lavapipe and return its outputs
    (:func:`run_checked` without write coverage, and the same parameters:
    ``push_constants=None, workdir=None, *, shaders=None, timeout, validate=False,
    device="cpu"``).

    ``inputs`` go by the VGF's input names (or their index as a string) or, as a sequence, in
    model order; arrays are converted to the VGF's element types when no value changes.
    ``push_constants`` maps a compute segment's index to the raw bytes of its push-constant
    block (a model carries only the block's layout, never its values). ``shaders`` maps a
    module name to SPIR-V that replaces the module's own code, for modules the runner cannot
    compile (HLSL source, code-less placeholders). Files go to ``workdir`` when given (and stay
    there), otherwise to a temporary folder.

    Returns the outputs by the VGF's output names (``output_<i>`` for unnamed ones), with the
    element type and shape the VGF declares. Problems are :class:`VgfcError` s: the inputs or
    push constants do not fit, the stack is missing (saying what to install), or the runner
    failed (with its own message).

    ``validate`` runs the Khronos validation layer below the emulation layers: any message it
    reports fails the run with a :class:`~vgfc.runner.validation.ValidationError` that names the
    segment of each message (found by running prefixes of the file, see
    :mod:`vgfc.runner.validation`; their files go to ``workdir/segments``). ``device`` is
    ``cpu`` (lavapipe), ``gpu`` (the machine's Vulkan driver) or ``auto``.

    A compute segment whose dispatch goes past :data:`vgfc.limits.LIMITS`'s
    ``run_workgroups_max`` is refused before anything runs; a run that takes longer than
    ``timeout`` seconds is stopped (:class:`VgfcError`).
    """
    return run_checked(vgf_path, inputs, *args, coverage=False, **how).outputs


def run_checked(
    vgf_path: str | os.PathLike[str],
    inputs: Inputs,
    push_constants: Mapping[int, bytes] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    *,
    shaders: Mapping[str, bytes] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    validate: bool = False,
    device: str = "cpu",
    coverage: bool = True,
) -> RunResult:
    """:func:`run_vgf`, and with ``coverage`` the elements no segment wrote: every output and
    every value a segment passes to another starts as a canary (:mod:`vgfc.runner.coverage`),
    and what still holds it after the run is reported in :attr:`RunResult.unwritten`."""
    device = resolve_device(device)
    path = Path(vgf_path)
    model = read_vgf(path)
    try:
        check_dispatches(model)
        arrays = match_inputs(model, inputs)
        pushes = _check_push_constants(model, push_constants or {})
        substitutes = dict(shaders or {})
        _check_shaders(model, substitutes)
    except VgfcError as e:
        raise e.at(file=str(path)) from None
    run = _Run(timeout, validate, device, find_stack(), arrays, pushes, substitutes, coverage)
    if workdir is not None:
        # Absolute: the runner reads relative paths from the scenario file's own folder.
        folder = Path(os.path.realpath(workdir))
        folder.mkdir(parents=True, exist_ok=True)
        return _run(path, model, folder, run)
    with tempfile.TemporaryDirectory(prefix="vgfc-run-") as tmp:
        return _run(path, model, Path(os.path.realpath(tmp)), run)


def check_dispatches(model: Model) -> None:
    """Refuse a compute segment whose dispatch is more work than any model needs: a file whose
    counts were patched to 65535 x 65535 x 64 would keep lavapipe busy for days."""
    most = LIMITS.run_workgroups_max
    for index, segment in enumerate(model.segments):
        if segment.type is not ModuleType.COMPUTE:
            continue
        x, y, z = segment.dispatch
        if x * y * z > most:
            raise InputError(
                f"segment {index} '{segment.name}' dispatches {x} x {y} x {z} = {x * y * z} "
                f"workgroups, more than the {most} vgfc runs (docs/limits.md)"
            )


def match_inputs(model: Model, inputs: Inputs) -> list[Array]:
    """``inputs`` in model order, converted to the element types and shapes of the VGF."""
    expected = model.inputs
    if isinstance(inputs, Mapping):
        by_key: dict[str, int] = {iface.name: i for i, iface in enumerate(expected)}
        by_key.update({str(i): i for i in range(len(expected)) if str(i) not in by_key})
        chosen: dict[int, Array] = {}
        for key, array in inputs.items():
            index = by_key.get(key)
            if index is None:
                names = [i.name for i in expected]
                raise InputError(
                    f"the model has no input '{key}'{did_you_mean(key, names)} "
                    f"(its inputs: {', '.join(names) or 'none'})"
                )
            if index in chosen:
                raise InputError(f"input '{expected[index].name}' is given twice")
            chosen[index] = array
        ordered = [chosen.get(i) for i in range(len(expected))]
    else:
        # One array is one input, not a sequence of rows.
        ordered = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
        if len(ordered) > len(expected):
            raise InputError(f"{len(ordered)} inputs given, the model takes {len(expected)}")
        ordered += [None] * (len(expected) - len(ordered))
    missing = [i.name for i, a in zip(expected, ordered, strict=True) if a is None]
    if missing:
        raise InputError(f"missing input(s): {', '.join(missing)}")
    return [_convert(model, i, np.asarray(a)) for i, a in zip(expected, ordered, strict=True)]


def _convert(model: Model, iface: Interface, array: Array) -> Array:
    resource = model.resource_of(iface)
    element = element_format(resource.format)
    shape = resource.shape
    # Leading or inner unit dimensions may differ ([H, W, C] for [1, H, W, C]); sizes may not.
    if [d for d in array.shape if d != 1] != [d for d in shape if d != 1]:
        raise InputError(
            f"input '{iface.name}' has shape {list(array.shape)}, the model expects {list(shape)}"
        )
    if array.dtype != element.dtype:
        expects = f"input '{iface.name}' is {array.dtype}, the model expects {element.dtype} "
        if not np.can_cast(array.dtype, element.dtype, "same_kind"):
            raise InputError(expects + f"({element.name}): convert it first")
        converted = array.astype(element.dtype)
        # Narrower floats round (as a float32 model would); integers must survive exactly.
        if element.dtype.kind != "f" and not np.array_equal(converted.astype(array.dtype), array):
            raise InputError(expects + f"({element.name}) and some values do not fit")
        array = converted
    return array.reshape(shape)


def _check_push_constants(model: Model, pushes: Mapping[int, bytes]) -> dict[int, bytes]:
    checked: dict[int, bytes] = {}
    by_module: dict[str, bytes] = {}
    for index, data in pushes.items():
        if not 0 <= index < len(model.segments):
            raise InputError(
                f"push constants for segment {index}: the model has segments "
                f"0..{len(model.segments) - 1}"
            )
        segment = model.segments[index]
        where = f"push constants for segment {index} '{segment.name}'"
        if segment.type is not ModuleType.COMPUTE:
            raise InputError(f"{where}: it is a graph segment; only shaders take push constants")
        data = bytes(data)
        if not data or len(data) % 4:
            raise InputError(f"{where}: {len(data)} bytes; Vulkan needs a multiple of 4")
        if len(data) < segment.push_constant_size:
            raise InputError(
                f"{where}: {len(data)} bytes, the segment declares {segment.push_constant_size}"
            )
        # The runner addresses push data by module name: segments sharing a module share it.
        module = model.module_of(segment).name
        if by_module.setdefault(module, data) != data:
            raise UnsupportedError(
                f"{where}: module '{module}' runs in several segments, and the "
                "scenario runner pushes the same values to all of them"
            )
        checked[index] = data
    for index, segment in enumerate(model.segments):
        if segment.push_constant_size and index not in checked:
            raise InputError(
                f"segment {index} '{segment.name}' declares "
                f"{segment.push_constant_size} bytes of push constants; give their values "
                "(Vulkan leaves push constants undefined until they are pushed)"
            )
    return checked


def _check_shaders(model: Model, shaders: Mapping[str, bytes]) -> None:
    modules = {model.module_of(s).name for s in model.segments if s.type is ModuleType.COMPUTE}
    for name, code in shaders.items():
        if name not in modules:
            raise InputError(
                f"no compute module '{name}' to replace{did_you_mean(name, modules)} "
                f"(compute modules: {', '.join(sorted(modules)) or 'none'})"
            )
        if len(code) < 20 or len(code) % 4 or code[:4] != b"\x03\x02\x23\x07":
            raise InputError(f"the SPIR-V given for module '{name}' is not a SPIR-V binary")
    for index, segment in enumerate(model.segments):
        reason = runnable_without_substitution(model, index)
        if reason is not None and model.module_of(segment).name not in shaders:
            raise UnsupportedError(reason)


@record
class _Run:
    """One run: how it runs, on which stack, with what."""

    timeout: float
    validate: bool
    device: str
    """``cpu`` or ``gpu``."""
    stack: Stack
    arrays: list[Array]
    """The inputs, in model order."""
    pushes: dict[int, bytes]
    """Push-constant values by segment."""
    shaders: dict[str, bytes]
    """SPIR-V that replaces a compute module's code, by module name."""
    coverage: bool = False


def _run(vgf: Path, model: Model, folder: Path, run: _Run) -> RunResult:
    where = str(vgf)
    deadline = time.monotonic() + run.timeout
    if not run.coverage:
        results = _run_once(vgf, model, folder, run, where, None)
        return RunResult(results)
    exposed, watched = watch(model)
    source = vgf
    if exposed is not model:
        source = folder / "coverage.vgf"
        with source.open("wb") as out:
            encode_to(exposed, out)
    first = _run_once(source, exposed, folder, run, where, _canaries(exposed, 0))
    found = unwritten(exposed, watched, first)
    if found:
        # Elements that hold the canary: confirmed only when they hold another one as well.
        left = max(deadline - time.monotonic(), 1.0)
        again = replace(run, timeout=left, validate=False)
        sub = folder / "confirm"
        sub.mkdir(exist_ok=True)
        second = _run_once(source, exposed, sub, again, where, _canaries(exposed, 1))
        found = unwritten(exposed, watched, first, second)
    names = {o.name for o in model.outputs}
    between = {w.binding: first[w.name] for w in watched if not w.output and w.name in first}
    return RunResult({k: v for k, v in first.items() if k in names}, tuple(found), between)


def _canaries(model: Model, canary: int) -> dict[int, Array]:
    """What every output holds before a run: canary number ``canary`` (0 or 1)."""
    return {i: canary_array(model, o, canary) for i, o in enumerate(model.outputs)}


def _run_once(
    vgf: Path,
    model: Model,
    folder: Path,
    run: _Run,
    where: str,
    initial: Mapping[int, Array] | None,
) -> dict[str, Array]:
    scenario, outputs = build_scenario(
        vgf, model, run.arrays, run.pushes, run.shaders, folder, initial
    )
    done, log = _execute(scenario, folder, run.stack, run, run.timeout, where)
    if run.validate:
        _check_validation(model, log, scenario, folder, run.stack, run, where, done.returncode)
    if done.returncode != 0:
        raise VgfcError(_failure(done.returncode, done.stdout + done.stderr), file=where)
    results = {}
    for output in outputs:
        if not output.path.is_file():
            raise VgfcError(
                f"the scenario runner wrote nothing for output '{output.name}'",
                file=where,
            )
        results[output.name] = read_output(output)
    return results


def _execute(
    scenario: dict[str, object], folder: Path, stack: Stack, run: _Run, timeout: float, where: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run ``scenario`` from ``folder``; the runner's result and the validation log's path."""
    scenario_path = folder / "scenario.json"
    scenario_path.write_text(json.dumps(scenario, indent=2), encoding="utf-8")
    log = folder / "validation.log"
    log.unlink(missing_ok=True)
    env = stack.environment(
        folder / "layers", validation_log=log if run.validate else None, device=run.device
    )
    command = [
        str(stack.scenario_runner),
        "--scenario",
        str(scenario_path),
        "--output",
        str(folder),
    ]
    try:
        # A session of its own, so that a run stopped at the timeout leaves no process behind.
        process = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as e:
        raise UnsupportedError(f"cannot start the scenario runner: {e.strerror}") from None
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(process)
        raise VgfcError(
            f"the scenario runner did not finish in {timeout:g} s (--timeout)", file=where
        ) from None
    except BaseException:  # Ctrl-C: the runner goes too
        _stop(process)
        raise
    done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    return done, log


def _stop(process: subprocess.Popen[str]) -> None:
    """Kill the runner and whatever it started, and reap it."""
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.communicate(timeout=10)


def _file_messages(log: Path, push_constants: bool) -> list[Message]:
    """The layer's messages about the file: without those about the emulation layer's own
    pipelines that can be told apart without knowing their segment."""
    return [m for m in read_messages(log) if not emulation_layer_own(m, push_constants)]


def _check_validation(
    model: Model,
    log: Path,
    scenario: dict[str, object],
    folder: Path,
    stack: Stack,
    run: _Run,
    where: str,
    returncode: int,
) -> None:
    """Fail on any message of the validation layer about the file, each with its segment;
    messages about the emulation layer's own pipelines are set aside. ``returncode`` is the
    full run's: a prefix run that ends the same way ran as far as it would have."""
    push_constants = any(s.push_constant_ranges for s in model.segments)
    messages = _file_messages(log, push_constants)
    if not messages:
        return
    deadline = time.monotonic() + run.timeout

    def prefix_signatures(k: int) -> tuple[list[str], bool] | None:
        return _prefix_signatures(model, k, scenario, folder, stack, run, deadline, returncode)

    segments = attribute(messages, len(model.segments), prefix_signatures)
    if push_constants:
        # Now that the segment is known: in a graph segment, every pipeline is the layer's.
        kept = [
            (m, s)
            for m, s in zip(messages, segments, strict=True)
            if not (
                s is not None
                and s >= 0
                and model.segments[s].type is ModuleType.GRAPH
                and emulation_layer_own(m, file_has_push_constants=False)
            )
        ]
        messages, segments = [m for m, _ in kept], [s for _, s in kept]
        if not messages:
            return
    raise validation_error(model, messages, segments).at(file=where)


def _prefix_signatures(
    model: Model,
    k: int,
    scenario: dict[str, object],
    folder: Path,
    stack: Stack,
    run: _Run,
    deadline: float,
    full_returncode: int,
) -> tuple[list[str], bool] | None:
    """The message signatures of the file cut after its first ``k`` segments, run with the same
    scenario (outputs written under ``folder/segments/prefix_<k>``), and whether that run went
    as far as it would (it exited 0, or as the full run did: a file whose broken segment crashes
    the runner after the layer has spoken crashes every prefix that holds it); ``None`` when it
    cannot be made or run."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return None
    sub = folder / "segments" / f"prefix_{k}"
    sub.mkdir(parents=True, exist_ok=True)
    path = sub / "model.vgf"
    try:
        with path.open("wb") as out:
            encode_to(replace(model, segments=model.segments[:k]), out)
    except Exception:  # a file vgfc cannot write back: the segment stays unknown, no new error
        return None
    prefix = json.loads(json.dumps(scenario))
    for entry in prefix["resources"]:
        for kind, resource in entry.items():
            if kind == "graph":
                resource["src"] = str(path)
            elif "dst" in resource:
                resource["dst"] = str(sub / Path(resource["dst"]).name)
    try:
        done, log = _execute(prefix, sub, stack, run, remaining, str(path))
    except VgfcError:
        return None
    push_constants = any(s.push_constant_ranges for s in model.segments)
    complete = done.returncode in (0, full_returncode)
    return [m.signature for m in _file_messages(log, push_constants)], complete


def _failure(returncode: int, log: str) -> str:
    """One line from the runner's log: its ERROR messages (with the lines that continue them,
    such as a shader compiler's log), else its last lines."""
    errors: list[str] = []
    in_error = False
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines:
        match = _LOG_LINE.search(line)
        if match is not None:
            in_error = match.group(1) == "ERROR"
            if in_error:
                errors.append(match.group(2).strip())
        elif in_error:
            errors[-1] += " " + line
    detail = "; ".join(errors) or " | ".join(lines[-3:]) or "no output"
    status = f"signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
    return f"the scenario runner failed ({status}): {detail}"
