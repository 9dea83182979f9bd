"""FP16 narrowing (``--type-narrowing full|partial``): FP32 values and constants become FP16.

What the reference converter (model-converter 0.11.0) does, read from its output, and what this
pass does the same way:

- every FP32 tensor becomes FP16: operator results, constants (each value rounded once, to
  nearest even; past FP16's range it becomes an infinity, as a cast would make it), and the graph's
  inputs and outputs, so the VGF's interface is FP16 (``VK_FORMAT_R16_SFLOAT``): no CAST is added
  at the boundary;
- CLAMP's bounds are rounded to FP16 as its operand is;
- ``full`` also makes every FP32 accumulator FP16 (``acc_type`` of CONV2D, CONV3D,
  DEPTHWISE_CONV2D, TRANSPOSE_CONV2D and AVG_POOL2D, FP16 operands too); ``partial`` keeps them
  FP32. MATMUL and the reductions have no accumulator type in TOSA 1.0: their results are FP16
  in both modes, as they are in the reference's;
- a CAST from FP16 to FP32 or back becomes one from FP16 to FP16, an IDENTITY here (``simplify``
  then removes it where it may).

Where the reference fails (``Failed to compile network``), this pass keeps FP32 and converts at
the edge instead: operators with no FP16 form (FFT2D, RFFT2D), those that also read or write
another float type (BF16, FP8: CAST from BF16, MATMUL of BF16), CUSTOM operators (a shader's
operands keep the types it was written for) and those that touch a variable keep their FP32
values, and a CAST (FP16 to FP32 after a narrowed producer, FP32 to FP16 before narrowed
readers) or an FP16 copy of a constant is inserted between them and the narrowed operators.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vgfc.dtypes import DType
from vgfc.ir import AttrValue, Data, Graph, Operator, Tensor
from vgfc.options import NARROWING_MODES
from vgfc.passes.edit import in_order, rebuild
from vgfc.passes.records import Rewrite, Rewritten
from vgfc.record import replace

__all__ = ["MODES", "narrow"]

MODES = NARROWING_MODES[1:]
"""The narrowing modes (``none`` turns the pass off)."""

_PASS = "type-narrowing"

_NO_FP16 = frozenset({"FFT2D", "RFFT2D", "CUSTOM"})
"""Operators whose FP32 operands stay FP32: TOSA has no FP16 form of them, or (CUSTOM) a shader
was written for the types the model gave it."""

_OTHER_FLOATS = frozenset(
    t for t in DType if t.is_float and t not in (DType.FP32, DType.FP16) and t is not DType.SHAPE
)


def _fp32(tensor: Tensor) -> bool:
    return tensor.dtype is DType.FP32 and not tensor.is_shape


def _kept(op: Operator, tensors: Mapping[str, Tensor]) -> bool:
    """Whether ``op`` keeps its FP32 values (see the module docstring)."""
    if op.op in _NO_FP16:
        return True
    for name in (*op.inputs, *op.outputs):
        tensor = tensors[name]
        if tensor.is_variable or tensor.dtype in _OTHER_FLOATS:
            return True
    return op.op.startswith("VARIABLE")


def _half(value: AttrValue) -> AttrValue:
    """A CLAMP bound rounded to FP16 (to nearest even), as a number again."""
    import numpy as np

    if not isinstance(value, float | int) or isinstance(value, bool):
        return value
    with np.errstate(over="ignore"):
        return float(np.float16(value))


def _narrowed_op(op: Operator, mode: str, fp32_in: bool) -> tuple[Operator, str]:
    """``op`` as it reads and writes FP16, and what changed besides the types."""
    attrs = dict(op.attrs)
    notes = []
    if op.op == "CLAMP" and fp32_in:
        for key in ("min_val", "max_val"):
            if key in attrs:
                attrs[key] = _half(attrs[key])
        notes.append("bounds rounded to FP16")
    if attrs.get("acc_type") == "FP32":
        if mode == "full":
            attrs["acc_type"] = "FP16"
            notes.append("accumulator FP16")
        else:
            notes.append("accumulator kept FP32")
    if attrs != dict(op.attrs):
        op = replace(op, attrs=MappingProxyType(attrs))
    return op, "; ".join(notes)


def _unique(base: str, taken: set[str]) -> str:
    name, n = f"{base}.fp16", 1
    while name in taken:
        n += 1
        name = f"{base}.fp16.{n}"
    taken.add(name)
    return name


def narrow(graph: Graph, mode: str) -> Rewritten:
    """``graph`` with its FP32 values made FP16 as ``mode`` says (see the module docstring)."""
    assert mode in MODES, mode
    tensors = graph.tensors
    accumulates = any(op.attrs.get("acc_type") == "FP32" for op in graph.operators)
    if not accumulates and not any(_fp32(t) for t in tensors.values()):
        return Rewritten(graph)
    import numpy as np

    order = in_order(graph)
    kept = {op.index for op in order if op.op != "CONST" and _kept(op, tensors)}
    producer = {name: op for op in order for name in op.outputs}
    # FP32 values a kept operator reads or writes stay FP32 (pinned); every other becomes FP16.
    pinned = {
        name
        for op in order
        if op.index in kept
        for name in (*op.inputs, *op.outputs)
        if _fp32(tensors[name])
    }
    pinned.update(name for name, t in tensors.items() if t.is_variable and _fp32(t))
    table = dict(tensors)
    taken = set(table)
    for name, tensor in tensors.items():
        if _fp32(tensor) and name not in pinned:
            data = None
            if tensor.data is not None:
                with np.errstate(over="ignore"):
                    data = Data.of(np.asarray(tensor.data.array).astype(np.float16), DType.FP16)
            table[name] = replace(tensor, dtype=DType.FP16, data=data)
    # The FP16 twin of each pinned value that a narrowed operator reads or writes.
    twin: dict[str, str] = {}
    narrowed_readers = {
        name
        for op in order
        if op.index not in kept and op.op != "CONST"
        for name in op.inputs
        if name in pinned
    }
    narrowed_writers = {
        name
        for op in order
        if op.index not in kept and op.op != "CONST"
        for name in op.outputs
        if name in pinned
    }
    for name in sorted(narrowed_readers | narrowed_writers):
        twin[name] = _unique(name, taken)
        source = tensors[name]
        data = None
        if source.data is not None and not source.is_variable:
            with np.errstate(over="ignore"):
                data = Data.of(np.asarray(source.data.array).astype(np.float16), DType.FP16)
        table[twin[name]] = Tensor(twin[name], source.shape, DType.FP16, data)

    def edge(src: str, dst: str, at: Operator | None, why: str) -> Operator:
        index = at.file_index if at is not None else 0
        made = "CONST" if table[dst].data is not None else "CAST"
        inputs = () if made == "CONST" else (src,)
        rewrites.append(Rewrite(_PASS, index, made, "inserted", why))
        return Operator(
            index,
            made,
            inputs,
            (dst,),
            source_index=index,
            inserted=f"inserted by type narrowing: {why}",
        )

    rewrites: list[Rewrite] = []
    operators: list[Operator] = []
    # Pinned graph inputs and constants with no producer in the graph get their twin first.
    for name in sorted(narrowed_readers):
        if name not in producer:
            operators.append(edge(name, twin[name], None, f"FP16 copy of '{name}'"))
    for op in order:
        if op.op == "CONST":
            operators.append(op)
            if op.outputs and op.outputs[0] in narrowed_readers:
                name = op.outputs[0]
                operators.append(edge(name, twin[name], op, f"FP16 copy of '{name}'"))
            elif op.outputs and _fp32(tensors[op.outputs[0]]) and op.outputs[0] not in pinned:
                rewrites.append(
                    Rewrite(_PASS, op.file_index, "CONST", "narrowed", "rounded to FP16")
                )
            continue
        if op.index in kept:
            operators.append(op)
            for name in op.outputs:
                if name in narrowed_readers:
                    why = f"FP32 -> FP16 of what #{op.file_index} {op.op} writes"
                    operators.append(edge(name, twin[name], op, why))
            continue
        fp32_in = any(_fp32(tensors[n]) for n in op.inputs)
        touched = fp32_in or any(_fp32(tensors[n]) for n in op.outputs)
        new, note = _narrowed_op(op, mode, fp32_in)
        new = replace(
            new,
            inputs=tuple(twin.get(n, n) for n in new.inputs),
            outputs=tuple(twin.get(n, n) for n in new.outputs),
        )
        if new.op == "CAST" and table[new.inputs[0]].dtype is table[new.outputs[0]].dtype:
            new = replace(new, op="IDENTITY")
            note = "; ".join(filter(None, ("a CAST to the same type, an IDENTITY", note)))
        operators.append(new)
        if touched or new is not op:
            why = "FP32 -> FP16" + (f"; {note}" if note else "") if touched else note
            rewrites.append(Rewrite(_PASS, op.file_index, op.op, "narrowed", why))
        for name in op.outputs:
            if name in twin:
                why = f"FP16 -> FP32 of what #{op.file_index} {op.op} writes, for FP32 readers"
                operators.append(edge(twin[name], name, op, why))
    if not rewrites:
        return Rewritten(graph)
    return Rewritten(rebuild(graph, operators, table), tuple(rewrites))
