"""Kernel-library shape and dtype inference (``infer:``): a declared output that disagrees with
the rule, an expression rule naming both shapes, the wrong number of operands."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernel_models import (
    SHAPE,
    compiled,
    op,
    single,
    write,
)
from tosa_factory import Op, T

from vgfc.diagnostics import InputError
from vgfc.resolve.library.records import Library


@pytest.mark.parametrize(
    ("name", "declared", "message"),
    [
        ("shape", {"out_shape": (1, 3, 2, 6)}, "test/Affine infers shape [1, 3, 2, 5]"),
        ("dtype", {"out_dtype": "FP16"}, "test/Affine gives FP32"),
    ],
)
def test_an_output_that_disagrees_with_the_rule(
    tmp_path: Path, lib: Library, name: str, declared: dict[str, Any], message: str
) -> None:
    path = single(tmp_path, "Affine", {"scale": 1.0}, **declared)
    with pytest.raises(InputError) as caught:
        compiled(path, lib, stop_after="resolve")
    text = str(caught.value)
    assert "op #0 CUSTOM 'Affine' (test)" in text
    assert "output 'y'" in text
    assert message in text
    if name == "shape":
        assert "the model declares [1, 3, 2, 6]" in text
    else:
        assert "the model declares FP16" in text


def test_an_expression_rule_names_both_shapes(tmp_path: Path, lib: Library) -> None:
    w = np.zeros((3, 3, 3, 2), np.float32)
    b = np.zeros((3,), np.float32)
    path = write(
        tmp_path / "model.tosa",
        [
            T("x", (1, 4, 4, 2)),
            T("w", w.shape, data=w),
            T("b", b.shape, data=b),
            T("y", (1, 9, 9, 3)),
        ],
        [
            Op("CONST", [], ["w"], "ConstAttribute"),
            Op("CONST", [], ["b"], "ConstAttribute"),
            op("ConvTBias", ["x", "w", "b"], ["y"], struct.pack("<iii", 1, 2, 2)),  # SAME: 8x8
        ],
        ["x"],
        ["y"],
    )
    with pytest.raises(InputError) as caught:
        compiled(path, lib, stop_after="resolve")
    text = str(caught.value)
    assert "op #2 CUSTOM 'ConvTBias' (test)" in text
    assert "output 'y'" in text
    assert "infers shape [1, 8, 8, 3]" in text
    assert "the model declares [1, 9, 9, 3]" in text


def test_the_wrong_number_of_operands(tmp_path: Path, lib: Library) -> None:
    path = write(
        tmp_path / "model.tosa",
        [T("x", SHAPE), T("z", SHAPE), T("y", SHAPE)],
        [op("Affine", ["x", "z"], ["y"], {"scale": 1.0})],
        ["x", "z"],
        ["y"],
    )
    with pytest.raises(InputError) as caught:
        compiled(path, lib, stop_after="resolve")
    assert "test/Affine takes 1 input(s) and 1 output(s)" in caught.value.message
    assert "the op has 2 and 1" in caught.value.message
