"""Models with COND_IF and WHILE_LOOP, written by tosa-tools' own serializer (the one its test
generator uses), so that the regions' layout is the official writer's, not ours."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import serializer.tosa_serializer as ts
    from tosa.DType import DType
    from tosa.Op import Op


def _serialize(folder: Path, build: Callable[[Any], None]) -> Path:
    ser = ts.TosaSerializer(str(folder))
    build(ser)
    path = folder / "model.tosa"
    path.write_bytes(ser.serialize())
    return path


def _cond_if_attr(then: str, orelse: str) -> Any:
    attr = ts.TosaSerializerAttribute()
    attr.CondIfAttribute(then, orelse)
    return attr


def _attr(name: str) -> Any:
    attr = ts.TosaSerializerAttribute()
    getattr(attr, f"{name}Attribute")()
    return attr


def cond_if_select(
    folder: Path, shape: list[int], cond_shape: list[int] | None = None, *, else_shape: Any = None
) -> Path:
    """COND_IF on a graph input: ``then`` adds, ``else`` subtracts (FP32 ``shape``)."""

    def build(ser: Any) -> None:
        zeros = np.zeros(shape, np.float32)
        cond = ser.addPlaceholder(cond_shape or [], DType.BOOL, np.zeros(cond_shape or [], bool))
        a = ser.addPlaceholder(shape, DType.FP32, zeros)
        b = ser.addPlaceholder(shape, DType.FP32, zeros)
        out = ser.addOutput(shape, DType.FP32)
        ser.addOperator(
            Op.COND_IF, [cond.name, a.name, b.name], [out.name], _cond_if_attr("THEN", "ELSE")
        )
        prefix = ser.regions[0].pathPrefix
        for block, op, result_shape in (
            ("THEN", Op.ADD, shape),
            ("ELSE", Op.SUB, else_shape or shape),
        ):
            ser.startRegion(block, prefix)
            ser.addBasicBlock(block)
            ser.addInputTensor(a)
            ser.addInputTensor(b)
            result = ser.addOutput(result_shape, DType.FP32)
            name = "Add" if op == Op.ADD else "Sub"
            ser.addOperator(op, [a.name, b.name], [result.name], _attr(name))

    return _serialize(folder, build)


def while_loop(folder: Path, trips: int | None, size: int = 4) -> Path:
    """``acc += step`` while ``counter > 0``, ``counter -= 1``: the counter starts as a
    constant ``trips``, or as a graph input when ``trips`` is None."""

    def build(ser: Any) -> None:
        if trips is None:
            counter = ser.addPlaceholder([], DType.INT32, np.zeros([], np.int32))
        else:
            counter = ser.addConst([], DType.INT32, np.array(trips, np.int32))
        acc = ser.addPlaceholder([size], DType.FP32, np.zeros([size], np.float32))
        out_counter = ser.addIntermediate([], DType.INT32)
        out_acc = ser.addIntermediate([size], DType.FP32)
        attr = ts.TosaSerializerAttribute()
        attr.WhileLoopAttribute("COND", "BODY")
        ser.addOperator(
            Op.WHILE_LOOP, [counter.name, acc.name], [out_counter.name, out_acc.name], attr
        )
        ser.addOutputTensor(out_acc)
        prefix = ser.regions[0].pathPrefix
        ser.startRegion("COND", prefix)
        ser.addBasicBlock("COND")
        ser.addInputTensor(counter)
        ser.addInputTensor(acc)
        zero = ser.addConst([], DType.INT32, np.array(0, np.int32))  # the block's own
        decided = ser.addOutput([], DType.BOOL)
        ser.addOperator(Op.GREATER, [counter.name, zero.name], [decided.name], _attr("Greater"))
        ser.startRegion("BODY", prefix)
        ser.addBasicBlock("BODY")
        ser.addInputTensor(counter)
        ser.addInputTensor(acc)
        one = ser.addConst([], DType.INT32, np.array(1, np.int32))
        step = ser.addConst([size], DType.FP32, np.arange(1, size + 1, dtype=np.float32))
        next_counter = ser.addOutput([], DType.INT32)
        next_acc = ser.addOutput([size], DType.FP32)
        ser.addOperator(Op.SUB, [counter.name, one.name], [next_counter.name], _attr("Sub"))
        ser.addOperator(Op.ADD, [acc.name, step.name], [next_acc.name], _attr("Add"))

    return _serialize(folder, build)
