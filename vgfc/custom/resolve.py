"""Resolve custom operators: every CUSTOM op of a graph becomes a typed, checked shader op.

The stage between verify and partition. For each CUSTOM op it finds what the op *is* and binds
it, returning a new :class:`~vgfc.ir.Graph` whose custom ops carry their
:class:`~vgfc.custom.attrs.ShaderSpec` (``Operator.shader``):

* a ``com.arm.VulkanCustomShader`` op is parsed from its ``implementation_attrs``
  (:mod:`vgfc.custom.attrs`) and held to the resource layout contract (:mod:`vgfc.custom.contract`);
* any other domain is refused with a clear error. This is where custom operators of other
  frameworks are bound to kernels from a library, or expanded into built-in operators.

Nothing is compiled here: shaders are compiled when their partition is lowered
(:mod:`vgfc.lower.shader`). With ``keep_going`` each op's first error is collected and the next op
resolved, so one ``vgfc check`` run reports every broken op.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from vgfc.custom.attrs import ShaderSpec, parse_shader_spec
from vgfc.custom.contract import check_contract
from vgfc.diagnostics import Diagnostic, UnsupportedError, VgfcError, did_you_mean
from vgfc.ir import CUSTOM_SHADER_DOMAIN, Graph, Operator

__all__ = ["Resolution", "resolve"]


@dataclass(frozen=True, slots=True)
class Resolution:
    """A graph with its custom ops bound, and what could not be bound."""

    graph: Graph
    """The input graph with ``Operator.shader`` set on every resolved custom op."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """With ``keep_going``: the first error of each op that failed."""
    failed: frozenset[int] = frozenset()
    """Indices of the ops that failed (with ``keep_going``); they keep no shader."""


def resolve(graph: Graph, *, keep_going: bool = False) -> Resolution:
    """Bind every CUSTOM op of ``graph``. Raises the first :class:`VgfcError` unless
    ``keep_going``."""
    operators: list[Operator] = []
    diagnostics: list[Diagnostic] = []
    failed: set[int] = set()
    for op in graph.operators:
        if op.op != "CUSTOM":
            operators.append(op)
            continue
        try:
            spec = _bind(op, graph)
        except VgfcError as e:
            if not keep_going:
                raise
            diagnostics.append(e.diagnostic)
            failed.add(op.index)
            operators.append(op)
            continue
        operators.append(dataclasses.replace(op, shader=spec))
    bound = dataclasses.replace(graph, operators=tuple(operators))
    return Resolution(bound, tuple(diagnostics), frozenset(failed))


def _bind(op: Operator, graph: Graph) -> ShaderSpec:
    if op.domain != CUSTOM_SHADER_DOMAIN:
        domain = op.domain or ""
        raise UnsupportedError(
            f"custom domain '{domain}' is not supported: vgfc compiles "
            f"{CUSTOM_SHADER_DOMAIN} operators{did_you_mean(domain, [CUSTOM_SHADER_DOMAIN])}",
            op.where(graph.source),
        )
    spec = parse_shader_spec(op, graph)
    check_contract(spec, op, graph)
    _check_operands(op, graph)
    return spec


def _check_operands(op: Operator, graph: Graph) -> None:
    """A shader reads tensors through descriptors that a runtime binds; a constant has no such
    resource in the VGF (constants belong to graph segments), so it cannot be read directly."""
    for name in op.inputs:
        if graph.tensors[name].data is not None:
            raise UnsupportedError(
                "a shader that reads a constant directly is not supported yet: compute it "
                "in the graph or pass it as a graph input",
                op.where(graph.source),
                tensor=name,
            )
