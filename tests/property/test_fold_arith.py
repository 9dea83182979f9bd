"""Folding arithmetic is bit-exact: RESCALE with random parameters and random chains of FP32
ADD, SUB, MUL, MAXIMUM, MINIMUM, NEGATE and ABS on constants, folded by vgfc's pass stage, give
exactly the bits ``tosa_reference_model`` computes for the same file unfolded.

Each model ends in an IDENTITY to the graph output (a graph output is never folded), so the
IDENTITY's operand is the folded result; the file's one input, which the reference model needs,
is read by nothing. The integer chains of data movement and casts are ``test_fold.py``'s.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from tosa_catalogue import NUMPY, PROPAGATE, attribute_table
from tosa_factory import Op, T, build

from vgfc.compiler import compile_model
from vgfc.ir import Graph
from vgfc.limits import LIMITS
from vgfc.record import replace
from vgfc.runner.numeric import run_reference_model

BITS = {"INT8": 8, "INT16": 16, "INT32": 32, "INT48": 48}
ROUNDING = {"SINGLE_ROUND": 1, "INEXACT_ROUND": 2, "DOUBLE_ROUND": 3}
UNREAD = T("x", (1,), "INT32")


def _folded(tmp: Path, data: bytes) -> tuple[Graph, np.ndarray | None, np.ndarray]:
    """vgfc's graph after the passes (constants may grow: the limit is lifted), the value of
    the output IDENTITY's operand if it is a constant, and the reference model's output."""
    path = tmp / "model.tosa"
    path.write_bytes(data)
    import vgfc.passes.fold as fold

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fold, "LIMITS", replace(LIMITS, folded_growth_bytes_max=1 << 20))
        graph = compile_model(path, stop_after="passes").graph
    assert graph is not None
    (last,) = [op for op in graph.operators if op.outputs == ("out",)]
    folded = graph.tensors[last.inputs[0]].data
    (want,) = run_reference_model(data, graph, {"x": np.zeros(1, np.int32)}, ["out"]).values()
    return graph, None if folded is None else np.asarray(folded.array), want


@st.composite
def rescales(draw: Any) -> dict[str, Any]:
    """RESCALE parameters inside every REQUIRE of the specification (so the reference model
    computes a value): only INEXACT_ROUND and a negative result to an unsigned output are
    refused by folding."""
    source = draw(st.sampled_from(list(BITS)))
    target = draw(st.sampled_from(["INT8", "INT16", "INT32"]))
    scale32 = source != "INT48" and draw(st.booleans())
    # INEXACT_ROUND is refused: drawn seldom.
    modes = ["DOUBLE_ROUND"] * (3 if scale32 else 0) + ["SINGLE_ROUND"] * 3 + ["INEXACT_ROUND"]
    rounding = draw(st.sampled_from(modes))
    in_unsigned = source in ("INT8", "INT16") and target != "INT32" and draw(st.booleans())
    out_unsigned = (
        not in_unsigned
        and source in ("INT8", "INT16")
        and target in ("INT8", "INT16")
        and draw(st.booleans())
    )
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    per_channel = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    width = BITS[source] if source != "INT48" else draw(st.integers(8, 48))
    low, high = (
        (0, (1 << width) - 1) if in_unsigned else (-(1 << (width - 1)), (1 << (width - 1)) - 1)
    )
    x = rng.integers(low, high, shape, endpoint=True, dtype=np.int64)
    in_zp = _zero_point(draw, source, in_unsigned)
    out_zp = _zero_point(draw, target, out_unsigned)
    value = x - in_zp
    channels = shape[-1] if per_channel else 1
    peak = int(np.abs(value).max())
    top = 31 if scale32 else 15
    if draw(st.booleans()):  # powers of two: exact halves, where the rounding modes differ
        multipliers = 1 << rng.integers(0, top - 1, channels, endpoint=True)
    else:
        multipliers = rng.integers(0, (1 << top) - 1, channels, endpoint=True)
    # apply_scale_32 REQUIREs |value| < 1 << (shift - 1); apply_scale_16 an INT32 result
    # (here kept within 30 bits: value bits + 15 multiplier bits - shift <= 30).
    least = max(2, peak.bit_length() + 1 if scale32 else peak.bit_length() + 15 - 30)
    # From saturating scales to ones that leave a bit or two.
    shifts = np.asarray([draw(st.integers(least, min(62, least + 34))) for _ in range(channels)])
    return {
        "source": source, "target": target, "x": x, "in_zp": in_zp, "out_zp": out_zp,
        "multipliers": multipliers, "shifts": shifts, "scale32": scale32, "rounding": rounding,
        "per_channel": per_channel, "in_unsigned": in_unsigned, "out_unsigned": out_unsigned,
    }  # fmt: skip


def _zero_point(draw: Any, dtype: str, unsigned: bool) -> int:
    if dtype == "INT8":
        return int(draw(st.integers(0, 255) if unsigned else st.integers(-128, 127)))
    if dtype == "INT16" and unsigned:
        return int(draw(st.sampled_from([0, 32768])))
    return 0


def _stored(values: Any, dtype: str) -> np.ndarray | bytes:
    """Values (signed or unsigned) as the TOSA constant's bytes: their low bits."""
    flat = np.asarray(values, np.int64).reshape(-1)
    if dtype == "INT48":
        return b"".join(int(v).to_bytes(6, "little", signed=True) for v in flat)
    bits = BITS[dtype]
    unsigned = (flat & ((1 << bits) - 1)).astype(np.dtype(f"u{bits // 8}"))
    return unsigned.view(NUMPY[dtype]).reshape(np.shape(values))


@settings(max_examples=60, deadline=None)
@given(rescales())
def test_folded_rescales_equal_the_reference_model(
    tmp_path_factory: Any, case: dict[str, Any]
) -> None:
    c = case
    source, target, shape = c["source"], c["target"], c["x"].shape
    n = len(c["multipliers"])
    tensors = [
        T("k", shape, source, _stored(c["x"], source)),
        T("m", (n,), "INT32" if c["scale32"] else "INT16",
          c["multipliers"].astype(np.int32 if c["scale32"] else np.int16)),
        T("s", (n,), "INT8", c["shifts"].astype(np.int8)),
        T("iz", (1,), source, _stored([c["in_zp"]], source)),
        T("oz", (1,), target, _stored([c["out_zp"]], target)),
        T("r", shape, target),
        T("out", shape, target),
        UNREAD,
    ]  # fmt: skip
    fields = {
        "scale32": c["scale32"],
        "rounding_mode": ROUNDING[c["rounding"]],
        "per_channel": c["per_channel"],
        "input_unsigned": c["in_unsigned"],
        "output_unsigned": c["out_unsigned"],
    }
    ops = [Op("CONST", [], [name], "ConstAttribute") for name in ("k", "m", "s", "iz", "oz")]
    ops.append(Op("RESCALE", ["k", "m", "s", "iz", "oz"], ["r"], "RescaleAttribute", fields))
    ops.append(Op("IDENTITY", ["r"], ["out"], "IdentityAttribute"))
    note(repr({k: v for k, v in c.items() if k != "x"}))
    _, have, want = _folded(
        Path(tmp_path_factory.mktemp("rescale")), build(tensors, ops, ["x"], ["out"])
    )
    if have is None:
        # Refused only where the GPU may compute otherwise (see evaluate_scale.py).
        assert c["rounding"] == "INEXACT_ROUND" or (c["out_unsigned"] and (want == 0).any())
        return
    assert c["rounding"] != "INEXACT_ROUND"
    assert have.shape == want.shape
    assert have.astype(want.dtype).tobytes() == want.tobytes(), (have, want)


FLOAT_OPS = ["ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "NEGATE", "ABS"]


@st.composite
def float_chains(draw: Any) -> tuple[list[T], list[Op], list[str]]:
    """A chain of FP32 operators from a constant, each second operand a new constant of
    magnitude 0.5 to 100 (no chain of six reaches a subnormal, a zero or an infinity)."""
    names = (f"t{i}" for i in itertools.count())
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))

    def const(of: tuple[int, ...]) -> str:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        values = rng.uniform(0.5, 100, of) * rng.choice([-1, 1], of)
        name = next(names)
        tensors.append(T(name, of, "FP32", values.astype(np.float32)))
        ops.append(Op("CONST", [], [name], "ConstAttribute"))
        return name

    tensors: list[T] = []
    ops: list[Op] = []
    at = const(shape)
    kinds = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(FLOAT_OPS))
        # A size-1 operand broadcasts along its dimension.
        other = tuple(draw(st.sampled_from([d, 1])) for d in shape)
        if kind == "MUL":
            shift = next(names)
            tensors.append(T(shift, (1,), "INT8", np.zeros(1, np.int8)))
            ops.append(Op("CONST", [], [shift], "ConstAttribute"))
            operands = [const(other), shift]
        elif kind == "NEGATE":
            zps = [next(names), next(names)]
            for z in zps:
                tensors.append(T(z, (1,), "FP32", np.zeros(1, np.float32)))
                ops.append(Op("CONST", [], [z], "ConstAttribute"))
            operands = zps
        elif kind == "ABS":
            operands = []
        else:
            operands = [const(other)]
        fields = {"nan_mode": PROPAGATE} if kind in ("MAXIMUM", "MINIMUM") else {}
        name = next(names)
        tensors.append(T(name, shape, "FP32"))
        ops.append(Op(kind, [at, *operands], [name], attribute_table(kind), fields))
        at = name
        kinds.append(kind)
    tensors += [T("out", shape, "FP32"), UNREAD]
    ops.append(Op("IDENTITY", [at], ["out"], "IdentityAttribute"))
    return tensors, ops, kinds


@settings(max_examples=40, deadline=None)
@given(float_chains())
def test_folded_float_chains_equal_the_reference_model(
    tmp_path_factory: Any, chain: tuple[list[T], list[Op], list[str]]
) -> None:
    tensors, ops, kinds = chain
    note(" -> ".join(kinds))
    data = build(tensors, ops, ["x"], ["out"])
    graph, have, want = _folded(Path(tmp_path_factory.mktemp("float")), data)
    assert have is not None, [op.op for op in graph.operators]
    assert have.dtype == np.float32 and have.shape == want.shape
    assert have.view(np.uint32).tolist() == want.astype(np.float32).view(np.uint32).tolist()


INF = float("inf")


@pytest.mark.parametrize(
    ("op", "a", "b"),
    [
        ("ADD", [1.0, 16777216.0, 3e38, -0.0, INF], [2.0**-24, 1.0, 3e38, -0.0, 5.0]),
        ("SUB", [0.1, 5.0, -3e38, INF, 1.0], [0.3, 5.0, 3e38, 1.0, 1.0 + 2.0**-23]),
        ("MUL", [0.1, -3.0, 1e20, -INF, 1.1754944e-38], [0.1, 0.0, 1e20, 2.0, 0.5 * 2.0**1]),
        ("MAXIMUM", [-0.0, 1.0, -INF, 2.0, 3.0], [-0.0, -1.0, 7.0, 2.0, INF]),
        ("MINIMUM", [0.0, 1.0, -INF, 2.0, 3.0], [0.0, -1.0, 7.0, 2.0, INF]),
    ],
)
def test_special_values_fold_as_the_reference_model_computes_them(
    tmp_path: Path, op: str, a: list[float], b: list[float]
) -> None:
    """Ties to even, overflow to infinity, signed zeros and infinities: folded, the reference
    model's bits."""
    tensors = [
        T("a", (5,), "FP32", np.asarray(a, np.float32)),
        T("b", (5,), "FP32", np.asarray(b, np.float32)),
        T("r", (5,), "FP32"),
        T("out", (5,), "FP32"),
        UNREAD,
    ]
    ops = [Op("CONST", [], ["a"], "ConstAttribute"), Op("CONST", [], ["b"], "ConstAttribute")]
    operands = ["a", "b"]
    if op == "MUL":
        tensors.append(T("shift", (1,), "INT8", np.zeros(1, np.int8)))
        ops.append(Op("CONST", [], ["shift"], "ConstAttribute"))
        operands.append("shift")
    fields = {"nan_mode": PROPAGATE} if op in ("MAXIMUM", "MINIMUM") else {}
    ops.append(Op(op, operands, ["r"], attribute_table(op), fields))
    ops.append(Op("IDENTITY", ["r"], ["out"], "IdentityAttribute"))
    _, have, want = _folded(tmp_path, build(tensors, ops, ["x"], ["out"]))
    assert have is not None
    assert have.view(np.uint32).tolist() == want.astype(np.float32).view(np.uint32).tolist()


def test_folded_and_unfolded_vgfs_compute_the_same_bits(stack: object, tmp_path: Path) -> None:
    """A bias rescaled per channel (DOUBLE_ROUND, shifts 31 to 38) added to an input, and an
    FP32 scale computed from constants (MUL, ADD, MAXIMUM with 0, NEGATE, ABS) multiplying an
    input: folded, the VGF leaves two operators of nine for the GPU and computes the bits of the
    unfolded VGF on the emulation stack, and of the reference model."""
    import vgfc
    from vgfc.runner.run import run_vgf

    row = (1, 8)
    consts = {
        "bias": T("bias", row, "INT32", np.arange(-400, 400, 100, dtype=np.int32).reshape(row)),
        "m": T("m", (8,), "INT32", np.full(8, 1 << 30, np.int32)),
        "s": T("s", (8,), "INT8", np.arange(31, 39, dtype=np.int8)),
        "zp": T("zp", (1,), "INT32", np.zeros(1, np.int32)),
        "w": T("w", row, "FP32", np.linspace(-2, 2, 8, dtype=np.float32).reshape(row)),
        "k": T("k", row, "FP32", np.full(row, 0.37, np.float32)),
        "b": T("b", row, "FP32", np.full(row, 0.25, np.float32)),
        "shift": T("shift", (1,), "INT8", np.zeros(1, np.int8)),
        "zero": T("zero", row, "FP32", np.full(row, 0.5, np.float32)),
        "fzp": T("fzp", (1,), "FP32", np.zeros(1, np.float32)),
    }
    computed = [T(n, row, "INT32") for n in ("x", "rb", "y")]
    computed += [T(n, row, "FP32") for n in ("xf", "wk", "wb", "wr", "wn", "wa", "z")]
    rescale = {
        "scale32": True,
        "rounding_mode": ROUNDING["DOUBLE_ROUND"],
        "per_channel": True,
        "input_unsigned": False,
        "output_unsigned": False,
    }
    ops = [Op("CONST", [], [n], "ConstAttribute") for n in consts]
    ops += [
        Op("RESCALE", ["bias", "m", "s", "zp", "zp"], ["rb"], "RescaleAttribute", rescale),
        Op("ADD", ["x", "rb"], ["y"], "AddAttribute"),
        Op("MUL", ["w", "k", "shift"], ["wk"], "MulAttribute"),
        Op("ADD", ["wk", "b"], ["wb"], "AddAttribute"),
        Op("MAXIMUM", ["wb", "zero"], ["wr"], "MaximumAttribute", {"nan_mode": PROPAGATE}),
        Op("NEGATE", ["wr", "fzp", "fzp"], ["wn"], "NegateAttribute"),
        Op("ABS", ["wn"], ["wa"], "AbsAttribute"),
        Op("MUL", ["xf", "wa", "shift"], ["z"], "MulAttribute"),
    ]
    data = build([*consts.values(), *computed], ops, ["x", "xf"], ["y", "z"])
    model = tmp_path / "model.tosa"
    model.write_bytes(data)
    folded, unfolded = tmp_path / "folded.vgf", tmp_path / "unfolded.vgf"
    report = vgfc.compile(model, folded)
    vgfc.compile(model, unfolded, optimize=False)
    kinds = sorted(r.kind for r in report.rewrites if r.action == "folded")
    assert kinds == ["ABS", "ADD", "MAXIMUM", "MUL", "NEGATE", "RESCALE"]
    x = np.arange(-4, 4, dtype=np.int32).reshape(row)
    xf = np.linspace(-3, 3, 8, dtype=np.float32).reshape(row)
    have = run_vgf(folded, [x, xf])
    want = run_vgf(unfolded, [x, xf])
    graph = compile_model(model, stop_after="passes").graph
    assert graph is not None
    oracle = run_reference_model(data, graph, {"x": x, "xf": xf}, ["y", "z"])
    for name in ("y", "z"):
        assert have[name].tobytes() == want[name].tobytes(), name
        assert have[name].tobytes() == oracle[name].tobytes(), name
