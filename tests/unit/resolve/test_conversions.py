"""The conversions kernel selection inserts (TRANSPOSE for a layout, CAST for a type, PAD/SLICE
for image channels), proven by running them on the CPU stack; ``--no-auto-convert`` refusing each;
``partition``, the report and ``verify`` showing them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernel_models import (
    ML,
    OPS,
    SH,
    SHAPE,
    chain,
    channel_add,
    compiled,
    execute,
    inserted,
    kinds,
    single,
    uniform,
)

from vgfc.diagnostics import UnsupportedError
from vgfc.resolve.library.records import Library


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
    errors = [line for line in run.err.splitlines() if ": error: " in line]
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
