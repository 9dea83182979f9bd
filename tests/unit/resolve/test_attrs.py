"""Vulkan custom shader attributes and the resource contract: accepted payloads, and one exact
message per error class (``file: op #i CUSTOM 'name' (domain): key: message``).

Locations are built only when an error is raised, and the walk for lone surrogates runs only
when the payload holds a ``\\u`` escape: the errors still read exactly as before, and a lone
surrogate is caught either way (``tests/property/test_resolve.py`` holds the walk to a full one).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from attrs_graphs import PREFIX, buffer, check, graph, payload

from vgfc.diagnostics import InputError
from vgfc.ir import DType, Graph, Operator
from vgfc.ir_shaders import Sampler
from vgfc.resolve.attrs import parse_shader_spec
from vgfc.resolve.contract import check_contract
from vgfc.vulkan_names import descriptor_types, formats


def test_parses_a_full_payload() -> None:
    g = graph(payload(push_constants="scale: 4, bias: 4"))
    spec = parse_shader_spec(g.operators[0], g)
    assert spec.name == "blur" and spec.entry_point == "main"
    assert spec.workgroup_counts == (4, 1, 1) and spec.global_size is None
    assert spec.language == "GLSL" and spec.code is not None
    (inp,) = spec.inputs
    assert (inp.tensor, inp.set, inp.binding) == ("x0", 0, 0)
    assert inp.descriptor_type == "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
    assert inp.format == "VK_FORMAT_R32_SFLOAT"
    assert descriptor_types()[inp.descriptor_type] == 7 and formats()[inp.format] == 100
    assert [(p.name, p.offset, p.size) for p in spec.push_constants] == [
        ("scale", 0, 4),
        ("bias", 4, 4),
    ]
    assert spec.push_constant_size == 8


def test_accepts_what_executorch_writes() -> None:
    """Extra keys, upper-case logical types, TENSOR_ARM, empty push constants, base64 SPIR-V."""
    spirv = (0x07230203).to_bytes(4, "little") + bytes(16)
    attrs = {
        "entry_point": "main",
        "workgroup_sizes": [64, 1, 1],
        "is_vkshader": True,
        "_type": "vkshader",
        "push_constants": "",
        "shader_language": "SPIR-V",
        "shader_code": base64.b64encode(spirv).decode(),
        **buffer(0, type="TENSOR", vkdescriptortype="VK_DESCRIPTOR_TYPE_TENSOR_ARM"),
        **buffer(0, "output", type="Tensor"),
    }
    g = graph(attrs)
    spec = parse_shader_spec(g.operators[0], g)
    assert spec.spirv == spirv and spec.code is None
    assert spec.push_constants == ()
    assert spec.inputs[0].kind == "tensor"


def test_code_less_placeholder_is_accepted() -> None:
    g = graph(payload(shader_language=None, shader_code=None))
    spec = parse_shader_spec(g.operators[0], g)
    assert spec.language is None and spec.code is None


def test_image_with_sampler_and_duplicated_input() -> None:
    sampler = {
        "min_filter": "VK_FILTER_NEAREST",
        "mag_filter": "VK_FILTER_LINEAR",
        "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
        "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_REPEAT",
        "border_color": "VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK",
    }
    attrs = payload(
        **buffer(
            0,
            vkdescriptortype="VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            vkformat="VK_FORMAT_R32G32B32A32_SFLOAT",
            type="Image",
            sampler=sampler,
        ),
        **buffer(1, descriptorset=3),
    )
    g = graph(attrs, inputs=((1, 8, 8, 4), (1, 8, 8, 4)))
    op = g.operators[0]
    g = Graph(
        g.tensors,
        (Operator(0, "CUSTOM", ("x0", "x0"), op.outputs, op.attrs),),
        g.inputs,
        g.outputs,
        g.version,
        g.source,
    )
    spec = parse_shader_spec(g.operators[0], g)
    check_contract(spec, g.operators[0], g)
    assert [r.tensor for r in spec.inputs] == ["x0", "x0"]  # both bindings kept
    assert [(r.set, r.binding) for r in spec.inputs] == [(0, 0), (3, 1)]
    assert spec.inputs[0].sampler is not None
    assert spec.inputs[0].sampler == Sampler(**sampler)


ERRORS: list[tuple[str, Any, str]] = [
    (
        "unknown format",
        payload(input_0_vkformat="VK_FORMAT_R32_FLOAT"),
        "input_0_vkformat: unknown format 'VK_FORMAT_R32_FLOAT' "
        "(did you mean VK_FORMAT_R32_SFLOAT?)",
    ),
    (
        "unknown descriptor type",
        payload(output_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_STORAGE_BUFER"),
        "output_0_vkdescriptortype: unknown descriptor type 'VK_DESCRIPTOR_TYPE_STORAGE_BUFER' "
        "(did you mean VK_DESCRIPTOR_TYPE_STORAGE_BUFFER?)",
    ),
    (
        "unknown filter",
        payload(
            input_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            input_0_vkformat="VK_FORMAT_R32G32B32A32_SFLOAT",
            input_0_sampler={
                "min_filter": "VK_FILTER_NEARST",
                "mag_filter": "VK_FILTER_LINEAR",
                "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_REPEAT",
                "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_REPEAT",
                "border_color": "VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK",
            },
        ),
        "input_0_sampler.min_filter: unknown filter 'VK_FILTER_NEARST' "
        "(did you mean VK_FILTER_NEAREST?)",
    ),
    (
        "unknown address mode",
        payload(
            input_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            input_0_vkformat="VK_FORMAT_R32G32B32A32_SFLOAT",
            input_0_sampler={
                "min_filter": "VK_FILTER_NEAREST",
                "mag_filter": "VK_FILTER_LINEAR",
                "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EGDE",
                "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_REPEAT",
                "border_color": "VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK",
            },
        ),
        "input_0_sampler.address_mode_u: unknown address mode "
        "'VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EGDE' (did you mean "
        "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE?)",
    ),
    (
        "unknown border colour",
        payload(
            input_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            input_0_vkformat="VK_FORMAT_R32G32B32A32_SFLOAT",
            input_0_sampler={
                "min_filter": "VK_FILTER_NEAREST",
                "mag_filter": "VK_FILTER_LINEAR",
                "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_REPEAT",
                "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_REPEAT",
                "border_color": "VK_BORDER_COLOUR_FLOAT_OPAQUE_BLACK",
            },
        ),
        "input_0_sampler.border_color: unknown border color 'VK_BORDER_COLOUR_FLOAT_OPAQUE_BLACK'"
        " (did you mean VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK?)",
    ),
    ("not json", b"{entry_point: main}", "implementation_attrs: not valid JSON: "),
    ("not an object", b"[1, 2]", "implementation_attrs: must be a JSON object, not list"),
    ("missing entry", payload(entry_point=None), "entry_point: missing (required)"),
    (
        "missing dispatch",
        payload(workgroup_sizes=None),
        "workgroup_sizes: missing: give workgroup_sizes (workgroup counts) or global_size",
    ),
    ("zero count", payload(workgroup_sizes=[0, 1, 1]), "workgroup_sizes.0: 0 is less than"),
    ("wrong type", payload(input_0_binding="0"), "input_0_binding: '0' is not of type 'integer'"),
    (
        "missing operand key",
        payload(input_0_vkformat=None),
        "input_0_vkformat: missing: input 0 (tensor 'x0') needs it",
    ),
    (
        "key for a missing operand",
        payload(**buffer(1)),
        "input_1_binding: the op has 1 input (input_0)",
    ),
    (
        "leading zero",
        payload(input_01_binding=1),
        "input_01_binding: operand index '01' has a leading zero (write input_1_binding)",
    ),
    (
        "misspelled key",
        payload(input_0_bindng=1),
        "input_0_bindng: unknown key (did you mean input_0_binding?)",
    ),
    (
        "language spelling",
        payload(shader_language="SPIRV"),
        "shader_language: unknown language 'SPIRV' (GLSL, HLSL or SPIR-V, in any letter case) "
        "(did you mean SPIR-V?)",
    ),
    (
        "code without language",
        payload(shader_language=None),
        "shader_language: missing: shader_code is given, so say which language it is",
    ),
    (
        "bad base64",
        payload(shader_language="SPIR-V", shader_code="not base64!"),
        "shader_code: not valid base64 for a SPIR-V binary",
    ),
    (
        "spirv not words",
        payload(shader_language="SPIR-V", shader_code=base64.b64encode(b"12345").decode()),
        "shader_code: the decoded SPIR-V binary has 5 bytes, not a multiple of 4",
    ),
    (
        "push constant syntax",
        payload(push_constants="scale=4"),
        "push_constants: expected 'name: size, name: size', got 'scale=4'",
    ),
    (
        "push constant size",
        payload(push_constants="scale: 6"),
        "push_constants: 'scale' has size 6: sizes must be positive multiples of 4",
    ),
    (
        "binding clash",
        payload(output_0_binding=0),
        "output_0_binding: set 0 binding 0 is already used by input_0",
    ),
    (
        "sampler on output",
        payload(output_0_sampler={}),
        "output_0_sampler: a sampler only applies to sampled image inputs",
    ),
    (
        "read-only output",
        payload(
            output_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
        ),
        "output_0_vkdescriptortype: VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER is read-only and "
        "cannot hold a result",
    ),
    (
        "kind mismatch",
        payload(input_0_type="Image"),
        "input_0_vkdescriptortype: VK_DESCRIPTOR_TYPE_STORAGE_BUFFER does not fit input_0_type "
        "'Image'",
    ),
    (
        "sampler missing",
        payload(
            input_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            input_0_vkformat="VK_FORMAT_R32G32B32A32_SFLOAT",
        ),
        "input_0_sampler: missing: a combined image sampler needs its sampler",
    ),
    # The resource contract (seed 000).
    (
        "format element type",
        payload(input_0_vkformat="VK_FORMAT_R16_SFLOAT"),
        "tensor 'x0': input_0_vkformat: VK_FORMAT_R16_SFLOAT does not hold FP32 elements "
        "(32-bit SFLOAT expected)",
    ),
    (
        "packed format on a buffer",
        payload(input_0_vkformat="VK_FORMAT_R32G32B32A32_SFLOAT"),
        "tensor 'x0': input_0_vkformat: VK_FORMAT_R32G32B32A32_SFLOAT packs 4 channels, but a "
        "storage_buffer resource is scalar",
    ),
    (
        "byte order mark",
        b"\xef\xbb\xbf" + json.dumps(payload()).encode(),
        "implementation_attrs: not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) at "
        "line 1 column 1",
    ),
    (
        "format name that is no string",
        payload(extra_vkformat=7),
        "extra_vkformat: expected a format name (a string), got 7",
    ),
    (
        "descriptor type that is no string",
        payload(extra_vkdescriptortype=[1]),
        "extra_vkdescriptortype: expected a descriptor type name (a string), got [1]",
    ),
]


@pytest.mark.parametrize(("what", "attrs", "message"), ERRORS, ids=[e[0] for e in ERRORS])
def test_error_messages(what: str, attrs: Any, message: str) -> None:
    with pytest.raises(InputError) as err:
        check(graph(attrs))
    text = str(err.value)
    assert text.startswith(PREFIX), text
    assert text[len(PREFIX) :].startswith(message), text


IMAGE = {
    "output_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
    "output_0_vkformat": "VK_FORMAT_R32G32B32A32_SFLOAT",
}


@pytest.mark.parametrize(
    ("shape", "fmt", "message"),
    [
        (
            (1, 8, 8, 3),
            "VK_FORMAT_R32G32B32A32_SFLOAT",
            "an image cannot have 3 channels (shape [1, 8, 8, 3]): pad to 4 channels before the "
            "custom op, or bind it as a buffer or tensor",
        ),
        (
            (2, 8, 8, 4),
            "VK_FORMAT_R32G32B32A32_SFLOAT",
            "an image of shape [2, 8, 8, 4] must have batch N = 1",
        ),
        (
            (8, 4),
            "VK_FORMAT_R32G32B32A32_SFLOAT",
            "an image needs shape [H, W, C] or [1, H, W, C], got rank 2",
        ),
        (
            (8, 8, 2),
            "VK_FORMAT_R32G32B32A32_SFLOAT",
            "VK_FORMAT_R32G32B32A32_SFLOAT has 4 components, the image has C = 2",
        ),
        (
            (8, 8, 8),
            "VK_FORMAT_R32G32B32A32_SFLOAT",
            "an image packs 1, 2 or 4 channels into its format, shape [8, 8, 8] has 8",
        ),
    ],
)
def test_image_contract(shape: tuple[int, ...], fmt: str, message: str) -> None:
    attrs = payload(**{**IMAGE, "output_0_vkformat": fmt})
    with pytest.raises(InputError) as err:
        check(graph(attrs, outputs=(shape,)))
    assert message in str(err.value)
    assert "tensor 'y0'" in str(err.value)


@pytest.mark.parametrize(
    ("shape", "fmt"),
    [
        ((1, 8, 8, 4), "VK_FORMAT_R32G32B32A32_SFLOAT"),
        ((8, 8, 2), "VK_FORMAT_R32G32_SFLOAT"),
        ((8, 8, 1), "VK_FORMAT_R32_SFLOAT"),
    ],
)
def test_images_with_1_2_4_channels_pass(shape: tuple[int, ...], fmt: str) -> None:
    check(graph(payload(**{**IMAGE, "output_0_vkformat": fmt}), outputs=(shape,)))


@pytest.mark.parametrize(
    ("dtype", "fmt", "ok"),
    [
        (DType.INT8, "VK_FORMAT_R8_SINT", True),
        (DType.INT8, "VK_FORMAT_R8_UINT", True),
        (DType.INT8, "VK_FORMAT_R32_SINT", False),
        (DType.INT32, "VK_FORMAT_R32_SINT", True),
        (DType.INT32, "VK_FORMAT_R32_SFLOAT", False),
        (DType.FP16, "VK_FORMAT_R16_SFLOAT", True),
        (DType.BF16, "VK_FORMAT_R16_SFLOAT_FPENCODING_BFLOAT16_ARM", True),
        (DType.BF16, "VK_FORMAT_R16_SFLOAT", False),
        (DType.BOOL, "VK_FORMAT_R8_BOOL_ARM", True),
    ],
)
def test_format_must_hold_the_tensor_element_type(dtype: DType, fmt: str, ok: bool) -> None:
    attrs = payload(input_0_vkformat=fmt, output_0_vkformat=fmt)
    g = graph(attrs, dtype=dtype)
    if ok:
        check(g)
    else:
        with pytest.raises(InputError, match="does not hold"):
            check(g)


# --- errors keep their text and location, built only when an error is raised -------------------

# (what, implementation_attrs, dtype, the error after the op's own location)
ERRORS: list[tuple[str, Any, DType, str]] = [
    (
        "missing attributes",
        b"",
        DType.FP32,
        "implementation_attrs: missing: a Vulkan custom shader needs its JSON attributes",
    ),
    (
        "not UTF-8",
        b'{"a": "\xff"}',
        DType.FP32,
        "implementation_attrs: not UTF-8 text: invalid start byte at byte 7",
    ),
    (
        "a long number",
        b'{"entry_point": "main", "workgroup_sizes": [1' + b"0" * 80 + b", 1, 1]}",
        DType.FP32,
        "implementation_attrs: a number of 81 characters ("
        + "1"
        + "0" * 59
        + "... (81 characters)): vgfc reads numbers of up to 64",
    ),
    (
        "a lone surrogate in a key",
        b'{"x\\udc00": 1, "entry_point": "main"}',
        DType.FP32,
        "not valid Unicode text: a lone surrogate (\\udc00) at character 1",
    ),
    (
        "a long sampler value",
        payload(input_0_sampler={"min_filter": "x" * 2000}),
        DType.FP32,
        "input_0_sampler.min_filter: the value '" + "x" * 60 + "... (2000 characters)' is "
        "longer than the 1024 characters vgfc reads",
    ),
    (
        "a long operand value",
        payload(input_0_vkformat="VK_FORMAT_" + "R" * 2000),
        DType.FP32,
        "input_0_vkformat: the value 'VK_FORMAT_" + "R" * 50 + "... (2010 characters)' is "
        "longer than the 1024 characters vgfc reads",
    ),
    (
        "an unsupported descriptor",
        payload(input_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_SAMPLER"),
        DType.FP32,
        "input_0_vkdescriptortype: VK_DESCRIPTOR_TYPE_SAMPLER is not supported for shader "
        "operands (VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE, "
        "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, "
        "VK_DESCRIPTOR_TYPE_TENSOR_ARM, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)",
    ),
    (
        "a read-only result",
        payload(output_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER"),
        DType.FP32,
        "output_0_vkdescriptortype: VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER is read-only and cannot "
        "hold a result",
    ),
    (
        "a push constant listed twice",
        payload(push_constants="a: 4, a: 4"),
        DType.FP32,
        "push_constants: 'a' is listed twice",
    ),
    (
        "a packed format",
        payload(input_0_vkformat="VK_FORMAT_R5G6B5_UNORM_PACK16"),
        DType.FP32,
        "tensor 'x0': input_0_vkformat: VK_FORMAT_R5G6B5_UNORM_PACK16 is a packed, compressed "
        "or planar format; shader tensors need a plain format with equal-width channels",
    ),
    (
        "a format of another width",
        payload(input_0_vkformat="VK_FORMAT_R16_SFLOAT"),
        DType.FP32,
        "tensor 'x0': input_0_vkformat: VK_FORMAT_R16_SFLOAT does not hold FP32 elements "
        "(32-bit SFLOAT expected)",
    ),
    (
        "a format of BOOL elements",
        payload(),
        DType.BOOL,
        "tensor 'x0': input_0_vkformat: VK_FORMAT_R32_SFLOAT does not hold BOOL elements "
        "(8-bit BOOL/SINT/UINT expected)",
    ),
]


@pytest.mark.parametrize(
    ("attrs", "dtype", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_errors_keep_their_text_and_location(attrs: Any, dtype: DType, message: str) -> None:
    with pytest.raises(InputError) as caught:
        check(graph(attrs, dtype=dtype))
    assert str(caught.value) == PREFIX + message


def test_escapes_that_spell_no_surrogate_parse() -> None:
    """An escaped letter, and a backslash followed by ``u`` (``\\\\ud800``: text, no escape)."""
    code = "#version 450\n// \\ud800 \u00e9\nvoid main() {}\n"
    raw = json.dumps(payload(shader_code=code, entry_point="m\u0061in")).encode()
    assert b"\\u" in raw
    g = graph(raw)
    spec = parse_shader_spec(g.operators[0], g)
    assert spec.code == code and spec.entry_point == "main"


def test_a_lone_surrogate_in_a_value_is_found_at_its_key() -> None:
    g = graph(json.dumps(payload(**buffer(0, vkformat="VK_FORMAT_\ud800"))).encode())
    with pytest.raises(InputError) as caught:
        parse_shader_spec(g.operators[0], g)
    assert str(caught.value) == (
        PREFIX + "input_0_vkformat: not valid Unicode text: a lone surrogate (\\ud800) at "
        "character 10"
    )
