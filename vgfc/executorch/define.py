"""Defining a kernel-library entry as a ``torch.library`` op: its schema checked against the
entry (tensor arguments are the inputs, every other argument a parameter of a matching type, one
tensor result a kernel computes), its eager implementation from the entry's ``reference``, its
fake one from the entry's shape and type inference, which also plans the call
(:mod:`vgfc.executorch.plan`) so that a call the kernels cannot take fails at export.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from vgfc.diagnostics import InputError, Location
from vgfc.executorch.op import DEFINED, TORCH, TorchOp, current, outputs
from vgfc.executorch.plan import plan_call
from vgfc.record import replace

if TYPE_CHECKING:
    from vgfc.resolve.library.records import Entry

__all__ = ["define"]

_SCALARS = {
    "float": ("f32", "f64"),
    "int": ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"),
    "bool": ("bool",),
    "str": ("str",),
}
"""A schema argument's type and the parameter types it may carry."""


def define(entry: Entry) -> TorchOp:
    """``entry`` (one with a ``torch`` schema) as a ``torch.library`` op, defined once per
    process: an entry loaded again replaces the op's entry when its schema is the same. Raises
    :class:`InputError` naming the entry's ``torch`` line."""
    assert entry.torch is not None
    where = Location(key=f"{entry.label}: torch").merged(entry.where(entry.torch_line))
    try:
        schema = torch._C.parse_schema(entry.torch)
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "not a schema"
        raise InputError(f"not a PyTorch operator schema: {first}", where) from None
    qualname = schema.name
    if "::" not in qualname or schema.overload_name:
        overload = f".{schema.overload_name}" if schema.overload_name else ""
        raise InputError(
            f"the schema names '{qualname}{overload}': write namespace::name, without an "
            "overload name",
            where,
        )
    op = TorchOp(entry, qualname, schema)
    _check(op, where)
    known = DEFINED.get(qualname)
    if known is not None:
        if known[0] != entry.torch:
            raise InputError(
                f"{qualname} is already defined in this process with another schema ({known[0]})",
                where,
            )
        op = replace(known[2], entry=entry)
        DEFINED[qualname] = (entry.torch, known[1], op)
        return op
    namespace, name = qualname.split("::")
    library = torch.library.Library(namespace, "FRAGMENT")
    library.define(entry.torch.split("::", 1)[1])
    library.impl(name, _eager(qualname), "CompositeExplicitAutograd")
    torch.library.register_fake(qualname, _fake(qualname), lib=library)
    DEFINED[qualname] = (entry.torch, library, op)
    return op


def _check(op: TorchOp, where: Location) -> None:
    """The schema against the entry: tensor arguments are the inputs, in order; every other
    argument is a parameter of a matching type; parameters the schema lacks have defaults; one
    tensor result, the entry's one output, which a kernel (not a composed graph) computes."""
    entry = op.entry
    tensors = [a.name for a in op.schema.arguments if str(a.type) == "Tensor"]
    if tensors != list(entry.inputs):
        raise InputError(
            f"the schema's tensor arguments ({', '.join(tensors) or 'none'}) are not the "
            f"entry's inputs ({', '.join(entry.inputs)}), in order",
            where,
        )
    fields = {f.name: f for f in entry.params.fields}
    for argument in op.schema.arguments:
        kind = str(argument.type)
        if kind == "Tensor":
            continue
        field = fields.get(argument.name)
        if field is None:
            known = ", ".join(fields) or "none"
            raise InputError(
                f"argument '{argument.name}' is not a parameter of the entry (it has {known})",
                where,
            )
        base = kind.removesuffix("[]")
        allowed = _SCALARS.get(base)
        listed = kind.endswith("[]")
        if field.values and base == "str":
            allowed = (field.type,)  # an enum: the name goes in, its code to the kernel
        if (
            allowed is None
            or field.type not in allowed
            or listed != bool(field.count or field.variable)
        ):
            shape = f"{field.type} x {field.count}" if field.count else field.type
            raise InputError(
                f"argument '{argument.name}' is {kind}, the parameter is {shape}", where
            )
    given = {a.name for a in op.schema.arguments}
    for field in entry.params.fields:
        if field.name not in given and not field.has_default:
            raise InputError(
                f"parameter '{field.name}' has no default and the schema does not pass it", where
            )
    if entry.params.fields and entry.params.encoding not in ("json", "none"):
        raise InputError(
            f"a PyTorch op passes its parameters as JSON; the entry decodes "
            f"{entry.params.encoding} (params.encoding: json)",
            where,
        )
    returns = [str(r.type) for r in op.schema.returns]
    if returns != ["Tensor"] or len(entry.outputs) != 1:
        raise InputError(
            f"the schema returns {' , '.join(returns) or 'nothing'} and the entry has "
            f"{len(entry.outputs)} output(s): an ExecuTorch custom op returns one Tensor "
            "(tosa.CUSTOM takes a single output)",
            where,
        )
    if entry.compose is not None or not entry.kernels:
        raise InputError(
            "only an entry with kernels can be a PyTorch op, not a composed one", where
        )
    rule = entry.infer.get(entry.outputs[0])
    if rule is None or rule.dtype is None or rule.shape is None:
        raise InputError(
            f"the entry's infer gives no dtype and shape for '{entry.outputs[0]}': a PyTorch op "
            "needs both (infer: {y: {same_as: x}})",
            where,
        )


def _eager(qualname: str) -> Any:
    def eager(*args: Any, **kwargs: Any) -> torch.Tensor:
        op = current(qualname)
        entry = op.entry
        if entry.reference is None:
            where = entry.where().render()
            raise RuntimeError(
                f"{qualname} has no eager implementation: its kernel-library entry ({where}) "
                "names no reference (reference: module:function, numpy in, numpy out)"
            )
        from vgfc.resolve.reference import call_reference

        bound = op.bind(args, kwargs)
        arrays = [bound[n].detach().cpu().numpy() for n in entry.inputs]
        (out,) = call_reference(entry, arrays, op.params(bound), outputs(op, bound))
        return torch.from_numpy(np.ascontiguousarray(out))

    return eager


def _fake(qualname: str) -> Any:
    def fake(*args: Any, **kwargs: Any) -> torch.Tensor:
        op = current(qualname)
        bound = op.bind(args, kwargs)
        (out,) = outputs(op, bound)
        plan_call(op, bound)  # a call the kernels cannot take fails here, at export
        first = bound[op.entry.inputs[0]]
        return first.new_empty(out.shape, dtype=TORCH[out.dtype])

    return fake
