"""Defining a kernel-library entry as a ``torch.library`` op: its schema checked against the
entry (:mod:`vgfc.resolve.library.torch_schema`), its eager implementation from the entry's
``reference``, its fake one from the entry's shape and type inference, which also plans the call
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
from vgfc.resolve.library.torch_schema import check_torch

if TYPE_CHECKING:
    from vgfc.resolve.library.records import Entry

__all__ = ["define"]


def define(entry: Entry) -> TorchOp:
    """``entry`` (one with a ``torch`` schema) as a ``torch.library`` op, defined once per
    process: an entry loaded again replaces the op's entry when its schema is the same. The
    schema is held to the entry first (:func:`~vgfc.resolve.library.torch_schema.check_torch`,
    the check ``vgfc kernels`` runs too). Raises :class:`InputError` naming the entry's
    ``torch`` line."""
    assert entry.torch is not None
    checked = check_torch(entry)
    where = Location(key=f"{entry.label}: torch").merged(
        entry.where(entry.torch_line, entry.torch_column)
    )
    try:
        schema = torch._C.parse_schema(entry.torch)
    except RuntimeError as e:  # what vgfc's reading let through and torch does not
        first = str(e).strip().splitlines()[0] if str(e).strip() else "not a schema"
        raise InputError(f"not a PyTorch operator schema: {first}", where) from None
    qualname = checked.qualname
    op = TorchOp(entry, qualname, schema)
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
