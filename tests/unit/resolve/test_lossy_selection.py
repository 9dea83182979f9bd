"""Kernel selection never narrows unasked (vgfc/resolve/select.py): a CAST that can change values on
its way into a kernel is refused unless the kernel's ``allow_lossy`` names the operand; an allowed
one is a warning that ``-q`` keeps; widening conversions compile quietly.

The table of lossy conversions is checked against numpy: a conversion is lossy exactly when some
value of the source type does not survive the round trip through the target."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from tosa_factory import T, build, custom

from vgfc.compiler import Options, compile_model
from vgfc.diagnostics import Severity, VgfcError
from vgfc.dtypes import DType, numpy_dtype
from vgfc.resolve.library.load import load_library
from vgfc.resolve.select import loses_information

SHADER = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer Input {{ {t} x[]; }};
layout(set = 0, binding = 1) writeonly buffer Output {{ {t} y[]; }};
void main() {{ uint i = gl_GlobalInvocationID.x; y[i] = x[i]; }}
"""
GLSL_TYPES = {"FP32": "float", "FP16": "float16_t", "INT8": "int8_t", "INT32": "int"}


def library(tmp_path: Path, kernels: list[tuple[str, str, str]]) -> Path:
    """One entry test/Copy with a kernel per (name, dtype, extra YAML)."""
    blocks = []
    for name, dtype, extra in kernels:
        (tmp_path / f"{name}.comp").write_text(SHADER.format(t=GLSL_TYPES[dtype]))
        blocks.append(
            f"""      - name: {name}
        arg_meta: {{x: [{dtype}], y: [{dtype}]}}
        shader: {{file: {name}.comp}}
        resources: {{x: {{binding: 0}}, y: {{binding: 1}}}}
        dispatch: {{global: [16]}}
{extra}"""
        )
    text = textwrap.dedent(
        """\
        vgfc_kernels: 1
        operators:
          - domain: test
            name: Copy
            inputs: [x]
            outputs: [y]
            kernels:
        """
    ) + "".join(blocks)
    path = tmp_path / "lib.yaml"
    path.write_text(text)
    return path


def model(tmp_path: Path, dtype: str, out: str | None = None) -> Path:
    path = tmp_path / "m.tosa"
    tensors = [T("x", (1, 16), dtype), T("y", (1, 16), out or dtype)]
    op = custom(["x"], ["y"], "Copy", domain="test", attrs={})
    path.write_bytes(build(tensors, [op], ["x"], ["y"]))
    return path


def compiled(model_path: Path, lib: Path):  # type: ignore[no-untyped-def]
    return compile_model(model_path, Options(kernels=(str(lib),)))


def test_an_fp16_only_kernel_on_fp32_data_is_refused(tmp_path: Path) -> None:
    lib = library(tmp_path, [("copy_f16", "FP16", ""), ("copy_i8", "INT8", "")])
    with pytest.raises(VgfcError) as e:
        compiled(model(tmp_path, "FP32"), lib)
    message = str(e.value)
    assert "without losing information" in message
    assert "copy_f16 (line 8) needs CAST FP32->FP16 for 'x'" in message
    assert "copy_i8" in message  # every candidate is listed
    assert "allow_lossy: true" in message


def test_allow_lossy_inserts_the_cast_with_a_warning(tmp_path: Path) -> None:
    lib = library(tmp_path, [("copy_f16", "FP16", "        allow_lossy: [x]\n")])
    result = compiled(model(tmp_path, "FP32"), lib)
    assert result.graph is not None
    casts = [o.inserted for o in result.graph.operators if o.op == "CAST"]
    assert casts == [
        "inserted by kernel selection: FP32->FP16 for 'x'",
        "inserted by kernel selection: FP16->FP32 for 'y'",
    ]
    (warning,) = [d for d in result.diagnostics if d.severity is Severity.WARNING]
    assert "CAST FP32->FP16 for 'x'" in warning.message and "allow_lossy" in warning.message


def test_the_warning_survives_quiet(cli, tmp_path: Path) -> None:
    lib = library(tmp_path, [("copy_f16", "FP16", "        allow_lossy: true\n")])
    path = model(tmp_path, "FP32")
    run = cli("compile", str(path), "--kernels", str(lib), "-o", str(tmp_path / "m.vgf"), "-q")
    assert run.code == 0, run.err
    assert "warning:" in run.err and "loses information" in run.err


def test_widening_compiles_without_a_warning(tmp_path: Path) -> None:
    """FP16 data into an FP32 kernel: exact on the way in; the result goes back to the FP16 the
    model declares, which is the precision the model asked for."""
    lib = library(tmp_path, [("copy_f32", "FP32", "")])
    result = compiled(model(tmp_path, "FP16"), lib)
    assert not result.diagnostics
    assert result.graph is not None
    assert [o.op for o in result.graph.operators].count("CAST") == 2


def test_a_lossless_target_is_preferred(tmp_path: Path) -> None:
    text = SHADER.format(t="float")
    (tmp_path / "k.comp").write_text(text)
    (tmp_path / "lib.yaml").write_text(
        textwrap.dedent(
            """\
            vgfc_kernels: 1
            type_alias:
              F: [BF16, FP32]
            operators:
              - domain: test
                name: Copy
                inputs: [x]
                outputs: [y]
                kernels:
                  - name: k
                    arg_meta: {x: [F], y: [F]}
                    shader: {file: k.comp}
                    resources: {x: {binding: 0}, y: {binding: 1}}
                    dispatch: {global: [16]}
            """
        )
    )
    result = compiled(model(tmp_path, "FP16"), tmp_path / "lib.yaml")
    assert result.graph is not None
    casts = [o.inserted for o in result.graph.operators if o.op == "CAST"]
    assert casts[0] == "inserted by kernel selection: FP16->FP32 for 'x'"  # not BF16


@pytest.mark.parametrize(
    ("data", "kernel", "lossy"),
    [("INT32", "INT8", True), ("INT8", "INT32", False), ("FP32", "INT32", True)],
)
def test_integer_narrowing_and_float_to_int(
    tmp_path: Path, data: str, kernel: str, lossy: bool
) -> None:
    lib = library(tmp_path, [(f"copy_{kernel.lower()}", kernel, "")])
    path = model(tmp_path, data)
    if not lossy:
        assert not compiled(path, lib).errors
        return
    with pytest.raises(VgfcError, match="without losing information"):
        compiled(path, lib)


def test_allow_lossy_names_operands_only(tmp_path: Path) -> None:
    lib = library(tmp_path, [("copy_f16", "FP16", "        allow_lossy: [z]\n")])
    with pytest.raises(VgfcError) as e:
        load_library(lib)
    assert "'z' is no operand" in str(e.value) and "lib.yaml:" in str(e.value)


TYPES = [DType.BOOL, DType.INT8, DType.INT16, DType.INT32, DType.FP16, DType.BF16, DType.FP32]


def _samples(dtype: DType) -> np.ndarray:
    np_type = numpy_dtype(dtype)
    assert np_type is not None
    if dtype is DType.BOOL:
        return np.array([False, True])
    if np.issubdtype(np_type, np.integer):
        info = np.iinfo(np_type)
        picks = [info.min, -1, 0, 1, 2049, 16777217, info.max // 3, info.max]
        return np.array([v for v in picks if info.min <= v <= info.max], np_type)
    wide = np.array([0.1, 1 / 3, 3.0e38, 65504.0, 70000.0, -2.5, 1e-7, 2049.0], np.float64)
    with np.errstate(over="ignore"):
        return wide.astype(np_type)


@pytest.mark.parametrize("source", TYPES, ids=lambda d: d.value)
@pytest.mark.parametrize("target", TYPES, ids=lambda d: d.value)
def test_the_lossy_table_agrees_with_numpy_round_trips(source: DType, target: DType) -> None:
    values = _samples(source)
    values = values[np.isfinite(values.astype(np.float64))]
    to = numpy_dtype(target)
    assert to is not None
    with np.errstate(all="ignore"):
        if target is DType.BOOL:
            back = (values != 0).astype(values.dtype)
        elif np.issubdtype(to, np.integer) and source.is_float:
            back = np.trunc(values.astype(np.float64)).astype(to).astype(values.dtype)
        else:
            back = values.astype(to).astype(values.dtype)
    changed = not np.array_equal(back, values)
    assert changed == loses_information(source, target), (source, target)
