"""What one call of a PyTorch op becomes in vgfc's terms: the :class:`Plan`.

A call (its shapes, types and parameters) is written as a one-op TOSA graph holding the entry's
``CUSTOM`` op, bound as ``vgfc compile`` binds it (:func:`vgfc.resolve.bind_entry`: kernel
selection, the conversions the kernel needs, the resource contract), and each shader op of the
binding gets its standalone ``com.arm.VulkanCustomShader`` payload
(:func:`vgfc.resolve.payload.standalone_payload`: compiled, validated, cross-checked, read back).
Plans are kept per distinct call: made when the op is exported (its fake implementation runs),
used again when the Arm backend rewrites it (:mod:`vgfc.executorch.rewrite`).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import torch

from vgfc.diagnostics import InputError, VgfcError
from vgfc.executorch.op import TORCH, TorchOp, current, operands, outputs
from vgfc.ir import Graph, Operator, Tensor, Version
from vgfc.record import record, replace
from vgfc.resolve.exported import entry_metadata

if TYPE_CHECKING:
    from vgfc.compiler import Options
    from vgfc.resolve.library.records import Entry

__all__ = ["OPTIONS", "PAYLOADS", "Plan", "plan_call"]

OPTIONS: dict[str, Options] = {}
"""How each op's shaders are compiled: the options of the :func:`vgfc.executorch.load` that
defined it last."""
PAYLOADS: dict[tuple[str, bytes], tuple[tuple[int, ...], torch.dtype]] = {}
"""(operator_name, payload) -> the shape and type of the ``tosa.CUSTOM`` op's result, for its
TOSA-dialect fake (which gets only the payload)."""

_VERSION = Version(1, 0, 0, False)


@record
class Plan:
    """What one call of an op (its shapes, types and parameters) becomes: vgfc's binding, the
    conversions and the shader op, with each shader op's payload written and checked."""

    operators: tuple[Operator, ...]
    model: Graph
    """The op alone as a TOSA graph, with the tensors the binding added."""
    payloads: Mapping[str, bytes]
    """A shader op's output tensor -> its ``implementation_attrs``."""
    entry: Entry
    """Kept so that the id in the plan's key stays this entry's."""


_PLANS: dict[tuple[Any, ...], Plan] = {}
"""Plans by op, entry, input shapes and types, and parameters: made when the op is exported
(its fake implementation runs), used again when the Arm backend rewrites it."""


def plan_call(op: TorchOp, bound: Mapping[str, Any]) -> Plan:
    """The plan for a call, ``bound`` its arguments by name (tensors real or fake). Kernel
    selection, shader compilation, validation and the cross-check run here, once per distinct
    call, so that a call the kernels cannot take fails at export naming the op, the entry and
    the candidates, and no payload vgfc has not checked reaches a converter."""
    from vgfc.resolve import bind_entry

    op = current(op.qualname)
    entry = op.entry
    inputs = operands(op, bound)
    params = op.params(bound)
    key = (
        op.qualname,
        id(entry),
        tuple((t.shape, t.dtype) for t in inputs.values()),
        json.dumps(params, sort_keys=True, default=str),
    )
    found = _PLANS.get(key)
    if found is not None:
        return found
    options = OPTIONS[op.qualname]
    tensors = {t.name: t for t in (*inputs.values(), *outputs(op, bound))}
    custom = Operator(
        0,
        "CUSTOM",
        tuple(entry.inputs),
        tuple(entry.outputs),
        {
            "domain_name": entry.domain,
            "operator_name": entry.name,
            "implementation_attrs": _params_bytes(op, bound),
        },
    )
    source = f"{op.qualname} ({_call_text(inputs, params)})"
    model = Graph(tensors, (custom,), tuple(entry.inputs), tuple(entry.outputs), _VERSION, source)
    try:
        binding = bind_entry(custom, model, entry, auto_convert=options.auto_convert)
        after = replace(model, tensors={**model.tensors, **binding.tensors})
        payloads = {
            ir.outputs[0]: _payload(
                ir,
                after,
                op,
                options,
                entry_metadata(
                    entry.label,
                    _params_bytes(op, bound),
                    entry.inputs,
                    entry.outputs,
                    binding.operators,
                    ir,
                ),
            )
            for ir in binding.operators
            if ir.shader is not None
        }
    except VgfcError as e:
        raise InputError(e.diagnostic.render(), op.where()) from None
    plan = Plan(binding.operators, after, payloads, entry)
    _PLANS[key] = plan
    return plan


def _call_text(inputs: Mapping[str, Tensor], params: Mapping[str, Any]) -> str:
    """``x: FP32[1, 4, 8, 8], beta=1.5``: a call, for messages."""
    parts = [f"{n}: {t.dtype.value}{list(t.shape or ())}" for n, t in inputs.items()]
    parts += [f"{k}={v!r}" for k, v in params.items()]
    return ", ".join(parts)


def _payload(
    ir: Operator, model: Graph, op: TorchOp, options: Options, metadata: dict[str, Any] | None
) -> bytes:
    """The bound shader op's ``implementation_attrs`` (with the key that names its entry for
    ``vgfc verify``, :mod:`vgfc.resolve.exported`), its compile's warnings issued as Python
    warnings naming the op, and the result its ``tosa.CUSTOM`` op's fake gives."""
    from vgfc.resolve.payload import standalone_payload

    payload, found = standalone_payload(ir, model, op.operator_name, options.shader, metadata)
    for d in found:
        warnings.warn(f"{op.qualname}: {d.render()}", stacklevel=2)
    result = model.tensors[ir.outputs[0]]
    assert result.shape is not None
    PAYLOADS[(op.operator_name, payload)] = (result.shape, TORCH[result.dtype])
    return payload


def _params_bytes(op: TorchOp, bound: Mapping[str, Any]) -> bytes:
    """The call's parameters as the entry decodes them (JSON; an enum's name as its code)."""
    if not op.entry.params.fields:
        return b""
    table = {}
    for field in op.entry.params.fields:
        if field.name not in bound:
            continue
        value = bound[field.name]
        if field.values and isinstance(value, str):
            codes = {name: code for code, name in field.values.items()}
            value = codes.get(value, value)
        table[field.key or field.name] = value
    return json.dumps(table).encode("utf-8")
