"""``shader_language`` in any letter case (as the ``*_type`` values), and a C = 4 image declared
with a one-component format is told the format to use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tosa_factory import T, build, custom

from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError

CODE = """#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() { uint i = gl_GlobalInvocationID.x; y[i] = x[i]; }
"""


def model(tmp_path: Path, language: str) -> Path:
    attrs: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": [1, 1, 1],
        "shader_language": language,
        "shader_code": CODE,
    }
    for i, role in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            f"{role}_vkformat": "VK_FORMAT_R32_SFLOAT",
            f"{role}_type": "buffer",
        }
    path = tmp_path / "m.tosa"
    path.write_bytes(
        build([T("x", (1, 16)), T("y", (1, 16))], [custom(["x"], ["y"], attrs=attrs)], ["x"], ["y"])
    )
    return path


@pytest.mark.parametrize("language", ["GLSL", "glsl", "Glsl"])
def test_language_in_any_case(tmp_path: Path, language: str) -> None:
    result = compile_model(model(tmp_path, language))
    assert result.graph is not None
    (op,) = [o for o in result.graph.operators if o.shader is not None]
    assert op.shader is not None and op.shader.language == "GLSL"


@pytest.mark.parametrize("language", ["SPIRV", "glsl4", "C"])
def test_unknown_languages_stay_errors(tmp_path: Path, language: str) -> None:
    with pytest.raises(VgfcError, match="shader_language: unknown language"):
        compile_model(model(tmp_path, language))
