"""``vgfc.resolve.attrs.conforms`` (the plain-code check on the hot path) gives jsonschema's
verdict on ``implementation_attrs.schema.json`` for every payload, valid or not.

The payloads are built from the schema's own keys with values that are right, nearly right
(0 where the minimum is 1, a float for an integer, a bool, a string with a trailing newline)
and wrong, so that a rule changed in the schema and not in the code, or the reverse, shows up.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from vgfc.resolve.attrs import conforms
from vgfc.schema import load_schema

SCHEMA = load_schema("implementation_attrs.schema.json")
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=4),
    st.sampled_from([1.0, 2.5, -1.0]),
    st.sampled_from(
        [
            "",
            "main",
            "x\n",
            "GLSL",
            "glsl",
            "SPIR-V",
            "HLSL",
            "Tensor",
            "IMAGE",
            "buffer\n",
            "sampler",
            "VK_FORMAT_R32_SFLOAT",
            "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
            "vk_format_r8",
            "a: 4",
            "a: 4, b_2: 8",
            " a :4 ,b:12 ",
            "a: x",
            "4: a",
            "a: 4,",
            "\n",
        ]
    ),
)
xyz = st.one_of(
    st.lists(st.integers(min_value=-1, max_value=3), min_size=2, max_size=4),
    st.lists(st.sampled_from([1, 2, 1.0, True, "1"]), min_size=3, max_size=3),
    scalars,
)
sampler_keys = ["min_filter", "mag_filter", "address_mode_u", "address_mode_v", "border_color"]
sampler = st.one_of(
    st.fixed_dictionaries(
        {k: st.sampled_from(["VK_FILTER_LINEAR", 1, None]) for k in sampler_keys}
    ),
    st.dictionaries(st.sampled_from([*sampler_keys, "extra"]), st.sampled_from(["x", 2])),
    scalars,
)
operand_keys = st.builds(
    lambda role, index, field: f"{role}_{index}_{field}",
    st.sampled_from(["input", "output", "inputs"]),
    st.sampled_from(["0", "1", "12", "01", "x"]),
    st.sampled_from(
        ["binding", "descriptorset", "vkdescriptortype", "vkformat", "type", "sampler", "other"]
    ),
)


valid_values: dict[str, st.SearchStrategy[Any]] = {
    "entry_point": st.sampled_from(["main", "k"]),
    "workgroup_sizes": st.lists(st.integers(1, 3), min_size=3, max_size=3),
    "global_size": st.lists(st.sampled_from([1, 2, 2.0]), min_size=3, max_size=3),
    "shader_language": st.sampled_from(["GLSL", "HLSL", "SPIR-V", ""]),
    "shader_code": st.sampled_from(["", "void main() {}"]),
    "push_constants": st.sampled_from(["", "a: 4", "a: 4, b_2: 8", " a :4 ,b:12 "]),
    "binding": st.integers(0, 3),
    "descriptorset": st.sampled_from([0, 1, 0.0]),
    "vkdescriptortype": st.sampled_from(["VK_DESCRIPTOR_TYPE_TENSOR_ARM", "VK_DESCRIPTOR_TYPE_"]),
    "vkformat": st.sampled_from(["VK_FORMAT_R32_SFLOAT", "VK_FORMAT_R8G8B8A8_UNORM"]),
    "type": st.sampled_from(["Tensor", "IMAGE", "buffer", "bUfFeR"]),
    "sampler": st.fixed_dictionaries({k: st.just("VK_FILTER_LINEAR") for k in sampler_keys}),
}


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    """A valid payload with some of its values dropped or replaced by near-misses."""
    keys = [
        "entry_point",
        "workgroup_sizes",
        "global_size",
        "shader_language",
        "shader_code",
        "push_constants",
    ]
    for role, index in (("input", "0"), ("input", "1"), ("output", "0")):
        fields = ["binding", "descriptorset", "vkdescriptortype", "vkformat", "type"]
        keys += [f"{role}_{index}_{field}" for field in fields]
    keys.append("input_0_sampler")
    payload: dict[str, Any] = {}
    broken = draw(st.sets(st.sampled_from(keys), max_size=3))
    for key in keys:
        if key == "global_size" and draw(st.booleans()):
            continue  # one of workgroup_sizes / global_size is enough
        if key not in broken:
            payload[key] = draw(
                valid_values[key.rsplit("_", 1)[-1] if key.startswith(("input", "output")) else key]
            )
            continue
        action = draw(st.sampled_from(["drop", "scalar", "xyz", "sampler"]))
        if action != "drop":
            payload[key] = draw({"scalar": scalars, "xyz": xyz, "sampler": sampler}[action])
    for key in draw(st.lists(operand_keys, max_size=2)):
        payload[key] = draw(sampler if key.endswith("sampler") else scalars)
    return payload


@settings(max_examples=3000, deadline=None)
@given(payloads())
def test_plain_check_gives_the_schemas_verdict(payload: dict[str, Any]) -> None:
    assert conforms(payload) == VALIDATOR.is_valid(payload), payload


def test_a_full_valid_payload_conforms() -> None:
    payload = {
        "entry_point": "main",
        "workgroup_sizes": [1, 2, 3],
        "shader_language": "GLSL",
        "shader_code": "void main() {}",
        "push_constants": "scale: 4, bias: 4",
        "input_0_binding": 0,
        "input_0_descriptorset": 0,
        "input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
        "input_0_vkformat": "VK_FORMAT_R8G8B8A8_UNORM",
        "input_0_type": "Image",
        "input_0_sampler": dict.fromkeys(sampler_keys, "VK_FILTER_LINEAR"),
    }
    assert VALIDATOR.is_valid(payload)
    assert conforms(payload)
