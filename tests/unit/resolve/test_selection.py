"""Kernel selection: the first exact kernel wins, then the first after a conversion; type aliases;
``--no-auto-convert`` and the list of rejected candidates; the first library with an entry wins;
Arm custom-shader ops without code bound by their name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernel_models import (
    SHAPE,
    compiled,
    execute,
    inserted,
    library_of,
    op,
    single,
    uniform,
    write,
)
from shader_models import attrs as shader_attrs
from tosa_factory import SHADER_DOMAIN, T, custom

from vgfc.diagnostics import UnsupportedError
from vgfc.dtypes import DType
from vgfc.resolve.library.records import Library


@pytest.mark.parametrize(
    ("dtype", "shape", "kernel", "count", "conversions"),
    [
        ("INT32", SHAPE, "k_int32", "1", []),
        ("FP16", SHAPE, "k_f16_nchw", "2", []),
        # k_f32_nhwc comes first but needs a TRANSPOSE: the exact k_float_nchw wins.
        ("FP32", SHAPE, "k_float_nchw", "4", []),
        # Layouts apply to rank-4 operands only: the first kernel for FP32 fits exactly.
        ("FP32", (3, 5), "k_f32_nhwc", "3", []),
        # No exact match: the first kernel that fits after a conversion.
        ("INT8", SHAPE, "k_int32", "1", ["CAST", "CAST"]),
        ("INT16", (3, 5), "k_int32", "1", ["CAST", "CAST"]),
    ],
)
def test_the_first_exact_kernel_wins_then_the_first_after_conversion(
    tmp_path: Path,
    lib: Library,
    dtype: str,
    shape: tuple[int, ...],
    kernel: str,
    count: str,
    conversions: list[str],
) -> None:
    path = single(tmp_path, "Select", shape=shape, dtype=dtype)
    result = compiled(path, lib, stop_after="partition")
    assert [k[1:] for k in result.kernels] == [("test/Select", kernel)]
    assert [kind for kind, _ in inserted(result)] == conversions
    assert result.graph is not None
    bound = next(o for o in result.graph.operators if o.shader is not None)
    assert bound.shader is not None and dict(bound.shader.defines)["COUNT"] == count
    if conversions:
        first, last = result.graph.operators[0], result.graph.operators[-1]
        assert result.graph.tensors[first.outputs[0]].dtype is DType.INT32
        assert result.graph.tensors[last.inputs[0]].dtype is DType.INT32
        assert result.graph.tensors[last.outputs[0]].dtype is DType[dtype]
        assert result.kernels[0][0] == bound.index


def test_an_alias_binds_one_dtype_across_operands(tmp_path: Path) -> None:
    """a and b both name alias F: with a FP32 and b FP16 only b is converted."""
    library = library_of(
        tmp_path,
        """
        - domain: test
          name: Pair
          inputs: [a, b]
          outputs: [y]
          kernels:
            - name: same_float
              arg_meta: {a: [F], b: [F], y: [F]}
              shader: {file: "@DATA@/affine.comp", defines: {SCALE: 1, BIAS: 0, COUNT: 1}}
              resources: {a: {binding: 0}, b: {binding: 2}, y: {binding: 1}}
              dispatch: {workgroups: [1]}
        """,
        head="type_alias:\n  F: [FP32, FP16]\n",
    )
    path = write(
        tmp_path / "model.tosa",
        [T("a", (2, 4)), T("b", (2, 4), "FP16"), T("y", (2, 4))],
        [op("Pair", ["a", "b"], ["y"])],
        ["a", "b"],
        ["y"],
    )
    result = compiled(path, library, stop_after="resolve")
    assert inserted(result) == [("CAST", "inserted by kernel selection: FP16->FP32 for 'b'")]


def test_no_auto_convert_refuses_a_conversion_and_names_it(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "Select", dtype="INT8")
    with pytest.raises(UnsupportedError) as caught:
        compiled(path, lib, auto_convert=False, stop_after="resolve")
    text = str(caught.value)
    assert "op #0 CUSTOM 'Select' (test)" in text
    assert "k_int32" in text and "CAST INT8->INT32 for 'x'" in text
    assert "--no-auto-convert" in text


def test_the_rejection_lists_each_candidate_and_why(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "Select", dtype="INT8")
    with pytest.raises(UnsupportedError) as caught:
        compiled(path, lib, auto_convert=False, stop_after="resolve")
    text = str(caught.value)
    for line, reason in (
        ("k_int32", "'x' is INT8, it takes INT32"),
        ("k_f16_nchw", "'x' is INT8, it takes FP16"),
        ("k_f32_nhwc", "'x' is INT8, it takes FP32"),
        ("k_float_nchw", "'x' is INT8, it takes FP32/FP16"),
    ):
        assert f"{line} (line " in text and reason in text, text


def test_the_first_library_with_an_entry_wins(tmp_path: Path, lib: Library) -> None:
    other = library_of(
        tmp_path,
        """
        - domain: test
          name: Affine
          inputs: [x]
          outputs: [y]
          compose:
            ops: [{op: ABS, inputs: [x], outputs: [y]}]
        """,
    )
    path = single(tmp_path, "Affine", {"scale": 1.0})
    assert [k[1:] for k in compiled(path, other, lib, stop_after="resolve").kernels] == [
        ("test/Affine", "compose")
    ]
    assert [k[1:] for k in compiled(path, lib, other, stop_after="resolve").kernels] == [
        ("test/Affine", "affine_f32")
    ]


def _arm_library(tmp_path: Path) -> Library:
    return library_of(
        tmp_path,
        """
        - domain: com.arm.VulkanCustomShader
          name: double
          inputs: [x]
          outputs: [y]
          infer: {y: {same_as: x}}
          kernels:
            - name: affine
              shader:
                file: "@DATA@/affine.comp"
                defines: {SCALE: 2.0, BIAS: 0.0, COUNT: "x[0] * x[1]"}
              resources: {x: {binding: 0}, y: {binding: 1}}
              dispatch: {global: ["x[0] * x[1]"]}
        """,
    )


def _arm_model(tmp_path: Path, payload: dict[str, Any]) -> Path:
    return write(
        tmp_path / "model.tosa",
        [T("x", (2, 8)), T("y", (2, 8))],
        [custom(["x"], ["y"], name="double", domain=SHADER_DOMAIN, attrs=payload)],
        ["x"],
        ["y"],
    )


def test_an_arm_op_without_code_is_bound_by_its_name(tmp_path: Path, stack: object) -> None:
    library = _arm_library(tmp_path)
    path = _arm_model(tmp_path, shader_attrs(None, shader_language=None))
    result = compiled(path, library)
    assert [k[1:] for k in result.kernels] == [("com.arm.VulkanCustomShader/double", "affine")]
    x = uniform((2, 8))
    np.testing.assert_array_equal(execute(result, tmp_path, {"x": x})["y"], x * 2)


def test_an_arm_op_with_code_keeps_its_own_shader(tmp_path: Path) -> None:
    library = _arm_library(tmp_path)
    path = _arm_model(tmp_path, shader_attrs())
    result = compiled(path, library, stop_after="resolve")
    assert result.kernels == ()


def test_an_arm_op_with_no_attributes_is_bound_by_its_name(tmp_path: Path) -> None:
    library = _arm_library(tmp_path)
    path = _arm_model(tmp_path, {})
    result = compiled(path, library, stop_after="resolve")
    assert [k[1:] for k in result.kernels] == [("com.arm.VulkanCustomShader/double", "affine")]
