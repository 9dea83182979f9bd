#!/usr/bin/env python3
# mypy: disable-error-code="import-untyped,import-not-found"
"""Write the shader payloads ExecuTorch's own code builds for its int8 grid samplers.

Why: ExecuTorch's Arm VGF backend lowers ``F.grid_sample`` to its own shaders, and two of its
payloads use what vgfc long refused: ``RewriteGridSamplerToTosaCustomPass`` binds the int8
grid's scale and zero point as CONST tensors to storage buffers of the shader, and the fused
flow-offset sampler (``FuseGridSamplerFlowOffsetPass``, through
``build_flow_offset_grid_sampler_payload``) writes metadata keys beside the shader's
(``operator_name``, ``input_scale``, ``flow_*`` ...). This script runs that code in a venv with
ExecuTorch and keeps what a test needs to hold vgfc to them without ExecuTorch
(``tests/e2e/test_executorch_shader_payloads.py``): each payload, the shape, type and data of
each operand, and the quantization the oracle needs.

* ``grid_sampler_int8`` and ``grid_sampler_int8_align_corners``: ``F.grid_sample`` (bilinear,
  zeros) of a 1x4x8x8 image on a 1x4x4x2 grid, quantized by ExecuTorch's ``VgfQuantizer``,
  then ExecuTorch's passes (``FoldAndAnnotateQParamsPass``, ``InsertGridSamplerGridDequantPass``,
  ``RewriteGridSamplerToTosaCustomPass``) as its own test of the rewrite runs them. ExecuTorch
  1.5.1's TOSA serializer cannot write the lifted constants the rewrite adds, so the payload
  and the constants are taken from the rewritten program, and the test writes the TOSA.
* ``flow_offset_grid_sampler``: the payload ExecuTorch's fusion writes, from its own builder,
  whose GLSL (``GL_ARM_tensors``) it compiles with the ML SDK's ``glslc`` (``--glslc``).

    python scripts/export_executorch_shader_payloads.py OUT --glslc PATH/TO/glslc
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

SEED = 20261128
_SHIM = """#!/bin/sh
input=""; output=""
while [ $# -gt 0 ]; do
    case "$1" in
        -fshader-stage=*) ;;
        -o) output="$2"; shift ;;
        *) input="$1" ;;
    esac
    shift
done
exec @GLSLC@ --input "$input" --output "$output"
"""
SNORM = 1.0 / 127.0


class GridSample(torch.nn.Module):
    def __init__(self, align_corners: bool) -> None:
        super().__init__()
        self.align_corners = align_corners

    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(
            x, grid, mode="bilinear", padding_mode="zeros", align_corners=self.align_corners
        )


def grid_sampler_case(align_corners: bool) -> dict[str, Any]:
    import executorch.backends.arm.tosa.dialect  # noqa: F401 - registers tosa.CUSTOM
    from executorch.backends.arm._passes import FoldAndAnnotateQParamsPass
    from executorch.backends.arm.quantizer.arm_quantizer import (
        VgfQuantizer,
        get_symmetric_quantization_config,
    )
    from executorch.backends.arm.tosa.specification import (
        TosaLoweringContext,
        TosaSpecification,
    )
    from executorch.backends.arm.vgf import VgfCompileSpec
    from executorch.backends.arm.vgf._passes import (
        InsertGridSamplerGridDequantPass,
        RewriteGridSamplerToTosaCustomPass,
    )
    from executorch.backends.arm.vgf.shaders.grid_sampler import decode_payload
    from executorch.exir import to_edge
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.pass_base import ExportedProgramPassBase, ExportedProgramPassResult
    from torch.export import export
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    class Rewrite(ExportedProgramPassBase):
        """The rewrite with the program it adds constants to, as ExecuTorch's test drives it."""

        def call(self, program: Any) -> Any:
            result = RewriteGridSamplerToTosaCustomPass(program)(program.graph_module)
            program._graph_module = result.graph_module
            return ExportedProgramPassResult(program, result.modified)

    torch.manual_seed(SEED)
    x = torch.rand(1, 4, 8, 8) * 2 - 1
    grid = torch.rand(1, 4, 4, 2) * 2.2 - 1.1
    quantizer = VgfQuantizer(VgfCompileSpec("TOSA-1.0+INT"))
    quantizer.set_global(get_symmetric_quantization_config(is_per_channel=False))
    model = GridSample(align_corners).eval()
    prepared = prepare_pt2e(export(model, (x, grid), strict=True).module(), quantizer)
    prepared(x, grid)
    edge = to_edge(export(convert_pt2e(prepared), (x, grid), strict=True))
    with TosaLoweringContext(TosaSpecification.create_from_string("TOSA-1.0+FP+INT")):
        edge = edge.transform([FoldAndAnnotateQParamsPass()])
        edge = edge.transform([InsertGridSamplerGridDequantPass(), Rewrite()])
    program = edge.exported_program()
    node = next(n for n in program.graph.nodes if n.target == exir_ops.backend.tosa.CUSTOM.default)
    payload = decode_payload(node.kwargs["implementation_attrs"])
    operands = []
    names = ("image", "grid", "grid_scale", "grid_zero_point")
    for arg, name in zip(node.args[0], names, strict=True):
        value = arg.meta["val"]
        constant = program.constants.get(arg.name)
        operands.append(
            {
                "name": name,
                "shape": list(value.shape),
                "dtype": {torch.int8: "INT8", torch.float32: "FP32", torch.int32: "INT32"}[
                    value.dtype
                ],
                "data": None if constant is None else constant.tolist(),
            }
        )
    qparams = [node.meta["input_qparams"][0], next(iter(node.meta["output_qparams"].values()))]
    if any(abs(q.get_scale_per_tensor() - SNORM) > 1e-9 or q.get_zp_per_tensor() for q in qparams):
        raise SystemExit("ExecuTorch chose other than its int8 snorm image path")
    value = node.meta["val"][0]
    return {
        "name": f"grid_sampler_int8{'_align_corners' if align_corners else ''}",
        "description": (
            "F.grid_sample (bilinear, zeros, align_corners="
            f"{align_corners}) quantized by ExecuTorch's VgfQuantizer and rewritten by its "
            "RewriteGridSamplerToTosaCustomPass: int8 snorm image sampler, int8 grid, the grid's "
            "scale and zero point as CONST tensors bound to storage buffers"
        ),
        "operator_name": node.kwargs["operator_name"],
        "payload": payload,
        "operands": operands,
        "output": {"shape": list(value.shape), "dtype": "INT8"},
        "oracle": {"kind": "grid_sample", "align_corners": align_corners},
    }


def flow_offset_case() -> dict[str, Any]:
    from executorch.backends.arm.vgf.shaders.grid_sampler import (
        build_flow_offset_grid_sampler_payload,
        flow_offset_grid_sampler_operator_name,
    )

    height, width = 6, 7
    quant = {
        "input_scale": SNORM,
        "input_zero_point": 0,
        "output_scale": SNORM,
        "output_zero_point": 0,
        "flow_scale": 1.0 / 32.0,
        "flow_zero_point": 3,
        "flow_channel_offset": 2,
    }
    payload = build_flow_offset_grid_sampler_payload(
        input_shape=(1, 4, height, width),
        output_shape=(1, 4, height, width),
        flow_shape=(1, 4, height, width),
        **quant,
    )
    return {
        "name": "flow_offset_grid_sampler",
        "description": (
            "the fused flow-offset int8 grid sampler payload of ExecuTorch's "
            "FuseGridSamplerFlowOffsetPass (build_flow_offset_grid_sampler_payload; GLSL with "
            "GL_ARM_tensors compiled by the ML SDK's glslc), with its metadata keys"
        ),
        "operator_name": flow_offset_grid_sampler_operator_name(),
        "payload": payload,
        "operands": [
            {"name": "image", "shape": [1, height, width, 4], "dtype": "INT8", "data": None},
            {"name": "flow", "shape": [1, 4, height, width], "dtype": "INT8", "data": None},
        ],
        "output": {"shape": [1, height, width, 4], "dtype": "INT8"},
        "oracle": {"kind": "flow_offset", **quant},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for shader_payloads.json")
    parser.add_argument("--glslc", type=Path, required=True, help="the ML SDK's glslc")
    args = parser.parse_args()
    if not os.access(args.glslc, os.X_OK):
        raise SystemExit(f"{args.glslc}: not an executable glslc")
    with tempfile.TemporaryDirectory() as tmp:
        # ExecuTorch runs shaderc's command line (glslc -fshader-stage=compute IN -o OUT) from
        # PATH; the ML SDK's glslc, which knows GL_ARM_tensors, takes --input/--output.
        shim = Path(tmp) / "glslc"
        shim.write_text(_SHIM.replace("@GLSLC@", shlex.quote(str(args.glslc.resolve()))))
        shim.chmod(0o755)
        os.environ["PATH"] = f"{tmp}{os.pathsep}{os.environ.get('PATH', '')}"
        cases = [grid_sampler_case(False), grid_sampler_case(True), flow_offset_case()]
    args.out.mkdir(parents=True, exist_ok=True)
    import importlib.metadata

    document = {
        "generated_by": "scripts/export_executorch_shader_payloads.py",
        "executorch": importlib.metadata.version("executorch"),
        "seed": SEED,
        "cases": cases,
    }
    (args.out / "shader_payloads.json").write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {len(cases)} payloads to {args.out / 'shader_payloads.json'}")


if __name__ == "__main__":
    main()
