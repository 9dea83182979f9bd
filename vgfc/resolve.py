"""Resolve custom operators: parse and check every Vulkan custom shader, compile it, cross-check it.

``vgfc check`` runs this with ``keep_going`` so that one run reports the first problem of every
custom op; ``vgfc compile`` stops at the first error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from vgfc.custom.attrs import parse_shader_spec
from vgfc.custom.contract import check_contract
from vgfc.diagnostics import Diagnostic, Severity, UnsupportedError, VgfcError, did_you_mean
from vgfc.ir import CUSTOM_SHADER_DOMAIN, Graph, Operator
from vgfc.shader.glslang import CompileOptions
from vgfc.shader.lower import ShaderModule, lower_shader

__all__ = ["Resolved", "resolve"]


@dataclass(frozen=True, slots=True)
class Resolved:
    """The custom ops of a graph, each compiled and checked."""

    shaders: Mapping[int, ShaderModule]
    """Compiled shader modules by operator index."""
    diagnostics: tuple[Diagnostic, ...] = field(default=())
    """Warnings, and with ``keep_going`` the errors too."""

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)


def resolve(
    graph: Graph, options: CompileOptions | None = None, *, keep_going: bool = False
) -> Resolved:
    """Check and compile every CUSTOM op. Raises the first :class:`VgfcError` unless
    ``keep_going``, in which case each op's first error is collected and the next op checked."""
    shaders: dict[int, ShaderModule] = {}
    diagnostics: list[Diagnostic] = []
    for op in graph.operators:
        if op.op != "CUSTOM":
            continue
        try:
            module = _resolve_custom(op, graph, options)
        except VgfcError as e:
            if not keep_going:
                raise
            diagnostics.append(e.diagnostic)
            continue
        shaders[op.index] = module
        diagnostics.extend(module.warnings)
    return Resolved(MappingProxyType(shaders), tuple(diagnostics))


def _resolve_custom(op: Operator, graph: Graph, options: CompileOptions | None) -> ShaderModule:
    if not op.is_shader:
        domain = op.domain or ""
        raise UnsupportedError(
            f"custom domain '{domain}' is not supported: vgfc compiles "
            f"{CUSTOM_SHADER_DOMAIN} operators{did_you_mean(domain, [CUSTOM_SHADER_DOMAIN])}",
            op.where(graph.source),
        )
    spec = parse_shader_spec(op, graph)
    check_contract(spec, op, graph)
    return lower_shader(spec, op, graph, options)
