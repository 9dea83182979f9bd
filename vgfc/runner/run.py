"""Run a VGF file on the CPU emulation stack: :func:`run_vgf`, and :func:`run_checked` with write
coverage (a second pass confirms elements no segment wrote).

What the run is given is checked first (:mod:`vgfc.runner.inputs`); each pass of the scenario
runner over the file is :mod:`vgfc.runner.execute`'s.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vgfc.diagnostics import VgfcError
from vgfc.ir import Array
from vgfc.record import field, record, replace
from vgfc.runner.coverage import Unwritten, canary_array, unwritten, watch
from vgfc.runner.execute import Run, run_once
from vgfc.runner.inputs import (
    Inputs,
    check_dispatches,
    check_push_constants,
    check_shaders,
    match_inputs,
)
from vgfc.runner.stack import find_stack, resolve_device
from vgfc.vgf.decode import read_vgf
from vgfc.vgf.encode import encode_to
from vgfc.vgf.model import Model

__all__ = ["DEFAULT_TIMEOUT", "RunResult", "run_checked", "run_vgf"]

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
        pushes = check_push_constants(model, push_constants or {})
        substitutes = dict(shaders or {})
        check_shaders(model, substitutes)
    except VgfcError as e:
        raise e.at(file=str(path)) from None
    run = Run(timeout, validate, device, find_stack(), arrays, pushes, substitutes, coverage)
    if workdir is not None:
        # Absolute: the runner reads relative paths from the scenario file's own folder.
        folder = Path(os.path.realpath(workdir))
        folder.mkdir(parents=True, exist_ok=True)
        return _run(path, model, folder, run)
    with tempfile.TemporaryDirectory(prefix="vgfc-run-") as tmp:
        return _run(path, model, Path(os.path.realpath(tmp)), run)


def _run(vgf: Path, model: Model, folder: Path, run: Run) -> RunResult:
    where = str(vgf)
    deadline = time.monotonic() + run.timeout
    if not run.coverage:
        results = run_once(vgf, model, folder, run, where, None)
        return RunResult(results)
    exposed, watched = watch(model)
    source = vgf
    if exposed is not model:
        source = folder / "coverage.vgf"
        with source.open("wb") as out:
            encode_to(exposed, out)
    first = run_once(source, exposed, folder, run, where, _canaries(exposed, 0))
    found = unwritten(exposed, watched, first)
    if found:
        # Elements that hold the canary: confirmed only when they hold another one as well.
        left = max(deadline - time.monotonic(), 1.0)
        again = replace(run, timeout=left, validate=False)
        sub = folder / "confirm"
        sub.mkdir(exist_ok=True)
        second = run_once(source, exposed, sub, again, where, _canaries(exposed, 1))
        found = unwritten(exposed, watched, first, second)
    names = {o.name for o in model.outputs}
    between = {w.binding: first[w.name] for w in watched if not w.output and w.name in first}
    return RunResult({k: v for k, v in first.items() if k in names}, tuple(found), between)


def _canaries(model: Model, canary: int) -> dict[int, Array]:
    """What every output holds before a run: canary number ``canary`` (0 or 1)."""
    return {i: canary_array(model, o, canary) for i, o in enumerate(model.outputs)}
