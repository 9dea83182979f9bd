"""``vgfc run``: run a VGF file on the CPU and print or save its outputs.

Registered on the main group with ``cli.add_command(run)``.
"""

from __future__ import annotations

import io
import json
import math
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from vgfc.cli.options import InputPath, declare, inputs_option, run_options
from vgfc.diagnostics import InputError
from vgfc.files.outputs import write_atomically
from vgfc.ir import Array
from vgfc.runner.run import DEFAULT_TIMEOUT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.compilation import Options

__all__ = [
    "PUSH_CONSTANTS_HELP",
    "load_array",
    "parse_pairs",
    "push_target",
    "read_push_data",
    "run",
    "timeout_option",
]

PUSH_CONSTANTS_HELP = (
    "Push-constant values of a shader (repeatable): TARGET=FILE, the values as raw bytes or a "
    ".npy array's bytes. TARGET is the custom op's operator_name (the compute module's name "
    "in the VGF), segment:N (the VGF's segment N) or op:N (the model's op #N; verify only)."
)


def push_target(key: str, *, numbers: str) -> tuple[str, str]:
    """(``segment``/``op``/``name``, value) of a ``--push-constants`` target. ``numbers`` is what
    a bare number means (``segment`` for run) or ``""`` where it would be ambiguous."""
    kind, sep, value = key.partition(":")
    if sep and kind in ("segment", "op"):
        if not value.isdigit():
            raise click.BadParameter(
                f"'{key}': {kind}: takes an index", param_hint="--push-constants"
            )
        return kind, value
    if key.isdigit():
        if not numbers:
            raise click.BadParameter(
                f"'{key}' is ambiguous: write op:{key} (op #{key} of the model) or "
                f"segment:{key} (segment {key} of the VGF)",
                param_hint="--push-constants",
            )
        return numbers, key
    return "name", key


def _check_timeout(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if not math.isfinite(value) or value <= 0:
        raise click.BadParameter(f"{value} is not a number of seconds above 0")
    return value


def timeout_option(func: Any) -> Any:
    """``--timeout SECONDS``: how long the scenario runner may run before it is stopped."""
    return click.option(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        show_default=True,
        callback=_check_timeout,
        metavar="SECONDS",
        help="Stop a run that takes longer (each run of the file; an error, exit code 1).",
    )(func)


def parse_pairs(values: tuple[str, ...], option: str, metavar: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, path = value.partition("=")
        if not sep or not key or not path:
            raise click.BadParameter(f"'{value}' is not {metavar}", param_hint=option)
        pairs.append((key, path))
    return pairs


def load_array(path: str, what: str) -> Array:
    """A ``.npy`` file as an array, opened as every input is (:func:`vgfc.files.inputs.open_input`:
    a regular file; a FIFO or a device is refused, not waited on)."""
    import io

    from vgfc.files.inputs import open_input

    try:
        with open_input(path, what=what) as f:
            if f.header(6) != b"\x93NUMPY":
                raise InputError(f"{what} '{path}' is not a .npy file")
            data = f.map()
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, EOFError) as e:
        raise InputError(f"cannot read {what} '{path}': {e}") from None
    except ValueError as e:
        raise InputError(f"cannot read {what} '{path}': {e}") from None
    if not isinstance(array, np.ndarray):
        raise InputError(f"{what} '{path}' is not a single .npy array")
    return array


def read_push_data(path: str) -> bytes:
    """A .npy file gives its array's bytes; any other file is taken as raw bytes."""
    if path.endswith(".npy"):
        return np.ascontiguousarray(load_array(path, "push-constant file")).tobytes()
    from vgfc.files.inputs import read_input

    return read_input(path, what="push-constant file")


@click.command("run")
@click.argument("vgf", type=InputPath())
@inputs_option(
    "[NAME=]FILE.npy",
    "A model input (repeatable): NAME=FILE by the input's name as `vgfc inspect` lists it "
    "(vgfc names inputs after the model's tensors, the reference converter input_<i>) or its "
    "index; FILE alone for inputs in model order.",
)
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each output to DIR/NAME.npy.",
)
@click.option(
    "--push-constants",
    "push_constants",
    multiple=True,
    metavar="TARGET=FILE",
    help=PUSH_CONSTANTS_HELP + " A bare N is segment:N.",
)
@click.option(
    "--shader",
    "shaders",
    multiple=True,
    metavar="MODULE=FILE.spv",
    help="SPIR-V that replaces a compute module's code, e.g. one holding HLSL (repeatable).",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the scenario and its files in this folder.",
)
@run_options
@timeout_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary of the outputs.")
@declare("run")
def run(
    vgf: Path,
    inputs: tuple[str, ...],
    output_dir: Path | None,
    push_constants: tuple[str, ...],
    shaders: tuple[str, ...],
    workdir: Path | None,
    validate: bool,
    device: str,
    timeout: float,
    as_json: bool,
    options: Options,
) -> None:
    """Run VGF on the CPU (lavapipe, Arm's ML emulation layers, the scenario runner).

    \b
    vgfc run model.vgf -i x.npy -o out/              inputs in model order
    vgfc run model.vgf -i x=x.npy --json             inputs by name (as vgfc inspect lists them)
    vgfc run model.vgf -i x.npy --push-constants blur=pc.bin

    Every output and every value passed between segments starts as a canary: elements no
    segment wrote are reported as warnings (how many, the first, the segment that should have
    written them); -Werror=unwritten-output fails the run instead (exit 1, no output written),
    -Wno-unwritten-output silences them. Dispatches of more than 4194304 workgroups are
    refused (docs/limits.md).

    Needs pip install 'vgfc[run]' and apt-get install mesa-vulkan-drivers libvulkan1.
    """
    from vgfc.diagnostics import Diagnostic, Location, Severity
    from vgfc.runner import run_checked
    from vgfc.runner.scenario import safe_name
    from vgfc.runner.stack import resolve_device
    from vgfc.vgf.decode import read_vgf

    named: dict[str, Array] = {}
    positional: list[Array] = []
    for value in inputs:
        # NAME=FILE splits at the first "="; a value that names an existing file is positional.
        if "=" not in value or Path(value).is_file():
            positional.append(load_array(value, "input file"))
            continue
        name, _, path = value.partition("=")
        if not name or not path:
            raise click.BadParameter(f"'{value}' is not [NAME=]FILE.npy", param_hint="--input")
        if name in named:
            raise click.BadParameter(f"input '{name}' is given twice", param_hint="--input")
        named[name] = load_array(path, "input file")
    if named and positional:
        raise click.UsageError("give every --input by NAME=FILE or every one by position")
    pushes: dict[int, bytes] = {}
    given = parse_pairs(push_constants, "--push-constants", "TARGET=FILE")
    if given:
        model = read_vgf(vgf)
        for key, path in given:
            for segment in _push_segments(model, key):
                pushes[segment] = read_push_data(path)
    modules: dict[str, bytes] = {}
    for module, path in parse_pairs(shaders, "--shader", "MODULE=FILE.spv"):
        from vgfc.files.inputs import read_input

        modules[module] = read_input(path, what="shader file")

    from vgfc.cli.progress import progress
    from vgfc.runner.validation import ValidationError

    start = time.perf_counter()
    device = resolve_device(device)

    try:
        with progress(f"run on {'lavapipe (CPU)' if device == 'cpu' else 'the GPU'}"):
            result = run_checked(
                vgf,
                named or positional,
                pushes,
                workdir,
                shaders=modules,
                validate=validate,
                device=device,
                timeout=timeout,
            )
    except ValidationError as e:
        if as_json:  # the findings whole on stdout; the error line on stderr as always
            doc: dict[str, Any] = {"model": str(vgf), "device": device, "ok": False}
            doc["validated"] = validate
            doc["validation"] = [f.to_json() for f in e.findings]
            click.echo(json.dumps(doc, indent=2))
        raise
    outputs = result.outputs
    ran_on = "lavapipe (CPU)" if device == "cpu" else "the GPU's Vulkan driver"
    checked = ", validation-clean" if validate else ""
    seconds = time.perf_counter() - start
    verdict = options.warning_flags.verdict("unwritten-output")
    if result.unwritten and verdict != "off":
        from vgfc.cli.console import print_diagnostic, stderr_console

        console = stderr_console()
        warned = Severity.ERROR if verdict == "error" else Severity.WARNING
        for u in result.unwritten:
            severity = warned if u.carried_from is None else Severity.NOTE
            tag = "unwritten-output" if severity is not Severity.NOTE else None
            where = Location(file=str(vgf))
            print_diagnostic(console, Diagnostic(severity, u.describe(), where, name=tag))
        if verdict == "error":  # as a compile under -Werror: nothing written, exit 1
            if as_json:
                unwritten = [u.to_json() for u in result.unwritten]
                doc = {"model": str(vgf), "device": device, "ok": False, "unwritten": unwritten}
                click.echo(json.dumps(doc, indent=2))
            raise click.exceptions.Exit(1)

    written: dict[str, str] = {}
    if output_dir is not None:
        output_dir.mkdir(parents=True, exist_ok=True)
        for name, array in outputs.items():
            buffer = io.BytesIO()
            np.save(buffer, array)
            target = output_dir / f"{safe_name(name)}.npy"
            write_atomically(target, buffer.getvalue())
            written[name] = str(target)
    summary = {name: _stats(array) | {"file": written.get(name)} for name, array in outputs.items()}
    if as_json:
        click.echo(
            json.dumps(
                {
                    "model": str(vgf),
                    "device": device,
                    "validated": validate,
                    "seconds": seconds,
                    "outputs": summary,
                    "unwritten": [u.to_json() for u in result.unwritten],
                },
                indent=2,
            )
        )
        return
    for name, info in summary.items():
        line = f"{name}: {info['dtype']} {info['shape']}"
        if info["size"]:
            line += f"  min {info['min']:.6g}  max {info['max']:.6g}  mean {info['mean']:.6g}"
        if info["file"]:
            line += f"  -> {info['file']}"
        click.echo(line)
    click.echo(f"{vgf}: ran on {ran_on} in {seconds:.2f} s{checked}, {len(outputs)} output(s)")


def _push_segments(model: Any, key: str) -> list[int]:
    """The compute segments a ``--push-constants`` target of ``vgfc run`` names."""
    from vgfc.vgf.model import ModuleType

    kind, value = push_target(key, numbers="segment")
    if kind == "op":
        raise click.BadParameter(
            f"'{key}': a VGF has no op numbers; give segment:N or the module's name "
            "(vgfc inspect lists both)",
            param_hint="--push-constants",
        )
    if kind == "segment":
        return [int(value)]  # run_vgf checks the index
    found = [
        i
        for i, s in enumerate(model.segments)
        if s.type is ModuleType.COMPUTE and model.module_of(s).name == value
    ]
    if not found:
        from vgfc.diagnostics import did_you_mean

        names = sorted(
            {model.module_of(s).name for s in model.segments if s.type is ModuleType.COMPUTE}
        )
        raise click.BadParameter(
            f"no compute module '{value}'{did_you_mean(value, names)} (compute modules: "
            f"{', '.join(names) or 'none'})",
            param_hint="--push-constants",
        )
    return found


def _stats(array: Array) -> dict[str, Any]:
    values = array.astype(np.float64)
    stats: dict[str, Any] = {
        "dtype": str(array.dtype),
        "shape": list(array.shape),
        "size": array.size,
    }
    if array.size:
        stats |= {
            "min": float(values.min()),
            "max": float(values.max()),
            "mean": float(values.mean()),
        }
    return stats
