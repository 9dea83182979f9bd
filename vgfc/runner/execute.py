"""One pass of the scenario runner over a VGF file (:func:`run_once`): the scenario written, the
runner as a process of its own (stopped at the timeout, with whatever it started), its failure
as one line from its log, its outputs read back. With validation, every message of the
validation layer about the file fails the pass, each attributed to its segment by running
prefixes of the file (:mod:`vgfc.runner.validation`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from vgfc.diagnostics import UnsupportedError, VgfcError
from vgfc.ir import Array
from vgfc.record import record, replace
from vgfc.runner.scenario import build_scenario, read_output
from vgfc.runner.stack import Stack
from vgfc.runner.validation import (
    Message,
    attribute,
    emulation_layer_own,
    read_messages,
    validation_error,
)
from vgfc.vgf.encode import encode_to
from vgfc.vgf.model import Model, ModuleType

__all__ = ["Run", "run_once"]

# "2026-01-01 10:00:00,000 [Scenario-Runner] ERROR: message"
_LOG_LINE = re.compile(r"\[Scenario-Runner\] (\w+): (.*)$")


@record
class Run:
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


def run_once(
    vgf: Path,
    model: Model,
    folder: Path,
    run: Run,
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
    scenario: dict[str, object], folder: Path, stack: Stack, run: Run, timeout: float, where: str
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
    run: Run,
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
    run: Run,
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
