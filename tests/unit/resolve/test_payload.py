"""vgfc.resolve.payload writes a bound shader op as a ``com.arm.VulkanCustomShader`` payload; read
back by vgfc's own parser it is the op it was written from, and the reference converter compiles a
model holding it (the standalone payload vgfc.executorch hands to ExecuTorch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vgfc.diagnostics import UnsupportedError
from vgfc.ir import CUSTOM_SHADER_DOMAIN, DType, Graph, Operator, Tensor, Version
from vgfc.lower.shader import lower_shader
from vgfc.record import replace
from vgfc.resolve import bind_entry
from vgfc.resolve.attrs import parse_shader_spec
from vgfc.resolve.bind import bind_op
from vgfc.resolve.library.load import load_libraries
from vgfc.resolve.payload import payload_bytes, shader_payload, standalone_payload

ROOT = Path(__file__).resolve().parents[3]
LIBRARY = ROOT / "samples" / "pytorch" / "my_ops.yaml"


def _bound(name: str, shape: tuple[int, ...], params: bytes = b"") -> tuple[Operator, Graph]:
    (library,) = load_libraries([LIBRARY])
    entry = library.find("my_ops", name)
    assert entry is not None
    out_shape = shape if name == "swish" else (*shape[:2], 2 * shape[2], 2 * shape[3])
    tensors = {"x": Tensor("x", shape, DType.FP32), "y": Tensor("y", out_shape, DType.FP32)}
    attrs = {"domain_name": "my_ops", "operator_name": name, "implementation_attrs": params}
    op = Operator(0, "CUSTOM", ("x",), ("y",), attrs)
    graph = Graph(tensors, (op,), ("x",), ("y",), Version(1, 0, 0, False), "test")
    binding = bind_op(op, graph, entry, auto_convert=True)
    graph = replace(graph, tensors={**graph.tensors, **binding.tensors})
    (shader_op,) = [o for o in binding.operators if o.shader is not None]
    return shader_op, graph


@pytest.mark.parametrize(
    ("name", "shape", "params"),
    [("swish", (1, 4, 6, 5), b'{"beta": 1.5}'), ("upsample2x", (1, 4, 6, 5), b"")],
)
def test_the_payload_reads_back_as_the_op_it_was_written_from(
    name: str, shape: tuple[int, ...], params: bytes
) -> None:
    op, graph = _bound(name, shape, params)
    assert op.shader is not None
    module = lower_shader(op.shader, op, graph)
    assert module.spirv is not None
    payload = payload_bytes(shader_payload(op.shader, module.spirv, module.dispatch))
    attrs = {"domain_name": CUSTOM_SHADER_DOMAIN, "operator_name": f"my_ops.{name}"}
    written = replace(op, attrs={**attrs, "implementation_attrs": payload}, shader=None)
    back = parse_shader_spec(written, graph)
    assert back.spirv == module.spirv
    assert back.entry_point == op.shader.entry_point
    assert back.workgroup_counts == module.dispatch
    keep = ("role", "index", "tensor", "binding", "set", "descriptor_type", "format", "sampler")
    for mine, theirs in zip(op.shader.resources, back.resources, strict=True):
        for field in keep:
            assert getattr(theirs, field) == getattr(mine, field), field
    if name == "upsample2x":
        sampler = back.inputs[0].sampler
        assert sampler is not None
        assert (sampler.min_filter, sampler.address_mode_u) == (
            "VK_FILTER_LINEAR",
            "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
        )


def test_the_same_op_gives_the_same_bytes() -> None:
    op, graph = _bound("swish", (1, 2, 3, 4), b'{"beta": 2.0}')
    assert op.shader is not None
    module = lower_shader(op.shader, op, graph)
    assert module.spirv is not None
    first = payload_bytes(shader_payload(op.shader, module.spirv, module.dispatch))
    again = payload_bytes(shader_payload(op.shader, module.spirv, module.dispatch))
    assert first == again
    assert first.startswith(b"{") and b" " not in first


def test_a_standalone_payload_is_the_bound_op_compiled_written_and_read_back() -> None:
    op, graph = _bound("upsample2x", (1, 4, 6, 5))
    assert op.shader is not None
    payload, warnings = standalone_payload(op, graph, "my_ops.upsample2x")
    module = lower_shader(op.shader, op, graph)
    assert module.spirv is not None
    assert payload == payload_bytes(shader_payload(op.shader, module.spirv, module.dispatch))
    assert warnings == module.warnings
    attrs = {"domain_name": CUSTOM_SHADER_DOMAIN, "operator_name": "my_ops.upsample2x"}
    written = replace(op, attrs={**attrs, "implementation_attrs": payload}, shader=None)
    assert parse_shader_spec(written, graph).workgroup_counts == module.dispatch


def test_bind_entry_holds_the_bound_shader_to_what_resolve_does() -> None:
    (library,) = load_libraries([LIBRARY])
    entry = library.find("my_ops", "swish")
    assert entry is not None
    x = Tensor("x", (1, 4, 6, 5), DType.FP32, is_variable=True)
    tensors = {"x": x, "y": Tensor("y", (1, 4, 6, 5), DType.FP32)}
    attrs = {"domain_name": "my_ops", "operator_name": "swish", "implementation_attrs": b""}
    op = Operator(0, "CUSTOM", ("x",), ("y",), attrs)
    graph = Graph(tensors, (op,), (), ("y",), Version(1, 0, 0, False), "test")
    bind_op(op, graph, entry, auto_convert=True)  # binding alone takes it
    with pytest.raises(UnsupportedError, match="reads or writes a variable"):
        bind_entry(op, graph, entry)
