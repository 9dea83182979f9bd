"""Golden tests of how shader errors read: ``shader_code:LINE:COLUMN: message``, then the source
line and a caret, as a C compiler prints them; ``--json`` carries line, column and excerpt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tosa_factory import T, build, custom

from vgfc.cli import cli
from vgfc.shader.messages import TOKEN_TEXT, excerpt, parse_log

GLSL = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    y[0] = x[0] * 2.0 +;
}
"""
HLSL = """RWStructuredBuffer<float> x : register(u0, space0);
RWStructuredBuffer<float> y : register(u1, space0);
[numthreads(1, 1, 1)]
void main() { y[0] = x[0] * factor; }
"""


def _model(tmp_path: Path, code: str, language: str) -> Path:
    attrs: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": [1, 1, 1],
        "shader_language": language,
        "shader_code": code,
    }
    for i, role in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            f"{role}_vkformat": "VK_FORMAT_R32_SFLOAT",
        }
    path = tmp_path / "m.tosa"
    path.write_bytes(
        build(
            [T("x", (1, 4)), T("y", (1, 4))], [custom(["x"], ["y"], "k", attrs=attrs)], ["x"], ["y"]
        )
    )
    return path


def test_glsl_syntax_error_reads_like_a_compiler(tmp_path: Path) -> None:
    path = _model(tmp_path, GLSL, "GLSL")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: {path}: op #0 CUSTOM 'k' (com.arm.VulkanCustomShader): shader_code:6:24: "
        "GLSL compilation failed: syntax error, unexpected ';'",
        "        y[0] = x[0] * 2.0 +;",
        "    " + " " * 23 + "^",
    ]


def test_hlsl_error_has_the_same_shape(tmp_path: Path) -> None:
    path = _model(tmp_path, HLSL, "HLSL")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1
    first, code, caret = result.stderr.splitlines()
    assert first == (
        f"error: {path}: op #0 CUSTOM 'k' (com.arm.VulkanCustomShader): shader_code:4:29: "
        "HLSL compilation failed: 'factor': unknown variable"
    )
    assert code == "    void main() { y[0] = x[0] * factor; }"
    assert caret == "    " + " " * 28 + "^"


def test_json_carries_line_column_and_excerpt(tmp_path: Path) -> None:
    path = _model(tmp_path, GLSL, "GLSL")
    result = CliRunner().invoke(cli, ["check", str(path), "--json"])
    (d,) = json.loads(result.stdout)["diagnostics"]
    assert d["location"]["key"] == "shader_code"
    assert (d["location"]["line"], d["location"]["column"]) == (6, 24)
    assert d["excerpt"] == ["    y[0] = x[0] * 2.0 +;", " " * 23 + "^"]


def test_a_token_found_twice_on_its_line_gets_no_caret() -> None:
    log = "ERROR: 0:1: 'a' : undeclared identifier\nERROR: 1 compilation errors.\n"
    (m,) = parse_log(log, "a = a + 1;")
    assert (m.line, m.column, m.message) == (1, None, "'a': undeclared identifier")
    assert excerpt(m) == ("a = a + 1;",)


def test_glslang_noise_and_token_names_are_translated() -> None:
    log = (
        "ERROR: 0:2: '' :  syntax error, unexpected RIGHT_BRACE, expecting COMMA or SEMICOLON\n"
        "ERROR: 0:3: '' : compilation terminated \n"
        "ERROR: 2 compilation errors.  No code generated.\n"
    )
    (m,) = parse_log(log, "int x = 1\n}\n")
    assert m.message == "syntax error, unexpected '}'"
    assert (m.line, m.column) == (2, 1)
    assert TOKEN_TEXT["SEMICOLON"] == ";"
