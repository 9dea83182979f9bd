"""The ``kernel_library_entry`` key of an exported payload: written for operands the binding
only permuted, read back as written, and ignored when it is not well formed."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vgfc.ir import Operator
from vgfc.resolve.exported import KEY, entry_metadata, inverse, read_exported


def _op(op: str, ins: tuple[str, ...], outs: tuple[str, ...], **attrs: object) -> Operator:
    return Operator(0, op, ins, outs, attrs)


SHADER = _op("CUSTOM", ("xs",), ("ys",))


def test_permutes_around_the_shader_are_recorded_entry_to_shader() -> None:
    ops = [
        _op("TRANSPOSE", ("x",), ("t",), perms=(0, 2, 3, 1)),
        _op("TRANSPOSE", ("t",), ("xs",), perms=(0, 1, 3, 2)),
        SHADER,
        _op("TRANSPOSE", ("ys",), ("y",), perms=(0, 3, 1, 2)),
    ]
    meta = entry_metadata("ns/op", b'{"beta": 1.5}', ["x"], ["y"], ops, SHADER)
    assert meta is not None
    value = meta[KEY]
    assert value["entry"] == "ns/op" and value["params"] == {"beta": 1.5}
    # Each perm takes the entry's view to the shader's, as numpy's transpose does.
    x = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    xs = np.transpose(np.transpose(x, (0, 2, 3, 1)), (0, 1, 3, 2))
    assert np.array_equal(np.transpose(x, value["inputs"][0]), xs)
    ys = np.arange(2 * 4 * 5 * 3).reshape(2, 4, 5, 3)
    y = np.transpose(ys, (0, 3, 1, 2))
    assert np.array_equal(np.transpose(y, value["outputs"][0]), ys)
    assert np.array_equal(np.transpose(ys, inverse(value["outputs"][0])), y)
    # And it reads back as written.
    raw = json.dumps({"entry_point": "main", **meta}).encode()
    exported = read_exported(_op("CUSTOM", ("xs",), ("ys",), implementation_attrs=raw))
    assert exported is not None
    assert exported.entry == "ns/op" and json.loads(exported.params) == {"beta": 1.5}
    assert exported.inputs == (tuple(value["inputs"][0]),)


def test_operands_the_shader_takes_as_they_are_have_no_permutation() -> None:
    shader = _op("CUSTOM", ("x",), ("y",))
    meta = entry_metadata("ns/op", b"", ["x"], ["y"], [shader], shader)
    assert meta == {KEY: {"entry": "ns/op", "params": {}, "inputs": [None], "outputs": [None]}}


def test_a_cast_on_the_way_leaves_the_key_out() -> None:
    ops = [_op("CAST", ("x",), ("xs",)), SHADER, _op("TRANSPOSE", ("ys",), ("y",), perms=(1, 0))]
    assert entry_metadata("ns/op", b"", ["x"], ["y"], ops, SHADER) is None


@pytest.mark.parametrize(
    "value",
    [
        None,
        "ns/op",
        {"entry": 3, "inputs": [], "outputs": []},
        {"entry": "ns/op", "inputs": [[0, 0]], "outputs": [None]},
        {"entry": "ns/op", "inputs": [[True, 0]], "outputs": [None]},
        {"entry": "ns/op", "inputs": None, "outputs": [None]},
        {"entry": "ns/op", "inputs": [None], "outputs": [None], "params": [1]},
    ],
)
def test_a_key_that_is_not_well_formed_is_ignored(value: object) -> None:
    raw = json.dumps({KEY: value}).encode()
    assert read_exported(_op("CUSTOM", ("x",), ("y",), implementation_attrs=raw)) is None
    broken = b'{"' + KEY.encode() + b'": '
    assert read_exported(_op("CUSTOM", ("x",), ("y",), implementation_attrs=broken)) is None
