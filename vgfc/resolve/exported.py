"""The payload key that says which kernel-library entry an exported shader op came from.

``vgfc.executorch`` rewrites a call of a PyTorch op into a ``com.arm.VulkanCustomShader`` op that
stands alone (:func:`vgfc.resolve.payload.standalone_payload`); the entry's name is then gone from
the op (its domain is the shader domain). So that ``vgfc verify --kernels lib.yaml`` on the
exported TOSA can still hold the shader to the entry's ``reference``, the payload carries one
metadata key (:mod:`vgfc.resolve.attrs_keys`), which every converter ignores:

    "kernel_library_entry": {"entry": "my_ops/upsample2x", "params": {"beta": 1.5},
                             "inputs": [[0, 2, 3, 1]], "outputs": [[0, 2, 3, 1]]}

``params`` are the call's parameters as the entry decodes them (JSON), and per operand the
permutation that takes the entry's view to the shader's (``null``: the same view). It is written
only when the shader's operands are the entry's up to such a permutation: a call whose kernel
needed a CAST or a channel PAD has no key, and verify calls its op unverified, saying why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from vgfc.ir import Operator
from vgfc.record import record

__all__ = ["KEY", "Exported", "entry_metadata", "inverse", "read_exported"]

KEY = "kernel_library_entry"


@record
class Exported:
    entry: str
    """``domain/name`` of the entry."""
    params: bytes
    """The parameters as the entry decodes them (JSON)."""
    inputs: tuple[tuple[int, ...] | None, ...]
    outputs: tuple[tuple[int, ...] | None, ...]


def entry_metadata(
    label: str,
    params: bytes,
    entry_inputs: Sequence[str],
    entry_outputs: Sequence[str],
    operators: Sequence[Operator],
    shader: Operator,
) -> dict[str, Any] | None:
    """The key for ``shader``, one of the ``operators`` an entry's call was bound to, or
    ``None`` when an operand went through anything but TRANSPOSEs on its way."""
    producer = {o: op for op in operators for o in op.outputs}
    consumer = {i: op for op in operators for i in op.inputs}

    def perm(start: str, ends: Sequence[str], step: Mapping[str, Operator], back: bool) -> Any:
        total: list[int] | None = None
        name = start
        while name not in ends:
            op = step.get(name)
            if op is None or op.op != "TRANSPOSE" or len(op.inputs) != 1:
                return False
            perms = op.attrs.get("perms")
            p = [int(v) for v in perms] if isinstance(perms, tuple | list) else []
            # TRANSPOSE: out[i] = in[p[i]]; composed in the order the values flow.
            if total is None:
                total = p
            elif back:  # walking from the shader back to the entry: p runs first
                total = [p[i] for i in total]
            else:
                total = [total[i] for i in p]
            name = op.inputs[0] if back else op.outputs[0]
        return total

    inputs = [perm(n, entry_inputs, producer, True) for n in shader.inputs]
    # A result flows from the shader to the entry's output: the inverse goes entry -> shader.
    outputs = [inverse(perm(n, entry_outputs, consumer, False)) for n in shader.outputs]
    if any(p is False for p in (*inputs, *outputs)):
        return None
    return {
        KEY: {
            "entry": label,
            "params": json.loads(params) if params else {},
            "inputs": inputs,
            "outputs": outputs,
        }
    }


def read_exported(op: Operator) -> Exported | None:
    """The key of ``op``'s payload, or ``None`` when it has none or it is not well formed."""
    raw = op.attrs.get("implementation_attrs")
    if not isinstance(raw, bytes | bytearray | memoryview) or KEY.encode() not in bytes(raw):
        return None
    try:
        value = json.loads(bytes(raw)).get(KEY)
    except (UnicodeDecodeError, ValueError, AttributeError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("entry"), str):
        return None
    perms = []
    for side in ("inputs", "outputs"):
        listed = value.get(side)
        if not isinstance(listed, list) or not all(_is_perm(p) for p in listed):
            return None
        perms.append(tuple(None if p is None else tuple(p) for p in listed))
    params = value.get("params", {})
    if not isinstance(params, dict):
        return None
    return Exported(value["entry"], json.dumps(params).encode(), perms[0], perms[1])


def inverse(p: Any) -> Any:
    """The permutation that undoes ``p`` (``None`` and ``False`` stay as they are)."""
    if not isinstance(p, list | tuple):
        return p
    back = [0] * len(p)
    for i, v in enumerate(p):
        back[v] = i
    return back


def _is_perm(p: object) -> bool:
    return p is None or (
        isinstance(p, list)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in p)
        and sorted(p) == list(range(len(p)))
    )
