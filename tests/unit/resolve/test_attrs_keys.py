"""The payload key rule: operand-grammar keys are checked strictly, other undocumented keys are
metadata kept for the report, near misses of documented keys are errors with the name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from attrs_graphs import PREFIX, graph, payload
from shader_models import attrs, model

from vgfc.diagnostics import InputError
from vgfc.resolve.attrs import parse_shader_spec
from vgfc.resolve.attrs_keys import DOCUMENTED_KEYS, OPERAND_FIELDS
from vgfc.schema import load_schema

# What ExecuTorch's FuseGridSamplerFlowOffsetPass writes beside the shader's own keys.
EXECUTORCH_METADATA: dict[str, Any] = {
    "operator_name": "arm.flow_offset_grid_sampler",
    "input_scale": 0.0078125,
    "input_zero_point": -1,
    "output_scale": 0.00390625,
    "output_zero_point": 3,
    "flow_scale": 0.25,
    "flow_zero_point": 0,
    "flow_channel_offset": 2,
    "is_vkshader": True,
}


def _spec(attrs: dict[str, Any]) -> Any:
    g = graph(attrs)
    return parse_shader_spec(g.operators[0], g)


def test_executorch_metadata_is_accepted_and_kept_in_payload_order() -> None:
    spec = _spec(payload(**EXECUTORCH_METADATA))
    assert [k for k, _ in spec.metadata] == list(EXECUTORCH_METADATA)
    assert {k: json.loads(v) for k, v in spec.metadata} == EXECUTORCH_METADATA
    assert [r.key for r in spec.resources] == ["input_0", "output_0"]


def test_a_payload_without_metadata_has_none() -> None:
    assert _spec(payload()).metadata == ()


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"input_0_bindng": 1}, "input_0_bindng: unknown key (did you mean input_0_binding?)"),
        ({"input0_binding": 1}, "input0_binding: unknown key (did you mean input_0_binding?)"),
        (
            {"output_0_format": "x"},
            "output_0_format: unknown key (did you mean output_0_vkformat?)",
        ),
        ({"input_0_scale": 1.0}, "input_0_scale: unknown key"),
        ({"input_01_binding": 1}, "input_01_binding: operand index '01' has a leading zero"),
        ({"push_constant": "a: 4"}, "push_constant: unknown key (did you mean push_constants?)"),
        (
            {"workgroup_size": [1, 1, 1]},
            "workgroup_size: unknown key (did you mean workgroup_sizes?)",
        ),
        ({"input_O_binding": 1}, "input_O_binding: unknown key (did you mean input_0_binding?)"),
    ],
)
def test_operand_grammar_keys_and_near_misses_are_errors(
    over: dict[str, Any], message: str
) -> None:
    g = graph(payload(**over, **EXECUTORCH_METADATA))
    with pytest.raises(InputError) as e:
        parse_shader_spec(g.operators[0], g)
    assert str(e.value).startswith(PREFIX + message)


def test_the_key_table_is_the_schema() -> None:
    schema = load_schema("implementation_attrs.schema.json")
    assert set(schema["properties"]) == DOCUMENTED_KEYS
    assert len(OPERAND_FIELDS) == len(schema["patternProperties"])
    for field, pattern in zip(OPERAND_FIELDS, schema["patternProperties"], strict=True):
        assert pattern.endswith(f"_{field}$")


def test_the_report_keeps_the_metadata(cli: Any, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(**EXECUTORCH_METADATA))
    report = tmp_path / "r.json"
    run = cli("compile", str(path), "-o", str(tmp_path / "m.vgf"), "--report", str(report))
    assert run.code == 0, run.err
    (shader,) = json.loads(report.read_text())["shaders"]
    assert shader["metadata"] == EXECUTORCH_METADATA
