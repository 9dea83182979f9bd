"""``vgfc run``: run a VGF file on the CPU and print or save its outputs.

Registered on the main group with ``cli.add_command(run)``.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

from vgfc.cli.options import run_options
from vgfc.cli.support import handle_errors
from vgfc.diagnostics import InputError
from vgfc.files import write_atomically
from vgfc.ir import Array

__all__ = ["load_array", "parse_pairs", "read_push_data", "run"]


def parse_pairs(values: tuple[str, ...], option: str, metavar: str) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        key, sep, path = value.partition("=")
        if not sep or not key or not path:
            raise click.BadParameter(f"'{value}' is not {metavar}", param_hint=option)
        pairs.append((key, path))
    return pairs


def load_array(path: str, what: str) -> Array:
    try:
        with open(path, "rb") as f:
            if f.read(6) != b"\x93NUMPY":
                raise InputError(f"{what} '{path}' is not a .npy file")
        array = np.load(path, allow_pickle=False)
    except OSError as e:
        raise InputError(f"cannot read {what} '{path}': {e.strerror or e}") from None
    except ValueError as e:
        raise InputError(f"cannot read {what} '{path}': {e}") from None
    if not isinstance(array, np.ndarray):
        raise InputError(f"{what} '{path}' is not a single .npy array")
    return array


def read_push_data(path: str) -> bytes:
    """A .npy file gives its array's bytes; any other file is taken as raw bytes."""
    if path.endswith(".npy"):
        return np.ascontiguousarray(load_array(path, "push-constant file")).tobytes()
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read push-constant file '{path}': {e.strerror}") from None


@click.command("run")
@click.argument("vgf", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-i",
    "--input",
    "inputs",
    multiple=True,
    metavar="[NAME=]FILE.npy",
    help="A model input by name, or without NAME in model order (repeatable).",
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
    metavar="SEGMENT=FILE",
    help="Push-constant values of a compute segment (by index): raw bytes, or a .npy array's "
    "bytes (repeatable).",
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
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary of the outputs.")
@handle_errors
def run(
    vgf: Path,
    inputs: tuple[str, ...],
    output_dir: Path | None,
    push_constants: tuple[str, ...],
    shaders: tuple[str, ...],
    workdir: Path | None,
    validate: bool,
    device: str,
    as_json: bool,
) -> None:
    """Run VGF on the CPU (lavapipe, Arm's ML emulation layers, the scenario runner).

    \b
    vgfc run model.vgf -i x.npy -o out/              inputs in model order
    vgfc run model.vgf -i input_0=x.npy --json       inputs by name
    vgfc run model.vgf -i x.npy --push-constants 1=pc.bin

    Needs pip install 'vgfc[run]' and apt-get install mesa-vulkan-drivers libvulkan1.
    """
    from vgfc.runner import run_vgf
    from vgfc.runner.scenario import safe_name
    from vgfc.runner.stack import resolve_device

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
    for key, path in parse_pairs(push_constants, "--push-constants", "SEGMENT=FILE"):
        if not key.isdigit():
            raise click.BadParameter(
                f"segment '{key}' is not an index", param_hint="--push-constants"
            )
        pushes[int(key)] = read_push_data(path)
    modules: dict[str, bytes] = {}
    for module, path in parse_pairs(shaders, "--shader", "MODULE=FILE.spv"):
        try:
            modules[module] = Path(path).read_bytes()
        except OSError as e:
            raise InputError(f"cannot read shader file '{path}': {e.strerror}") from None

    start = time.perf_counter()
    device = resolve_device(device)
    outputs = run_vgf(
        vgf, named or positional, pushes, workdir, shaders=modules, validate=validate, device=device
    )
    ran_on = "lavapipe (CPU)" if device == "cpu" else "the GPU's Vulkan driver"
    checked = ", validation-clean" if validate else ""
    seconds = time.perf_counter() - start

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
