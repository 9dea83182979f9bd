"""Composed kernel-library ops (``compose:``): expanded into built-ins in dependency order, with
constants from decoded parameters in the operand's type; what a compose cannot be; and the numbers,
run on the CPU stack against the TOSA reference model on the expanded graph and numpy."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from flatbuffers import flexbuffers
from kernel_models import (
    ML,
    OPS,
    SHAPE,
    chain,
    compiled,
    execute,
    kinds,
    library_of,
    op,
    reference_outputs,
    single,
    uniform,
    write,
)
from tosa_factory import Op, T

from vgfc.diagnostics import InputError
from vgfc.dtypes import DType
from vgfc.resolve.library.records import Library
from vgfc.verify import verify


def test_a_composed_op_expands_into_built_ins_in_dependency_order(
    tmp_path: Path, lib: Library
) -> None:
    """HardSwish lists its ops last-first; the expansion is in dependency order, each op says what
    it was expanded from, and the built-ins join the neighbouring ML work: one partition."""
    path = write(
        tmp_path / "model.tosa",
        [T(n, SHAPE) for n in ("x", "a", "b", "y")],
        [Op("ABS", ["x"], ["a"]), op("HardSwish", ["a"], ["b"]), Op("ABS", ["b"], ["y"])],
        ["x"],
        ["y"],
    )
    result = compiled(path, lib, stop_after="partition")
    assert result.graph is not None
    ops = [o for o in result.graph.operators if not o.is_constant]
    assert [o.op for o in ops] == ["ABS", "ADD", "CLAMP", "MUL", "MUL", "ABS"]
    assert all(o.inserted == "expanded from test/HardSwish" for o in ops[1:5])
    assert ops[0].inserted is None and ops[5].inserted is None
    # Every expanded op points back at the custom op of the file.
    assert {o.file_index for o in ops[1:5]} == {1}
    assert [o.index for o in result.graph.operators] == list(range(len(result.graph.operators)))
    assert kinds(result) == [ML]
    assert [k[1:] for k in result.kernels] == [("test/HardSwish", "compose")]
    verify(result.graph)


def _transpose_conv_same_or_valid(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, padding: str
) -> np.ndarray:
    """TFLite's TRANSPOSE_CONV + bias, from its definition: the full (VALID) result, cropped
    centred to input * stride for SAME."""
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    full = np.zeros((n, (ih - 1) * stride + kh, (iw - 1) * stride + kw, oc))
    for iy in range(ih):
        for ix in range(iw):
            for ky in range(kh):
                for kx in range(kw):
                    full[:, iy * stride + ky, ix * stride + kx, :] += x[:, iy, ix, :].astype(
                        np.float64
                    ) @ w[:, ky, kx, :].T.astype(np.float64)
    full += b
    if padding == "VALID":
        return full
    top = max(kh - stride, 0) // 2
    left = max(kw - stride, 0) // 2
    return full[:, top : top + ih * stride, left : left + iw * stride, :]


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_composed_ops_match_the_reference_model_and_numpy(
    tmp_path: Path, lib: Library, stack: object, reference_model: None, padding: str
) -> None:
    """x -> ConvTBias (TRANSPOSE_CONV2D, struct parameters) -> HardSwish -> ScaleBias (json) ->
    ScaleBiasFlex (flexbuffers) -> y: vgfc's VGF of the model with custom ops, the TOSA reference
    model on the expanded graph, and numpy from the ops' definitions all agree."""
    w = uniform((3, 3, 3, 2))
    b = uniform((3,))
    out = (1, 8, 8, 3) if padding == "SAME" else (1, 9, 9, 3)
    params = struct.pack("<iii", {"SAME": 1, "VALID": 2}[padding], 2, 2)
    flex = bytes(flexbuffers.Dumps({"Scale": -1.5, "bias": [1.0, 2.0, 3.0]}))
    path = write(
        tmp_path / "model.tosa",
        [
            T("x", (1, 4, 4, 2)),
            T("w", w.shape, data=w),
            T("b", b.shape, data=b),
            *(T(n, out) for n in ("t", "u", "v", "y")),
        ],
        [
            Op("CONST", [], ["w"], "ConstAttribute"),
            Op("CONST", [], ["b"], "ConstAttribute"),
            op("ConvTBias", ["x", "w", "b"], ["t"], params),
            op("HardSwish", ["t"], ["u"]),
            op("ScaleBias", ["u"], ["v"], {"scale": 0.5, "bias": [0.1, -0.2, 0.3]}),
            op("ScaleBiasFlex", ["v"], ["y"], flex),
        ],
        ["x"],
        ["y"],
    )
    result = compiled(path, lib)
    assert result.graph is not None
    assert not any(o.op == "CUSTOM" for o in result.graph.operators)
    assert kinds(result) == [ML]
    x = uniform((1, 4, 4, 2))
    got = execute(result, tmp_path, {"x": x})["y"]
    want = reference_outputs(result.graph, tmp_path, {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # numpy, from the definitions (not from the library's expressions).
    t = _transpose_conv_same_or_valid(x, w, b, 2, padding)
    u = t * np.clip(t + 3, 0, 6) / 6
    v = u * 0.5 + np.array([0.1, -0.2, 0.3])
    y = v * -1.5 + np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(got, y, rtol=1e-4, atol=1e-4)


def test_composed_constants_take_decoded_parameters(tmp_path: Path, lib: Library) -> None:
    flex = bytes(flexbuffers.Dumps({"Scale": 4.0}))  # bias: its default
    path = single(tmp_path, "ScaleBiasFlex", flex, shape=(1, 2, 2, 3))
    result = compiled(path, lib, stop_after="resolve")
    assert result.graph is not None
    consts = {
        n.split(".")[-1]: t.data
        for n, t in result.graph.tensors.items()
        if t.data is not None and n.startswith("y.")
    }
    assert consts["s"].dtype == np.float32 and consts["s"].shape == (1, 1, 1, 1)
    assert consts["s"].item() == 4.0
    assert consts["b"].shape == (1, 1, 1, 3)
    assert consts["b"].tolist() == [[[[0.0, 0.0, 0.0]]]]
    assert consts["shift"].dtype == np.int8


def test_composed_constants_take_the_operand_dtype(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "HardSwish", dtype="FP16")
    result = compiled(path, lib, stop_after="resolve")
    assert result.graph is not None
    three = next(t for n, t in result.graph.tensors.items() if n.endswith(".three"))
    assert three.dtype is DType.FP16


def test_a_compose_that_mixes_float_types_is_refused(tmp_path: Path) -> None:
    library = library_of(
        tmp_path,
        """
        - domain: test
          name: Mixed
          inputs: [x]
          outputs: [y]
          compose:
            constants:
              one: {dtype: FP32, shape: [1, 1, 1, 1], value: 1.0}
            ops:
              - {op: ADD, inputs: [x, one], outputs: [y]}
        """,
    )
    path = single(tmp_path, "Mixed", dtype="FP16")
    with pytest.raises(InputError) as caught:
        compiled(path, library, stop_after="resolve")
    assert "composes ADD over FP16 and FP32 values" in caught.value.message
    assert f"{tmp_path / 'lib.yaml'}:" in caught.value.message


def test_a_composed_shape_that_is_not_whole_is_an_error(tmp_path: Path) -> None:
    library = library_of(
        tmp_path,
        """
        - domain: test
          name: Half
          inputs: [x]
          outputs: [y]
          infer:
            y: {dtype: x, shape: ["x[0]", "x[1] / 2", "x[2]", "x[3]"]}
          compose:
            ops:
              - {op: ABS, inputs: [x], outputs: [y]}
        """,
    )
    path = single(tmp_path, "Half", shape=(1, 3, 2, 2), out_shape=(1, 1, 2, 2))
    with pytest.raises(InputError) as caught:
        compiled(path, library, stop_after="resolve")
    assert "'x[1] / 2' gives 1.5, not a whole number" in caught.value.message
    assert "op #0 CUSTOM 'Half' (test)" in str(caught.value)


def test_verify_a_composed_model_needs_expected_arrays(
    cli, tmp_path: Path, stack: object, reference_model: None
) -> None:
    """Neither the TOSA reference model nor the reference converter runs the file's custom
    ops, and these entries name no Python reference: verify says they are unverified (exit 4)
    instead of comparing against a run that cannot happen."""
    path = chain(
        tmp_path,
        [("HardSwish", None), ("ScaleBias", {"scale": 2.0, "bias": [1, 2, 3]})],
        shape=(1, 2, 2, 3),
    )
    run = cli("verify", str(path), "--kernels", str(OPS))
    assert run.code == 4, run.out + run.err
    assert "names no `reference: module:function`" in run.err
    assert "Traceback" not in run.err
