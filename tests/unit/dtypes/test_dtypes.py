"""The dtype table: complete, and consistent with numpy, SPIR-V widths and the Vulkan formats."""

from __future__ import annotations

import numpy as np
import pytest

import vgfc.ir
from vgfc.diagnostics import UnsupportedError
from vgfc.dtypes import (
    DType,
    element_format,
    from_ml_dtypes,
    info,
    numpy_dtype,
    shader_formats,
    spirv_element,
    storage_bits,
    stored_as,
)
from vgfc.vulkan_names import format_info, formats

WIDENED = {DType.INT4: DType.INT8, DType.INT48: DType.INT64, DType.SHAPE: DType.INT32}


def test_ir_reexports_the_same_enum() -> None:
    assert vgfc.ir.DType is DType


@pytest.mark.parametrize("dtype", list(DType))
def test_every_type_has_a_row(dtype: DType) -> None:
    row = info(dtype)
    assert row.dtype is dtype
    assert dtype.storage_bits == storage_bits(dtype) == row.storage_bits


def test_storage_bits_of_the_odd_widths() -> None:
    assert storage_bits(DType.INT48) == 48
    assert storage_bits(DType.INT4) == storage_bits(DType.FP4E2M1) == 4
    assert storage_bits(DType.FP6E2M3) == 6
    assert storage_bits(DType.SHAPE) == 64
    assert storage_bits(DType.UNKNOWN) == 0


@pytest.mark.parametrize("dtype", [d for d in DType if numpy_dtype(d) is not None])
def test_numpy_itemsize_matches_the_storage_bits(dtype: DType) -> None:
    found = numpy_dtype(dtype)
    assert found is not None
    # INT4 and INT48 have no numpy type of their width: the IR holds them widened.
    odd = dtype in (DType.INT4, DType.INT48)
    assert found.itemsize * 8 == storage_bits(stored_as(dtype) if odd else dtype)
    # The reader views flatbuffer bytes with these dtypes: they must be little-endian.
    assert found.byteorder in ("<", "|", "=") and found.newbyteorder("<") == found
    if not from_ml_dtypes(dtype):
        assert found.kind == ("b" if dtype is DType.BOOL else "f" if dtype.is_float else "i")


def test_ml_dtypes_types() -> None:
    import ml_dtypes

    assert numpy_dtype(DType.BF16) == np.dtype(ml_dtypes.bfloat16)
    assert numpy_dtype(DType.FP8E4M3) == np.dtype(ml_dtypes.float8_e4m3fn)
    assert numpy_dtype(DType.FP8UE8M0) == np.dtype(ml_dtypes.float8_e8m0fnu)
    assert {d for d in DType if from_ml_dtypes(d)} == {
        DType.BF16,
        DType.FP8E4M3,
        DType.FP8E5M2,
        DType.FP8UE8M0,
    }
    assert numpy_dtype(DType.FP4E2M1) is None and numpy_dtype(DType.MXINT8) is None


def test_widened_types() -> None:
    assert {d: stored_as(d) for d in DType if stored_as(d) is not d} == WIDENED


@pytest.mark.parametrize("dtype", [d for d in DType if spirv_element(d) is not None])
def test_constants_are_stored_at_the_spirv_width(dtype: DType) -> None:
    element = spirv_element(dtype)
    stored = stored_as(dtype)
    assert element is not None
    # A graph constant's bytes are read through the SPIR-V element type: same width, same kind.
    assert spirv_element(stored) == element
    assert storage_bits(stored) == element.width
    assert element.kind == ("bool" if dtype is DType.BOOL else "float" if dtype.is_float else "int")
    if element.kind == "int":
        stored_numpy = numpy_dtype(stored)
        assert stored_numpy is not None and stored_numpy.itemsize * 8 == element.width


def test_types_without_spirv() -> None:
    assert {d for d in DType if spirv_element(d) is None} == {
        DType.UNKNOWN,
        DType.FP6E2M3,
        DType.FP6E3M2,
        DType.FP4E2M1,
        DType.FP8UE8M0,
        DType.MXINT8,
    }


@pytest.mark.parametrize("dtype", [d for d in DType if info(d).vk_format is not None])
@pytest.mark.parametrize("unsigned", [False, True])
def test_element_formats_are_vulkan_formats_a_shader_may_view(dtype: DType, unsigned: bool) -> None:
    name = element_format(dtype, unsigned)
    assert name in formats()
    fmt = format_info(name)
    allowed = shader_formats(dtype)
    assert fmt is not None and allowed is not None
    assert fmt.components == 1
    assert fmt.bits == allowed.bits
    assert fmt.numeric in allowed.numerics
    element = spirv_element(dtype)
    assert element is not None and element.width == fmt.bits


def test_unsigned_formats() -> None:
    assert element_format(DType.INT8) == "VK_FORMAT_R8_SINT"
    assert element_format(DType.INT8, unsigned=True) == "VK_FORMAT_R8_UINT"
    assert element_format(DType.INT48, unsigned=True) == "VK_FORMAT_R64_UINT"
    assert element_format(DType.FP16, unsigned=True) == "VK_FORMAT_R16_SFLOAT"


def test_int4_tensors_are_bytes_as_the_reference_converter_writes_them() -> None:
    # model-converter 0.11 declares INT4 inputs, outputs and constants R8_SINT, one
    # sign-extended value per byte (tests/data/conformance_int4 runs both converters' files).
    assert element_format(DType.INT4) == "VK_FORMAT_R8_SINT"
    assert stored_as(DType.INT4) is DType.INT8


@pytest.mark.parametrize("dtype", [DType.SHAPE, DType.FP4E2M1, DType.UNKNOWN])
def test_types_without_a_format(dtype: DType) -> None:
    with pytest.raises(UnsupportedError, match=f"^{dtype.value} tensors have no Vulkan tensor"):
        element_format(dtype)


def test_shader_formats_exist_exactly_where_element_formats_do() -> None:
    for dtype in DType:
        assert (shader_formats(dtype) is None) == (info(dtype).vk_format is None), dtype
