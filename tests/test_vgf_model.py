"""The VGF model and its codec: ``decode(encode(m)) == m`` for generated models, encoding is
deterministic, the reference converter's files survive decode -> encode unchanged (by vgfc's own
diff and by the VGF library's ``vgf_dump``), and malformed files are refused with InputError."""

from __future__ import annotations

import contextlib
import dataclasses
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
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reference_tools import reference_convert, vgf_dump
from samples_module import SAMPLES_DIR

from vgfc.diagnostics import InputError, InternalError
from vgfc.vgf.decode import decode, read_vgf
from vgfc.vgf.diff import diff_models
from vgfc.vgf.encode import encode
from vgfc.vgf.model import (
    COMPUTE_STAGE,
    Category,
    Constant,
    DescriptorSet,
    Interface,
    Model,
    Module,
    ModuleType,
    PushConstantRange,
    Resource,
    Sampler,
    Segment,
    Slot,
    model_json,
)
from vgfc.vulkan_names import (
    border_colors,
    descriptor_types,
    filters,
    formats,
    sampler_address_modes,
)

TESTS = Path(__file__).resolve().parent
U32 = 2**32 - 1
SPIRV_MAGIC = (0x07230203).to_bytes(4, sys.byteorder)


def _first_names(table: dict[str, int]) -> list[str]:
    """The names the decoder gives back: the first listed for each value (aliases left out)."""
    first: dict[int, str] = {}
    for name, value in table.items():
        first.setdefault(value, name)
    return sorted(first.values())


FORMATS = _first_names(formats())
DESCRIPTOR_TYPES = _first_names(descriptor_types())
FILTERS = _first_names(filters())
ADDRESS_MODES = _first_names(sampler_address_modes())
BORDER_COLORS = _first_names(border_colors())


def _without_version(m: Model) -> dict[str, Any]:
    """``model_json`` less what a file does not hold: its version (the encoder writes its own)
    and provenance (the tensor a resource holds, the partition a segment runs)."""
    data = model_json(m)
    del data["version"]
    for r in data["resources"]:
        r.pop("tensor", None)
    for s in data["segments"]:
        s.pop("partition", None)
    return data


# ---------------------------------------------------------------------------------------------
# Generated models
# ---------------------------------------------------------------------------------------------

# Names are stored as C strings: no NUL. Empty names decode as segment_<i> / input_<i>, so the
# names of segments and interfaces are never empty; modules' names may be.
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
NAME = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12)
U32S = st.integers(0, 7) | st.integers(0, U32)
# 0xFFFFFFFF is the library's "no alias group" / "set index not given" value.
ALIAS_GROUPS = st.none() | st.integers(0, 7) | st.integers(0, U32 - 1)
SET_INDICES = st.integers(0, 7) | st.integers(0, U32 - 1)
# Non-empty SPIR-V (empty code is a placeholder module), a whole number of words.
SPIRV = st.integers(0, 15).flatmap(
    lambda n: st.binary(min_size=4 * n, max_size=4 * n).map(lambda b: SPIRV_MAGIC + b)
)
SAMPLERS = st.builds(
    Sampler,
    st.sampled_from(FILTERS),
    st.sampled_from(FILTERS),
    st.sampled_from(ADDRESS_MODES),
    st.sampled_from(ADDRESS_MODES),
    st.sampled_from(BORDER_COLORS),
)


@st.composite
def modules(draw: st.DrawFn) -> Module:
    kind = draw(st.sampled_from(ModuleType))
    name, entry = draw(TEXT), draw(NAME)
    code = "SPIR-V"
    if kind is ModuleType.COMPUTE:
        code = draw(st.sampled_from(["SPIR-V", "GLSL", "HLSL", "none"]))
    if code == "SPIR-V":
        return Module(kind, name, entry, spirv=draw(SPIRV))
    if code == "none":
        return Module(kind, name, entry)
    return Module(kind, name, entry, source=draw(TEXT), language=code)


@st.composite
def resources(draw: st.DrawFn) -> Resource:
    category = draw(st.sampled_from(Category))
    constant = category is Category.CONSTANT
    return Resource(
        category=category,
        descriptor_type=None if constant else draw(st.sampled_from(DESCRIPTOR_TYPES)),
        format=draw(st.sampled_from(FORMATS)),
        shape=tuple(draw(st.lists(st.integers(-1, 2**40), max_size=5))),
        strides=tuple(draw(st.lists(st.integers(0, 2**40), max_size=5))),
        # The file holds no alias group for a constant.
        alias_group=None if constant else draw(ALIAS_GROUPS),
        sampler=draw(st.none() | SAMPLERS),
        tensor=draw(st.none() | NAME),  # provenance: not stored, not compared
    )


@st.composite
def models(draw: st.DrawFn) -> Model:
    mods = tuple(draw(st.lists(modules(), max_size=4)))
    res = tuple(draw(st.lists(resources(), max_size=8)))
    constant_resources = [i for i, r in enumerate(res) if r.category is Category.CONSTANT]
    consts: tuple[Constant, ...] = ()
    if constant_resources:
        consts = tuple(
            draw(
                st.lists(
                    st.builds(
                        Constant,
                        st.sampled_from(constant_resources),
                        st.binary(min_size=1, max_size=48),
                        st.integers(-1, 7) | st.integers(-1, 2**31 - 1),
                    ),
                    max_size=4,
                )
            )
        )
    resource_index = st.integers(0, len(res) - 1) if res else st.nothing()
    slots = st.lists(st.builds(Slot, U32S, resource_index), max_size=4) if res else st.just([])
    bindings = (
        st.lists(st.tuples(U32S, st.integers(0, len(consts) - 1)), max_size=3)
        if consts
        else st.just([])
    )

    segs = []
    for _ in range(draw(st.integers(0, 4)) if mods else 0):
        module = draw(st.integers(0, len(mods) - 1))
        segs.append(
            Segment(
                # The file records a segment's type from its module's.
                type=mods[module].type,
                name=draw(NAME),
                module=module,
                descriptor_sets=tuple(
                    DescriptorSet(draw(SET_INDICES), tuple(draw(slots)))
                    for _ in range(draw(st.integers(0, 3)))
                ),
                inputs=tuple(draw(slots)),
                outputs=tuple(draw(slots)),
                constant_bindings=tuple(draw(bindings)),
                dispatch=draw(st.tuples(U32S, U32S, U32S)),
                push_constant_ranges=tuple(
                    draw(
                        st.lists(
                            st.builds(
                                PushConstantRange,
                                st.just(COMPUTE_STAGE) | U32S,
                                U32S,
                                U32S,
                            ),
                            max_size=3,
                        )
                    )
                ),
                partition=draw(st.none() | st.integers(0, 9)),  # provenance
            )
        )
    interfaces = (
        st.lists(st.builds(Interface, NAME, U32S, resource_index), max_size=3)
        if res
        else st.just([])
    )
    return Model(
        modules=mods,
        segments=tuple(segs),
        resources=res,
        constants=consts,
        inputs=tuple(draw(interfaces)),
        outputs=tuple(draw(interfaces)),
        vk_header_version=draw(st.integers(0, 2**16 - 1)),
        version=draw(st.none() | st.just("9.9.9")),  # not compared: the encoder writes its own
    )


_SAMPLER = Sampler(
    "VK_FILTER_LINEAR",
    "VK_FILTER_NEAREST",
    "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER",
    "VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT",
    "VK_BORDER_COLOR_INT_OPAQUE_WHITE",
)
RICH = Model(
    modules=(
        Module(ModuleType.GRAPH, "graph", "main", spirv=SPIRV_MAGIC + bytes(range(12))),
        Module(ModuleType.COMPUTE, "glsl", "main", source="void main() {}", language="GLSL"),
        Module(ModuleType.COMPUTE, "hlsl", "CSMain", source="[numthreads(1,1,1)]", language="HLSL"),
        Module(ModuleType.COMPUTE, "placeholder", "main"),
    ),
    segments=(
        Segment(
            ModuleType.GRAPH,
            "graph_segment",
            0,
            (DescriptorSet(0, (Slot(0, 0), Slot(1, 1))),),
            (Slot(0, 0),),
            (Slot(1, 1),),
            constant_bindings=((7, 1), (3, 0)),
        ),
        Segment(
            ModuleType.COMPUTE,
            "compute_segment",
            2,
            (DescriptorSet(2, (Slot(0, 1), Slot(5, 3))), DescriptorSet(0, (Slot(1, 0),))),
            (Slot(0, 1),),
            (Slot(5, 3),),
            dispatch=(4, 2, 1),
            push_constant_ranges=(
                PushConstantRange(COMPUTE_STAGE, 0, 16),
                PushConstantRange(COMPUTE_STAGE, 16, 8),
            ),
        ),
    ),
    resources=(
        Resource(
            Category.INPUT,
            "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            "VK_FORMAT_R32G32B32A32_SFLOAT",
            (1, 4, 8, 4),
            sampler=_SAMPLER,
        ),
        Resource(
            Category.INTERMEDIATE,
            "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
            "VK_FORMAT_R8_SINT",
            (1, 3),
            (3, 1),
            alias_group=5,
        ),
        Resource(Category.CONSTANT, None, "VK_FORMAT_R16_SFLOAT", (2, 2)),
        Resource(
            Category.OUTPUT,
            "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            "VK_FORMAT_R32_SFLOAT",
            (6,),
            alias_group=5,
        ),
    ),
    constants=(Constant(2, b"\x00\x3c\x00\x40\x00\x42\x00\x44"), Constant(2, b"\x01" * 3, 1)),
    inputs=(Interface("image", 0, 0),),
    outputs=(Interface("result", 5, 3),),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(RICH)
@given(models())
def test_decode_inverts_encode(m: Model) -> None:
    back = decode(encode(m))
    assert back == m
    assert _without_version(back) == _without_version(m)
    assert back.version is not None  # a decoded file says which VGF version it is
    assert all(r.tensor is None for r in back.resources)  # no provenance in a file
    assert all(s.partition is None for s in back.segments)
    assert diff_models(back, m) == []


def test_rich_model_round_trips_every_feature() -> None:
    """The hand-built model holds every feature the property test must see (samplers, alias
    groups, push-constant ranges, constants and their bindings, GLSL/HLSL/placeholder modules)."""
    back = decode(encode(RICH))
    assert back == RICH
    assert back.resources[0].sampler == _SAMPLER
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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(RICH)
@given(models())
def test_encoding_is_deterministic(m: Model) -> None:
    data = encode(m)
    assert encode(m) == data
    # A decoded file is the same model: it encodes to the same bytes.
    assert encode(decode(data)) == data


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
    assert _without_version(back) == _without_version(model)
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
        modules[0] = dataclasses.replace(modules[0], name=marker)
    elif field == "entry point":
        modules[0] = dataclasses.replace(modules[0], entry_point=marker)
    elif field == "GLSL source":
        modules[1] = dataclasses.replace(modules[1], source=marker)
    elif field == "HLSL source":
        modules[2] = dataclasses.replace(modules[2], source=marker)
    elif field == "segment name":
        segments[0] = dataclasses.replace(segments[0], name=marker)
    else:
        assert field == "input name"
        inputs[0] = dataclasses.replace(inputs[0], name=marker)
    return dataclasses.replace(
        m, modules=tuple(modules), segments=tuple(segments), inputs=tuple(inputs)
    )


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
