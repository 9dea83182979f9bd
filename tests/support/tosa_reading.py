"""A TOSA graph as the reader gives it, in a form that compares with what tosa-tools' generated
classes read (``as_read``), and one model with an op of every code (``every_op_model``): the
reader's reference tests and its bulk-versus-table property both use them."""

from __future__ import annotations

from typing import Any

import numpy as np
import tosa.Attribute
import tosa.Op
from tosa_factory import Op, T, build, custom

from vgfc.dtypes import numpy_dtype
from vgfc.ir import DType, Graph


def _names(enum: type) -> dict[int, str]:
    return {v: k for k, v in vars(enum).items() if not k.startswith("_")}


OPS = _names(tosa.Op.Op)
"""Op names by code, from the schema."""
ATTRIBUTES = _names(tosa.Attribute.Attribute)
"""Attribute table names by code (the union tag an op's table has), from the schema."""


def _bytes_of(dtype: DType, values: Any) -> bytes:
    """Constant values as the file stores them (little-endian, INT4 packed, INT48 in 6 bytes)."""
    array = np.asarray(values)
    if dtype is DType.INT48:
        return b"".join(int(v).to_bytes(6, "little", signed=True) for v in array.flat)
    if dtype is DType.INT4:
        nibbles = (array.reshape(-1).astype(np.int16) & 0xF).astype(np.uint8)
        nibbles = np.append(nibbles, np.zeros(nibbles.size % 2, np.uint8))
        return (nibbles[0::2] | (nibbles[1::2] << 4)).tobytes()
    little = numpy_dtype(dtype)
    return array.astype(little).tobytes() if little is not None else array.tobytes()


def as_read(graph: Graph) -> dict[str, Any]:
    """``graph`` in the shape of :func:`reference`, constant data as the bytes it came from."""
    tensors = []
    for t in graph.tensors.values():
        raw = b"" if t.data is None else _bytes_of(t.dtype, t.data)
        tensors.append((t.name, t.shape, t.dtype.name, raw, t.is_variable))
    operators = []
    for op in graph.operators:
        attrs = {}
        for key, value in op.attrs.items():
            camel = "".join(part.capitalize() for part in key.split("_"))
            if op.op == "CLAMP" and key in ("min_val", "max_val") and value != b"":
                value = _bytes_of(graph.tensors[op.inputs[0]].dtype, value)
            attrs[camel] = value
        operators.append((op.op, op.inputs, op.outputs, attrs, op.location_text))
    v = graph.version
    return {
        "version": (v.major, v.minor, v.patch, v.draft),
        "regions": graph.regions,
        "tensors": tensors,
        "operators": operators,
        "inputs": graph.inputs,
        "outputs": graph.outputs,
    }


def every_op_model() -> bytes:
    """One op of every code with its own attribute table (fields at their defaults), a few
    with fields set, locations on some, constants of two types and a shape value: more than
    one bulk batch."""
    tensors = [T("x", (1, 8)), T("c", (1, 8), "FP32", np.arange(8, dtype=np.float32))]
    tensors.append(T("i8", (2, 3), "INT8", np.arange(6, dtype=np.int8)))
    ops = [Op("CONST", [], ["c"]), Op("CONST", [], ["i8"])]
    for code, name in sorted(OPS.items()):
        if code == 0:
            continue
        out = f"y{code}"
        tensors.append(T(out, (1, 8), "INT32" if code % 3 else "FP32"))
        location = f"loc{code}" if code % 5 == 0 else None
        ops.append(Op(name, ["x", "c"], [out], ATTRIBUTES.get(code), {}, location=location))
    ops.append(
        Op(
            "CONV2D",
            ["x", "c"],
            ["conv"],
            "Conv2dAttribute",
            {"pad": [1, 2, 3, 4], "stride": [2, 2], "dilation": [1, 1], "acc_type": 3},
        )
    )
    ops.append(
        Op(
            "CLAMP",
            ["i8"],
            ["clamped"],
            "ClampAttribute",
            {"min_val": b"\xfd", "max_val": b"\x64", "nan_mode": 2},
        )
    )
    ops.append(custom(["x"], ["shaded"], "blur", attrs={"entry_point": "main"}))
    tensors += [T("conv", (1, 8)), T("clamped", (2, 3), "INT8"), T("shaded", (1, 8))]
    return build(tensors, ops, ["x"], ["conv"], shapes=[("s", 2, [3, 2])])
