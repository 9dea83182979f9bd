"""A resolved shader op -> the ``implementation_attrs`` payload of a ``com.arm.VulkanCustomShader``
op: the inverse of :mod:`vgfc.resolve.attrs`.

A kernel library binds a custom op to a shader that vgfc compiles, checks and dispatches; a tool
that writes TOSA itself (ExecuTorch's export, :mod:`vgfc.executorch`) needs the same op spelled
as the payload the reference converter and every other consumer read: the compiled SPIR-V
(base64), the entry point, the workgroup counts, and per operand its binding, set, descriptor
type, format, kind and sampler. :func:`shader_payload` writes it, and a test holds it to the
parser: ``parse(shader_payload(spec)) == spec`` for what a payload can say.
:func:`standalone_payload` runs the whole way for one bound op: compile, write, read back, check.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from vgfc.ir import CUSTOM_SHADER_DOMAIN, IMAGE_DESCRIPTORS, Graph, Operator, ShaderSpec
from vgfc.record import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.diagnostics import Diagnostic
    from vgfc.shader.options import CompileOptions

__all__ = ["payload_bytes", "shader_payload", "standalone_payload"]

_KINDS = {"image": "Image", "tensor": "Tensor", "buffer": "Buffer"}
"""``*_type`` values as ExecuTorch writes (and its runtime compares) them."""


def _kind(descriptor: str, kind: str | None) -> str:
    if kind is not None:
        return _KINDS.get(kind, kind)
    if descriptor in IMAGE_DESCRIPTORS:
        return "Image"
    return "Tensor" if descriptor == "VK_DESCRIPTOR_TYPE_TENSOR_ARM" else "Buffer"


def shader_payload(
    spec: ShaderSpec, spirv: bytes, workgroups: tuple[int, int, int]
) -> dict[str, Any]:
    """The payload of ``spec`` compiled to ``spirv``, dispatched as ``workgroups`` (counts)."""
    payload: dict[str, Any] = {
        "entry_point": spec.entry_point,
        "workgroup_sizes": list(workgroups),
        "shader_language": "SPIR-V",
        "shader_code": base64.b64encode(spirv).decode("ascii"),
    }
    if spec.push_constants:
        payload["push_constants"] = ", ".join(f"{p.name}: {p.size}" for p in spec.push_constants)
    for r in spec.resources:
        payload[f"{r.key}_binding"] = r.binding
        payload[f"{r.key}_descriptorset"] = r.set
        payload[f"{r.key}_vkdescriptortype"] = r.descriptor_type
        payload[f"{r.key}_vkformat"] = r.format
        payload[f"{r.key}_type"] = _kind(r.descriptor_type, r.kind)
        if r.sampler is not None:
            payload[f"{r.key}_sampler"] = {
                "min_filter": r.sampler.min_filter,
                "mag_filter": r.sampler.mag_filter,
                "address_mode_u": r.sampler.address_mode_u,
                "address_mode_v": r.sampler.address_mode_v,
                "border_color": r.sampler.border_color,
            }
    return payload


def payload_bytes(payload: dict[str, Any]) -> bytes:
    """The payload as the bytes a ``CustomAttribute`` holds: UTF-8 JSON, keys sorted, so that
    the same op always gives the same bytes."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")


def standalone_payload(
    op: Operator,
    graph: Graph,
    operator_name: str,
    options: CompileOptions | None = None,
    metadata: dict[str, Any] | None = None,
) -> tuple[bytes, tuple[Diagnostic, ...]]:
    """The bound shader op ``op`` of ``graph`` as the ``implementation_attrs`` of a
    ``com.arm.VulkanCustomShader`` op named ``operator_name`` that stands alone: compiled,
    validated and cross-checked by vgfc (:func:`vgfc.lower.shader.lower_shader`, through the
    shader cache), complete (SPIR-V, bindings, formats, samplers, workgroup counts), and read
    back by vgfc's own parser and held to the resource layout contract as the op it was written
    from. ``metadata`` adds keys vgfc's parser keeps without reading
    (:mod:`vgfc.resolve.attrs_keys`). Returns the payload and the compile's warnings. Raises
    :class:`VgfcError`."""
    from vgfc.lower.shader import lower_shader
    from vgfc.resolve.attrs import parse_shader_spec
    from vgfc.resolve.contract import check_contract

    spec = op.shader
    assert spec is not None
    module = lower_shader(spec, op, graph, options)
    assert module.spirv is not None
    payload = payload_bytes(
        {**(metadata or {}), **shader_payload(spec, module.spirv, module.dispatch)}
    )
    attrs = {"domain_name": CUSTOM_SHADER_DOMAIN, "operator_name": operator_name}
    written = replace(op, attrs={**attrs, "implementation_attrs": payload}, shader=None)
    check_contract(parse_shader_spec(written, graph), written, graph)
    return payload, module.warnings
