"""Build a scenario-runner scenario for a VGF file, and read back what it wrote.

A scenario is a JSON file with ``resources`` (the VGF, one resource per model input and
output, push-constant data, replacement shaders) and ``commands`` (here one ``dispatch_vgf``
that runs every segment in order and binds the model's inputs and outputs by their binding ids).
Intermediate resources are the runner's business: it creates them from the VGF itself.

How each model input or output travels, by its descriptor type:

* ``TENSOR_ARM``: a ``tensor`` with dims and format, .npy in and out;
* storage or uniform buffers: a ``buffer`` of the right byte size; the runner writes buffers
  back as raw bytes (an int8 .npy), which vgfc views as the real element type;
* storage images and combined image samplers: an ``image`` with dims ``[1, W, H, 1]`` (width
  first; channels live in the format), read from a ``[1, H, W, C]`` .npy and written as DDS.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from vgfc.diagnostics import InputError, UnsupportedError
from vgfc.ir import Array
from vgfc.ir_shaders import Sampler
from vgfc.record import record
from vgfc.runner.formats import element_format
from vgfc.vgf.model import Model, ModuleType, Resource

__all__ = ["OutputFile", "build_scenario", "read_dds", "read_output", "resource_kind"]

# Descriptor type -> scenario resource kind.
_KINDS = {
    "VK_DESCRIPTOR_TYPE_TENSOR_ARM": "tensor",
    "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER": "buffer",
    "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER": "buffer",
    "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE": "image",
    "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER": "image",
}
_SAMPLED = "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER"
# Vulkan sampler enum names -> the scenario's names for them.
_FILTERS = {"VK_FILTER_NEAREST": "NEAREST", "VK_FILTER_LINEAR": "LINEAR"}
_ADDRESS_MODES = {
    "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE": "CLAMP_EDGE",
    "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER": "CLAMP_BORDER",
    "VK_SAMPLER_ADDRESS_MODE_REPEAT": "REPEAT",
    "VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT": "MIRRORED_REPEAT",
}
_SHADER_TYPES = {"spirv": "SPIR-V", "glsl": "GLSL"}
_RUNNABLE = frozenset({"SPIR-V", "GLSL"})  # module code the runner can run as it is


@record
class OutputFile:
    """Where the runner writes one model output, and how to read it."""

    name: str
    """The model output's name."""
    resource: Resource
    kind: str
    """``tensor``, ``buffer`` or ``image``."""
    path: Path


def resource_kind(resource: Resource, index: int) -> str:
    """The scenario resource kind of a model input or output (resource ``index``); unsupported
    descriptor types raise."""
    kind = _KINDS.get(resource.descriptor_type or "")
    if kind is None:
        raise UnsupportedError(
            f"resource {index}: cannot run a {resource.descriptor_type} model input/output"
        )
    return kind


def build_scenario(
    vgf: Path,
    model: Model,
    inputs: Sequence[Array],
    push_constants: Mapping[int, bytes],
    shaders: Mapping[str, bytes],
    workdir: Path,
    initial: Mapping[int, Array] | None = None,
) -> tuple[dict[str, object], list[OutputFile]]:
    """The scenario for ``model``, read from the file ``vgf``; input, push-constant and shader
    files are written to
    ``workdir``. ``inputs`` are in model order, already of the right type and shape;
    ``push_constants`` maps compute segment index -> bytes; ``shaders`` maps module name ->
    SPIR-V that replaces the module's own code; ``initial`` maps an output's index to what the
    output holds before the run (a write-coverage canary), typed as the output is."""
    graph: dict[str, object] = {"uid": "vgf", "src": os.path.realpath(vgf)}
    resources: list[dict[str, object]] = [{"graph": graph}]
    bindings = []
    outputs = []
    for i, (iface, array) in enumerate(zip(model.inputs, inputs, strict=True)):
        uid = f"input_{i}"
        src = workdir / f"{uid}.npy"
        resource = model.resource_of(iface)
        kind = resource_kind(resource, iface.resource)
        if kind == "image":
            array = array.reshape(1, *_image_hwc(resource, iface.resource))
        np.save(src, np.ascontiguousarray(array))
        described = _describe(resource, iface.resource, kind, "input", uid)
        resources.append({kind: {**described, "src": str(src)}})
        bindings.append({"set": 0, "id": iface.binding, "resource_ref": uid})
    for i, iface in enumerate(model.outputs):
        uid = f"output_{i}"
        resource = model.resource_of(iface)
        kind = resource_kind(resource, iface.resource)
        dst = workdir / f"{uid}.{'dds' if kind == 'image' else 'npy'}"
        described = _describe(resource, iface.resource, kind, "output", uid)
        if initial is not None and i in initial:
            start = initial[i]
            if kind == "image":
                start = start.reshape(1, *_image_hwc(resource, iface.resource))
            src = workdir / f"{uid}.initial.npy"
            np.save(src, np.ascontiguousarray(start))
            described["src"] = str(src)
        resources.append({kind: {**described, "dst": str(dst)}})
        bindings.append({"set": 0, "id": iface.binding, "resource_ref": uid})
        outputs.append(OutputFile(iface.name, resource, kind, dst))

    command: dict[str, object] = {"graph_ref": "vgf", "bindings": bindings}
    if push_constants:
        pushes = []
        for index, data in sorted(push_constants.items()):
            uid = f"push_{index}"
            path = workdir / f"{uid}.npy"
            np.save(path, np.frombuffer(data, np.uint8))
            resources.append({"raw_data": {"uid": uid, "src": str(path)}})
            target = model.module_of(model.segments[index]).name
            pushes.append({"push_data_ref": uid, "shader_target": target})
        command["push_constants"] = pushes
        # The runner gives every shader segment of a VGF one push-constant range of this size;
        # without it the values are silently dropped.
        graph["push_constants_size"] = max(len(d) for d in push_constants.values())
    if shaders:
        substitutions = []
        for index, segment in enumerate(model.segments):
            if segment.type is not ModuleType.COMPUTE:
                continue
            resources.append({"shader": _shader_file(model, index, shaders, workdir)})
            target = model.module_of(segment).name
            substitutions.append({"shader_ref": f"shader_{index}", "target": target})
        command["shader_substitutions"] = substitutions
    return {"resources": resources, "commands": [{"dispatch_vgf": command}]}, outputs


def _describe(
    resource: Resource, index: int, kind: str, direction: str, uid: str
) -> dict[str, object]:
    element = element_format(resource.format)
    if any(d < 0 for d in resource.shape):
        raise UnsupportedError(f"{uid} has a dynamic shape {list(resource.shape)}")
    if kind == "buffer":
        size = int(np.prod(resource.shape, dtype=np.int64)) * element.dtype.itemsize
        access = "readonly" if direction == "input" else "readwrite"
        return {"uid": uid, "size": size, "shader_access": access}
    if kind == "tensor":
        access = "readonly" if direction == "input" else "readwrite"
        dims = list(resource.shape)
        return {"uid": uid, "dims": dims, "format": element.name, "shader_access": access}
    height, width, _ = _image_hwc(resource, index)
    sampled = resource.descriptor_type == _SAMPLED
    # The access decides the image's usage: "readonly" gives SAMPLED (a combined image sampler
    # needs it: VUID-VkWriteDescriptorSet-descriptorType-00337), "image_read" gives STORAGE (a
    # storage image read by the shader), "readwrite" both (an output a later segment may read).
    input_access = "readonly" if sampled else "image_read"
    access = "readwrite" if direction == "output" else input_access
    entry: dict[str, object] = {
        "uid": uid,
        "dims": [1, width, height, 1],
        "format": element.name,
        "shader_access": access,
    }
    if sampled and resource.sampler is not None:
        entry.update(_sampler(resource.sampler, uid))
    return entry


def _image_hwc(resource: Resource, index: int) -> tuple[int, int, int]:
    shape = resource.shape
    element = element_format(resource.format)
    components = element.components
    if len(shape) not in (3, 4) or (len(shape) == 4 and shape[0] != 1) or shape[-1] != components:
        raise UnsupportedError(
            f"image resource {index} has shape {list(shape)}; images are [H, W, C] or "
            f"[1, H, W, C] with C = {components}, the channels of {element.name}"
        )
    return shape[-3], shape[-2], shape[-1]


def _sampler(sampler: Sampler, uid: str) -> dict[str, str]:
    names = {
        "min_filter": _FILTERS.get(sampler.min_filter),
        "mag_filter": _FILTERS.get(sampler.mag_filter),
        "border_address_mode": _ADDRESS_MODES.get(sampler.address_mode_u),
        "border_color": sampler.border_color.removeprefix("VK_BORDER_COLOR_"),
    }
    if sampler.address_mode_u != sampler.address_mode_v:
        raise UnsupportedError(
            f"{uid}: the scenario runner takes one address mode for u and v, the VGF has "
            f"{sampler.address_mode_u} and {sampler.address_mode_v}"
        )
    missing = [key for key, value in names.items() if value is None]
    if missing:
        raise UnsupportedError(f"{uid}: the scenario runner has no equivalent for {missing[0]}")
    # One mip level only, so the mip filter does not change a texel; the runner wants one.
    return {"mip_filter": "NEAREST", **{k: v for k, v in names.items() if v is not None}}


def _shader_file(
    model: Model, index: int, shaders: Mapping[str, bytes], workdir: Path
) -> dict[str, object]:
    module = model.module_of(model.segments[index])
    uid = f"shader_{index}"
    entry: dict[str, object] = {"uid": uid, "entry": module.entry_point}
    if module.name in shaders:
        code, data = "spirv", shaders[module.name]
    elif module.spirv is not None:
        code, data = "spirv", module.spirv
    elif module.code == "GLSL" and module.source is not None:
        code, data = "glsl", module.source.encode("utf-8")
    else:
        raise UnsupportedError(_no_code(model, index))
    path = workdir / f"{uid}.{'spv' if code == 'spirv' else 'comp'}"
    path.write_bytes(data)
    return {**entry, "src": str(path), "type": _SHADER_TYPES[code]}


def _no_code(model: Model, index: int) -> str:
    segment = model.segments[index]
    module = model.module_of(segment)
    what = "no code" if module.code == "none" else f"{module.code} source"
    return (
        f"segment {index} '{segment.name}': module '{module.name}' holds {what}, which "
        f"the scenario runner cannot compile; give SPIR-V for it (run_vgf(..., "
        f"shaders={{'{module.name}': spirv}}) or vgfc run --shader {module.name}=FILE.spv)"
    )


def runnable_without_substitution(model: Model, index: int) -> str | None:
    """Why the runner cannot run segment ``index`` from the VGF's own code, or ``None`` when it
    can."""
    segment = model.segments[index]
    if segment.type is not ModuleType.COMPUTE or model.module_of(segment).code in _RUNNABLE:
        return None
    return _no_code(model, index)


def read_output(output: OutputFile) -> Array:
    """The array the runner wrote for ``output``, with the VGF's element type and shape."""
    resource = output.resource
    element = element_format(resource.format)
    if output.kind == "image":
        data = read_dds(output.path)
    else:
        data = np.load(output.path, allow_pickle=False).tobytes()
    count = int(np.prod(resource.shape, dtype=np.int64))
    expected = count * element.dtype.itemsize
    if len(data) < expected:
        raise InputError(
            f"output '{output.name}': the runner wrote {len(data)} bytes, expected {expected}"
        )
    return np.frombuffer(data[:expected], element.dtype).reshape(resource.shape).copy()


_DDS_MAGIC = b"DDS "
_DX10 = b"DX10"


def read_dds(path: Path) -> bytes:
    """The pixel bytes of a 2D DDS file (the scenario runner writes DX10 headers)."""
    raw = path.read_bytes()
    if len(raw) < 128 or raw[:4] != _DDS_MAGIC or struct.unpack_from("<I", raw, 4)[0] != 124:
        raise InputError(f"{path.name}: not a DDS file")
    # The pixel format's fourCC sits at byte 84; DX10 files carry 20 more header bytes.
    start = 148 if raw[84:88] == _DX10 else 128
    return raw[start:]


def safe_name(name: str) -> str:
    """``name`` as a file name: characters other than letters, digits, ``-``, ``_`` and ``.``
    become ``_``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"
