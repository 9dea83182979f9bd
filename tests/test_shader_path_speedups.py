"""What the faster shader path must still do: every error keeps its exact text and location
(locations are now built only when an error is raised), a lone surrogate is caught whether or
not a fast check lets the payload skip the walk, and a shader cache entry whose reflection is not
in the layout vgfc writes is a miss (vgfc/custom, vgfc/lower/shader.py, vgfc/shader/cache.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_custom_attrs import PREFIX, buffer, check, graph, payload

from vgfc.diagnostics import InputError
from vgfc.ir import DType
from vgfc.resolve.attrs import parse_shader_spec
from vgfc.shader import cache
from vgfc.spirv.reflect import ResourceBinding, ShaderInfo

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


# --- the reflection a cache entry holds ----------------------------------------------------------

INFO = ShaderInfo(
    entry_points=(("main", "GLCompute"),),
    local_size=(64, 1, 1),
    bindings=(
        ResourceBinding(0, 0, "storage_buffer", "In", True, False),
        ResourceBinding(0, 1, "storage_image", None, False, True, "Rgba32f", 4, True),
    ),
    push_constant_size=8,
    spirv_version=(1, 6),
    unused=(ResourceBinding(1, 0, "uniform_buffer", "U", True, False),),
)


def stored() -> dict[str, Any]:
    """INFO as an entry's header holds it (written as JSON and read back)."""
    data: dict[str, Any] = json.loads(json.dumps(cache._info_json(INFO)))
    return data


def test_an_entrys_reflection_reads_back_equal() -> None:
    assert cache._info_from_json(stored()) == INFO
    bare = ShaderInfo((), None, (), None, (1, 0))
    assert cache._info_from_json(json.loads(json.dumps(cache._info_json(bare)))) == bare


def _changed(change: str) -> Any:
    data = stored()
    if change == "a field missing":
        del data["unused"]
    elif change == "a field more":
        data["extra"] = 1
    elif change == "not an object":
        return [data]
    elif change == "a binding field missing":
        del data["bindings"][0]["written"]
    elif change == "a binding field more":
        data["bindings"][1]["extra"] = None
    elif change == "a binding that is no object":
        data["unused"] = [[0, 0]]
    elif change == "bindings that are no array":
        data["bindings"] = {}
    elif change == "a local size of two":
        data["local_size"] = [64, 1]
    elif change == "a local size of text":
        data["local_size"] = "abc"
    elif change == "a local size of floats":
        data["local_size"] = [64.0, 1, 1]
    elif change == "a version of booleans":
        data["spirv_version"] = [True, False]
    elif change == "an entry point of one name":
        data["entry_points"] = [["main"]]
    elif change == "an entry point nested":
        data["entry_points"] = [["main", ["GLCompute"]]]
    elif change == "a push-constant size of text":
        data["push_constant_size"] = "8"
    return data


CHANGES = [
    "a field missing",
    "a field more",
    "not an object",
    "a binding field missing",
    "a binding field more",
    "a binding that is no object",
    "bindings that are no array",
    "a local size of two",
    "a local size of text",
    "a local size of floats",
    "a version of booleans",
    "an entry point of one name",
    "an entry point nested",
    "a push-constant size of text",
]


@pytest.mark.parametrize("change", CHANGES)
def test_a_reflection_in_another_layout_is_a_miss(change: str) -> None:
    assert cache._info_from_json(_changed(change)) is None
