"""IR graphs of one Vulkan custom shader op, for the attribute parser and the resource contract
without a flatbuffer round trip.

``payload`` is a valid ``implementation_attrs`` (one storage buffer in, one out) that a test
changes key by key (``buffer`` makes the keys of one operand); ``graph`` wraps it in a graph of
one CUSTOM op 'blur' in ``model.tosa``; ``check`` runs the parser and the contract on it; every
error then starts with ``PREFIX``.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from vgfc.ir import CUSTOM_SHADER_DOMAIN, DType, Graph, Operator, Tensor, Version
from vgfc.resolve.attrs import parse_shader_spec
from vgfc.resolve.contract import check_contract

PREFIX = f"model.tosa: op #0 CUSTOM 'blur' ({CUSTOM_SHADER_DOMAIN}): "


def buffer(i: int, role: str = "input", **over: Any) -> dict[str, Any]:
    keys = {
        f"{role}_{i}_binding": i if role == "input" else 10 + i,
        f"{role}_{i}_descriptorset": 0,
        f"{role}_{i}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
        f"{role}_{i}_vkformat": "VK_FORMAT_R32_SFLOAT",
    }
    keys.update({f"{role}_{i}_{k}": v for k, v in over.items()})
    return keys


def payload(**over: Any) -> dict[str, Any]:
    base = {
        "entry_point": "main",
        "workgroup_sizes": [4, 1, 1],
        "shader_language": "GLSL",
        "shader_code": "#version 450\nvoid main() {}\n",
        **buffer(0),
        **buffer(0, "output"),
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def graph(
    attrs: dict[str, Any] | bytes,
    inputs: tuple[tuple[int, ...], ...] = ((1, 8, 8, 4),),
    dtype: DType = DType.FP32,
    outputs: tuple[tuple[int, ...], ...] = ((1, 8, 8, 4),),
) -> Graph:
    raw = attrs if isinstance(attrs, bytes) else json.dumps(attrs).encode()
    ins = tuple(f"x{i}" for i in range(len(inputs)))
    outs = tuple(f"y{i}" for i in range(len(outputs)))
    tensors = {n: Tensor(n, s, dtype) for n, s in zip(ins + outs, inputs + outputs, strict=True)}
    op = Operator(
        0,
        "CUSTOM",
        ins,
        outs,
        MappingProxyType(
            {
                "operator_name": "blur",
                "domain_name": CUSTOM_SHADER_DOMAIN,
                "implementation_attrs": raw,
            }
        ),
    )
    return Graph(MappingProxyType(tensors), (op,), ins, outs, Version(1, 0, 0, False), "model.tosa")


def check(g: Graph) -> None:
    spec = parse_shader_spec(g.operators[0], g)
    check_contract(spec, g.operators[0], g)
