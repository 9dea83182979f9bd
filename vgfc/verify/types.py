"""The element types each operator takes: the "Supported Data Types" tables of the TOSA 1.0
specification, over its profiles (PRO-INT, PRO-FP) and extensions (EXT-INT16, EXT-INT4, EXT-BF16,
EXT-FP8E4M3, EXT-FP8E5M2, EXT-FFT).

An operator either takes one element type for every operand (:data:`SAME`: the elementwise
operators, data layout, reductions) or one of a list of signatures (:data:`SIGNATURES`): the
types of its inputs, then of its outputs, shape operands (SHAPE) left out. Written as the
specification writes them, with its short names (``i8``, ``fp16``, ...). Checked for graphs of
TOSA 1.0.x only: the 1.1 draft adds types and combinations this table does not describe. The
official positive suite (13,204 tests over every profile and extension) uses no combination
outside it; a test holds the table to the suite's checked-in sample.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from vgfc.ir import DType
from vgfc.verify.view import OpView, Violation

__all__ = ["SAME", "SIGNATURES", "type_rule"]

_SHORT = {
    "bool": DType.BOOL, "i4": DType.INT4, "i8": DType.INT8, "i16": DType.INT16,
    "i32": DType.INT32, "i48": DType.INT48, "fp16": DType.FP16, "bf16": DType.BF16,
    "fp32": DType.FP32, "fp8e4m3": DType.FP8E4M3, "fp8e5m2": DType.FP8E5M2,
}  # fmt: skip
_FLOAT = "fp16 bf16 fp32"
_ANY = "bool i8 i16 i32 fp16 bf16 fp32 fp8e4m3 fp8e5m2"
_BITS = "i8 i16 i32"


def _types(words: str) -> frozenset[DType]:
    return frozenset(_SHORT[w] for w in words.split())


SAME: Mapping[str, frozenset[DType]] = MappingProxyType(
    {
        **dict.fromkeys(("ABS", "ADD", "SUB", "MAXIMUM", "MINIMUM"), _types(f"i32 {_FLOAT}")),
        **dict.fromkeys(
            ("ARITHMETIC_RIGHT_SHIFT", "BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "BITWISE_NOT",
             "LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"), _types(_BITS)),
        **dict.fromkeys(
            ("CEIL", "FLOOR", "COS", "SIN", "EXP", "LOG", "RECIPROCAL", "RSQRT", "ERF",
             "SIGMOID", "TANH", "POW", "REDUCE_PRODUCT"), _types(_FLOAT)),
        **dict.fromkeys(("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_XOR", "LOGICAL_NOT",
                         "REDUCE_ALL", "REDUCE_ANY"), _types("bool")),
        **dict.fromkeys(("CONCAT", "PAD", "RESHAPE", "REVERSE", "SLICE", "TILE", "TRANSPOSE"),
                        _types(_ANY)),
        "IDENTITY": _types(f"{_ANY} i4 i48"),
        "CLAMP": _types(f"i8 i16 {_FLOAT}"),
        "CLZ": _types("i32"),
        "INTDIV": _types("i32"),
        "NEGATE": _types(f"{_BITS} {_FLOAT}"),
        "MAX_POOL2D": _types(f"i8 i16 {_FLOAT} fp8e4m3 fp8e5m2"),
        "AVG_POOL2D": _types(f"i8 i16 {_FLOAT} fp8e4m3 fp8e5m2"),
        **dict.fromkeys(("REDUCE_MAX", "REDUCE_MIN"), _types(f"{_BITS} {_FLOAT}")),
        "REDUCE_SUM": _types(f"i32 {_FLOAT}"),
    }
)  # fmt: skip
"""Op -> the element types it takes, one for all its operands (shape operands aside)."""


def _rows(*rows: str) -> frozenset[tuple[DType, ...]]:
    return frozenset(tuple(_SHORT[w] for w in row.replace("->", " ").split()) for row in rows)


def _conv() -> frozenset[tuple[DType, ...]]:
    # input, weight, bias, input_zp, weight_zp -> output
    return _rows(
        "i8 i8 i32 i8 i8 -> i32", "i8 i4 i32 i8 i4 -> i32", "i16 i8 i48 i16 i8 -> i48",
        "fp16 fp16 fp16 fp16 fp16 -> fp16", "bf16 bf16 bf16 bf16 bf16 -> bf16",
        "fp32 fp32 fp32 fp32 fp32 -> fp32", "fp8e4m3 fp8e4m3 fp16 fp8e4m3 fp8e4m3 -> fp16",
        "fp8e5m2 fp8e5m2 fp16 fp8e5m2 fp8e5m2 -> fp16",
    )  # fmt: skip


def _cast() -> frozenset[tuple[DType, ...]]:
    targets = {
        "bool": "i8 i16 i32",
        "i8": "bool i16 i32 fp16 bf16 fp32",
        "i16": "bool i8 i32 fp16 bf16 fp32",
        "i32": "bool i8 i16 fp16 bf16 fp32",
        "fp16": "i8 i16 i32 fp32 fp8e4m3 fp8e5m2",
        "bf16": "i8 i16 i32 fp32 fp8e4m3 fp8e5m2",
        "fp32": "i8 i16 i32 fp16 bf16 fp8e4m3 fp8e5m2",
        "fp8e4m3": "fp16 bf16 fp32",
        "fp8e5m2": "fp16 bf16 fp32",
    }
    return _rows(*(f"{a} -> {b}" for a, bs in targets.items() for b in bs.split()))


def _rescale() -> frozenset[tuple[DType, ...]]:
    # input, multiplier, shift, input_zp, output_zp -> output (unsigned: the flags)
    return _rows(
        *(
            f"{i} {m} i8 {i} {o} -> {o}"
            for i, m, o in itertools.product(["i8", "i16", "i32", "i48"], ("i16", "i32"),
                                             ["i8", "i16", "i32"])
        )
    )  # fmt: skip


def _each(pattern: str, types: str) -> frozenset[tuple[DType, ...]]:
    return _rows(*(pattern.format(t=t) for t in types.split()))


SIGNATURES: Mapping[str, frozenset[tuple[DType, ...]]] = MappingProxyType(
    {
        **dict.fromkeys(("CONV2D", "CONV3D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"), _conv()),
        **dict.fromkeys(("EQUAL", "GREATER", "GREATER_EQUAL"),
                        _each("{t} {t} -> bool", f"i32 {_FLOAT}")),
        "ARGMAX": _each("{t} -> i32", f"i8 i16 {_FLOAT} fp8e4m3 fp8e5m2"),
        "MATMUL": _rows(
            "i8 i8 i8 i8 -> i32", "i16 i16 i16 i16 -> i48", "fp16 fp16 fp16 fp16 -> fp16",
            "fp16 fp16 fp16 fp16 -> fp32", "bf16 bf16 bf16 bf16 -> fp32",
            "fp32 fp32 fp32 fp32 -> fp32", "fp8e4m3 fp8e4m3 fp8e4m3 fp8e4m3 -> fp16",
            "fp8e5m2 fp8e5m2 fp8e5m2 fp8e5m2 -> fp16",
        ),
        "MUL": _rows("i8 i8 i8 -> i32", "i16 i16 i8 -> i32", "i32 i32 i8 -> i32",
                     *(f"{t} {t} i8 -> {t}" for t in _FLOAT.split())),
        "SELECT": _each("bool {t} {t} -> {t}", f"bool {_BITS} {_FLOAT}"),
        "GATHER": _each("{t} i32 -> {t}", f"{_BITS} {_FLOAT} fp8e4m3 fp8e5m2"),
        "SCATTER": _each("{t} i32 {t} -> {t}", f"{_BITS} {_FLOAT} fp8e4m3 fp8e5m2"),
        "TABLE": _rows("i8 i8 -> i8", "i16 i16 -> i32"),
        "RESIZE": _rows("i8 -> i8", "i8 -> i32", "i16 -> i16", "i16 -> i48",
                        *(f"{t} -> {t}" for t in _FLOAT.split())),
        "FFT2D": _rows("fp32 fp32 -> fp32 fp32"),
        "RFFT2D": _rows("fp32 -> fp32 fp32"),
        "CAST": _cast(),
        "RESCALE": _rescale(),
    }
)  # fmt: skip
"""Op -> the signatures it takes: element types of its inputs, then its outputs (shape operands
left out)."""


def _names(types: tuple[DType, ...], inputs: int) -> str:
    said = [t.value for t in types]
    return f"{', '.join(said[:inputs])} -> {', '.join(said[inputs:])}"


def type_rule(v: OpView) -> Iterator[Violation]:
    """``WrongInputType`` / ``WrongOutputType``: the operator's element types are a combination
    the specification lists for it."""
    version = v.graph.version
    if (version.major, version.minor) != (1, 0):
        return
    tensors = v.graph.tensors
    ins = [t for t in (tensors[n] for n in v.op.inputs) if t.dtype is not DType.SHAPE]
    outs = [tensors[n] for n in v.op.outputs]
    if not ins or not outs:
        return  # no operand to type (the operand counts are checked elsewhere)
    types = tuple(t.dtype for t in (*ins, *outs))
    key = (v.op.op, len(ins), types)
    if key in _VERDICTS:
        verdict = _VERDICTS[key]
    else:  # a model repeats a few combinations many times: each is judged once
        verdict = _VERDICTS[key] = _judge(v.op.op, types, len(ins))
    if verdict is not None:
        kind, message, at = verdict
        yield Violation(kind, message, tensor=(*ins, *outs)[at].name)


_VERDICTS: dict[tuple[str, int, tuple[DType, ...]], tuple[str, str, int] | None] = {}
"""(op, input count, element types) -> what :func:`_judge` said of them."""


def _judge(op: str, types: tuple[DType, ...], inputs: int) -> tuple[str, str, int] | None:
    """The violation of an operator ``op`` with these element types (its ``inputs`` inputs'
    first): its kind, its message and the operand it names; ``None`` when the types fit."""
    same = SAME.get(op)
    if same is not None:
        wrong = next((i for i, t in enumerate(types) if t is not types[0]), None)
        if types[0] in same and wrong is None:
            return None
        kind = "WrongOutputType" if wrong is not None and wrong >= inputs else "WrongInputType"
        allowed = ", ".join(sorted(t.value for t in same))
        message = (
            f"element types {_names(types, inputs)}: {op} takes one of {allowed} for every operand"
        )
        return kind, message, wrong or 0
    signatures = SIGNATURES.get(op)
    if signatures is None or types in signatures:
        return None
    inputs_fit = any(s[:inputs] == types[:inputs] for s in signatures)
    listed = sorted(_names(s, inputs) for s in signatures)
    shown = "; ".join(listed) if len(listed) <= 4 else f"{len(listed)} combinations"
    message = f"element types {_names(types, inputs)} are not a combination {op} takes ({shown})"
    if inputs_fit:
        return "WrongOutputType", message, inputs
    return "WrongInputType", message, 0
