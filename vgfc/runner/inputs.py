"""What a run of a VGF file is given, checked against the file before anything runs: the inputs
matched to the VGF's by name or order and converted to its element types where no value changes
(:func:`match_inputs`), push-constant values for the segments that declare them, SPIR-V that
replaces a compute module's code, and each compute segment's dispatch, refused past
:data:`vgfc.limits.LIMITS`'s ``run_workgroups_max``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vgfc.diagnostics import InputError, UnsupportedError, did_you_mean
from vgfc.ir import Array
from vgfc.limits import LIMITS
from vgfc.runner.formats import element_format
from vgfc.runner.scenario import runnable_without_substitution
from vgfc.vgf.model import Interface, Model, ModuleType

__all__ = [
    "Inputs",
    "check_dispatches",
    "check_push_constants",
    "check_shaders",
    "match_inputs",
]

Inputs = Mapping[str, Array] | Sequence[Array]
"""Model inputs by name (or by index as a string), or a sequence in model order."""


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


def check_push_constants(model: Model, pushes: Mapping[int, bytes]) -> dict[int, bytes]:
    """``pushes`` (raw bytes by segment index) checked against the file: each is for a compute
    segment, a non-empty multiple of 4 bytes and at least its block's size, segments that share a
    module get the same values, and every segment that declares a block is given one."""
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


def check_shaders(model: Model, shaders: Mapping[str, bytes]) -> None:
    """Refuse SPIR-V ``shaders`` for a name that is no compute module of the file, or that is not
    a SPIR-V binary, and a segment the runner cannot run unless its module's code is replaced."""
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
