"""Build TOSA flatbuffers for tests with the generated ``tosa`` builder functions.

Unlike tosa-tools' serializer this can also write what a correct writer never would (cycles,
dangling names, unknown op codes, foreign versions), which the error tests need.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
import tosa.Attribute as fb_attribute
import tosa.DType as fb_dtype
import tosa.Op as fb_op
from tosa import (
    OpLocation,
    TosaBasicBlock,
    TosaGraph,
    TosaOperator,
    TosaRegion,
    TosaShape,
    TosaTensor,
    Version,
)

SHADER_DOMAIN = "com.arm.VulkanCustomShader"


@dataclass
class T:
    """A tensor: name, shape, dtype name, optional constant data (raw or numpy)."""

    name: str
    shape: Sequence[int] = (1, 4)
    dtype: str = "FP32"
    data: bytes | np.ndarray | None = None
    offset: int = 0
    size: int = 0
    unranked: bool = False


@dataclass
class Op:
    """An operator: op name (or raw code), inputs, outputs, attribute table name and fields."""

    op: str | int
    inputs: Sequence[str] = ()
    outputs: Sequence[str] = ()
    attr: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    location: str | None = None


def custom(
    inputs: Sequence[str],
    outputs: Sequence[str],
    name: str = "kernel",
    domain: str = SHADER_DOMAIN,
    attrs: dict[str, Any] | bytes | None = None,
) -> Op:
    payload = attrs if isinstance(attrs, bytes) else json.dumps(attrs or {}).encode()
    return Op(
        "CUSTOM",
        inputs,
        outputs,
        "CustomAttribute",
        {"operator_name": name, "domain_name": domain, "implementation_attrs": payload},
    )


def _camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


def _u8_vector(b: flatbuffers.Builder, data: bytes) -> int:
    b.StartVector(1, len(data), 8)
    b.head = b.head - len(data)
    b.Bytes[b.head : b.head + len(data)] = data
    return b.EndVector()


def _str_vector(b: flatbuffers.Builder, items: Sequence[str]) -> int:
    offs = [b.CreateString(s) for s in items]
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _table_vector(b: flatbuffers.Builder, offs: Sequence[int]) -> int:
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _attribute(b: flatbuffers.Builder, name: str, fields: dict[str, Any]) -> int:
    module = __import__(f"tosa.{name}", fromlist=[name])
    prepared: dict[str, Any] = {}
    for key, value in fields.items():
        if isinstance(value, bytes):
            prepared[key] = _u8_vector(b, value)
        elif isinstance(value, str):
            prepared[key] = b.CreateString(value)
        elif isinstance(value, (list, tuple)):
            prepared[key] = b.CreateNumpyVector(np.asarray(value, dtype=np.int32))
        else:
            prepared[key] = value
    module.Start(b)
    for key, value in prepared.items():
        getattr(module, f"Add{_camel(key)}")(b, value)
    return module.End(b)


def _raw(t: T) -> bytes | None:
    if t.data is None:
        return None
    if isinstance(t.data, bytes):
        return t.data
    return np.ascontiguousarray(t.data).tobytes()


def build(
    tensors: Sequence[T],
    ops: Sequence[Op],
    inputs: Sequence[str],
    outputs: Sequence[str],
    *,
    version: tuple[int, int, int, bool] = (1, 0, 0, False),
    shapes: Sequence[tuple[str, int, Sequence[int] | None]] = (),
    extra_regions: Sequence[str] = (),
    trailing: bytes = b"",
) -> bytes:
    """Serialize one main block (plus empty extra regions); ``trailing`` is appended raw."""
    b = flatbuffers.Builder(1024)
    t_offs = []
    for t in tensors:
        name = b.CreateString(t.name)
        shape = b.CreateNumpyVector(np.asarray(t.shape, dtype=np.int32))
        raw = _raw(t)
        data = _u8_vector(b, raw) if raw is not None else None
        TosaTensor.Start(b)
        TosaTensor.AddName(b, name)
        TosaTensor.AddShape(b, shape)
        TosaTensor.AddType(b, getattr(fb_dtype.DType, t.dtype))
        if data is not None:
            TosaTensor.AddData(b, data)
        if t.offset:
            TosaTensor.AddOffset(b, t.offset)
            TosaTensor.AddSize(b, t.size)
        if t.unranked:
            TosaTensor.AddIsUnranked(b, True)
        t_offs.append(TosaTensor.End(b))
    s_offs = []
    for name, rank, values in shapes:
        n = b.CreateString(name)
        d = _u8_vector(b, np.asarray(values, "<i8").tobytes()) if values is not None else None
        TosaShape.Start(b)
        TosaShape.AddName(b, n)
        TosaShape.AddRank(b, rank)
        if d is not None:
            TosaShape.AddData(b, d)
        s_offs.append(TosaShape.End(b))
    o_offs = []
    for op in ops:
        ins = _str_vector(b, op.inputs)
        outs = _str_vector(b, op.outputs)
        attr = _attribute(b, op.attr, op.fields) if op.attr else None
        loc = None
        if op.location is not None:
            text = b.CreateString(op.location)
            OpLocation.Start(b)
            OpLocation.AddText(b, text)
            loc = OpLocation.End(b)
        TosaOperator.Start(b)
        code = op.op if isinstance(op.op, int) else getattr(fb_op.Op, op.op)
        TosaOperator.AddOp(b, code)
        if attr is not None and op.attr is not None:
            TosaOperator.AddAttributeType(b, getattr(fb_attribute.Attribute, op.attr))
            TosaOperator.AddAttribute(b, attr)
        TosaOperator.AddInputs(b, ins)
        TosaOperator.AddOutputs(b, outs)
        if loc is not None:
            TosaOperator.AddLocation(b, loc)
        o_offs.append(TosaOperator.End(b))
    block_name = b.CreateString("main")
    tv, sv, ov = _table_vector(b, t_offs), _table_vector(b, s_offs), _table_vector(b, o_offs)
    iv, outv = _str_vector(b, inputs), _str_vector(b, outputs)
    TosaBasicBlock.Start(b)
    TosaBasicBlock.AddName(b, block_name)
    TosaBasicBlock.AddOperators(b, ov)
    TosaBasicBlock.AddTensors(b, tv)
    TosaBasicBlock.AddInputs(b, iv)
    TosaBasicBlock.AddOutputs(b, outv)
    TosaBasicBlock.AddShapes(b, sv)
    block = TosaBasicBlock.End(b)
    regions = []
    for rname in ("main", *extra_regions):
        blocks = _table_vector(b, [block] if rname == "main" else [])
        n = b.CreateString(rname)
        TosaRegion.Start(b)
        TosaRegion.AddName(b, n)
        TosaRegion.AddBlocks(b, blocks)
        regions.append(TosaRegion.End(b))
    rv = _table_vector(b, regions)
    Version.Start(b)
    Version.Add_Major(b, version[0])
    Version.Add_Minor(b, version[1])
    Version.Add_Patch(b, version[2])
    Version.Add_Draft(b, version[3])
    ver = Version.End(b)
    TosaGraph.Start(b)
    TosaGraph.AddVersion(b, ver)
    TosaGraph.AddRegions(b, rv)
    b.Finish(TosaGraph.End(b), b"TOSA")
    return bytes(b.Output()) + trailing


def chain(n_ops: int = 1, op: str = "ABS") -> bytes:
    """x -> op -> op -> ... -> y: the smallest valid models."""
    names = ["x", *[f"t{i}" for i in range(n_ops - 1)], "y"]
    tensors = [T(n) for n in names]
    ops = [Op(op, [names[i]], [names[i + 1]]) for i in range(n_ops)]
    return build(tensors, ops, ["x"], ["y"])
