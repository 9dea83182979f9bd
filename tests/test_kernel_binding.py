"""Binding custom ops to a kernel library: composed ops, parameters, shape and dtype inference,
kernel selection, the conversions selection inserts, inverse-pair cancellation, selective build,
and the partition-count rule over graphs with expanded and inserted ops.

Numbers are checked by running what vgfc compiles on the CPU stack (lavapipe and Arm's emulation
layers) against independent oracles: numpy, and for composed ops the TOSA reference model run on
the expanded graph (written back to a ``.tosa`` file here). Tests that run a VGF skip when the
stack is missing, except in CI.
"""

from __future__ import annotations

import json
import os
import struct
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NoReturn

import numpy as np
import pytest
from flatbuffers import flexbuffers
from hypothesis import given, settings
from hypothesis import strategies as st
from test_check import attrs as shader_attrs
from test_partition import _brute_force_minimum, _check_plan
from tosa_factory import SHADER_DOMAIN, Op, T, build, custom

from vgfc.compiler import Compilation, Options, compile_model
from vgfc.diagnostics import InputError, UnsupportedError, VgfcError
from vgfc.dtypes import DType, numpy_dtype
from vgfc.ir import Graph, Operator, Tensor, Version
from vgfc.partition import PartitionKind, partition, program_order_count
from vgfc.resolve import resolve
from vgfc.resolve.convert import cancel_inverse_pairs
from vgfc.resolve.library import Library, load_library
from vgfc.resolve.params import ParamError, Params, decode_params
from vgfc.verify import topological_order, verify

DATA = Path(__file__).resolve().parent / "data" / "kernels"
OPS = DATA / "ops.yaml"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
SHAPE = (1, 3, 2, 5)
rng = np.random.default_rng(20240611)

ML, SH = PartitionKind.ML, PartitionKind.SHADER


# -- fixtures and helpers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lib() -> Library:
    return load_library(OPS)


def _missing(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"{reason} (CI is set: the stack must be installed)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def stack() -> object:
    from vgfc.runner import find_stack

    try:
        return find_stack()
    except UnsupportedError as e:
        _missing(str(e))


@pytest.fixture(scope="session")
def reference_model() -> None:
    from vgfc.runner.numeric import _program

    try:
        _program("tosa_reference_model", "tosa-tools")
    except UnsupportedError as e:
        _missing(str(e))


def write(
    path: Path, tensors: Sequence[T], ops: Sequence[Op], ins: Sequence[str], outs: Sequence[str]
) -> Path:
    path.write_bytes(build(tensors, ops, ins, outs))
    return path


def op(
    name: str, ins: Sequence[str], outs: Sequence[str], attrs: dict[str, Any] | bytes | None = None
) -> Op:
    """A custom op of the test library (domain ``test``)."""
    return custom(ins, outs, name=name, domain="test", attrs=attrs)


def single(
    tmp_path: Path,
    name: str,
    attrs: Any = None,
    shape: Sequence[int] = SHAPE,
    dtype: str = "FP32",
    out_dtype: str | None = None,
    out_shape: Sequence[int] | None = None,
) -> Path:
    """x -> name -> y."""
    return write(
        tmp_path / "model.tosa",
        [T("x", shape, dtype), T("y", out_shape or shape, out_dtype or dtype)],
        [op(name, ["x"], ["y"], attrs)],
        ["x"],
        ["y"],
    )


def chain(
    tmp_path: Path,
    calls: Sequence[tuple[str, Any]],
    shape: Sequence[int] = SHAPE,
    dtype: str = "FP32",
) -> Path:
    """x -> calls[0] -> t1 -> calls[1] -> ... -> y, every tensor alike."""
    names = ["x", *[f"t{i}" for i in range(1, len(calls))], "y"]
    ops = [op(n, [names[i]], [names[i + 1]], a) for i, (n, a) in enumerate(calls)]
    return write(tmp_path / "model.tosa", [T(n, shape, dtype) for n in names], ops, ["x"], ["y"])


def compiled(
    path: Path, *libraries: Library, auto_convert: bool = True, stop_after: str = "encode"
) -> Compilation:
    libs = libraries or (load_library(OPS),)
    return compile_model(
        path, Options(libraries=libs, auto_convert=auto_convert), stop_after=stop_after
    )


def execute(
    result: Compilation, tmp_path: Path, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    from vgfc.runner import run_vgf

    assert result.vgf is not None
    vgf = tmp_path / "model.vgf"
    vgf.write_bytes(result.vgf)
    return run_vgf(vgf, dict(inputs))


def inserted(result: Compilation) -> list[tuple[str, str]]:
    assert result.graph is not None
    return [(o.op, o.inserted) for o in result.graph.operators if o.inserted]


def kinds(result: Compilation) -> list[PartitionKind]:
    assert result.plan is not None
    return [p.kind for p in result.plan.partitions]


def count_ops(result: Compilation, kind: str) -> int:
    assert result.graph is not None
    return sum(o.op == kind for o in result.graph.operators)


def uniform(shape: Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, tuple(shape)).astype(dtype)


# -- the expanded graph, written back for the TOSA reference model --------------------------------


def _attribute_tables() -> dict[str, str]:
    import tosa.Attribute

    return {k.lower(): k for k in vars(tosa.Attribute.Attribute) if k.endswith("Attribute")}


def _enum_fields() -> dict[str, Any]:
    import tosa.DType
    import tosa.NanPropagationMode
    import tosa.ResizeMode
    import tosa.RoundingMode

    return {
        "acc_type": tosa.DType.DType,
        "nan_mode": tosa.NanPropagationMode.NanPropagationMode,
        "mode": tosa.ResizeMode.ResizeMode,
        "rounding_mode": tosa.RoundingMode.RoundingMode,
    }


def _fields(o: Operator, graph: Graph) -> dict[str, Any]:
    """``o.attrs`` as tosa_factory writes them: enum names as codes, CLAMP bounds as raw bytes
    of the input's element type, tuples as lists."""
    enums = _enum_fields()
    out: dict[str, Any] = {}
    for key, value in o.attrs.items():
        if value is None:
            continue
        if key in enums and isinstance(value, str):
            value = getattr(enums[key], value)
        elif o.op == "CLAMP" and key in ("min_val", "max_val") and not isinstance(value, bytes):
            np_type = numpy_dtype(graph.tensors[o.inputs[0]].dtype)
            value = np.asarray([value]).astype(np_type).tobytes()
        elif isinstance(value, np.ndarray):
            value = value.tobytes()
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return out


def graph_to_tosa(graph: Graph) -> bytes:
    """A ``.tosa`` flatbuffer of an IR graph of built-in ops (each op with its attribute table,
    constants with their data, shape values in the shapes table)."""
    tables = _attribute_tables()
    tensors, shapes = [], []
    for t in graph.tensors.values():
        if t.is_shape:
            assert t.data is not None
            values = [int(v) for v in np.asarray(t.data).ravel()]
            shapes.append((t.name, len(values), values))
        else:
            data = None if t.data is None else np.ascontiguousarray(t.data)
            tensors.append(T(t.name, t.shape or (), t.dtype.value, data))
    ops = []
    for o in graph.operators:
        assert o.op != "CUSTOM", "the reference model runs built-ins only"
        table = tables[o.op.replace("_", "").lower() + "attribute"]
        ops.append(Op(o.op, o.inputs, o.outputs, table, _fields(o, graph)))
    return build(tensors, ops, graph.inputs, graph.outputs, shapes=shapes)


def reference_outputs(
    graph: Graph, tmp_path: Path, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    from vgfc.read.reader import load
    from vgfc.runner.numeric import tosa_reference_outputs

    path = tmp_path / "expanded.tosa"
    path.write_bytes(graph_to_tosa(graph))
    return tosa_reference_outputs(path, load(path), inputs)


# -- composed operators ---------------------------------------------------------------------------


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
    library = _library(
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
    library = _library(
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


# -- parameters -----------------------------------------------------------------------------------


def _library(tmp_path: Path, entries: str, head: str = "") -> Library:
    """A library of ``entries`` (YAML list items) in ``tmp_path``; shaders by absolute path."""
    text = "vgfc_kernels: 1\n" + textwrap.dedent(head) + "operators:\n"
    text += textwrap.indent(textwrap.dedent(entries).strip("\n"), "  ") + "\n"
    text = text.replace("@DATA@", str(DATA))
    path = tmp_path / "lib.yaml"
    path.write_text(text)
    return load_library(path)


def _params(tmp_path: Path, encoding: str, fields: str) -> Params:
    library = _library(
        tmp_path,
        f"""
        - domain: test
          name: P
          inputs: [x]
          outputs: [y]
          params:
            encoding: {encoding}
            fields:
{textwrap.indent(textwrap.dedent(fields).strip(), " " * 14)}
          compose:
            ops: [{{op: ABS, inputs: [x], outputs: [y]}}]
        """,
    )
    return library.entries[("test", "P")].params


MAP_FIELDS = """
- {name: f, type: f32}
- {name: d, type: f64, default: 0.25}
- {name: i, type: i8}
- {name: u, type: u16, key: unsigned}
- {name: big, type: i64}
- {name: flag, type: bool}
- {name: text, type: str, default: none}
- {name: sizes, type: i32, count: 3}
- {name: padding, type: i32, values: {1: SAME, 2: VALID}}
"""
MAP_VALUES = {
    "f": 1.5,
    "i": -128,
    "unsigned": 65535,
    "big": 2**40,
    "flag": True,
    "sizes": [1, 2, 3],
    "padding": 2,
}
MAP_DECODED = {
    "f": 1.5,
    "d": 0.25,
    "i": -128,
    "u": 65535,
    "big": 2**40,
    "flag": True,
    "text": "none",
    "sizes": (1, 2, 3),
    "padding": "VALID",
}


def _encode(encoding: str, value: Any) -> bytes:
    if encoding == "json":
        return json.dumps(value).encode()
    return bytes(flexbuffers.Dumps(value))


@pytest.mark.parametrize("encoding", ["json", "flexbuffers"])
def test_map_parameters_decode_with_types_keys_defaults_and_enums(
    tmp_path: Path, encoding: str
) -> None:
    params = _params(tmp_path, encoding, MAP_FIELDS)
    assert decode_params(params, _encode(encoding, MAP_VALUES)) == MAP_DECODED
    # A string, the other enum code, an int where a float is wanted.
    again = {**MAP_VALUES, "text": "hello", "padding": 1, "f": 2}
    decoded = decode_params(params, _encode(encoding, again))
    assert decoded["text"] == "hello" and decoded["padding"] == "SAME"
    assert decoded["f"] == 2.0 and isinstance(decoded["f"], float)


@pytest.mark.parametrize("encoding", ["json", "flexbuffers", "struct"])
def test_an_enum_default_by_name_or_by_code(tmp_path: Path, encoding: str) -> None:
    params = _params(
        tmp_path,
        encoding,
        """
        - {name: a, type: i32, values: {1: SAME, 2: VALID}, default: VALID}
        - {name: b, type: i32, values: {1: SAME, 2: VALID}, default: 1}
        """,
    )
    assert decode_params(params, b"") == {"a": "VALID", "b": "SAME"}


@pytest.mark.parametrize("encoding", ["json", "flexbuffers"])
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"f": None}, "parameter 'f' is missing and has no default"),
        ({"unsigned": None}, "parameter 'unsigned' is missing and has no default"),
        ({"i": 128}, "parameter 'i' = 128 does not fit in i8"),
        ({"unsigned": -1}, "parameter 'u' = -1 does not fit in u16"),
        ({"sizes": [1, 2]}, "parameter 'sizes' must be a list of 3 i32"),
        ({"f": "fast"}, "parameter 'f' must be a number"),
        ({"i": 1.5}, "parameter 'i' must be an integer"),
        ({"padding": 3}, "parameter 'padding' = 3 is none of 1 (SAME), 2 (VALID)"),
        ({"text": 7}, "parameter 'text' must be a string"),
    ],
    ids=[
        "missing",
        "missing by key",
        "i8 range",
        "u16 range",
        "count",
        "float type",
        "int type",
        "enum",
        "str type",
    ],
)
def test_map_parameter_errors(
    tmp_path: Path, encoding: str, change: dict[str, Any], message: str
) -> None:
    params = _params(tmp_path, encoding, MAP_FIELDS)
    value = {k: v for k, v in {**MAP_VALUES, **change}.items() if v is not None}
    with pytest.raises(ParamError) as caught:
        decode_params(params, _encode(encoding, value))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("encoding", "raw", "message"),
    [
        ("json", b"{not json", "the parameters are not JSON"),
        ("json", b"[1, 2]", "must be a JSON object, not list"),
        ("json", b"\xff\xfe", "the parameters are not JSON"),
        ("flexbuffers", bytes(flexbuffers.Dumps([1, 2])), "must be a FlexBuffers map, not list"),
        ("flexbuffers", b"\x01\x02\x03\x04\x05\x06\x07", "not a FlexBuffers"),
    ],
    ids=["json syntax", "json list", "json bytes", "flex list", "flex garbage"],
)
def test_undecodable_parameters(tmp_path: Path, encoding: str, raw: bytes, message: str) -> None:
    params = _params(tmp_path, encoding, "- {name: a, type: i32, default: 0}")
    with pytest.raises(ParamError) as caught:
        decode_params(params, raw)
    assert message in str(caught.value)


@pytest.mark.parametrize("encoding", ["json", "flexbuffers", "struct"])
def test_no_bytes_at_all_gives_the_defaults(tmp_path: Path, encoding: str) -> None:
    params = _params(
        tmp_path,
        encoding,
        "- {name: a, type: i32, default: 7}\n- {name: b, type: f32, default: 0.5}",
    )
    assert decode_params(params, None) == {"a": 7, "b": 0.5}
    assert decode_params(params, b"") == {"a": 7, "b": 0.5}


STRUCT_FIELDS = """
- {name: a, type: i8}
- {name: b, type: i32}
- {name: c, type: i16}
- {name: d, type: f64}
- {name: e, type: u8, count: 3}
- {name: padding, type: i32, values: {1: SAME, 2: VALID}}
- {name: tail, type: f32, default: -1.0}
"""


def test_struct_fields_lie_at_their_natural_alignment(tmp_path: Path) -> None:
    """struct {int8 a; int32 b; int16 c; double d; uint8 e[3]; int32 padding; float tail;}: a at
    0, b at 4, c at 8, d at 16, e at 24..26, padding at 28, tail at 32."""
    params = _params(tmp_path, "struct", STRUCT_FIELDS)
    raw = struct.pack("<b3xih6xd3Bxif", -5, 70000, -300, 2.5, 1, 2, 255, 1, 0.75)
    assert len(raw) == 36
    assert decode_params(params, raw) == {
        "a": -5,
        "b": 70000,
        "c": -300,
        "d": 2.5,
        "e": (1, 2, 255),
        "padding": "SAME",
        "tail": 0.75,
    }
    # Trailing fields with a default may be absent (an older, shorter struct).
    assert decode_params(params, raw[:32])["tail"] == -1.0


def test_struct_fields_at_explicit_offsets(tmp_path: Path) -> None:
    params = _params(
        tmp_path,
        "struct",
        """
        - {name: first, type: u16, offset: 6}
        - {name: next, type: u16}
        - {name: early, type: f32, offset: 0}
        """,
    )
    raw = struct.pack("<f2xHH", 3.25, 513, 1027)
    assert decode_params(params, raw) == {"first": 513, "next": 1027, "early": 3.25}


@pytest.mark.parametrize(
    ("length", "message"),
    [
        (0, "parameter 'a' (i8 at byte 0) lies past the end of the 0 bytes given"),
        (10, "parameter 'd' (f64 at byte 16) lies past the end of the 10 bytes given"),
        (26, "parameter 'e' (u8[3] at byte 24) lies past the end of the 26 bytes given"),
    ],
)
def test_a_short_struct_names_the_missing_field(tmp_path: Path, length: int, message: str) -> None:
    params = _params(tmp_path, "struct", STRUCT_FIELDS)
    raw = struct.pack("<b3xih6xd3Bxif", 1, 2, 3, 4.0, 5, 6, 7, 2, 0.0)
    with pytest.raises(ParamError) as caught:
        decode_params(params, raw[:length])
    assert message in str(caught.value)


def test_an_unknown_enum_code_in_a_struct(tmp_path: Path) -> None:
    params = _params(
        tmp_path, "struct", "- {name: padding, type: i32, values: {1: SAME, 2: VALID}}"
    )
    with pytest.raises(ParamError) as caught:
        decode_params(params, struct.pack("<i", 0))
    assert "parameter 'padding' = 0 is none of 1 (SAME), 2 (VALID)" in str(caught.value)


def test_encoding_none_ignores_the_bytes(tmp_path: Path) -> None:
    params = _params(tmp_path, "none", "[]")
    assert decode_params(params, b"anything at all") == {}


def test_a_missing_parameter_stops_the_compile_at_the_op(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "Affine", {"bias": 1.0})
    with pytest.raises(InputError) as caught:
        compiled(path, lib, stop_after="resolve")
    error = caught.value
    assert error.location.op_index == 0 and error.location.name == "Affine"
    assert error.location.key == "implementation_attrs"
    assert "parameter 'scale' is missing and has no default" in error.message
    assert f"{OPS}:" in error.message and "test/Affine" in error.message


def test_parameters_reach_the_shader_as_defines(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "Affine", {"scale": 2.5})
    result = compiled(path, lib, stop_after="resolve")
    assert result.graph is not None
    spec = next(o.shader for o in result.graph.operators if o.shader is not None)
    assert spec is not None
    assert dict(spec.defines) == {"SCALE": "2.5", "BIAS": "0.0", "COUNT": "30"}
    assert spec.global_size == (30, 1, 1)


def test_a_define_over_dims_the_operand_lacks(tmp_path: Path, lib: Library) -> None:
    """N, H, W, C name the dims of a rank-4 (or H, W, C of a rank-3) first output; a rank-2
    model makes 'N * H * W * C' an error that names the expression and the library entry."""
    path = single(tmp_path, "Affine", {"scale": 1.0}, shape=(3, 5))
    with pytest.raises(InputError) as caught:
        compiled(path, lib, stop_after="resolve")
    text = str(caught.value)
    assert "op #0 CUSTOM 'Affine' (test)" in text
    assert "'N * H * W * C': unknown name 'N'" in text
    assert f"{OPS}:" in text and "test/Affine" in text


# -- shape and dtype inference --------------------------------------------------------------------


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


# -- kernel selection -----------------------------------------------------------------------------


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
    library = _library(
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
    other = _library(
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
    return _library(
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


# -- inserted conversions, proven by running them -------------------------------------------------


def channel_add(x: np.ndarray, scale: float, step: float) -> np.ndarray:
    """ChannelAdd on NCHW data: the channel axis is 1."""
    c = np.arange(x.shape[1], dtype=np.float64).reshape(1, -1, 1, 1)
    return x.astype(np.float64) * scale + c * step


def test_an_nhwc_kernel_on_an_nchw_graph_runs_between_transposes(
    tmp_path: Path, lib: Library, stack: object
) -> None:
    path = single(tmp_path, "ChannelAdd", {"scale": 2.0, "step": 10.0})
    result = compiled(path, lib)
    assert inserted(result) == [
        ("TRANSPOSE", "inserted by kernel selection: NCHW->NHWC for 'x'"),
        ("TRANSPOSE", "inserted by kernel selection: NHWC->NCHW for 'y'"),
    ]
    assert kinds(result) == [ML, SH, ML]
    assert result.graph is not None
    bound = result.graph.operators[1]
    assert bound.shader is not None
    assert dict(bound.shader.defines)["CHANNELS"] == "3"  # C of the NHWC view, not W = 5
    assert result.graph.tensors[bound.inputs[0]].shape == (1, 2, 5, 3)
    x = uniform(SHAPE)
    got = execute(result, tmp_path, {"x": x})["y"]
    want = channel_add(x, 2.0, 10.0)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    # Without the transposes the kernel would have taken W as the channel axis.
    wrong = x * 2.0 + 10.0 * (np.arange(x.size) % SHAPE[3]).reshape(SHAPE)
    assert not np.allclose(want, wrong)


def test_an_fp32_kernel_on_an_fp16_graph_runs_between_casts(
    tmp_path: Path, lib: Library, stack: object
) -> None:
    path = single(tmp_path, "Affine", {"scale": 3.0, "bias": 0.25}, dtype="FP16")
    result = compiled(path, lib)
    assert inserted(result) == [
        ("CAST", "inserted by kernel selection: FP16->FP32 for 'x'"),
        ("CAST", "inserted by kernel selection: FP32->FP16 for 'y'"),
    ]
    assert kinds(result) == [ML, SH, ML]
    x = uniform(SHAPE, np.float16)
    got = execute(result, tmp_path, {"x": x})["y"]
    assert got.dtype == np.float16
    want = (x.astype(np.float32) * np.float32(3.0) + np.float32(0.25)).astype(np.float16)
    np.testing.assert_allclose(
        got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3
    )


@pytest.mark.parametrize("channels", [3, 4])
def test_an_image_kernel_on_three_channels_runs_between_pad_and_slice(
    tmp_path: Path, lib: Library, stack: object, channels: int
) -> None:
    shape = (1, 4, 8, channels)
    path = single(tmp_path, "ImageGain", {"offset": 0.25}, shape=shape)
    result = compiled(path, lib)
    assert result.graph is not None
    if channels == 3:
        assert [k for k, _ in inserted(result) if k in ("PAD", "SLICE")] == ["PAD", "SLICE"]
        bound = next(o for o in result.graph.operators if o.shader is not None)
        assert bound.shader is not None
        assert result.graph.tensors[bound.inputs[0]].shape == (1, 4, 8, 4)
        assert {r.format for r in (*bound.shader.inputs, *bound.shader.outputs)} == {
            "VK_FORMAT_R32G32B32A32_SFLOAT"
        }
    else:
        assert inserted(result) == []
    x = uniform(shape)
    got = execute(result, tmp_path, {"x": x})["y"]
    want = x * np.array([1.0, 2.0, 3.0, 4.0][:channels]) + 0.25
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_conversions_compose_cast_then_transpose(
    tmp_path: Path, lib: Library, stack: object
) -> None:
    """FP16 NCHW into an FP32 NHWC kernel: CAST, TRANSPOSE, kernel, TRANSPOSE, CAST."""
    path = single(tmp_path, "ChannelAdd", {"scale": 2.0, "step": 0.25}, dtype="FP16")
    result = compiled(path, lib)
    assert result.graph is not None
    assert [o.op for o in result.graph.operators] == [
        "CAST",
        "TRANSPOSE",
        "CUSTOM",
        "TRANSPOSE",
        "CAST",
    ]
    x = uniform(SHAPE, np.float16)
    got = execute(result, tmp_path, {"x": x})["y"]
    want = channel_add(x.astype(np.float32), 2.0, 0.25).astype(np.float16)
    np.testing.assert_allclose(
        got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3
    )


CONVERTING = [
    ("nchw", "ChannelAdd", {"step": 1.0}, SHAPE, "FP32", "TRANSPOSE NCHW->NHWC for 'x'"),
    ("fp16", "Affine", {"scale": 1.0}, SHAPE, "FP16", "CAST FP16->FP32 for 'x'"),
    ("image", "ImageGain", {}, (1, 4, 8, 3), "FP32", "PAD/SLICE channels 3->4 for 'x'"),
]


@pytest.mark.parametrize(
    ("name", "attrs", "shape", "dtype", "note"),
    [pytest.param(*c[1:], id=c[0]) for c in CONVERTING],
)
def test_no_auto_convert_makes_each_conversion_an_error(
    tmp_path: Path,
    lib: Library,
    name: str,
    attrs: Any,
    shape: tuple[int, ...],
    dtype: str,
    note: str,
) -> None:
    path = single(tmp_path, name, attrs, shape=shape, dtype=dtype)
    with pytest.raises(UnsupportedError) as caught:
        compiled(path, lib, auto_convert=False)
    text = str(caught.value)
    assert f"op #0 CUSTOM '{name}' (test)" in text
    assert note in text
    assert "--no-auto-convert forbids them" in text


@pytest.mark.parametrize("command", ["compile", "check", "partition"])
@pytest.mark.parametrize(
    ("name", "attrs", "shape", "dtype", "note"),
    [pytest.param(*c[1:], id=c[0]) for c in CONVERTING],
)
def test_no_auto_convert_on_the_command_line(
    cli,
    tmp_path: Path,
    command: str,
    name: str,
    attrs: Any,
    shape: tuple[int, ...],
    dtype: str,
    note: str,
) -> None:
    path = single(tmp_path, name, attrs, shape=shape, dtype=dtype)
    out = tmp_path / "out.vgf"
    args = [command, str(path), "--kernels", str(OPS), "--no-auto-convert"]
    if command == "compile":
        args += ["-o", str(out)]
    run = cli(*args)
    assert run.code == 1
    errors = [line for line in run.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, run.err
    assert note in errors[0]
    assert "Traceback" not in run.err
    assert not out.exists()
    # The same model with conversions allowed is fine.
    args.remove("--no-auto-convert")
    assert cli(*args).code == 0


def test_partition_and_the_report_show_inserted_ops(cli, tmp_path: Path) -> None:
    import jsonschema

    from vgfc.schema import load_schema

    path = single(tmp_path, "Affine", {"scale": 3.0}, dtype="FP16")
    run = cli("partition", str(path), "--kernels", str(OPS))
    assert run.code == 0, run.err
    assert "#0 CAST (inserted by kernel selection: FP16->FP32 for 'x')" in run.out
    assert "#0 CAST (inserted by kernel selection: FP32->FP16 for 'y')" in run.out
    report = tmp_path / "report.json"
    run = cli(
        "compile",
        str(path),
        "--kernels",
        str(OPS),
        "-o",
        str(tmp_path / "m.vgf"),
        "--report",
        str(report),
    )
    assert run.code == 0, run.err
    assert "op #0 test/Affine: kernel 'affine_f32'" in run.out
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, load_schema("report.schema.json"))
    assert doc["kernels"] == [
        {"op": 1, "source_index": 0, "entry": "test/Affine", "kernel": "affine_f32"}
    ]
    assert [(i["kind"], i["why"]) for i in doc["inserted"]] == [
        ("CAST", "inserted by kernel selection: FP16->FP32 for 'x'"),
        ("CAST", "inserted by kernel selection: FP32->FP16 for 'y'"),
    ]


def test_partition_json_marks_inserted_and_expanded_ops(cli, tmp_path: Path) -> None:
    import jsonschema

    from vgfc.schema import load_schema

    path = chain(tmp_path, [("HardSwish", None), ("ChannelAdd", {"step": 1.0})])
    run = cli("partition", str(path), "--kernels", str(OPS), "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    jsonschema.validate(doc, load_schema("partition.schema.json"))
    ops = [o for p in doc["partitions"] for o in p["ops"]]
    assert [p["kind"] for p in doc["partitions"]] == ["ml", "shader", "ml"]
    why = [o.get("inserted") for o in ops]
    assert why.count("expanded from test/HardSwish") == 4
    assert "inserted by kernel selection: NCHW->NHWC for 'x'" in why
    assert "inserted by kernel selection: NHWC->NCHW for 'y'" in why
    # Every op the file did not have points at the custom op it came from.
    assert {o["source_index"] for o in ops if o.get("inserted", "").startswith("expanded")} == {0}
    assert {o["source_index"] for o in ops if o.get("inserted", "").startswith("inserted")} == {1}


def test_verify_with_expected_arrays(cli, tmp_path: Path, stack: object) -> None:
    path = single(tmp_path, "ChannelAdd", {"scale": 2.0, "step": 10.0})
    x = uniform(SHAPE)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", channel_add(x, 2.0, 10.0).astype(np.float32))
    run = cli(
        "verify",
        str(path),
        "--kernels",
        str(OPS),
        "-i",
        f"x={tmp_path / 'x.npy'}",
        "-e",
        f"y={tmp_path / 'y.npy'}",
    )
    assert run.code == 0, run.out + run.err


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


def _cancelled(ops: Any, tensors: Any, outputs: frozenset[str]) -> list[Any]:
    """The ops that remain, in order (cancel_inverse_pairs maps each op given to its fate)."""
    return list(cancel_inverse_pairs(ops, tensors, outputs).values())


# -- inverse pairs between adjacent kernel ops ----------------------------------------------------


NAME_CLASH = (
    "resolve binds each op against the original graph, so bind._Names does not see the tensors "
    "earlier bindings added: two ops converting the same tensor both name the copy '<t>.nhwc' / "
    "'<t>.fp32' (a tensor defined twice, or a cycle); and resolve._renumbered matches kept ops "
    "by id(), so an op that cancel_inverse_pairs rewired (a new object) is dropped from the graph"
)


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


# -- selective build ------------------------------------------------------------------------------


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The GLSL sources glslang compiles from now on (with an empty shader cache)."""
    from vgfc.shader import glslang

    monkeypatch.setenv("VGFC_CACHE_DIR", str(tmp_path / "shader-cache"))
    seen: list[str] = []
    name = "compile_recorded" if hasattr(glslang, "compile_recorded") else "compile_shader"
    original: Callable[..., Any] = getattr(glslang, name)

    def spy(source: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(source)
        return original(source, *args, **kwargs)

    monkeypatch.setattr(glslang, name, spy)
    return seen


def _two_affines(tmp_path: Path, first: dict[str, Any], second: dict[str, Any]) -> Path:
    return write(
        tmp_path / "model.tosa",
        [T(n, SHAPE) for n in ("x", "a", "b", "y")],
        [
            op("Affine", ["x"], ["a"], first),
            Op("ABS", ["a"], ["b"]),
            op("Affine", ["b"], ["y"], second),
        ],
        ["x"],
        ["y"],
    )


def test_one_kernel_with_the_same_defines_is_compiled_once(
    tmp_path: Path, lib: Library, compiles: list[str], stack: object
) -> None:
    """Two ops, one kernel, the same parameters (one given, one by default): one compile, and the
    library's other kernels none."""
    path = _two_affines(tmp_path, {"scale": 2.0}, {"scale": 2.0, "bias": 0.0})
    result = compiled(path, lib)
    assert len(compiles) == 1
    assert "y[i] = x[i] * SCALE + BIAS;" in compiles[0]
    assert kinds(result) == [SH, ML, SH]
    x = uniform(SHAPE)
    np.testing.assert_allclose(
        execute(result, tmp_path, {"x": x})["y"], np.abs(x * 2) * 2, rtol=1e-6
    )


def test_other_defines_compile_again(tmp_path: Path, lib: Library, compiles: list[str]) -> None:
    path = _two_affines(tmp_path, {"scale": 2.0}, {"scale": 3.0})
    compiled(path, lib)
    assert len(compiles) == 2


def test_a_broken_kernel_the_model_does_not_use_is_never_compiled(
    tmp_path: Path, compiles: list[str], cli
) -> None:
    library = load_library(DATA / "with_broken.yaml")
    path = single(tmp_path, "Scale", {"scale": 2.0})
    result = compiled(path, library)
    assert result.vgf is not None
    assert len(compiles) == 1 and "not_declared_anywhere" not in compiles[0]
    for command in ("check", "compile"):
        run = cli(
            command,
            str(path),
            "--kernels",
            str(DATA / "with_broken.yaml"),
            *(["-o", str(tmp_path / "m.vgf")] if command == "compile" else []),
        )
        assert run.code == 0, run.err
    # A model that does use it fails.
    path = single(tmp_path, "Broken")
    with pytest.raises(VgfcError) as caught:
        compiled(path, library)
    assert "not_declared_anywhere" in str(caught.value)


# -- the partition-count rule with expanded and inserted ops --------------------------------------

PROPERTY_SHAPE = (1, 3, 2, 3)
CUSTOM_KINDS = {
    # name: (implementation_attrs, inserts conversions)
    "Affine": ({"scale": 2.0}, False),
    "HardSwish": ({}, False),
    "ScaleBias": ({"scale": 0.5, "bias": [1.0, 2.0, 3.0]}, False),
    "ChannelAdd": ({"step": 1.0}, True),  # TRANSPOSE
    "HalfAffine": ({"scale": 2.0}, True),  # CAST
    "ImageGain": ({}, True),  # PAD / SLICE
}


@st.composite
def kernel_dags(draw: st.DrawFn, max_ops: int = 8, repeat_conversions: bool = False) -> Graph:
    """Random DAGs of built-ins (ADD, ABS, constants) and custom ops of the test library, every
    tensor FP32 of one shape. Without ``repeat_conversions`` each converting kind appears once."""
    n = draw(st.integers(1, max_ops))
    tensors = {f"x{i}": Tensor(f"x{i}", PROPERTY_SHAPE, DType.FP32) for i in range(2)}
    values = ["x0", "x1"]  # what a shader may read (no constants)
    operators: list[Operator] = []
    used: set[str] = set()
    for i in range(n):
        choices = [
            "ADD",
            "ABS",
            "CONST",
            *(k for k in CUSTOM_KINDS if repeat_conversions or k not in used),
        ]
        kind = draw(st.sampled_from(choices))
        out = f"t{i}"
        attrs: dict[str, Any] = {}
        data = None
        if kind == "CONST":
            ins: list[str] = []
            data = np.full(PROPERTY_SHAPE, 0.5, np.float32)
        elif kind == "ADD":
            ins = [draw(st.sampled_from(sorted(tensors))), draw(st.sampled_from(sorted(tensors)))]
        elif kind == "ABS":
            ins = [draw(st.sampled_from(sorted(tensors)))]
        else:
            payload, converts = CUSTOM_KINDS[kind]
            if converts:
                used.add(kind)
            ins = [draw(st.sampled_from(values))]
            attrs = {
                "operator_name": kind,
                "domain_name": "test",
                "implementation_attrs": json.dumps(payload).encode(),
            }
            kind = "CUSTOM"
        operators.append(Operator(i, kind, tuple(ins), (out,), MappingProxyType(attrs)))
        tensors[out] = Tensor(out, PROPERTY_SHAPE, DType.FP32, data)
        if kind != "CONST":
            values.append(out)
    if all(o.is_constant for o in operators):
        operators.append(Operator(n, "ABS", ("x0",), ("last",)))
        tensors["last"] = Tensor("last", PROPERTY_SHAPE, DType.FP32)
    read = {t for o in operators for t in o.inputs}
    outputs = [o.outputs[0] for o in operators if o.outputs[0] not in read and not o.is_constant]
    return Graph(
        tensors=MappingProxyType(tensors),
        operators=tuple(operators),
        inputs=("x0", "x1"),
        outputs=tuple(outputs),
        version=Version(1, 0, 0, False),
        source="random.tosa",
    )


def _check_resolved(g: Graph, library: Library) -> None:
    resolution = resolve(g, libraries=(library,))
    r = resolution.graph
    verify(r)  # well formed: every tensor defined once, acyclic
    order = tuple(o.index for o in topological_order(r))
    plan = partition(r, order)
    _check_plan(r, plan)
    assert plan.program_order_count == program_order_count(r, order)
    non_orphan = [p for p in plan.partitions if p.operators]
    shaders = sum(o.is_shader for o in r.operators)
    has_ml = any(not o.is_shader and not o.is_constant for o in r.operators)
    assert len(non_orphan) <= program_order_count(r, order)
    assert len(non_orphan) >= shaders + has_ml
    # One shader partition per kernel-bound op; every added op is ML work.
    bound = sum(
        o.op == "CUSTOM"
        and o.attrs["operator_name"] in ("Affine", "ChannelAdd", "HalfAffine", "ImageGain")
        for o in g.operators
    )
    assert sum(p.kind is SH for p in plan.partitions) == bound == shaders
    part = {i: p for p in plan.partitions for i in p.operators}
    for o in r.operators:
        if o.inserted and not o.is_constant:
            assert part[o.index].kind is ML
    assert {k[0] for k in resolution.kernels} <= {o.index for o in r.operators}


@settings(max_examples=150, deadline=None)
@given(kernel_dags())
def test_random_graphs_with_kernel_ops_keep_the_partition_rules(g: Graph) -> None:
    _check_resolved(g, load_library(OPS))


@settings(max_examples=60, deadline=None)
@given(kernel_dags(max_ops=4))
def test_partition_count_stays_minimal_with_expanded_ops(g: Graph) -> None:
    r = resolve(g, libraries=(load_library(OPS),)).graph
    plan = partition(r, tuple(o.index for o in topological_order(r)))
    assert sum(bool(p.operators) for p in plan.partitions) == _brute_force_minimum(r)


@settings(max_examples=150, deadline=None)
@given(kernel_dags(repeat_conversions=True))
def test_random_graphs_with_repeated_conversions_keep_the_partition_rules(g: Graph) -> None:
    _check_resolved(g, load_library(OPS))
