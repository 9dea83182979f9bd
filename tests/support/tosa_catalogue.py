"""A catalogue of one-op TOSA models, one per TOSA.001000.1 instruction, base-profile element type
and attribute enum value (``CASES``), and the helpers that lower a model's ML partitions
(``lower_model``) and reduce a SPIR-V module to its meaning without id numbering
(``structure``). The lowering unit tests, the table tests and the differential comparison with
the reference converter all use them.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np
from tosa_factory import Op, T, build

import vgfc
from vgfc.ir import Graph
from vgfc.lower.graph import GraphModule, lower_partition
from vgfc.partition import PartitionKind
from vgfc.spirv.spirv_tools import disassemble

NUMPY: dict[str, Any] = {
    "BOOL": np.bool_,
    "INT8": np.int8,
    "INT16": np.int16,
    "INT32": np.int32,
    "FP32": np.float32,
    "FP16": np.float16,
    "BF16": ml_dtypes.bfloat16,
    "FP8E4M3": ml_dtypes.float8_e4m3fn,
}
PROPAGATE, IGNORE = 1, 2  # NanPropagationMode in tosa.fbs
ACC = {"INT32": 5, "INT48": 6, "FP32": 7, "FP16": 8}  # DType codes in tosa.fbs
FLOATS = ("FP32", "FP16", "BF16")
INTS = ("INT8", "INT16", "INT32")
ALL = ("BOOL", *INTS, *FLOATS)


@dataclass(frozen=True)
class X:
    """A graph input."""

    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class C:
    """A CONST: ``values`` is broadcast to the shape; ``None`` means seeded random values."""

    dtype: str
    shape: tuple[int, ...]
    values: Any = None


@dataclass(frozen=True)
class S:
    """A CONST_SHAPE."""

    values: tuple[int, ...]


@dataclass(frozen=True)
class Case:
    name: str
    op: str
    inputs: tuple[X | C | S, ...]
    outputs: tuple[X, ...]
    fields: dict[str, Any] = field(default_factory=dict)

    def model(self) -> bytes:
        return one_op_model(self)


def _constant_data(c: C, seed: int) -> np.ndarray | bytes:
    if c.dtype == "INT48":  # six little-endian bytes per element
        values = np.broadcast_to(np.asarray(7 if c.values is None else c.values), c.shape)
        return b"".join(int(v).to_bytes(6, "little", signed=True) for v in values.ravel())
    if c.values is not None:
        return np.broadcast_to(np.asarray(c.values).astype(NUMPY[c.dtype]), c.shape).copy()
    rng = np.random.default_rng(seed)
    if c.dtype == "BOOL":
        return rng.integers(0, 2, c.shape).astype(np.bool_)
    if c.dtype.startswith("INT"):
        return rng.integers(-100, 100, c.shape).astype(NUMPY[c.dtype])
    return rng.uniform(-2, 2, c.shape).astype(np.float32).astype(NUMPY[c.dtype])


_TABLE_NAMES = {
    "ARGMAX": "ArgMax",
    "FFT2D": "FFT2d",
    "RFFT2D": "RFFT2d",
    "MATMUL": "MatMul",
    "INTDIV": "IntDiv",
}


def attribute_table(op: str) -> str:
    """``CONV2D`` -> ``Conv2dAttribute``: the attribute table tosa.fbs pairs with the op."""
    name = "".join(w.capitalize() for w in op.split("_"))
    return _TABLE_NAMES.get(op, name) + "Attribute"


def one_op_model(case: Case) -> bytes:
    """The case as a TOSA flatbuffer: constants, then the op; every non-constant is an input."""
    tensors, ops, shapes, names, inputs = [], [], [], [], []
    for i, spec in enumerate(case.inputs):
        if isinstance(spec, X):
            name = f"in{i}"
            tensors.append(T(name, spec.shape, spec.dtype))
            inputs.append(name)
        elif isinstance(spec, C):
            name = f"const{i}"
            tensors.append(T(name, spec.shape, spec.dtype, _constant_data(spec, i)))
            ops.append(Op("CONST", [], [name], "ConstAttribute"))
        else:
            name = f"shape{i}"
            shapes.append((name, len(spec.values), spec.values))
            ops.append(Op("CONST_SHAPE", [], [name], "ConstShapeAttribute"))
        names.append(name)
    outs = [f"out{i}" for i in range(len(case.outputs))]
    tensors += [T(n, o.shape, o.dtype) for n, o in zip(outs, case.outputs, strict=True)]
    ops.append(Op(case.op, names, outs, attribute_table(case.op), case.fields))
    return build(tensors, ops, inputs, outs, shapes=shapes)


def _zp(dtype: str, value: int = 0) -> C:
    return C(dtype, (1,), value)


def _raw(dtype: str, value: float) -> bytes:
    return np.asarray([value]).astype(NUMPY[dtype]).tobytes()


def _elementwise(add: Callable[..., None]) -> None:
    sh, bsh = (2, 3, 4), (1, 3, 4)
    unary_fp = ("ERF", "SIGMOID", "TANH", "CEIL", "FLOOR", "COS", "SIN", "EXP", "LOG")
    for op in (*unary_fp, "RECIPROCAL", "RSQRT"):
        for dt in FLOATS:
            add(f"{op}_{dt}", op, [X(dt, sh)], [X(dt, sh)])
    for op, dts in (("ABS", ("INT32", *FLOATS)), ("BITWISE_NOT", INTS), ("CLZ", ("INT32",))):
        for dt in dts:
            add(f"{op}_{dt}", op, [X(dt, sh)], [X(dt, sh)])
    add("LOGICAL_NOT_BOOL", "LOGICAL_NOT", [X("BOOL", sh)], [X("BOOL", sh)])
    for dt, zp in (("INT8", 5), ("INT16", 0), ("INT32", 0), *((f, 0) for f in FLOATS)):
        add(f"NEGATE_{dt}", "NEGATE", [X(dt, sh), _zp(dt, zp), _zp(dt, -zp)], [X(dt, sh)])
    binary = (
        ("ADD", ("INT32", *FLOATS)),
        ("SUB", ("INT32", *FLOATS)),
        ("POW", FLOATS),
        ("INTDIV", ("INT32",)),
        ("BITWISE_AND", INTS),
        ("BITWISE_OR", INTS),
        ("BITWISE_XOR", INTS),
        ("LOGICAL_LEFT_SHIFT", INTS),
        ("LOGICAL_RIGHT_SHIFT", INTS),
        ("LOGICAL_AND", ("BOOL",)),
        ("LOGICAL_OR", ("BOOL",)),
        ("LOGICAL_XOR", ("BOOL",)),
    )
    for op, dts in binary:
        for dt in dts:  # the second input broadcasts
            add(f"{op}_{dt}", op, [X(dt, sh), X(dt, bsh)], [X(dt, sh)])
    for op in ("MAXIMUM", "MINIMUM"):
        for dt in ("INT32", *FLOATS):
            mode = IGNORE if dt == "FP16" else PROPAGATE
            add(f"{op}_{dt}", op, [X(dt, sh), X(dt, sh)], [X(dt, sh)], nan_mode=mode)
    for dt in INTS:
        add(
            f"ARITHMETIC_RIGHT_SHIFT_{dt}",
            "ARITHMETIC_RIGHT_SHIFT",
            [X(dt, sh), X(dt, sh)],
            [X(dt, sh)],
            round=dt == "INT8",
        )
    for op in ("EQUAL", "GREATER", "GREATER_EQUAL"):
        for dt in ("INT32", *FLOATS):
            add(f"{op}_{dt}", op, [X(dt, sh), X(dt, bsh)], [X("BOOL", sh)])
    for dt, out in (
        ("INT8", "INT32"),
        ("INT16", "INT32"),
        ("INT32", "INT32"),
        *((f, f) for f in FLOATS),
    ):
        shift = C("INT8", (1,), 3 if dt == "INT32" else 0)
        add(f"MUL_{dt}", "MUL", [X(dt, sh), X(dt, sh), shift], [X(out, sh)])
    add("TABLE_INT8", "TABLE", [X("INT8", sh), C("INT8", (256,))], [X("INT8", sh)])
    add("TABLE_INT16", "TABLE", [X("INT16", sh), C("INT16", (513,))], [X("INT32", sh)])
    for dt in ALL:
        add(f"SELECT_{dt}", "SELECT", [X("BOOL", sh), X(dt, sh), X(dt, sh)], [X(dt, sh)])
    for dt, lo, hi in (("INT8", -5, 7), ("INT16", -300, 300), *((f, -1.5, 2.25) for f in FLOATS)):
        add(
            f"CLAMP_{dt}",
            "CLAMP",
            [X(dt, sh)],
            [X(dt, sh)],
            min_val=_raw(dt, lo),
            max_val=_raw(dt, hi),
            nan_mode=IGNORE if dt == "FP16" else PROPAGATE,
        )


def _reductions_and_layout(add: Callable[..., None]) -> None:
    sh = (2, 3, 4)
    for op, dts in (
        ("REDUCE_ALL", ("BOOL",)),
        ("REDUCE_ANY", ("BOOL",)),
        ("REDUCE_PRODUCT", FLOATS),
        ("REDUCE_SUM", ("INT32", *FLOATS)),
    ):
        for dt in dts:
            add(f"{op}_{dt}", op, [X(dt, sh)], [X(dt, (2, 1, 4))], axis=1)
    for op in ("REDUCE_MAX", "REDUCE_MIN"):
        for dt in (*INTS, *FLOATS):
            mode = IGNORE if dt == "FP32" else PROPAGATE
            add(f"{op}_{dt}", op, [X(dt, sh)], [X(dt, (2, 3, 1))], axis=2, nan_mode=mode)
    for dt in ("INT8", "INT16", *FLOATS):
        mode = IGNORE if dt == "BF16" else PROPAGATE
        add(f"ARGMAX_{dt}", "ARGMAX", [X(dt, sh)], [X("INT32", (2, 4))], axis=1, nan_mode=mode)
    for dt in ALL:
        add(
            f"CONCAT_{dt}",
            "CONCAT",
            [X(dt, sh), X(dt, (2, 1, 4)), X(dt, (2, 2, 4))],
            [X(dt, (2, 6, 4))],
            axis=1,
        )
        add(
            f"PAD_{dt}",
            "PAD",
            [X(dt, sh), S((0, 0, 1, 2, 3, 0)), C(dt, (1,), 0)],
            [X(dt, (2, 6, 7))],
        )
        add(f"RESHAPE_{dt}", "RESHAPE", [X(dt, sh), S((6, 4))], [X(dt, (6, 4))])
        add(f"REVERSE_{dt}", "REVERSE", [X(dt, sh)], [X(dt, sh)], axis=2)
        add(f"SLICE_{dt}", "SLICE", [X(dt, sh), S((0, 1, 1)), S((2, 2, 3))], [X(dt, (2, 2, 3))])
        add(f"TILE_{dt}", "TILE", [X(dt, sh), S((1, 2, 3))], [X(dt, (2, 6, 12))])
        add(f"TRANSPOSE_{dt}", "TRANSPOSE", [X(dt, sh)], [X(dt, (4, 2, 3))], perms=[2, 0, 1])
    for dt in (*INTS, *FLOATS):
        add(f"GATHER_{dt}", "GATHER", [X(dt, (2, 5, 3)), X("INT32", (2, 4))], [X(dt, (2, 4, 3))])
        add(
            f"SCATTER_{dt}",
            "SCATTER",
            [X(dt, (2, 5, 3)), X("INT32", (2, 2)), X(dt, (2, 2, 3))],
            [X(dt, (2, 5, 3))],
        )
    for dt, out, mode in (
        ("INT8", "INT8", 1),
        ("INT8", "INT32", 2),
        ("INT16", "INT16", 1),
        ("INT16", "INT48", 2),
        ("FP32", "FP32", 2),
        ("FP16", "FP16", 1),
        ("BF16", "BF16", 2),
    ):
        add(
            f"RESIZE_{dt}_{out}",
            "RESIZE",
            [X(dt, (1, 4, 4, 2)), S((4, 2, 4, 2)), S((-1, -1)), S((1, 1))],
            [X(out, (1, 8, 8, 2))],
            mode=mode,
        )
    casts = {
        "BOOL": ("INT8", "INT16", "INT32"),
        "INT8": ("BOOL", "INT16", "INT32", *FLOATS),
        "INT16": ("BOOL", "INT8", "INT32", *FLOATS),
        "INT32": ("BOOL", "INT8", "INT16", *FLOATS),
        "FP32": ("INT8", "INT16", "INT32", "FP16", "BF16"),
        "FP16": ("INT8", "INT16", "INT32", "FP32"),
        "BF16": ("INT8", "INT16", "INT32", "FP32"),
    }
    for src, dsts in casts.items():
        for dst in dsts:
            add(f"CAST_{src}_{dst}", "CAST", [X(src, sh)], [X(dst, sh)])
    for src, dst, scale32, rounding, per_channel in (
        ("INT8", "INT8", True, 1, False),
        ("INT8", "INT32", True, 3, True),
        ("INT16", "INT16", False, 1, False),
        ("INT32", "INT8", True, 2, True),
        ("INT48", "INT16", False, 3, False),
        ("INT16", "INT8", True, 1, False),
    ):
        n = 4 if per_channel else 1
        izp, ozp = C(src, (1,), 3 if src == "INT8" else 0), C(dst, (1,), -2 if dst == "INT8" else 0)
        mult = C("INT32" if scale32 else "INT16", (n,), 1 << 14)
        add(
            f"RESCALE_{src}_{dst}_{rounding}",
            "RESCALE",
            [X(src, sh), mult, C("INT8", (n,), 20), izp, ozp],
            [X(dst, sh)],
            scale32=scale32,
            rounding_mode=rounding,
            per_channel=per_channel,
            input_unsigned=(src, dst) == ("INT16", "INT8"),  # uint16 -> int8
            output_unsigned=src == dst == "INT8",  # int8 -> uint8
        )


def _tensor_ops(add: Callable[..., None]) -> None:
    # (input, weight, output, accumulator) types of the convolutions.
    for it, wt, ot, acc in (
        ("INT8", "INT8", "INT32", "INT32"),
        ("INT16", "INT8", "INT48", "INT48"),
        ("FP32", "FP32", "FP32", "FP32"),
        ("FP16", "FP16", "FP16", "FP16"),
        ("FP16", "FP16", "FP16", "FP32"),
        ("BF16", "BF16", "BF16", "FP32"),
    ):
        # An INT48 bias cannot be a CONST the reference converter reads: make it an input.
        bias: X | C = X("INT48", (4,)) if ot == "INT48" else C(ot, (4,))
        zps = (_zp(it, 3 if it == "INT8" else 0), _zp(wt))
        common = {"local_bound": it == "FP16", "acc_type": ACC[acc]}
        name = f"{it}_{acc}"
        add(
            f"CONV2D_{name}",
            "CONV2D",
            [X(it, (1, 6, 6, 3)), C(wt, (4, 3, 3, 3)), bias, *zps],
            [X(ot, (1, 3, 6, 4))],
            pad=[0, 1, 1, 1],
            stride=[2, 1],
            dilation=[1, 1],
            **common,
        )
        add(
            f"CONV3D_{name}",
            "CONV3D",
            [X(it, (1, 3, 6, 6, 3)), C(wt, (4, 2, 3, 3, 3)), bias, *zps],
            [X(ot, (1, 2, 4, 4, 4))],
            pad=[0] * 6,
            stride=[1, 1, 1],
            dilation=[1, 1, 1],
            **common,
        )
        add(
            f"DEPTHWISE_CONV2D_{name}",
            "DEPTHWISE_CONV2D",
            [X(it, (1, 6, 6, 2)), C(wt, (3, 3, 2, 2)), bias, *zps],
            [X(ot, (1, 4, 4, 4))],
            pad=[0] * 4,
            stride=[1, 1],
            dilation=[1, 1],
            **common,
        )
        add(
            f"TRANSPOSE_CONV2D_{name}",
            "TRANSPOSE_CONV2D",
            [X(it, (1, 4, 4, 3)), C(wt, (4, 3, 3, 3)), bias, *zps],
            [X(ot, (1, 6, 6, 4))],
            out_pad=[0] * 4,
            stride=[1, 1],
            **common,
        )
    for a, out in (
        ("INT8", "INT32"),
        ("INT16", "INT48"),
        ("FP16", "FP16"),
        ("FP16", "FP32"),
        ("FP32", "FP32"),
        ("BF16", "FP32"),
    ):
        add(
            f"MATMUL_{a}_{out}",
            "MATMUL",
            [X(a, (1, 3, 5)), X(a, (1, 5, 2)), _zp(a, 3 if a == "INT8" else 0), _zp(a)],
            [X(out, (1, 3, 2))],
        )
    for dt, acc in (
        ("INT8", "INT32"),
        ("INT16", "INT32"),
        ("FP32", "FP32"),
        ("FP16", "FP16"),
        ("FP16", "FP32"),
        ("BF16", "FP32"),
    ):
        zp = 4 if dt == "INT8" else 0
        add(
            f"AVG_POOL2D_{dt}_{acc}",
            "AVG_POOL2D",
            [X(dt, (1, 6, 6, 2)), _zp(dt, zp), _zp(dt, -zp)],
            [X(dt, (1, 3, 3, 2))],
            kernel=[2, 2],
            stride=[2, 2],
            pad=[0] * 4,
            acc_type=ACC[acc],
        )
    for dt in ("INT8", "INT16", *FLOATS):
        add(
            f"MAX_POOL2D_{dt}",
            "MAX_POOL2D",
            [X(dt, (1, 6, 6, 2))],
            [X(dt, (1, 3, 3, 2))],
            kernel=[3, 3],
            stride=[2, 2],
            pad=[1, 0, 1, 0],
            nan_mode=IGNORE if dt == "FP32" else PROPAGATE,
        )
    add(
        "FFT2D_FP32",
        "FFT2D",
        [X("FP32", (1, 4, 8))] * 2,
        [X("FP32", (1, 4, 8))] * 2,
        inverse=True,
        local_bound=False,
    )
    add(
        "RFFT2D_FP32",
        "RFFT2D",
        [X("FP32", (1, 4, 8))],
        [X("FP32", (1, 4, 5))] * 2,
        local_bound=True,
    )


def _constants(add: Callable[..., None]) -> None:
    """How constants are encoded: null, replicated, nested composites, graph constants."""
    sh = (2, 3, 4)
    add("IDENTITY_FP32", "IDENTITY", [X("FP32", sh)], [X("FP32", sh)])
    add("ABS_SCALAR", "ABS", [X("FP32", ())], [X("FP32", ())])
    add("ADD_CONST_SCALAR", "ADD", [X("FP32", ()), C("FP32", (), 3.0)], [X("FP32", ())])
    add("ADD_CONST_2D", "ADD", [X("FP32", (2, 3)), C("FP32", (2, 3))], [X("FP32", (2, 3))])
    add(
        "ADD_CONST_SPLAT_3D",
        "ADD",
        [X("INT32", (2, 2, 2)), C("INT32", (2, 2, 2), 7)],
        [X("INT32", (2, 2, 2))],
    )
    add("ADD_CONST_SPLAT_16", "ADD", [X("FP32", (16,)), C("FP32", (16,), 2.5)], [X("FP32", (16,))])
    add("ADD_CONST_SPLAT_17", "ADD", [X("FP32", (17,)), C("FP32", (17,), 2.5)], [X("FP32", (17,))])
    add(
        "SELECT_CONST_BOOL",
        "SELECT",
        [C("BOOL", sh), X("FP32", sh), X("FP32", sh)],
        [X("FP32", sh)],
    )
    add("CAST_CONST_FP8", "CAST", [C("FP8E4M3", sh)], [X("FP16", sh)])
    add("CAST_FP8E5M2_FP16", "CAST", [X("FP8E5M2", sh)], [X("FP16", sh)])
    add(
        "RESCALE_CONST_INT48",
        "RESCALE",
        [
            C("INT48", sh),
            C("INT16", (1,), 1 << 14),
            C("INT8", (1,), 20),
            C("INT48", (1,), 0),
            C("INT16", (1,), 0),
        ],
        [X("INT16", sh)],
        scale32=False,
        rounding_mode=1,
        per_channel=False,
        input_unsigned=False,
        output_unsigned=False,
    )
    add(
        "CONV2D_ZERO_BIAS",
        "CONV2D",
        [
            X("FP32", (1, 4, 4, 2)),
            C("FP32", (3, 1, 1, 2), 1.0),
            C("FP32", (3,), 0.0),
            C("FP32", (1,), -0.0),
            _zp("FP32"),
        ],
        [X("FP32", (1, 4, 4, 3))],
        pad=[0] * 4,
        stride=[1, 1],
        dilation=[1, 1],
        local_bound=False,
        acc_type=ACC["FP32"],
    )


def catalogue() -> list[Case]:
    cases: list[Case] = []

    def add(name: str, op: str, ins: list[Any], outs: list[X], **fields: Any) -> None:
        cases.append(Case(name, op, tuple(ins), tuple(outs), fields))

    for part in (_elementwise, _reductions_and_layout, _tensor_ops, _constants):
        part(add)
    return cases


CASES = catalogue()
CASE_IDS = [c.name for c in CASES]


def lower_model(
    data: bytes, *, passes: bool = False, **options: Any
) -> tuple[Graph, list[GraphModule]]:
    """Every ML partition lowered (after the pass stage with ``passes``, as a compile does);
    bindings: model inputs, model outputs, then the rest."""
    graph = vgfc.loads(data, source="m.tosa")
    if passes:
        from vgfc.passes import run_passes

        graph = run_passes(graph).graph
    modules = []
    for p in vgfc.partition(graph).partitions:
        if p.kind is PartitionKind.ML:
            names = dict.fromkeys([*graph.inputs, *graph.outputs, *p.inputs, *p.outputs])
            bindings = {name: i for i, name in enumerate(names)}
            modules.append(lower_partition(graph, p, bindings, **options))
    return graph, modules


def structure(spirv: bytes) -> dict[str, Any]:
    """A module's meaning without its id numbering: every id is replaced by what defines it.

    Duplicate declarations (the reference converter repeats some) collapse, instruction order
    inside the global section does not matter; capabilities, extensions, the graph's type, its
    instructions in order, its outputs and the interface variables' bindings do.
    """
    defs: dict[str, tuple[str, list[str]]] = {}
    lines = []
    for line in disassemble(spirv).splitlines():
        tokens = shlex.split(line.strip(), posix=False)
        if not tokens or tokens[0].startswith(";"):
            continue
        result = tokens[0] if len(tokens) > 2 and tokens[1] == "=" else None
        op, args = (tokens[2], tokens[3:]) if result else (tokens[0], tokens[1:])
        if result:
            defs[result] = (op, args)
        lines.append((result, op, args))
    results: dict[str, int] = {}

    def meaning(token: str) -> Any:
        if not token.startswith("%"):
            return token
        op, args = defs[token]
        if op == "OpExtInst":
            return ("result", results[token])
        if op == "OpCompositeExtract":
            return ("extract", meaning(args[1]), args[2])
        return (op, *(meaning(a) for a in args))

    found: dict[str, Any] = {"capabilities": set(), "extensions": set(), "instructions": []}
    found["outputs"], found["interface"], decorations = [], [], {}
    for result, op, args in lines:
        if op == "OpCapability":
            found["capabilities"].add(args[0])
        elif op == "OpExtension":
            found["extensions"].add(args[0])
        elif op == "OpDecorate":
            decorations.setdefault(args[0], {})[args[1]] = args[2:]
        elif op == "OpGraphARM":
            found["graph"] = meaning(args[0])
        elif op == "OpExtInst" and result:
            results[result] = len(found["instructions"])
            found["instructions"].append((args[2], *(meaning(a) for a in (args[0], *args[3:]))))
        elif op == "OpGraphSetOutputARM":
            found["outputs"].append(tuple(meaning(a) for a in args))
        elif op == "OpGraphEntryPointARM":
            found["interface"] = [(meaning(v), decorations.get(v)) for v in args[2:]]
    return found
