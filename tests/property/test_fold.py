"""Constant folding is bit-exact: random chains of the foldable operators on constants, folded by
vgfc's pass stage, give exactly what ``tosa_reference_model`` computes for the same file unfolded.

Each model is a chain of data movement, casts and integer operators from one constant (with
more constants as second operands), ending in an IDENTITY to the graph output: a graph output
is never folded, so the IDENTITY's operand is the folded result (the file's one input, which the
reference model needs, is read by nothing). The reference model runs the whole file; vgfc's
passes must leave the IDENTITY reading one constant holding the same values, type and shape,
and under ``-O0`` fold nothing.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from tosa_catalogue import NUMPY, attribute_table
from tosa_factory import Op, T, build

from vgfc.compilation import make_options
from vgfc.compiler import compile_model
from vgfc.limits import LIMITS
from vgfc.record import replace
from vgfc.runner.numeric import run_reference_model

INTS = ("INT8", "INT16", "INT32")
WIDTH = {"INT8": 8, "INT16": 16, "INT32": 32}


class Chain:
    """A model being built: tensors, ops, shape values, and the value the chain is at."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.tensors: list[T] = []
        self.ops: list[Op] = []
        self.shapes: list[tuple[str, int, tuple[int, ...]]] = []
        self.names = (f"t{i}" for i in itertools.count())
        shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
        dtype = draw(st.sampled_from((*INTS, "BOOL")))
        self.at = self.const(dtype, shape)
        self.dtype, self.shape = dtype, shape

    def const(self, dtype: str, shape: tuple[int, ...], low: int = -100, high: int = 100) -> str:
        name = next(self.names)
        seed = self.draw(st.integers(0, 2**32 - 1))
        rng = np.random.default_rng(seed)
        if dtype == "BOOL":
            data = rng.integers(0, 2, shape).astype(np.bool_)
        else:
            data = rng.integers(low, high, shape, endpoint=True).astype(NUMPY[dtype])
        self.tensors.append(T(name, shape, dtype, data))
        self.ops.append(Op("CONST", [], [name], "ConstAttribute"))
        return name

    def shape_value(self, values: tuple[int, ...]) -> str:
        name = next(self.names)
        self.shapes.append((name, len(values), values))
        self.ops.append(Op("CONST_SHAPE", [], [name], "ConstShapeAttribute"))
        return name

    def op(
        self, op: str, operands: list[str], dtype: str, shape: tuple[int, ...], **fields: Any
    ) -> None:
        name = next(self.names)
        self.tensors.append(T(name, shape, dtype))
        self.ops.append(Op(op, [self.at, *operands], [name], attribute_table(op), fields))
        self.at, self.dtype, self.shape = name, dtype, shape

    def model(self) -> bytes:
        self.tensors.append(T("out", self.shape, self.dtype))
        self.ops.append(Op("IDENTITY", [self.at], ["out"], "IdentityAttribute"))
        # The reference model needs an input to run: one nothing reads.
        self.tensors.append(T("x", (1,), "INT32"))
        return build(self.tensors, self.ops, ["x"], ["out"], shapes=self.shapes)


def _step(c: Chain) -> None:
    draw, dt, sh, rank = c.draw, c.dtype, c.shape, len(c.shape)
    kinds = ["IDENTITY", "RESHAPE", "TRANSPOSE", "SLICE", "CONCAT", "TILE", "PAD", "REVERSE"]
    kinds += ["CAST"]
    if dt in INTS:
        kinds += ["BITWISE", "SHIFT"]
    if dt == "INT32":
        kinds += ["ARITH", "MUL", "MINMAX", "COMPARE"]
    if dt == "BOOL":
        kinds += ["LOGICAL", "SELECT"]
    kind = draw(st.sampled_from(kinds))
    if kind == "IDENTITY":
        c.op("IDENTITY", [], dt, sh)
    elif kind == "RESHAPE":
        new = tuple(draw(st.permutations(sh)))
        new = (1, *new) if rank < 4 and draw(st.booleans()) else new
        c.op("RESHAPE", [c.shape_value(new)], dt, new)
    elif kind == "TRANSPOSE":
        perms = list(draw(st.permutations(range(rank))))
        c.op("TRANSPOSE", [], dt, tuple(sh[p] for p in perms), perms=perms)
    elif kind == "SLICE":
        start = tuple(draw(st.integers(0, d - 1)) for d in sh)
        size = tuple(draw(st.integers(1, d - s)) for d, s in zip(sh, start, strict=True))
        c.op("SLICE", [c.shape_value(start), c.shape_value(size)], dt, size)
    elif kind == "CONCAT":
        axis = draw(st.integers(0, rank - 1))
        other = tuple(draw(st.integers(1, 2)) if i == axis else d for i, d in enumerate(sh))
        grown = tuple(d + other[i] if i == axis else d for i, d in enumerate(sh))
        c.op("CONCAT", [c.const(dt, other)], dt, grown, axis=axis)
    elif kind == "TILE":
        times = tuple(draw(st.integers(1, 2)) for _ in sh)
        tiled = tuple(d * m for d, m in zip(sh, times, strict=True))
        c.op("TILE", [c.shape_value(times)], dt, tiled)
    elif kind == "PAD":
        pads = tuple(draw(st.integers(0, 1)) for _ in range(2 * rank))
        out = tuple(d + pads[2 * i] + pads[2 * i + 1] for i, d in enumerate(sh))
        c.op("PAD", [c.shape_value(pads), c.const(dt, (1,))], dt, out)
    elif kind == "REVERSE":
        c.op("REVERSE", [], dt, sh, axis=draw(st.integers(0, rank - 1)))
    elif kind == "CAST":
        target = draw(st.sampled_from([t for t in (*INTS, "BOOL") if t != dt]))
        c.op("CAST", [], target, sh)
    elif kind == "BITWISE":
        op = draw(st.sampled_from(["BITWISE_AND", "BITWISE_OR", "BITWISE_XOR", "BITWISE_NOT"]))
        operands = [] if op == "BITWISE_NOT" else [c.const(dt, sh, -(2**7), 2**7 - 1)]
        c.op(op, operands, dt, sh)
    elif kind == "SHIFT":
        op = draw(st.sampled_from(["LOGICAL_LEFT_SHIFT", "LOGICAL_RIGHT_SHIFT"]))
        c.op(op, [c.const(dt, sh, 0, WIDTH[dt] - 1)], dt, sh)
    elif kind == "ARITH":
        op = draw(st.sampled_from(["ADD", "SUB"]))
        c.op(op, [c.const(dt, sh, -(2**16), 2**16)], dt, sh)
    elif kind == "MUL":
        shift = c.const("INT8", (1,), 0, 0)
        c.op("MUL", [c.const(dt, sh, -3, 3), shift], dt, sh)
    elif kind == "MINMAX":
        op = draw(st.sampled_from(["MAXIMUM", "MINIMUM"]))
        c.op(op, [c.const(dt, sh)], dt, sh, nan_mode=1)
    elif kind == "COMPARE":
        op = draw(st.sampled_from(["EQUAL", "GREATER", "GREATER_EQUAL"]))
        c.op(op, [c.const(dt, sh, -3, 3)], "BOOL", sh)
    elif kind == "LOGICAL":
        op = draw(st.sampled_from(["LOGICAL_AND", "LOGICAL_OR", "LOGICAL_XOR", "LOGICAL_NOT"]))
        c.op(op, [] if op == "LOGICAL_NOT" else [c.const(dt, sh)], dt, sh)
    else:  # SELECT between two constants of one type
        of = draw(st.sampled_from(INTS))
        c.op("SELECT", [c.const(of, sh), c.const(of, sh)], of, sh)


# Operands small enough that no chain of six leaves INT32 (where folding rightly stops).
@st.composite
def chains(draw: Any) -> Chain:
    c = Chain(draw)
    for _ in range(draw(st.integers(1, 6))):
        _step(c)
    return c


@settings(max_examples=40, deadline=None)
@given(chains())
def test_folded_chains_equal_the_reference_model(tmp_path_factory: Any, c: Chain) -> None:
    path = Path(tmp_path_factory.mktemp("fold")) / "chain.tosa"
    data = c.model()
    path.write_bytes(data)
    note(" -> ".join(f"{op.op}{tuple(op.fields.values()) or ''}" for op in c.ops))
    import vgfc.passes.fold as fold

    with pytest.MonkeyPatch.context() as patch:  # a fold that grows the constants too
        patch.setattr(fold, "LIMITS", replace(LIMITS, folded_growth_bytes_max=1 << 20))
        done = compile_model(path, stop_after="passes")
    graph = done.graph
    assert graph is not None
    (last,) = [op for op in graph.operators if op.outputs == ("out",)]
    (operand,) = last.inputs
    folded = graph.tensors[operand].data
    assert folded is not None, [(r.op, r.kind, r.action) for r in done.rewrites]
    assert [op.op for op in graph.operators] == ["CONST", "IDENTITY"]
    (want,) = run_reference_model(data, graph, {"x": np.zeros(1, np.int32)}, ["out"]).values()
    have = np.asarray(folded.array)
    assert have.shape == want.shape
    assert have.astype(want.dtype).tobytes() == want.tobytes(), (have, want)
    unfolded = compile_model(path, make_options(optimize=False), stop_after="passes")
    assert unfolded.rewrites == () and unfolded.graph is not None
    assert len(unfolded.graph.operators) == len(c.ops)


@pytest.mark.parametrize("source", ["FP16", "BF16"])
def test_every_half_float_widens_as_the_reference_model_does(
    tmp_path: Path, source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CAST FP16/BF16 -> FP32 is folded (where the growth limit allows: here lifted): every one
    of the 65536 bit patterns (subnormals, infinities, NaNs, -0) gives the reference model's
    bits."""
    import vgfc.passes.fold as fold

    monkeypatch.setattr(fold, "LIMITS", replace(LIMITS, folded_growth_bytes_max=1 << 20))
    bits = np.arange(1 << 16, dtype=np.uint16).view(NUMPY[source]).reshape(256, 256)
    tensors = [
        T("k", (256, 256), source, bits),
        T("wide", (256, 256), "FP32"),
        T("out", (256, 256), "FP32"),
        T("x", (1,), "INT32"),
    ]
    ops = [
        Op("CONST", [], ["k"], "ConstAttribute"),
        Op("CAST", ["k"], ["wide"], "CastAttribute"),
        Op("IDENTITY", ["wide"], ["out"], "IdentityAttribute"),
    ]
    data = build(tensors, ops, ["x"], ["out"])
    path = tmp_path / "cast.tosa"
    path.write_bytes(data)
    graph = compile_model(path, stop_after="passes").graph
    assert graph is not None
    folded = graph.tensors["wide"].data
    assert folded is not None and graph.operators[0].op == "CONST"
    (want,) = run_reference_model(data, graph, {"x": np.zeros(1, np.int32)}, ["out"]).values()
    assert np.asarray(folded.array).tobytes() == want.astype(np.float32).tobytes()
