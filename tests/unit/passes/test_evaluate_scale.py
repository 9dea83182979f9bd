"""RESCALE folding: each case folded, with the values worked out by hand from the specification's
``apply_scale_32``/``apply_scale_16`` (``(value * multiplier + round) >> shift``), and each case
refused. That the folded values are ``tosa_reference_model``'s, bit for bit, is the property test
in ``tests/property/test_fold.py``."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from vgfc.ir import Data, DType, Graph, Operator, Tensor, Version
from vgfc.passes.evaluate import evaluators
from vgfc.passes.fold import fold
from vgfc.verify import verify

I8, I16, I32, I48 = DType.INT8, DType.INT16, DType.INT32, DType.INT48
NUMPY = {I8: np.int8, I16: np.int16, I32: np.int32, I48: np.int64}
FLAGS = {
    "scale32": True,
    "rounding_mode": "SINGLE_ROUND",
    "per_channel": False,
    "input_unsigned": False,
    "output_unsigned": False,
}


def _rescale(
    x: Any,
    source: DType,
    target: DType,
    multiplier: Any,
    shift: Any,
    zps: tuple[int, int] = (0, 0),
    **flags: Any,
) -> np.ndarray | None:
    """The folded value of RESCALE of the constant ``x`` (``None``: refused)."""
    attrs = {**FLAGS, **flags}
    x = np.asarray(x, NUMPY[source])
    m = np.asarray(multiplier, np.int32 if attrs["scale32"] else np.int16).reshape(-1)
    s = np.asarray(shift, np.int8).reshape(-1)
    args = [x, m, s, np.asarray([zps[0]], NUMPY[source]), np.asarray([zps[1]], NUMPY[target])]
    types = [source, I32 if attrs["scale32"] else I16, I8, source, target]
    ins = [Tensor(f"t{i}", a.shape, t) for i, (a, t) in enumerate(zip(args, types, strict=True))]
    out = Tensor("out", x.shape, target)
    op = Operator(0, "RESCALE", tuple(t.name for t in ins), ("out",), MappingProxyType(attrs))
    value = evaluators()["RESCALE"](op, args, out, ins)
    if value is not None:
        assert value.dtype == NUMPY[target] and value.shape == x.shape
    return value


def _same(have: np.ndarray | None, want: list[Any]) -> bool:
    return have is not None and have.tolist() == want


def test_single_round_rounds_half_up_and_saturates() -> None:
    # multiplier 1 << 30, shift 31: x / 2, rounded half up (toward +inf), clipped to INT8.
    have = _rescale([-3, -1, 1, 3, 5, 300, -300], I32, I8, 1 << 30, 31)
    assert _same(have, [-1, 0, 1, 2, 3, 127, -128])


def test_double_round_adds_the_sign_of_the_value_past_shift_31() -> None:
    # x / 8 (shift 33): round 1 << 32 plus or minus 1 << 30, by the sign of x.
    x = [3, -4, 4, -5, 11]
    single = _rescale(x, I32, I32, 1 << 30, 33)
    double = _rescale(x, I32, I32, 1 << 30, 33, rounding_mode="DOUBLE_ROUND")
    assert _same(single, [0, 0, 1, -1, 1])
    assert _same(double, [1, -1, 1, -1, 2])
    # Up to shift 31 the two modes are one.
    assert _same(
        _rescale(x, I32, I32, 1 << 30, 31, rounding_mode="DOUBLE_ROUND"), [2, -2, 2, -2, 6]
    )


def test_zero_points_are_subtracted_and_added() -> None:
    # (x - (-3)) * 1, + 5: scale 1 is multiplier 1 << 30, shift 30.
    assert _same(_rescale([-128, 0, 100, 127], I8, I8, 1 << 30, 30, (-3, 5)), [-120, 8, 108, 127])


def test_per_channel_scales_each_last_axis_index() -> None:
    x = [[10, 10, 10], [-7, 7, 100]]
    # channel 0 x 1, channel 1 x 1/2, channel 2 x 3/4 (multiplier 3 << 28, shift 30).
    have = _rescale(x, I8, I16, [1 << 30, 1 << 30, 3 << 28], [30, 31, 30], per_channel=True)
    assert _same(have, [[10, 5, 8], [-7, 4, 75]])
    # A rank-0 value with one multiplier keeps its rank.
    assert _same(_rescale(np.int8(9), I8, I8, 1 << 30, 31), 5)


def test_unsigned_input_reads_zero_extended_values_and_zero_point() -> None:
    # uint8 200 (stored -56) less zero point 128 (stored -128) is 72.
    have = _rescale([-56, 0, 127], I8, I8, 1 << 30, 30, (-128, 0), input_unsigned=True)
    assert _same(have, [72, -128, -1])
    # uint16 zero point 32768 (stored -32768): 65535 (stored -1) - 32768.
    have = _rescale([-1, 0], I16, I16, 1 << 30, 30, (-32768, 0), input_unsigned=True)
    assert _same(have, [32767, -32768])


def test_unsigned_output_is_clipped_to_its_range_and_stored_as_bits() -> None:
    # int8 -> uint8 with zero point 128: -100 -> 28, 0 -> 128 (stored -128), 100 -> 228.
    have = _rescale([-100, 0, 100], I8, I8, 1 << 30, 30, (0, -128), output_unsigned=True)
    assert _same(have, [28, -128, -28])
    # Saturation at the top: 300 * 1 + 128 -> 255 (stored -1).
    have = _rescale([300], I16, I8, 1 << 30, 30, (0, -128), output_unsigned=True)
    assert _same(have, [-1])


def test_16_bit_multipliers_scale_int48_values() -> None:
    # 2**33 * 2**14 >> 20 = 2**27; -2**33 + 1 rounds half up to -2**27.
    x = [1 << 33, -(1 << 33) + 1, 5]
    have = _rescale(x, I48, I32, 1 << 14, 20, scale32=False)
    assert _same(have, [1 << 27, -(1 << 27), 0])


@pytest.mark.parametrize(
    ("why", "kwargs"),
    [
        ("INEXACT_ROUND may round otherwise", {"rounding_mode": "INEXACT_ROUND"}),
        ("no rounding mode", {"rounding_mode": "UNKNOWN"}),
        ("DOUBLE_ROUND needs scale32", {"rounding_mode": "DOUBLE_ROUND", "scale32": False,
                                        "multiplier": 1 << 14, "shift": 14}),
        ("both sides unsigned", {"input_unsigned": True, "output_unsigned": True}),
        ("a negative multiplier", {"multiplier": -(1 << 30)}),
        ("shift 1", {"shift": 1}),
        ("shift 63", {"shift": 63}),
        ("a value past 1 << (shift - 1)", {"shift": 2, "multiplier": 1}),
        ("a negative result to an unsigned output", {"output_unsigned": True}),
        ("an INT16 zero point", {"source": I16, "zps": (1, 0)}),
        ("an unsigned INT16 zero point not 0 or 32768", {"source": I16, "zps": (7, 0),
                                                         "input_unsigned": True}),
        ("an INT32 unsigned output", {"output_unsigned": True, "target": I32}),
    ],
)  # fmt: skip
def test_refused(why: str, kwargs: dict[str, Any]) -> None:
    call: dict[str, Any] = {
        "x": [-5, 0, 5],
        "source": I8,
        "target": I8,
        "multiplier": 1 << 30,
        "shift": 30,
    }
    for key in list(kwargs):
        if key in call or key == "zps":
            call[key] = kwargs.pop(key)
    assert _rescale(**call, **kwargs) is None, why


def test_refused_int48_cases() -> None:
    assert _rescale([1, 2], I48, I32, 1 << 30, 30) is None  # scale32 on INT48
    # apply_scale_16's result must be an INT32: 2**40 * 2**14 >> 15 is 2**39.
    assert _rescale([1 << 40], I48, I32, 1 << 14, 15, scale32=False) is None
    # Per channel, the multipliers must be one per channel.
    assert _rescale([[1, 2]], I8, I8, [1 << 30] * 3, [30] * 3, per_channel=True) is None


def test_the_fold_pass_makes_a_constant_of_a_rescale() -> None:
    """Through the pass: the RESCALE of constants becomes a CONST of its value."""
    arrays = {
        "x": (np.array([-100, 3, 100], np.int32), I32),
        "m": (np.array([1 << 30], np.int32), I32),
        "s": (np.array([31], np.int8), I8),
        "iz": (np.array([0], np.int32), I32),
        "oz": (np.array([-1], np.int8), I8),
    }
    tensors = {n: Tensor(n, a.shape, t, Data.of(a, t)) for n, (a, t) in arrays.items()}
    tensors["r"] = Tensor("r", (3,), I8)
    tensors["y"] = Tensor("y", (3,), I8)
    ops = [Operator(i, "CONST", (), (n,)) for i, n in enumerate(arrays)]
    ops.append(Operator(5, "RESCALE", tuple(arrays), ("r",), MappingProxyType(dict(FLAGS))))
    ops.append(Operator(6, "IDENTITY", ("r",), ("y",)))
    graph = Graph(MappingProxyType(tensors), tuple(ops), (), ("y",), Version(1, 0, 0, False))
    verify(graph)
    done = fold(graph)
    assert [op.op for op in done.graph.operators][5:] == ["CONST", "IDENTITY"]
    assert [(r.kind, r.action) for r in done.rewrites] == [("RESCALE", "folded")]
    folded = done.graph.tensors["r"].data
    assert folded is not None and folded.array.tolist() == [-51, 1, 49]


def test_a_large_constant_is_scaled_a_chunk_of_rows_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Chunks (here of 2 rows of 3 channels) give the whole tensor's values, and a REQUIRE
    failing in the last chunk refuses the whole fold."""
    import vgfc.passes.evaluate_scale as evaluate_scale

    x = np.arange(-21, 21, dtype=np.int64).reshape(7, 2, 3)
    args = ([1 << 30, 1 << 30, 3 << 28], [30, 31, 30])
    whole = _rescale(x, I16, I16, *args, per_channel=True)
    monkeypatch.setattr(evaluate_scale, "_CHUNK_ELEMENTS", 6)
    chunked = _rescale(x, I16, I16, *args, per_channel=True)
    assert whole is not None and chunked is not None
    assert chunked.tolist() == whole.tolist()
    assert whole[..., 1].tolist() == ((x[..., 1] + 1) // 2).tolist()
    # value 20 needs shift > 5 with scale32: shift 5 refuses, though the first chunks pass.
    late = x.copy()
    late[:-1] = 0
    assert _rescale(late, I16, I16, 1 << 4, 5) is None
    assert _rescale(np.zeros_like(late), I16, I16, 1 << 4, 5) is not None
