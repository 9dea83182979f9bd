"""The TOSA reader: what it reads, and how it refuses what it cannot."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bad_models import BAD
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tosa_factory import Op, T, build, custom

import vgfc
from vgfc.diagnostics import InputError, UnsupportedError, VgfcError
from vgfc.ir import DType, Version


def test_reads_operators_attributes_and_locations() -> None:
    data = build(
        [
            T("x", (1, 8, 8, 4)),
            T("w", (2, 3, 3, 4)),
            T("b", (2,)),
            T("zp", (1,)),
            T("y", (1, 8, 8, 2)),
        ],
        [
            Op(
                "CONV2D",
                ["x", "w", "b", "zp", "zp"],
                ["y"],
                "Conv2dAttribute",
                {"pad": [1, 1, 1, 1], "stride": [1, 1], "dilation": [1, 1], "acc_type": 7},
                location='loc("conv1")',
            )
        ],
        ["x", "w", "b", "zp"],
        ["y"],
    )
    graph = vgfc.loads(data, "m.tosa")
    (conv,) = graph.operators
    assert conv.op == "CONV2D" and conv.index == 0
    assert conv.inputs == ("x", "w", "b", "zp", "zp") and conv.outputs == ("y",)
    assert conv.attrs["pad"] == (1, 1, 1, 1)
    assert conv.attrs["stride"] == (1, 1)
    assert conv.attrs["acc_type"] == "FP32"
    assert conv.attrs["local_bound"] is False
    assert conv.location_text == 'loc("conv1")'
    assert graph.tensors["x"].shape == (1, 8, 8, 4)
    assert graph.tensors["x"].dtype is DType.FP32


def test_custom_attribute_keeps_the_json_bytes() -> None:
    payload = {"entry_point": "main", "workgroup_sizes": [1, 1, 1]}
    data = build([T("x"), T("y")], [custom(["x"], ["y"], "blur", attrs=payload)], ["x"], ["y"])
    (op,) = vgfc.loads(data).operators
    assert op.custom_name == "blur"
    assert op.domain == "com.arm.VulkanCustomShader"
    assert op.is_shader
    assert json.loads(op.attrs["implementation_attrs"]) == payload


def test_clamp_bounds_are_read_in_the_input_element_type() -> None:
    fields = {"min_val": np.int8(-3).tobytes(), "max_val": np.int8(100).tobytes(), "nan_mode": 1}
    data = build(
        [T("x", dtype="INT8"), T("y", dtype="INT8")],
        [Op("CLAMP", ["x"], ["y"], "ClampAttribute", fields)],
        ["x"],
        ["y"],
    )
    (op,) = vgfc.loads(data).operators
    assert (op.attrs["min_val"], op.attrs["max_val"]) == (-3, 100)
    assert op.attrs["nan_mode"] == "PROPAGATE"


@pytest.mark.parametrize(
    ("dtype", "values", "raw"),
    [
        ("INT8", [[1, -2], [3, -128]], None),
        ("INT16", [[1, -2], [300, -32768]], None),
        ("INT32", [[1, -2], [70000, -(2**31)]], None),
        ("INT64", [[1, -2], [2**40, -(2**62)]], None),
        ("FP16", [[0.5, -2.0], [3.25, 65504.0]], None),
        ("FP32", [[0.5, -2.0], [3.25, 1e30]], None),
        ("BOOL", [[True, False], [False, True]], bytes([1, 0, 0, 1])),
        # INT48: six little-endian bytes per element, sign-extended on read.
        ("INT48", [[1, -1], [2**40, -(2**46)]], None),
        # INT4: two elements per byte, low nibble first.
        ("INT4", [[1, -1], [7, -8]], bytes([0x1 | (0xF << 4), 0x7 | (0x8 << 4)])),
    ],
)
def test_constant_data_of_each_element_type(dtype: str, values: list, raw: bytes | None) -> None:
    expected = np.array(values)
    if dtype in ("FP16", "FP32"):
        expected = expected.astype({"FP16": np.float16, "FP32": np.float32}[dtype])
    if raw is None:
        if dtype == "INT48":
            raw = b"".join(int(v).to_bytes(6, "little", signed=True) for v in expected.flat)
        else:
            np_type = {
                "INT8": "<i1",
                "INT16": "<i2",
                "INT32": "<i4",
                "INT64": "<i8",
                "FP16": "<f2",
                "FP32": "<f4",
            }[dtype]
            raw = expected.astype(np_type).tobytes()
    data = build(
        [T("c", (2, 2), dtype, raw), T("y", (2, 2), dtype)],
        [Op("CONST", [], ["c"]), Op("IDENTITY", ["c"], ["y"])],
        [],
        ["y"],
    )
    tensor = vgfc.loads(data).tensors["c"]
    assert tensor.dtype is DType[dtype]
    assert tensor.data is not None and tensor.data.shape == (2, 2)
    np.testing.assert_array_equal(tensor.data, expected)


def test_bf16_constants_use_ml_dtypes() -> None:
    import ml_dtypes

    values = np.array([1.5, -2.0, 0.25], dtype=ml_dtypes.bfloat16)
    data = build(
        [T("c", (3,), "BF16", values.tobytes()), T("y", (3,), "BF16")],
        [Op("CONST", [], ["c"]), Op("IDENTITY", ["c"], ["y"])],
        [],
        ["y"],
    )
    got = vgfc.loads(data).tensors["c"].data
    assert got is not None and got.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), values.astype(np.float32))


def test_constants_are_read_only_views_of_the_mapped_file(tmp_path: Path) -> None:
    weights = np.arange(4096, dtype=np.float32).reshape(64, 64)
    data = build(
        [T("c", (64, 64), "FP32", weights), T("y", (64, 64))],
        [Op("CONST", [], ["c"]), Op("IDENTITY", ["c"], ["y"])],
        [],
        ["y"],
    )
    path = tmp_path / "m.tosa"
    path.write_bytes(data)
    got = vgfc.load(path).tensors["c"].data
    assert got is not None
    np.testing.assert_array_equal(got, weights)
    assert not got.flags.writeable
    assert not got.flags.owndata  # a view, not a copy


def test_shape_table_values_are_read_as_shape_tensors() -> None:
    data = build(
        [T("x", (2, 3)), T("y", (3, 2))],
        [Op("CONST_SHAPE", [], ["s"]), Op("RESHAPE", ["x", "s"], ["y"])],
        ["x"],
        ["y"],
        shapes=[("s", 2, [3, 2])],
    )
    s = vgfc.loads(data).tensors["s"]
    assert s.is_shape and s.dtype is DType.SHAPE
    assert s.data is not None and s.data.tolist() == [3, 2]


def test_external_constant_data_after_the_flatbuffer() -> None:
    """Models over 2 GB keep constants after the flatbuffer, found by offset and size."""
    payload = np.arange(6, dtype=np.int32)

    def make(offset: int) -> bytes:
        return build(
            [T("c", (2, 3), "INT32", offset=offset, size=payload.nbytes), T("y", (2, 3), "INT32")],
            [Op("CONST", [], ["c"]), Op("IDENTITY", ["c"], ["y"])],
            [],
            ["y"],
        )

    head = len(make(1 << 40))  # the field's value does not change the table's size
    offset = (head + 7) // 8 * 8
    data = make(offset) + bytes(offset - head) + payload.tobytes()
    got = vgfc.loads(data).tensors["c"].data
    assert got is not None
    np.testing.assert_array_equal(got, payload.reshape(2, 3))

    with pytest.raises(InputError, match="beyond the end of the file"):
        vgfc.loads(make(offset) + bytes(offset - head))


SUPPORTED = [
    Version(1, 0, 0, False),
    Version(1, 0, 0, True),
    Version(1, 0, 2, True),
    Version(1, 0, 1, False),
    Version(1, 1, 0, True),
]


@pytest.mark.parametrize("version", SUPPORTED, ids=str)
def test_supported_versions_are_read(version: Version) -> None:
    data = build(
        [T("x"), T("y")],
        [Op("ABS", ["x"], ["y"])],
        ["x"],
        ["y"],
        version=(version.major, version.minor, version.patch, version.draft),
    )
    assert vgfc.loads(data).version == version


@pytest.mark.parametrize(
    "version", [(0, 80, 0, False), (1, 1, 0, False), (1, 2, 0, True), (2, 0, 0, True)]
)
def test_other_versions_are_refused_naming_the_version(version: tuple) -> None:
    data = build([T("x"), T("y")], [Op("ABS", ["x"], ["y"])], ["x"], ["y"], version=version)
    with pytest.raises(UnsupportedError) as err:
        vgfc.loads(data, "m.tosa")
    text = str(err.value)
    assert text.startswith("m.tosa: unsupported TOSA version ")
    assert f"{version[0]}.{version[1]}.{version[2]}" in text
    assert text.endswith("(vgfc reads 1.0.x (draft or not) and 1.1.0 draft)")


def test_every_op_of_the_schema_reads_with_its_attribute_table() -> None:
    """Each op code with its own (default-valued) attribute table reads back with that name."""
    import tosa.Attribute as fb_attribute
    import tosa.Op as fb_op

    ops = {k: v for k, v in vars(fb_op.Op).items() if k.isupper() and k != "UNKNOWN"}
    attr_names = {v: k for k, v in vars(fb_attribute.Attribute).items() if not k.startswith("_")}
    for name, code in ops.items():
        data = build([T("x"), T("y")], [Op(name, ["x"], ["y"], attr_names[code], {})], ["x"], ["y"])
        (op,) = vgfc.loads(data).operators
        assert op.op == name


@pytest.mark.parametrize(("what", "data", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_models_raise_one_clear_error(what: str, data: bytes, message: str) -> None:
    with pytest.raises(VgfcError) as err:
        graph = vgfc.loads(data, "bad.tosa")
        vgfc.verify(graph)
    text = str(err.value)
    assert text.startswith("bad.tosa: "), text
    assert message in text, text
    assert "\n" not in text


@pytest.mark.parametrize(("what", "data", "message"), BAD[:6], ids=[b[0] for b in BAD[:6]])
def test_cli_reports_bad_models_in_one_line_with_exit_1(
    tmp_path: Path, vgfc_exe, what: str, data: bytes, message: str
) -> None:
    model = tmp_path / "bad.tosa"
    model.write_bytes(data)
    out = tmp_path / "plan.json"
    run = vgfc_exe("partition", str(model), "--json", "-o", str(out))
    assert run.code == 1
    assert run.out == ""
    lines = run.err.strip().splitlines()
    assert len(lines) == 1, run.err
    assert lines[0].startswith(f"{model}: error: ")
    assert message in lines[0]
    assert "Traceback" not in run.err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [model]  # no temporary file left behind either


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_corrupted_files_never_escape_as_other_exceptions(data: st.DataObject) -> None:
    """Truncations and byte flips give a Graph or a VgfcError, nothing else."""
    good = bytearray(
        build(
            [T("x"), T("c", (1, 4), "FP32", np.ones((1, 4), np.float32)), T("y")],
            [Op("CONST", [], ["c"]), Op("ADD", ["x", "c"], ["y"]), custom(["y"], ["z"])],
            ["x"],
            ["z"],
        )
        + b""
    )
    cut = data.draw(st.integers(8, len(good)))
    flips = data.draw(
        st.lists(st.tuples(st.integers(8, len(good) - 1), st.integers(0, 255)), max_size=4)
    )
    for pos, value in flips:
        good[pos] = value
    try:
        graph = vgfc.loads(bytes(good[:cut]), "fuzz.tosa")
        vgfc.verify(graph)
        vgfc.partition(graph)
    except VgfcError:
        pass


def test_variables_are_state_not_cycles() -> None:
    """tosa-opt writes a variable as a tensor read by one IDENTITY early and written by another
    late: the read sees the previous run's value, so that is no cycle."""
    state = np.zeros((1, 4), np.float32)
    data = build(
        [T("x"), T("v", data=state), T("old"), T("new"), T("y")],
        [
            Op("IDENTITY", ["v"], ["old"]),
            Op("ADD", ["x", "old"], ["new"]),
            Op("IDENTITY", ["new"], ["y"]),
            Op("IDENTITY", ["new"], ["v"]),
        ],
        ["x"],
        ["y"],
    )
    from types import MappingProxyType

    from vgfc.record import replace

    # The factory writes no variable flag: set it on the read graph.
    graph = vgfc.loads(data, "state.tosa")
    tensors = dict(graph.tensors)
    tensors["v"] = replace(tensors["v"], is_variable=True)
    graph = replace(graph, tensors=MappingProxyType(tensors))
    vgfc.verify(graph)
    (p,) = vgfc.partition(graph).partitions
    assert p.operators == (0, 1, 2, 3)

    with pytest.raises(InputError, match="is part of a cycle"):
        vgfc.verify(
            replace(
                graph,
                tensors=MappingProxyType(
                    {**tensors, "v": replace(tensors["v"], is_variable=False)}
                ),
            )
        )
