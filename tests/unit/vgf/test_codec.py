"""The VGF model and its codec: a model with every feature round-trips and the VGF library's
``vgf_dump`` finds each feature in the file; encoding is the same in every process; the reference
converter's files survive decode -> encode unchanged (by vgfc's own diff and by ``vgf_dump``); and
malformed files are refused with InputError. The properties over generated models (decode inverts
encode, encoding is deterministic) are in ``tests/property/test_vgf.py``."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import vgfpy
from paths import TESTS
from reference_tools import reference_convert, vgf_dump
from samples_module import SAMPLES_DIR
from vgf_models import RICH, SAMPLER, without_version

from vgfc.diagnostics import InputError, InternalError
from vgfc.record import replace
from vgfc.vgf.decode import decode, read_vgf
from vgfc.vgf.encode import encode
from vgfc.vgf.model import (
    COMPUTE_STAGE,
    Category,
    Constant,
    Model,
    ModuleType,
    Resource,
    Slot,
)
from vgfc.vulkan_names import (
    descriptor_types,
    formats,
)


def test_rich_model_round_trips_every_feature() -> None:
    """The hand-built model holds every feature the property test must see (samplers, alias
    groups, push-constant ranges, constants and their bindings, GLSL/HLSL/placeholder modules)."""
    back = decode(encode(RICH))
    assert back == RICH
    assert back.resources[0].sampler == SAMPLER
    assert [r.alias_group for r in back.resources] == [None, 5, None, 5]
    assert back.segments[1].push_constant_ranges == RICH.segments[1].push_constant_ranges
    assert back.segments[0].constant_bindings == ((7, 1), (3, 0))
    assert [c.data for c in back.constants] == [c.data for c in RICH.constants]
    assert [m.code for m in back.modules] == ["SPIR-V", "GLSL", "HLSL", "none"]


def test_vgf_dump_reads_every_feature_of_vgfc_file(tmp_path: Path) -> None:
    """The VGF library's own tool, not vgfc's decoder, finds each feature in vgfc's file."""
    path = tmp_path / "rich.vgf"
    path.write_bytes(encode(RICH))
    dump = json.loads(vgf_dump(path, tmp_path / "rich.json").read_text())
    resources = dump["resources"]
    assert [r["category"] for r in resources] == ["INPUT", "INTERMEDIATE", "CONSTANT", "OUTPUT"]
    assert resources[0]["sampler_config"] == {
        "min_filter": "VK_FILTER_LINEAR",
        "mag_filter": "VK_FILTER_NEAREST",
        "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER",
        "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT",
        "border_color": "VK_BORDER_COLOR_INT_OPAQUE_WHITE",
    }
    assert [c["mrt_index"] for c in dump["constants"]] == [2, 2]
    assert [r.get("alias_group_id") for r in resources] == [None, 5, None, 5]
    assert [m["shader_type"] for m in dump["modules"][1:3]] == ["GLSL", "HLSL"]
    graph, compute = dump["model_sequence"]["segments"]
    assert graph["constant_bindings"] == [
        {"constant_table_index": 1, "graph_constant_id": 7},
        {"constant_table_index": 0, "graph_constant_id": 3},
    ]
    assert [
        (d["set_index"], [(b["binding"], b["mrt_index"]) for b in d["bindings"]])
        for d in compute["descriptor_set_infos"]
    ] == [(2, [(0, 1), (5, 3)]), (0, [(1, 0)])]
    assert compute["dispatch_shape"] == [4, 2, 1]
    assert [
        (r["stage_flags"], r["offset"], r["size"]) for r in compute["push_constant_ranges"]
    ] == [
        (COMPUTE_STAGE, 0, 16),
        (COMPUTE_STAGE, 16, 8),
    ]
    assert [x["name"] for x in dump["model_sequence"]["inputs"]] == ["image"]
    assert [x["name"] for x in dump["model_sequence"]["outputs"]] == ["result"]


# ---------------------------------------------------------------------------------------------
# Deterministic encoding
# ---------------------------------------------------------------------------------------------


_ENCODE_IN_SUBPROCESS = """
import sys
from vgfc.vgf.decode import read_vgf
from vgfc.vgf.encode import encode
sys.stdout.buffer.write(encode(read_vgf(sys.argv[1])))
"""


def test_encoding_is_the_same_in_every_process(tmp_path: Path) -> None:
    src = tmp_path / "rich.vgf"
    src.write_bytes(encode(RICH))
    outputs = set()
    for seed in ("0", "1", "12345"):
        run = subprocess.run(
            [sys.executable, "-c", _ENCODE_IN_SUBPROCESS, str(src)],
            capture_output=True,
            timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert run.returncode == 0, run.stderr.decode()
        outputs.add(run.stdout)
    assert outputs == {src.read_bytes()}


# ---------------------------------------------------------------------------------------------
# The reference converter's files
# ---------------------------------------------------------------------------------------------

CONFORMANCE = TESTS / "data" / "conformance"
REFERENCE_MODELS: dict[str, Path] = {
    **{f"sample_{p.stem}": p for p in sorted(SAMPLES_DIR.glob("*.tosa"))},
    "real_face_detection_short_range": TESTS / "data/real/tflite/face_detection_short_range.tosa",
    "real_matmul_40x21x22_i8xi8_outi32": TESTS
    / "data/real/conformance/matmul_40x21x22_i8xi8_outi32/test.tosa",
    **{
        name: CONFORMANCE / name / "test.tosa"
        for name in (
            "conv2d_1x3_5x16x11x7_f16xf16_accf16_st11_pad0090_dilat22_lclbnd1_s0",
            "conv3d_1x1x1_2x7x9x5x4_f32xf32_accf32_st112_pad000000_dilat211_lclbnd1_s0",
            "depthwise_conv2d_2x2_1x37x11x5_bf16xbf16_accf32_st11_pad0900_dilat12_lclbnd1_s0",
            "matmul_14x10x15_f32xf32_outf32_s1",
            "fft2d_1x32x32_f32_inverseFalse_lclbnd1_s0",
            "gather_5000x1x1_i8_idxi32",
        )
    },
}
WITH_CONSTANTS = [n for n in REFERENCE_MODELS if not n.startswith("sample_")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """name -> the reference converter's VGF for that model (converted once per module)."""
    folder = tmp_path_factory.mktemp("reference")

    @cache
    def convert(name: str) -> Path:
        return reference_convert(REFERENCE_MODELS[name], folder / f"{name}.vgf")

    return convert


def _dump(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(vgf_dump(path, path.with_suffix(".json")).read_text())
    del data["header"]  # the format version: the encoder writes its own
    return data


@pytest.mark.parametrize("name", sorted(REFERENCE_MODELS))
def test_reference_file_survives_decode_encode(
    name: str, reference: Any, cli: Any, tmp_path: Path
) -> None:
    original = reference(name)
    model = decode(original.read_bytes())
    again = tmp_path / "reencoded.vgf"
    again.write_bytes(encode(model))

    run = cli("inspect", str(original), "--diff", str(again))
    assert run.code == 0, run.out + run.err
    assert "0 difference(s)" in run.out

    back = read_vgf(again)
    assert back == model
    assert without_version(back) == without_version(model)
    # What diff_models leaves out (code, constant data, names) came through as well.
    assert [m.spirv for m in back.modules] == [m.spirv for m in model.modules]
    assert [m.source for m in back.modules] == [m.source for m in model.modules]
    assert [c.data for c in back.constants] == [c.data for c in model.constants]
    # The VGF library's own reading of both files agrees, field for field.
    assert _dump(again) == _dump(original)
    if name in WITH_CONSTANTS:
        assert model.constants, f"{name} was picked for its constants but has none"


def test_reference_files_cover_every_feature(reference: Any) -> None:
    """The files above are worth round-tripping: together they hold each kind of module code,
    samplers, alias groups, constants and both segment types."""
    decoded = [read_vgf(reference(n)) for n in REFERENCE_MODELS]
    codes = {m.code for f in decoded for m in f.modules}
    assert {"SPIR-V", "GLSL", "HLSL"} <= codes
    assert any(r.sampler is not None for f in decoded for r in f.resources)
    assert any(r.alias_group is not None for f in decoded for r in f.resources)
    assert sum(len(c.data) for f in decoded for c in f.constants) > 100_000
    assert max(len(f.constants) for f in decoded) > 10
    assert {s.type for f in decoded for s in f.segments} == set(ModuleType)


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


def _sample_files(reference: Any) -> list[bytes]:
    return [
        encode(RICH),
        reference("sample_image").read_bytes(),
        reference("matmul_14x10x15_f32xf32_outf32_s1").read_bytes(),
    ]


def test_truncated_files_are_refused(reference: Any) -> None:
    for data in _sample_files(reference):
        decode(data)  # the whole file is fine
        step = max(1, len(data) // 1500)
        cuts = {*range(0, len(data), step), *range(max(0, len(data) - 64), len(data))}
        for n in sorted(cuts):
            with pytest.raises(InputError):
                decode(data[:n])


def test_truncated_file_named_by_read_vgf_and_cli(tmp_path: Path, cli: Any) -> None:
    path = tmp_path / "cut.vgf"
    path.write_bytes(encode(RICH)[:200])
    with pytest.raises(InputError) as caught:
        read_vgf(path)
    assert caught.value.location.file == str(path)
    run = cli("inspect", str(path))
    assert run.code == 1, run.out + run.err
    assert "error:" in run.err and "internal error" not in run.err


def test_bad_header_is_refused() -> None:
    data = encode(RICH)
    magic = vgfpy.HEADER_MAGIC_OFFSET
    version = vgfpy.HEADER_VERSION_OFFSET
    for bad in (
        b"",
        b"\x00" * vgfpy.HeaderSize(),
        data[:magic] + b"XXXX" + data[magic + 4 :],
        data[:version] + b"\xff" * 4 + data[version + 4 :],
        b"\xff" * len(data),
    ):
        with pytest.raises(InputError):
            decode(bad)


def test_flipped_header_bytes_decode_or_are_refused() -> None:
    """Corrupting the header (magic, version, section offsets and sizes) never gets further
    than InputError."""
    data = encode(RICH)
    for i in range(vgfpy.HeaderSize()):
        for mask in (0xFF, 0x01, 0x10, 0x80):
            bad = bytearray(data)
            bad[i] ^= mask
            with contextlib.suppress(InputError):
                decode(bytes(bad))


def _raw_file(bad: str) -> bytes:
    """A file written straight through vgfpy, with one reference or enum value wrong."""
    enc = vgfpy.CreateEncoder(345)
    module = enc.AddModule(vgfpy.ModuleType.Compute, "m", "main", [0x07230203, 0, 0, 0])
    storage = descriptor_types()["VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"]
    r8 = formats()["VK_FORMAT_R8_UINT"]
    resource = enc.AddInputResource(storage, r8, [1, 4], [])
    const_resource = enc.AddConstantResource(r8, [4], [])
    constant = enc.AddConstant(const_resource, b"abcd", -1)
    if bad == "segment module":
        module = vgfpy.ModuleRef(7)
    if bad == "constant binding":
        constant = vgfpy.ConstantRef(5)
    if bad == "constant resource":
        enc.AddConstant(vgfpy.ResourceRef(9), b"abcd", -1)
    slot = enc.AddBindingSlot(0, vgfpy.ResourceRef(9) if bad == "slot" else resource)
    io_slot = enc.AddBindingSlot(0, vgfpy.ResourceRef(11) if bad == "interface" else resource)
    descriptor_set = enc.AddDescriptorSetInfo([slot], 0)
    enc.AddSegmentInfo(
        module,
        "s",
        [descriptor_set],
        [slot],
        [slot],
        [vgfpy.GraphConstantBindingRef(0, constant)],
        [1, 1, 1],
        [],
    )
    enc.AddModelSequenceInputsOutputs([io_slot], ["x"], [], [])
    if bad == "format":
        enc.AddInputResource(storage, 123456, [1], [])
    if bad == "descriptor type":
        enc.AddInputResource(123456, r8, [1], [])
    if bad == "filter":
        enc.AddSamplerConfig(resource, 99, 0, 0, 0, 0)
    if bad == "address mode":
        enc.AddSamplerConfig(resource, 0, 0, 0, 77, 0)
    if bad == "border color":
        enc.AddSamplerConfig(resource, 0, 0, 0, 0, 55)
    enc.Finish()
    out = io.BytesIO()
    assert enc.WriteTo(out)
    return out.getvalue()


def test_raw_file_without_faults_decodes() -> None:
    m = decode(_raw_file("none"))
    assert m.segments[0].descriptor_sets[0].slots == (Slot(0, 0),)
    assert m.constants[0].resource == 1


@pytest.mark.parametrize(
    "bad",
    [
        "segment module",
        "constant binding",
        "constant resource",
        "slot",
        "interface",
        "format",
        "descriptor type",
        "filter",
        "address mode",
        "border color",
    ],
)
def test_reference_or_enum_out_of_range_is_refused(bad: str) -> None:
    with pytest.raises(InputError, match="corrupt VGF file"):
        decode(_raw_file(bad))


# --- Corrupt strings, dispatch shapes and constants are input errors, never crashes. ---


def _with_marker(field: str, marker: str) -> Model:
    """RICH with one of its strings replaced by ``marker``."""
    m = RICH
    modules, segments, inputs = list(m.modules), list(m.segments), list(m.inputs)
    if field == "module name":
        modules[0] = replace(modules[0], name=marker)
    elif field == "entry point":
        modules[0] = replace(modules[0], entry_point=marker)
    elif field == "GLSL source":
        modules[1] = replace(modules[1], source=marker)
    elif field == "HLSL source":
        modules[2] = replace(modules[2], source=marker)
    elif field == "segment name":
        segments[0] = replace(segments[0], name=marker)
    else:
        assert field == "input name"
        inputs[0] = replace(inputs[0], name=marker)
    return replace(m, modules=tuple(modules), segments=tuple(segments), inputs=tuple(inputs))


STRING_FIELDS = [
    "module name",
    "entry point",
    "GLSL source",
    "HLSL source",
    "segment name",
    "input name",
]


@pytest.mark.parametrize("field", STRING_FIELDS)
def test_string_that_is_not_utf8_is_refused(field: str) -> None:
    marker = "QQQQzzzzMARKER"
    data = encode(_with_marker(field, marker))
    at = data.find(marker.encode())
    assert at > 0 and data.find(marker.encode(), at + 1) == -1
    bad = data[:at] + b"\xff" + data[at + 1 :]
    with pytest.raises(InputError):
        decode(bad)


def test_every_flipped_byte_decodes_or_is_refused() -> None:
    data = encode(RICH)
    escaped = []
    for i in range(len(data)):
        for mask in (0xFF, 0x10):
            bad = bytearray(data)
            bad[i] ^= mask
            try:
                decode(bytes(bad))
            except InputError:
                pass
            except Exception as e:
                escaped.append(f"byte {i} ^ {mask:#x}: {type(e).__name__}: {e}")
    assert not escaped, f"{len(escaped)} corruptions escaped:\n" + "\n".join(escaped[:20])


def test_empty_constant_is_refused_or_round_trips() -> None:
    m = Model(
        modules=(),
        segments=(),
        resources=(Resource(Category.CONSTANT, None, "VK_FORMAT_R8_UINT", (0,)),),
        constants=(Constant(0, b""),),
        inputs=(),
        outputs=(),
    )
    try:
        data = encode(m)
    except InternalError:
        return  # refusing to write it is right too
    with contextlib.suppress(InputError):  # the VGF library's vgf_dump calls the file invalid
        assert decode(data) == m
