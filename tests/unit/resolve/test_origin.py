"""What made an op a kernel library bound is data on the op and on every diagnostic raised at it
(:class:`vgfc.diagnostics.Origin`), not text a later stage parses back: the kernel, the entry's
file and line, the shader file and the operand names travel in the Location, which renders the
library's keys from them and carries them into the JSON output."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from kernel_models import one_kernel_library
from tosa_factory import T, build, custom

from vgfc.compiler import Options, compile_model
from vgfc.diagnostics import Location, Origin, ShaderError
from vgfc.resolve.library.load import load_library
from vgfc.resolve.library.records import Library

SHADER = """#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Output { float y[]; };
void main() { uint i = gl_GlobalInvocationID.x; y[i] = BODY; }
"""


def kernel_library(folder: Path, body: str, arg_meta: str = "") -> Path:
    return one_kernel_library(folder, SHADER.replace("BODY", body), extra=arg_meta)


def compose_library(folder: Path) -> Path:
    path = folder / "lib.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            vgfc_kernels: 1
            operators:
              - domain: test
                name: Op
                inputs: [x]
                outputs: [y]
                compose:
                  ops:
                    - {op: ADD, inputs: [x, x], outputs: [y]}
            """
        )
    )
    return path


def model(folder: Path, dtype: str = "FP32") -> Path:
    path = folder / "m.tosa"
    op = custom(["x"], ["y"], "Op", domain="test", attrs={})
    path.write_bytes(build([T("x", (1, 16), dtype), T("y", (1, 16), dtype)], [op], ["x"], ["y"]))
    return path


def entry_line(lib: Library, kernel: bool) -> int:
    entry = lib.entries[("test", "Op")]
    return entry.kernels[0].line if kernel else entry.line


def item_column(lib: Library, line: int) -> int:
    """The column of the list item on ``line`` of the file: its first key, after ``- ``."""
    text = lib.path.read_text().splitlines()[line - 1]
    return len(text) - len(text.lstrip(" -")) + 1


def test_a_library_kernels_shader_error_carries_the_kernel_as_data(tmp_path: Path) -> None:
    lib = load_library(kernel_library(tmp_path, "x[i] +"))
    with pytest.raises(ShaderError) as e:
        compile_model(model(tmp_path), Options(kernels=(str(lib.path),)))
    where = e.value.location
    assert where.origin == Origin(
        "kernel",
        "test/Op",
        lib.shown,
        entry_line(lib, kernel=True),
        "k",
        "k.comp",
        (("input_0", "x"), ("output_0", "y")),
        str(tmp_path / "k.comp"),
        item_column(lib, entry_line(lib, kernel=True)),
    )
    assert where.key == "shader_code"  # the op's own key; the library's is rendered from it
    declared = f"{lib.shown}:{where.origin.line}: test/Op: k"
    assert where.shown_key == f"{declared}: k.comp"
    assert f"op #0 CUSTOM 'Op' (test): {declared}: k.comp:5:" in e.value.render()
    shown = e.value.diagnostic.as_dict()["location"]
    assert isinstance(shown, dict)
    assert shown["key"] == f"{declared}: k.comp"
    assert shown["origin"] == {
        "kind": "kernel",
        "entry": "test/Op",
        "file": lib.shown,
        "line": where.origin.line,
        "kernel": "k",
        "shader": "k.comp",
        "operands": (("input_0", "x"), ("output_0", "y")),
        "shader_file": str(tmp_path / "k.comp"),
        "column": where.origin.column,
    }


def test_a_kernels_keys_are_shown_as_the_librarys() -> None:
    origin = Origin("kernel", "test/Op", "lib.yaml", 9, "k", "k.comp", (("input_0", "x"),))
    at = Location(op_index=0, op="CUSTOM", origin=origin)
    assert Location(key="input_0_binding").merged(at).render() == (
        "op #0 CUSTOM: lib.yaml:9: test/Op: k: resources.x"
    )
    assert Location(key="entry_point").merged(at).render() == (
        "op #0 CUSTOM: lib.yaml:9: test/Op: k: shader.entry_point"
    )
    assert at.render() == "op #0 CUSTOM: lib.yaml:9: test/Op: k"


def test_composed_ops_and_inserted_conversions_carry_their_origin(tmp_path: Path) -> None:
    lib = load_library(compose_library(tmp_path))
    result = compile_model(model(tmp_path), Options(kernels=(str(lib.path),)))
    assert result.graph is not None
    (add,) = [op for op in result.graph.operators if op.op == "ADD"]
    line = entry_line(lib, kernel=False)
    column = item_column(lib, line)
    assert add.origin == Origin("compose", "test/Op", lib.shown, line, column=column)
    declared = f"{lib.shown}:{add.origin.line}: test/Op"
    assert Location(key="shift").merged(add.where("m.tosa")).render() == (
        f"m.tosa: op #0 ADD: {declared}: compose: ADD: shift"
    )
    assert add.where("m.tosa", origin=False).render() == "m.tosa: op #0 ADD"

    folder = tmp_path / "convert"
    folder.mkdir()
    arg_meta = "        arg_meta: {x: [FP32], y: [FP32]}\n"
    lib = load_library(kernel_library(folder, "x[i]", arg_meta))
    result = compile_model(model(folder, "FP16"), Options(kernels=(str(lib.path),)))
    assert result.graph is not None
    casts = [op for op in result.graph.operators if op.op == "CAST"]
    assert casts and all(op.origin is not None for op in casts)
    assert {op.origin.kind for op in casts if op.origin is not None} == {"conversion"}
    # A conversion is the model's op, not the library's: its keys are shown as they are.
    assert casts[0].where("m.tosa").render() == "m.tosa: op #0 CAST"
