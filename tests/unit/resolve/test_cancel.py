"""Inverse pairs between adjacent kernel ops (a TRANSPOSE and its inverse, an exact CAST round
trip) are dropped and their reader rewired; pairs that must stay, stay."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from kernel_models import (
    ML,
    SH,
    SHAPE,
    chain,
    channel_add,
    compiled,
    execute,
    kinds,
    op,
    single,
    uniform,
    write,
)
from tosa_factory import Op, T

from vgfc.dtypes import DType
from vgfc.ir import Operator, Tensor
from vgfc.resolve.convert import cancel_inverse_pairs
from vgfc.resolve.library.records import Library
from vgfc.verify import verify


def _cancelled(ops: Any, tensors: Any, outputs: frozenset[str]) -> list[Any]:
    """The ops that remain, in order (cancel_inverse_pairs maps each op given to its fate)."""
    return list(cancel_inverse_pairs(ops, tensors, outputs).values())


# -- inverse pairs between adjacent kernel ops ----------------------------------------------------


def test_a_transpose_pair_between_two_kernels_is_dropped(
    tmp_path: Path, lib: Library, stack: object
) -> None:
    path = chain(
        tmp_path, [("ChannelAdd", {"scale": 2.0, "step": 10.0}), ("ChannelAdd", {"step": 100.0})]
    )
    result = compiled(path, lib)
    assert result.graph is not None
    verify(result.graph)
    assert [o.op for o in result.graph.operators] == ["TRANSPOSE", "CUSTOM", "CUSTOM", "TRANSPOSE"]
    assert kinds(result) == [ML, SH, SH, ML]
    first, second = result.graph.operators[1:3]
    assert second.inputs == first.outputs
    assert second.shader is not None and second.shader.inputs[0].tensor == first.outputs[0]
    x = uniform(SHAPE)
    got = execute(result, tmp_path, {"x": x})["y"]
    np.testing.assert_allclose(
        got, channel_add(channel_add(x, 2.0, 10.0), 1.0, 100.0), rtol=1e-6, atol=1e-4
    )


def test_an_exact_cast_pair_between_two_kernels_is_dropped(
    tmp_path: Path, lib: Library, stack: object
) -> None:
    """FP32 graph, FP16 kernels: FP16 -> FP32 -> FP16 between them is exact, so it goes."""
    path = chain(tmp_path, [("HalfAffine", {"scale": 3.0}), ("HalfAffine", {"scale": 0.5})])
    result = compiled(path, lib)
    assert result.graph is not None
    verify(result.graph)
    assert [o.op for o in result.graph.operators] == ["CAST", "CUSTOM", "CUSTOM", "CAST"]
    assert kinds(result) == [ML, SH, SH, ML]
    x = uniform(SHAPE)
    got = execute(result, tmp_path, {"x": x})["y"]
    half = (x.astype(np.float16) * np.float16(3.0)).astype(np.float16) * np.float16(0.5)
    np.testing.assert_allclose(got, half.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_a_lossy_cast_pair_between_two_kernels_is_kept(
    tmp_path: Path, lib: Library, stack: object
) -> None:
    """FP16 graph, FP32 kernels: FP32 -> FP16 -> FP32 between them rounds, so it stays."""
    path = chain(tmp_path, [("Affine", {"scale": 3.0}), ("Affine", {"scale": 1 / 3})], dtype="FP16")
    result = compiled(path, lib)
    assert result.graph is not None
    verify(result.graph)
    assert [o.op for o in result.graph.operators] == [
        "CAST",
        "CUSTOM",
        "CAST",
        "CAST",
        "CUSTOM",
        "CAST",
    ]
    assert kinds(result) == [ML, SH, ML, SH, ML]
    x = uniform(SHAPE, np.float16)
    got = execute(result, tmp_path, {"x": x})["y"]
    t = (x.astype(np.float32) * np.float32(3.0)).astype(np.float16)
    want = (t.astype(np.float32) * np.float32(1 / 3)).astype(np.float16)
    np.testing.assert_allclose(
        got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3
    )


def test_two_kernels_converting_one_tensor_define_each_copy_once(
    tmp_path: Path, lib: Library, stack: object
) -> None:
    """Resolve binds each op against the original graph: once, two ops converting the same
    tensor both named the copy '<t>.nhwc' / '<t>.fp32' (a tensor defined twice, or a cycle),
    and an op that cancel_inverse_pairs rewired (a new object) was dropped from the graph."""
    path = write(
        tmp_path / "model.tosa",
        [T(n, SHAPE) for n in ("x", "a", "b", "y")],
        [
            op("ChannelAdd", ["x"], ["a"], {"step": 1.0}),
            op("ChannelAdd", ["x"], ["b"], {"step": 2.0}),
            Op("ADD", ["a", "b"], ["y"], "AddAttribute"),
        ],
        ["x"],
        ["y"],
    )
    result = compiled(path, lib)
    assert result.graph is not None
    verify(result.graph)
    written = [n for o in result.graph.operators for n in o.outputs]
    assert len(written) == len(set(written))
    x = uniform(SHAPE)
    got = execute(result, tmp_path, {"x": x})["y"]
    np.testing.assert_allclose(
        got, channel_add(x, 1.0, 1.0) + channel_add(x, 1.0, 2.0), rtol=1e-6, atol=1e-5
    )


def _op(
    kind: str, ins: Sequence[str], outs: Sequence[str], inserted: bool = True, **attrs: Any
) -> Operator:
    return Operator(
        0,
        kind,
        tuple(ins),
        tuple(outs),
        MappingProxyType(attrs),
        inserted="inserted by test" if inserted else None,
    )


def _tensors(**dtypes: DType) -> dict[str, Tensor]:
    return {n: Tensor(n, (1, 2, 3, 4), d) for n, d in dtypes.items()}


NHWC, NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


def test_cancel_drops_an_inverse_transpose_pair_and_rewires_the_reader() -> None:
    ops = [
        _op("ABS", ["x"], ["k1"], inserted=False),
        _op("TRANSPOSE", ["k1"], ["t"], perms=NCHW),
        _op("TRANSPOSE", ["t"], ["t2"], perms=NHWC),
        _op("NEGATE", ["t2"], ["y"], inserted=False),
    ]
    kept = _cancelled(
        ops,
        _tensors(x=DType.FP32, k1=DType.FP32, t=DType.FP32, t2=DType.FP32, y=DType.FP32),
        frozenset({"y"}),
    )
    assert [(o.op, o.inputs) for o in kept] == [("ABS", ("x",)), ("NEGATE", ("k1",))]


@pytest.mark.parametrize(
    ("first", "second", "outputs", "extra_reader", "own"),
    [
        (NCHW, NCHW, {"y"}, False, False),  # not inverse
        (NCHW, NHWC, {"y", "t"}, False, False),  # the middle is a graph output
        (NCHW, NHWC, {"y"}, True, False),  # the middle has another reader
        (NCHW, NHWC, {"y", "t2"}, False, False),  # the result is a graph output
        (NCHW, NHWC, {"y"}, False, True),  # the model's own transposes
    ],
    ids=[
        "not inverse",
        "middle is an output",
        "middle read twice",
        "result is an output",
        "model's own",
    ],
)
def test_cancel_keeps_pairs_it_must_not_drop(
    first: tuple[int, ...],
    second: tuple[int, ...],
    outputs: set[str],
    extra_reader: bool,
    own: bool,
) -> None:
    ops = [
        _op("TRANSPOSE", ["x"], ["t"], inserted=not own, perms=first),
        _op("TRANSPOSE", ["t"], ["t2"], inserted=not own, perms=second),
        _op("ABS", ["t2"], ["y"], inserted=False),
    ]
    if extra_reader:
        ops.append(_op("ABS", ["t"], ["z"], inserted=False))
    tensors = _tensors(x=DType.FP32, t=DType.FP32, t2=DType.FP32, y=DType.FP32, z=DType.FP32)
    assert _cancelled(ops, tensors, frozenset(outputs)) == ops


@pytest.mark.parametrize(
    ("source", "middle", "dropped"),
    [
        (DType.FP16, DType.FP32, True),
        (DType.INT8, DType.INT32, True),
        (DType.INT16, DType.INT32, True),
        (DType.FP32, DType.FP16, False),
        (DType.INT32, DType.INT8, False),
        (DType.FP32, DType.INT32, False),
    ],
)
def test_cancel_drops_a_cast_pair_only_when_it_is_exact(
    source: DType, middle: DType, dropped: bool
) -> None:
    ops = [
        _op("CAST", ["x"], ["t"]),
        _op("CAST", ["t"], ["t2"]),
        _op("ABS", ["t2"], ["y"], inserted=False),
    ]
    tensors = _tensors(x=source, t=middle, t2=source, y=source)
    kept = _cancelled(ops, tensors, frozenset({"y"}))
    if dropped:
        assert [(o.op, o.inputs) for o in kept] == [("ABS", ("x",))]
    else:
        assert kept == ops


def test_cancel_rewires_a_shader_resource_too(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "Affine", {"scale": 1.0})
    result = compiled(path, lib, stop_after="resolve")
    assert result.graph is not None
    shader_op = result.graph.operators[0]
    assert shader_op.shader is not None
    ops = [
        _op("TRANSPOSE", ["a"], ["b"], perms=NCHW),
        _op("TRANSPOSE", ["b"], ["x"], perms=NHWC),
        shader_op,
    ]
    tensors = {**_tensors(a=DType.FP32, b=DType.FP32), **result.graph.tensors}
    kept = _cancelled(ops, tensors, frozenset({"y"}))
    assert len(kept) == 1
    assert kept[0].inputs == ("a",)
    assert kept[0].shader is not None and kept[0].shader.inputs[0].tensor == "a"
