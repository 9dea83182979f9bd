"""Partitioner registration and the rewrite into ``tosa.CUSTOM``.

:func:`attach` keeps the ops in an ExecuTorch ``VgfPartitioner``'s delegate, registers the
TOSA-dialect fake of each op's ``tosa.CUSTOM`` and adds one graph pass to the Arm backend, once
per process. The pass replaces each call of an attached op by its plan
(:mod:`vgfc.executorch.plan`): the conversions the selected kernel needs (CAST, TRANSPOSE between
NCHW and NHWC, channel padding and slicing) as edge and TOSA-dialect ops, and the shader op as
``tosa.CUSTOM`` with its standalone payload.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from vgfc.diagnostics import InputError
from vgfc.executorch.op import TORCH, TorchOp, current
from vgfc.executorch.plan import PAYLOADS, Plan, plan_call
from vgfc.ir import CUSTOM_SHADER_DOMAIN, Graph, Operator

__all__ = ["attach"]

_ATTACHED: dict[Any, TorchOp] = {}
"""The ops attached to a partitioner, by their overload: what the rewrite pass rewrites."""
_PASS: list[Any] = []


def attach(ops: Iterable[TorchOp], partitioner: Any) -> None:
    """Keep ``ops`` in ``partitioner``'s delegate and have the Arm backend rewrite them into
    ``tosa.CUSTOM`` (one pass per process, for every op attached)."""
    for op in ops:
        _ATTACHED[op.overload] = op
        _register_tosa_fake(op.operator_name)
        partitioner.register_custom_partition_op(op.overload)
    _install_pass()


def _register_tosa_fake(operator_name: str) -> None:
    from executorch.backends.arm.tosa.dialect.ops.custom import (
        has_fake_tosa_impl,
        register_fake_tosa,
    )

    if has_fake_tosa_impl(operator_name):
        return

    def fake(
        inputs: list[torch.Tensor], operator_name: str, domain_name: str, implementation_attrs: Any
    ) -> list[torch.Tensor]:
        found = PAYLOADS.get((operator_name, bytes(implementation_attrs or [])))
        if found is None:
            raise RuntimeError(
                f"tosa.CUSTOM {operator_name}: a payload vgfc.executorch did not write"
            )
        shape, dtype = found
        return [inputs[0].new_empty(shape, dtype=dtype)]

    register_fake_tosa(operator_name)(fake)


def _install_pass() -> None:
    """Add the rewrite to the Arm backend's passes, once per process: after RewriteMatmulPass,
    where the graph is still edge ops (so the conversions inserted are lowered as any other)."""
    if _PASS:
        return
    from executorch.backends.arm._passes import RewriteMatmulPass
    from executorch.backends.arm._passes.arm_pass_manager import register_pass_insertions_after

    rewrite = _rewrite_pass()
    _PASS.append(rewrite)
    register_pass_insertions_after(RewriteMatmulPass, [rewrite])


def _rewrite_pass() -> Any:
    from executorch.backends.arm._passes import ArmPass
    from torch.fx.passes.infra.pass_base import PassResult

    class RewriteVgfcOps(ArmPass):  # type: ignore[misc]
        """Kernel-library ops -> tosa.CUSTOM with the conversions their kernel needs."""

        _passes_required_after: set[type] = set()  # noqa: RUF012 - the base's declaration

        def call(self, graph_module: torch.fx.GraphModule) -> Any:
            changed = False
            for node in list(graph_module.graph.nodes):
                if node.op != "call_function":
                    continue
                target = getattr(node.target, "_op", node.target)
                attached = _ATTACHED.get(target)
                if attached is None:
                    continue
                _rewrite(graph_module.graph, node, attached)
                changed = True
            if changed:
                graph_module.graph.lint()
                graph_module.recompile()
            return PassResult(graph_module, changed)

    return RewriteVgfcOps()


def _rewrite(graph: Any, node: Any, op: TorchOp) -> None:
    """Replace ``node`` (a call of ``op``) by the conversions and ``tosa.CUSTOM`` op of its
    plan."""
    op = current(op.qualname)
    bound = op.bind(node.args, node.kwargs)
    entry = op.entry
    plan = plan_call(op, {**bound, **{name: bound[name].meta["val"] for name in entry.inputs}})
    nodes = {name: bound[name] for name in entry.inputs}
    with graph.inserting_before(node):
        for ir in plan.operators:
            _emit(graph, node, ir, plan, nodes, op)
    node.replace_all_uses_with(nodes[entry.outputs[0]])
    graph.erase_node(node)


def _emit(
    graph: Any, node: Any, ir: Operator, plan: Plan, nodes: dict[str, Any], op: TorchOp
) -> None:
    """One operator of the plan as graph nodes; ``nodes`` maps IR tensors to them."""
    from executorch.exir.dialects._ops import ops as exir_ops

    model = plan.model
    if ir.op in ("CONST", "CONST_SHAPE"):
        return  # their values are the PAD's and SLICE's arguments below
    source = nodes[ir.inputs[0]]
    if ir.op == "CAST":
        dtype = TORCH[model.tensors[ir.outputs[0]].dtype]
        target = exir_ops.edge.dim_order_ops._to_dim_order_copy.default
        new = _call(graph, node, target, (source,), {"dtype": dtype})
    elif ir.op == "TRANSPOSE":
        perms = [int(p) for p in ir.attrs["perms"]]  # type: ignore[union-attr]
        new = _call(graph, node, exir_ops.edge.aten.permute_copy.default, (source, perms), {})
    elif ir.op == "PAD":
        padding = _shape(graph, node, _values(model, ir.inputs[1]))
        new = _call(graph, node, exir_ops.backend.tosa.PAD.default, (source, padding), {"value": 0})
    elif ir.op == "SLICE":
        start = _shape(graph, node, _values(model, ir.inputs[1]))
        size = _shape(graph, node, _values(model, ir.inputs[2]))
        new = _call(graph, node, exir_ops.backend.tosa.SLICE.default, (source, start, size), {})
    elif ir.shader is not None:
        new = _custom(graph, node, ir, plan, nodes, op)
    else:
        raise InputError(f"{ir.op}: an operator vgfc.executorch cannot write into the graph")
    nodes[ir.outputs[0]] = new


def _values(model: Graph, name: str) -> list[Any]:
    data = model.tensors[name].data
    assert data is not None
    return [v.item() for v in np.asarray(data).reshape(-1)]


def _shape(graph: Any, node: Any, values: list[Any]) -> Any:
    """A ``tosa.CONST_SHAPE`` node: the shape operand of the TOSA dialect's PAD and SLICE."""
    from executorch.backends.arm.tosa.mapping import TosaSpecialDtype
    from executorch.exir.dialects._ops import ops as exir_ops

    shape = [int(v) for v in values]
    new = graph.call_function(exir_ops.backend.tosa.CONST_SHAPE.default, (shape,), {})
    new.meta = dict(node.meta)
    new.meta["val"] = shape
    new.meta[TosaSpecialDtype.meta_key()] = TosaSpecialDtype.SHAPE
    return new


def _call(graph: Any, node: Any, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A new node of ``target``, its value computed from its arguments' (fake) values."""
    new = graph.call_function(target, args, kwargs)
    new.meta = dict(node.meta)
    fake_args = tuple(a.meta["val"] if hasattr(a, "meta") else a for a in args)
    new.meta["val"] = target(*fake_args, **kwargs)
    return new


def _custom(
    graph: Any, node: Any, ir: Operator, plan: Plan, nodes: dict[str, Any], op: TorchOp
) -> Any:
    """The shader op of the plan as ``tosa.CUSTOM`` and the ``getitem`` of its one result."""
    from executorch.exir.dialects._ops import ops as exir_ops

    result = plan.model.tensors[ir.outputs[0]]
    assert result.shape is not None
    attrs = {"domain_name": CUSTOM_SHADER_DOMAIN, "operator_name": op.operator_name}
    sources = [nodes[name] for name in ir.inputs]
    call = graph.call_function(
        exir_ops.backend.tosa.CUSTOM.default,
        (sources,),
        {**attrs, "implementation_attrs": list(plan.payloads[ir.outputs[0]])},
    )
    call.meta = dict(node.meta)
    first = sources[0].meta["val"]
    value = first.new_empty(result.shape, dtype=TORCH[result.dtype])
    call.meta["val"] = [value]
    out = graph.call_function(operator.getitem, (call, 0))
    out.meta = dict(node.meta)
    out.meta["val"] = value
    return out
