"""Kernel libraries (``--kernels lib.yaml``): reading, validating and checking them, and how every
kind of bad library input is reported.

A bad library is an error of the library, not of the model: whatever command reads it (``vgfc
kernels``, ``compile``, ``check``, ``partition``, ``verify``) exits 1 with one message that names
the library file with a line, the entry and the key, shows no traceback and writes nothing.

The libraries under ``tests/data/kernels/bad`` mark each line an error may point at with
``# ERROR``; the tests read the line numbers from there.
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path

import pytest
from paths import DATA
from tosa_factory import T, build, custom

from vgfc.cli.kernels_check import check_library
from vgfc.diagnostics import InputError
from vgfc.dtypes import DType
from vgfc.resolve.library.load import MAX_LIBRARY_BYTES, load_libraries, load_library

KERNELS = DATA / "kernels"
OPS = KERNELS / "ops.yaml"
BAD = KERNELS / "bad"
SHADERS = ("affine.comp", "broken.comp", "channel_add.comp", "image_gain.comp")


# -- helpers --------------------------------------------------------------------------------------


def marked_lines(path: Path, block_values: bool = True) -> set[int]:
    """The 1-based numbers of the lines marked ``# ERROR``. With ``block_values``, a marked key
    whose value is a block below it (``resources:  # ERROR``) also accepts the value's first
    line: that is where the loader's locations put such a key (see
    :func:`test_a_block_key_is_located_on_its_own_line`)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    marked = {i for i, line in enumerate(lines, 1) if "# ERROR" in line}
    if block_values:
        marked |= {i + 1 for i in marked if lines[i - 1].split("#")[0].rstrip().endswith(":")}
    return marked


def write_library(folder: Path, text: str, name: str = "lib.yaml") -> Path:
    """``text`` (dedented) as a library in ``folder``, beside copies of the test shaders."""
    for shader in SHADERS:
        if not (folder / shader).exists():
            shutil.copy(KERNELS / shader, folder / shader)
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_error(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_library(path)
    return caught.value


def error_line(error: InputError, shown: str) -> int:
    """The line number the error's location gives after ``shown:``."""
    where = error.location
    assert where.file == shown and where.file_line is not None, f"{where} is not {shown}:<line>"
    return where.file_line


KERNEL = """
      - name: k
        shader:
          file: affine.comp
          defines: {SCALE: 1.0, BIAS: 0.0, COUNT: "N * H * W * C"}
        resources:
          x: {binding: 0}
          y: {binding: 1}
        dispatch: {global: ["N * H * W * C"]}
"""


def one_entry(body: str = "", kernel: str = KERNEL, head: str = "") -> str:
    """A library with one entry test/Op (x -> y), ``body`` added to the entry."""
    return (
        "vgfc_kernels: 1\n"
        + head
        + "operators:\n"
        + "  - domain: test\n"
        + "    name: Op\n"
        + "    inputs: [x]\n"
        + "    outputs: [y]\n"
        + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
        + ("\n" if body.strip() else "")
        + ("    kernels:" + kernel if kernel else "")
    )


# -- a good library -------------------------------------------------------------------------------


def test_the_test_library_loads_into_typed_entries() -> None:
    library = load_library(OPS)
    assert library.name == "test_ops"
    assert library.shown == str(OPS)
    text = OPS.read_text().splitlines()
    for (domain, name), entry in library.entries.items():
        assert entry.label == f"{domain}/{name}"
        # The entry's line is the line of its first key (the "- domain:" line).
        assert text[entry.line - 1].strip() == f"- domain: {domain}"
        assert text[entry.line].strip() == f"name: {name}"
    affine = library.entries[("test", "Affine")]
    assert (affine.inputs, affine.outputs, affine.layout) == (("x",), ("y",), "NHWC")
    assert affine.params.encoding == "json"
    assert affine.params.names == ("scale", "bias")
    kernel = affine.kernels[0]
    assert kernel.name == "affine_f32"
    assert kernel.shader.path == KERNELS / "affine.comp"
    assert kernel.shader.language == "GLSL"
    assert [n for n, _ in kernel.shader.defines] == ["SCALE", "BIAS", "COUNT"]
    assert kernel.resources["y"].binding == 1
    assert kernel.resources["x"].descriptor == "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
    assert kernel.arg_meta["x"].dtypes == (DType.FP32,)
    assert kernel.arg_meta["x"].layouts is None
    assert library.entries[("test", "ChannelAdd")].layout == "NCHW"
    assert library.entries[("test", "ChannelAdd")].kernels[0].arg_meta["x"].layouts == ("NHWC",)
    image = library.entries[("test", "ImageGain")].kernels[0]
    assert image.resources["x"].descriptor == "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE"
    select = library.entries[("test", "Select")]
    assert [k.name for k in select.kernels] == [
        "k_int32",
        "k_f16_nchw",
        "k_f32_nhwc",
        "k_float_nchw",
    ]
    assert select.kernels[3].arg_meta["x"].alias == "F"
    assert select.kernels[3].arg_meta["x"].dtypes == (DType.FP32, DType.FP16)


def test_composed_ops_are_put_in_dependency_order() -> None:
    """HardSwish lists its ops last-first in the file; the entry holds them producers first."""
    entry = load_library(OPS).entries[("test", "HardSwish")]
    assert entry.compose is not None
    assert [(o.op, o.outputs) for o in entry.compose.ops] == [
        ("ADD", ("shifted",)),
        ("CLAMP", ("clamped",)),
        ("MUL", ("gated",)),
        ("MUL", ("y",)),
    ]
    assert set(entry.compose.constants) == {"three", "sixth", "shift"}
    assert entry.compose.ops[1].attrs["nan_mode"] == "PROPAGATE"


def test_load_libraries_takes_files_in_order(tmp_path: Path) -> None:
    other = write_library(tmp_path, one_entry(), "other.yaml")
    first, second = load_libraries([OPS, str(other)])
    assert first.path == OPS and second.path == other.resolve()
    assert second.find("test", "Op") is not None
    assert first.find("test", "Op") is None


def test_loading_compiles_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selective build: reading a library never touches a shader compiler."""
    from vgfc.shader import glslang

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a shader was compiled while loading a library")

    monkeypatch.setattr(glslang, "compile_shader", refuse)
    if hasattr(glslang, "compile_recorded"):
        monkeypatch.setattr(glslang, "compile_recorded", refuse)
    load_library(KERNELS / "with_broken.yaml")
    load_library(BAD / "broken_shader.yaml")


# -- bad input, found while loading ---------------------------------------------------------------

# (case id, library text with the offending line marked "# ERROR", key, message)
LOAD_ERRORS = [
    (
        "version",
        "vgfc_kernels: 2  # ERROR\noperators: []\n",
        "vgfc_kernels",
        "1 was expected",
    ),
    ("no operators", "vgfc_kernels: 1  # ERROR\n", "(top level)", "'operators' is a required"),
    (
        "unknown top-level key",
        "vgfc_kernels: 1\noperators: []\noperator: []  # ERROR\n",
        "operator",
        "unknown key 'operator' (did you mean operators?)",
    ),
    (
        "both kernels and compose",
        one_entry(
            """
            compose:
              ops: [{op: ABS, inputs: [x], outputs: [y]}]
            """
        ).replace("  - domain: test", "  - domain: test  # ERROR"),
        "test/Op",
        "needs exactly one of kernels or compose",
    ),
    (
        "neither kernels nor compose",
        one_entry(kernel="").replace("  - domain: test", "  - domain: test  # ERROR"),
        "test/Op",
        "needs exactly one of kernels or compose",
    ),
    (
        "binding not an integer",
        one_entry(kernel=KERNEL.replace("{binding: 1}", "{binding: one}  # ERROR")),
        "test/Op: kernels[0].resources.y.binding",
        "'one' is not of type 'integer'",
    ),
    (
        "unknown dtype in a type alias",
        one_entry(head="type_alias:\n  F: [FP64]  # ERROR\n"),
        "type_alias.F[0]",
        "FP64",
    ),
    (
        "unknown parameter type",
        one_entry(
            """
            params:
              encoding: json
              fields:
                - {name: scale, type: float}  # ERROR
            """
        ),
        "test/Op: params.fields[0].type",
        "float",
    ),
    (
        "unknown encoding",
        one_entry("params: {encoding: protobuf}  # ERROR"),
        "test/Op: params.encoding",
        "protobuf",
    ),
    (
        "operand name that is no identifier",
        one_entry().replace("inputs: [x]", "inputs: [x, 2nd]  # ERROR"),
        "test/Op: inputs[1]",
        "2nd",
    ),
    (
        "operand names twice",
        one_entry().replace("inputs: [x]", "inputs: [x, x]  # ERROR"),
        "test/Op: inputs",
        "distinct",
    ),
    (
        "unknown descriptor",
        one_entry(
            kernel=KERNEL.replace(
                "{binding: 1}", "{binding: 1, descriptor: storage_texture}  # ERROR"
            )
        ),
        "test/Op: kernels[0].resources.y.descriptor",
        "unknown descriptor 'storage_texture'",
    ),
    (
        "operand without a resource",
        one_entry(kernel=KERNEL.replace("          y: {binding: 1}\n", "")).replace(
            "        resources:", "        resources:  # ERROR"
        ),
        "test/Op: kernels[0].resources",
        "no resource for operand 'y'",
    ),
    (
        "resource for no operand",
        one_entry(
            kernel=KERNEL.replace(
                "y: {binding: 1}", "y: {binding: 1}\n          z: {binding: 2}  # ERROR"
            )
        ),
        "test/Op: kernels[0].resources.z",
        "'z' is no operand",
    ),
    (
        "two resources at one binding",
        one_entry(kernel=KERNEL.replace("{binding: 1}", "{binding: 0}  # ERROR")),
        "test/Op: kernels[0].resources.y",
        "share set 0 binding 0",
    ),
    (
        "arg_meta: unknown alias",
        one_entry(
            kernel=KERNEL.replace("- name: k", "- name: k\n        arg_meta: {x: [Float]}  # ERROR")
        ),
        "test/Op: kernels[0].arg_meta.x[0]",
        "'Float' is neither a type alias nor a dtype",
    ),
    (
        "arg_meta: unknown layout",
        one_entry(
            kernel=KERNEL.replace(
                "- name: k", "- name: k\n        arg_meta: {x: [FP32, NWHC]}  # ERROR"
            )
        ),
        "test/Op: kernels[0].arg_meta.x[1]",
        "'NWHC' is neither a layout alias nor NHWC/NCHW",
    ),
    (
        "arg_meta: no operand",
        one_entry(
            kernel=KERNEL.replace("- name: k", "- name: k\n        arg_meta: {z: [FP32]}  # ERROR")
        ),
        "test/Op: kernels[0].arg_meta.z",
        "'z' is no operand",
    ),
    (
        "define over an unknown name",
        one_entry(kernel=KERNEL.replace('COUNT: "N * H * W * C"}', 'COUNT: "N * depth"}  # ERROR')),
        "test/Op: kernels[0].shader.defines.COUNT",
        "reads 'depth', which is no parameter, operand or dimension",
    ),
    (
        "define that is no identifier",
        one_entry(
            kernel=KERNEL.replace("{SCALE: 1.0,", "{1SCALE: 1.0,").replace(
                'COUNT: "N * H * W * C"}', 'COUNT: "N * H * W * C"}  # ERROR'
            )
        ),
        "test/Op: kernels[0].shader.defines",
        "1SCALE",
    ),
    (
        "dispatch over an unknown dim",
        one_entry(
            kernel=KERNEL.replace(
                'global: ["N * H * W * C"]}', 'global: ["N * H * W * D"]}  # ERROR'
            )
        ),
        "test/Op: kernels[0].dispatch.global[0]",
        "reads 'D', which is no parameter, operand or dimension here (known: C, H, N, W, x, y)",
    ),
    (
        "dispatch with both global and workgroups",
        one_entry(
            kernel=KERNEL.replace(
                'dispatch: {global: ["N * H * W * C"]}',
                "dispatch: {global: [1], workgroups: [1]}  # ERROR",
            )
        ),
        "test/Op: kernels[0].dispatch",
        "needs exactly one of global or workgroups",
    ),
    (
        "expression that does not parse",
        one_entry(
            kernel=KERNEL.replace('global: ["N * H * W * C"]}', 'global: ["N * "]}  # ERROR')
        ),
        "test/Op: kernels[0].dispatch.global[0]",
        "is not an expression",
    ),
    (
        "expression that calls a function",
        one_entry(
            kernel=KERNEL.replace(
                'global: ["N * H * W * C"]}', "global: [\"__import__('os')\"]}  # ERROR"
            )
        ),
        "test/Op: kernels[0].dispatch.global[0]",
        "calls something other than",
    ),
    (
        "expression that reads an attribute",
        one_entry(
            kernel=KERNEL.replace('global: ["N * H * W * C"]}', 'global: ["x.__class__"]}  # ERROR')
        ),
        "test/Op: kernels[0].dispatch.global[0]",
        "Attribute is not allowed",
    ),
    (
        "missing shader file",
        one_entry(kernel=KERNEL.replace("file: affine.comp", "file: nowhere.comp  # ERROR")),
        "test/Op: kernels[0].shader.file",
        "no such file: nowhere.comp (relative to the library)",
    ),
    (
        "shader of an unknown language",
        one_entry(kernel=KERNEL.replace("file: affine.comp", "file: lib.yaml  # ERROR")),
        "test/Op: kernels[0].shader.file",
        "cannot tell the language",
    ),
    (
        "missing include folder",
        one_entry(
            kernel=KERNEL.replace(
                "file: affine.comp", "file: affine.comp\n          include_dirs: [nowhere]  # ERROR"
            )
        ),
        "test/Op: kernels[0].shader.include_dirs[0]",
        "no such folder: nowhere",
    ),
    (
        "SPIR-V with defines",
        one_entry(
            kernel=KERNEL.replace(
                "file: affine.comp", "file: affine.comp\n          language: SPIR-V"
            )
        ).replace('COUNT: "N * H * W * C"}', 'COUNT: "N * H * W * C"}  # ERROR'),
        "test/Op: kernels[0].shader.defines",
        "a SPIR-V shader takes no defines",
    ),
    (
        "infer for no output",
        one_entry("infer:  # ERROR\n  z: {same_as: x}"),
        "test/Op: infer",
        "'z' is not an output",
    ),
    (
        "infer same_as no operand",
        one_entry("infer:\n  y: {same_as: z}  # ERROR"),
        "test/Op: infer.y",
        "same_as names 'z', which is no operand",
    ),
    (
        "infer with an unknown dtype",
        one_entry("infer:\n  y: {dtype: FP64, shape: x}  # ERROR"),
        "test/Op: infer.y.dtype",
        "dtype 'FP64' is neither a TOSA type nor an operand",
    ),
    (
        "infer shape over an unknown name",
        one_entry('infer:\n  y: {dtype: x, shape: ["x[0]", "k"]}  # ERROR'),
        "test/Op: infer.y.shape[1]",
        "reads 'k'",
    ),
    (
        "parameter names twice",
        one_entry(
            """
            params:
              encoding: json
              fields:  # ERROR
                - {name: a, type: f32}
                - {name: a, type: i32}
            """
        ),
        "test/Op: params.fields",
        "parameter names must be distinct",
    ),
    (
        "parameter named like an operand",
        one_entry(
            """
            params:  # ERROR
              encoding: json
              fields:
                - {name: x, type: f32}
            """
        ),
        "test/Op: params",
        "parameter 'x' has the name of an operand or a dimension",
    ),
    (
        "parameter named like a dimension",
        one_entry(
            """
            params:  # ERROR
              encoding: json
              fields:
                - {name: C, type: i32}
            """
        ),
        "test/Op: params",
        "parameter 'C' has the name of an operand or a dimension",
    ),
    (
        "string in a struct",
        one_entry(
            """
            params:
              encoding: struct
              fields:
                - {name: s, type: str}  # ERROR
            """
        ),
        "test/Op: params.fields[0].type",
        "a struct holds no strings",
    ),
    (
        "offset outside a struct",
        one_entry(
            """
            params:
              encoding: json
              fields:
                - {name: s, type: i32, offset: 4}  # ERROR
            """
        ),
        "test/Op: params.fields[0].offset",
        "offset is for struct parameters",
    ),
    (
        "enum code that is no integer",
        one_entry(
            """
            params:
              encoding: json
              fields:
                - {name: padding, type: i32, values: {SAME: VALID}}  # ERROR
            """
        ),
        "test/Op: params.fields[0].values",
        "enum code 'SAME' is not an integer",
    ),
]

COMPOSE_HEAD = """
vgfc_kernels: 1
operators:
  - domain: test
    name: Op
    inputs: [x]
    outputs: [y]
    compose:
"""

COMPOSE_ERRORS = [
    (
        "op reads an unknown name",
        """
      ops:
        - {op: ADD, inputs: [x, z], outputs: [y]}  # ERROR
    """,
        "test/Op: compose.ops[0].inputs",
        "op 0 (ADD) reads 'z', which no input, constant or op gives",
    ),
    (
        "op writes an input",
        """
      ops:
        - {op: ABS, inputs: [x], outputs: [x]}  # ERROR
        - {op: ABS, inputs: [x], outputs: [y]}
    """,
        "test/Op: compose.ops[0].outputs",
        "'x' is an input or constant",
    ),
    (
        "op writes an undeclared intermediate",
        """
      ops:
        - {op: ABS, inputs: [x], outputs: [t]}  # ERROR
        - {op: ABS, inputs: [t], outputs: [y]}
    """,
        "test/Op: compose.ops[0].outputs",
        "'t' is neither an output of the operator nor declared under tensors",
    ),
    (
        "two ops write one tensor",
        """
      ops:
        - {op: ABS, inputs: [x], outputs: [y]}
        - {op: NEGATE, inputs: [x], outputs: [y]}  # ERROR
    """,
        "test/Op: compose.ops[1].outputs",
        "'y' is written by ops 0 and 1",
    ),
    (
        "no op writes the output",
        """
      tensors: {t: {same_as: x}}
      ops:  # ERROR
        - {op: ABS, inputs: [x], outputs: [t]}
    """,
        "test/Op: compose.ops",
        "no op writes the output 'y'",
    ),
    (
        "constant shadows an operand",
        """
      constants:
        x: {dtype: FP32, value: 1.0}  # ERROR
      ops:
        - {op: ABS, inputs: [x], outputs: [y]}
    """,
        "test/Op: compose.constants.x",
        "constant 'x' shadows an operand or parameter",
    ),
    (
        "constant of an unknown dtype",
        """
      constants:
        k:
          dtype: FP64  # ERROR
          value: 1.0
      ops:
        - {op: ADD, inputs: [x, k], outputs: [y]}
    """,
        "test/Op: compose.constants.k.dtype",
        "unknown dtype 'FP64'",
    ),
    (
        "a cycle of two",
        """
      tensors: {a: {same_as: x}, b: {same_as: x}}
      ops:
        - {op: ADD, inputs: [x, b], outputs: [a]}  # ERROR
        - {op: ABS, inputs: [a], outputs: [b]}  # ERROR
        - {op: ABS, inputs: [b], outputs: [y]}
    """,
        "test/Op: compose.ops[",
        "the composed ops form a cycle",
    ),
    (
        "an op that reads its own result",
        """
      tensors: {a: {same_as: x}}
      ops:
        - {op: ADD, inputs: [x, a], outputs: [a]}  # ERROR
        - {op: ABS, inputs: [a], outputs: [y]}
    """,
        "test/Op: compose.ops[0]",
        "the composed ops form a cycle: op 0 (ADD) -> op 0 (ADD)",
    ),
]


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [pytest.param(t, k, m, id=i) for i, t, k, m in LOAD_ERRORS]
    + [pytest.param(COMPOSE_HEAD + t.lstrip("\n"), k, m, id=i) for i, t, k, m in COMPOSE_ERRORS],
)
def test_bad_library_names_file_line_entry_and_key(
    tmp_path: Path, text: str, key: str, message: str
) -> None:
    path = write_library(tmp_path, text)
    error = load_error(path)
    assert message in error.message
    assert error.location.key is not None and error.location.key.startswith(key), error
    lines = marked_lines(path)
    assert lines, "the case marks no line"
    assert error_line(error, str(path)) in lines, error
    # Nothing about a model: the library is what is wrong.
    assert error.location.op_index is None


def test_an_unknown_key_is_named(tmp_path: Path) -> None:
    path = write_library(tmp_path, one_entry(kernel=KERNEL.replace("defines:", "define:")))
    error = load_error(path)
    assert error.message.startswith("unknown key 'define' (did you mean defines?)"), error
    assert error.location.key == "test/Op: kernels[0].shader.define"


# (case id, the entry's resources and dispatch lines with the misspelt key, the key, its message)
MISSPELT = [
    (
        "misspelt required key",
        "resources: {x: {bindng: 0}, y: {binding: 1}}",
        "bindng",
        "kernels[0].resources.x.bindng",
        "unknown key 'bindng' (did you mean binding?)",
    ),
    (
        "misspelt key of a oneOf",
        "dispatch: {globl: [1]}",
        "globl",
        "kernels[0].dispatch.globl",
        "unknown key 'globl' (did you mean global?)",
    ),
    (
        "unknown key beside a known one",
        "resources: {x: {binding: 0, descriptr: storage_buffer}, y: {binding: 1}}",
        "descriptr",
        "kernels[0].resources.x.descriptr",
        "unknown key 'descriptr' (did you mean descriptor?)",
    ),
]


@pytest.mark.parametrize(
    ("line", "word", "key", "message"), [pytest.param(*c[1:], id=c[0]) for c in MISSPELT]
)
def test_a_misspelt_key_is_the_first_line_at_its_own_line_and_column(
    tmp_path: Path, line: str, word: str, key: str, message: str
) -> None:
    """A misspelt key is named with did-you-mean, not reported through what its misspelling
    leaves missing (``'binding' is a required property``), and is located at the key itself."""
    kernel = (
        "\n      - name: k\n"
        "        shader: {file: affine.comp, defines: {SCALE: 1.0, BIAS: 0.0, COUNT: 1}}\n"
        "        resources: {x: {binding: 0}, y: {binding: 1}}\n"
        "        dispatch: {global: [1]}\n"
    )
    field = line.split(":")[0]
    kernel = re.sub(rf"        {field}: .*\n", f"        {line}\n", kernel)
    path = write_library(tmp_path, one_entry(kernel=kernel))
    error = load_error(path)
    assert str(error).splitlines()[0].endswith(message), error
    assert error.location.key == f"test/Op: {key}"
    text = path.read_text().splitlines()
    where = error.location
    assert where.file_line is not None and where.file_column is not None
    assert text[where.file_line - 1][where.file_column - 1 :].startswith(word), where


def test_the_first_unknown_key_in_the_document_is_named(tmp_path: Path) -> None:
    kernel = KERNEL.replace("{binding: 1}", "{binding: 1, zzz: 3}").replace(
        "{binding: 0}", "{bindng: 0}"
    )
    error = load_error(write_library(tmp_path, one_entry(kernel=kernel)))
    assert error.message.startswith("unknown key 'bindng'"), error


def test_a_block_key_is_located_on_its_own_line(tmp_path: Path) -> None:
    text = one_entry(kernel=KERNEL.replace("          y: {binding: 1}\n", "")).replace(
        "        resources:", "        resources:  # ERROR"
    )
    path = write_library(tmp_path, text)
    error = load_error(path)
    assert {error_line(error, str(path))} == marked_lines(path, block_values=False)


def test_a_duplicate_entry_names_both_lines(tmp_path: Path) -> None:
    text = one_entry()
    entry = text[text.index("  - domain") :]
    path = write_library(tmp_path, text + entry)
    error = load_error(path)
    assert "test/Op is defined twice (first at line 3)" in error.message
    assert error_line(error, str(path)) == 3 + entry.count("\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"# nothing but a comment\n", "empty"),
        (b"- 1\n- 2\n", "a kernel library is a mapping"),
        (b"vgfc_kernels: 1\noperators: [\n", "not valid YAML"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"!!python/object/apply:os.system ['true']\n", "not valid YAML"),
    ],
    ids=["empty", "comment only", "a list", "syntax", "not utf-8", "python tag"],
)
def test_unreadable_libraries(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "lib.yaml"
    path.write_bytes(content)
    error = load_error(path)
    assert message in error.message
    assert (error.location.file or "").startswith(str(path))


def test_a_yaml_syntax_error_has_its_line(tmp_path: Path) -> None:
    path = tmp_path / "lib.yaml"
    path.write_text("vgfc_kernels: 1\noperators:\n  - domain: test\n    name: [unclosed\n")
    error = load_error(path)
    assert error_line(error, str(path)) in (4, 5)


def test_an_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["vgfc_kernels: 1", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    lines.append("operators: []")
    path = tmp_path / "lib.yaml"
    path.write_text("\n".join(lines) + "\n")
    error = load_error(path)
    assert "aliases" in error.message


def test_a_huge_library_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "lib.yaml"
    path.write_bytes(b"#" * (MAX_LIBRARY_BYTES + 1))
    error = load_error(path)
    assert "more than the" in error.message


def test_a_missing_library(tmp_path: Path) -> None:
    error = load_error(tmp_path / "nowhere.yaml")
    assert "cannot read the kernel library" in error.message
    assert error.location.file == str(tmp_path / "nowhere.yaml")


# -- vgfc kernels: what needs the shaders ---------------------------------------------------------


def test_vgfc_kernels_accepts_the_test_library(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the whole names (a narrow terminal shortens them)
    run = cli("kernels", str(OPS))
    assert run.code == 0, run.err
    library = load_library(OPS)
    for entry in library.entries.values():
        assert entry.label in run.out
    count = sum(len(e.kernels) or 1 for e in library.entries.values())
    assert f"{count} kernel(s), 0 error(s)" in run.out
    assert run.err == ""


def test_vgfc_kernels_json(cli) -> None:
    run = cli("kernels", str(KERNELS / "with_broken.yaml"), "--json")
    assert run.code == 1
    doc = json.loads(run.out)
    assert doc["ok"] is False and doc["errors"] == 1
    by_entry = {k["entry"]: k for k in doc["kernels"]}
    assert by_entry["test/Scale"]["status"] == "ok"
    assert by_entry["test/Scale"]["local_size"] == [64, 1, 1]
    broken = by_entry["test/Broken"]
    assert broken["status"] == "error"
    assert "not_declared_anywhere" in broken["error"]["message"]
    assert broken["error"]["location"]["file"] == str(KERNELS / "with_broken.yaml")
    assert broken["error"]["location"]["file_line"] > 0


def _checks(tmp_path: Path, kernel: str, shader: str | None = None) -> list[str]:
    """The error texts ``check_library`` gives one kernel (with ``shader`` as custom.comp)."""
    if shader is not None:
        (tmp_path / "custom.comp").write_text(textwrap.dedent(shader))
    library = load_library(write_library(tmp_path, one_entry(kernel=kernel)))
    return [v.error.render() for v in check_library(library) if v.error is not None]


BUFFERS = """
    #version 450
    layout(local_size_x = 8) in;
    layout(set = 0, binding = 0) readonly buffer In { float x[]; };
    layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
    void main() { y[gl_GlobalInvocationID.x] = x[gl_GlobalInvocationID.x]; }
"""


@pytest.mark.parametrize(
    ("kernel", "shader", "message"),
    [
        (
            KERNEL.replace("{binding: 1}", "{binding: 2}"),
            None,
            "resources.y: declared at set 0 binding 2, but affine.comp has nothing there",
        ),
        (
            KERNEL.replace("{binding: 1}", "{binding: 1, set: 1}"),
            None,
            "resources.y: declared at set 1 binding 1, but affine.comp has nothing there",
        ),
        (
            KERNEL.replace("{binding: 1}", "{binding: 1, descriptor: storage_image}"),
            None,
            "resources.y: declared as VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, but affine.comp has a "
            "storage_buffer",
        ),
        (
            KERNEL.replace("file: affine.comp", "file: custom.comp"),
            BUFFERS.replace("writeonly buffer Out", "readonly buffer Out").replace(
                "y[gl_GlobalInvocationID.x] = x[gl_GlobalInvocationID.x];", "float t = y[0] + x[0];"
            ),
            "resources.y: an output, but custom.comp declares set 0 binding 1 read-only",
        ),
        (
            KERNEL.replace("file: affine.comp", "file: custom.comp"),
            BUFFERS.replace("readonly buffer In", "buffer In").replace(
                "void main() {", "void main() { x[0] = 1.0;"
            ),
            "resources.x: an input, but custom.comp writes set 0 binding 0",
        ),
        (
            KERNEL.replace("file: affine.comp", "file: custom.comp"),
            BUFFERS.replace(
                "void main() {",
                "layout(set = 0, binding = 7) readonly buffer Extra { float e[]; };\n"
                "void main() { float k = e[0];",
            ),
            "custom.comp uses set 0 binding 7, which no resource declares",
        ),
        (
            KERNEL.replace("file: affine.comp", "file: custom.comp"),
            BUFFERS.replace(
                "void main() {",
                "layout(push_constant) uniform P { float k; } p;\nvoid main() { float k = p.k;",
            ),
            "custom.comp has a push-constant block",
        ),
        (
            KERNEL.replace("file: affine.comp", "file: broken.comp"),
            None,
            "'not_declared_anywhere': undeclared identifier",
        ),
    ],
    ids=[
        "binding",
        "set",
        "descriptor kind",
        "read-only output",
        "written input",
        "undeclared binding",
        "push constants",
        "does not compile",
    ],
)
def test_check_holds_resources_against_the_shader(
    tmp_path: Path, kernel: str, shader: str | None, message: str
) -> None:
    errors = _checks(tmp_path, kernel, shader)
    assert len(errors) == 1, errors
    assert message in errors[0]
    assert f"{tmp_path / 'lib.yaml'}:" in errors[0]
    assert "test/Op: k" in errors[0]


def test_check_accepts_a_matching_kernel(tmp_path: Path) -> None:
    assert _checks(tmp_path, KERNEL) == []


# -- bad library input through every command ------------------------------------------------------

# (library under tests/data/kernels/bad, what the message must contain besides file:line and entry)
BAD_LIBRARIES = {
    "schema": ("kernels[0].resources.y.binding", "'one' is not of type 'integer'"),
    "unknown_key": ("kernels[0].shader.define", "define"),
    "missing_shader": ("kernels[0].shader.file", "no such file: no_such_shader.comp"),
    "unknown_dim": ("kernels[0].dispatch.global[0]", "reads 'D'"),
    "cycle": ("compose.ops[0]", "the composed ops form a cycle"),
    "broken_shader": ("broken", "'not_declared_anywhere': undeclared identifier"),
    "resources_mismatch": ("resources.y", "declared at set 0 binding 2"),
}
# Found when the library is read: every command that takes --kernels fails the same way.
LOAD_TIME = ("schema", "unknown_key", "missing_shader", "unknown_dim", "cycle")
# Found only when the kernel's shader is compiled: `vgfc kernels`, and a model that uses it.
SHADER_TIME = ("broken_shader", "resources_mismatch")


@pytest.fixture
def broken_model(tmp_path: Path) -> Path:
    """x -> test/Broken -> y, the op every bad library defines."""
    path = tmp_path / "model.tosa"
    path.write_bytes(
        build(
            [T("x", (1, 2, 3, 4)), T("y", (1, 2, 3, 4))],
            [custom(["x"], ["y"], name="Broken", domain="test")],
            ["x"],
            ["y"],
        )
    )
    return path


def _assert_one_library_error(err: str, out: str, name: str) -> None:
    library = BAD / f"{name}.yaml"
    key, message = BAD_LIBRARIES[name]
    lines = err.splitlines()
    errors = [i for i, line in enumerate(lines) if ": error: " in line]
    assert len(errors) == 1, err
    # The error's line, and the note naming the library where the place is its shader file.
    text = " ".join(
        [lines[errors[0]], *(line for line in lines[errors[0] + 1 :] if line.startswith("note:"))]
    )
    assert "Traceback" not in err + out
    match = re.search(re.escape(str(library)) + r":(\d+)", text)
    assert match, text
    assert int(match.group(1)) in marked_lines(library), text
    assert "test/Broken" in text
    assert key in text
    assert message in text


def _params(names: tuple[str, ...], xfail: dict[str, pytest.MarkDecorator]) -> list[object]:
    return [pytest.param(n, id=n, marks=[xfail[n]] if n in xfail else []) for n in names]


@pytest.mark.parametrize("name", _params(LOAD_TIME + SHADER_TIME, {}))
def test_vgfc_kernels_reports_a_bad_library(cli, name: str) -> None:
    run = cli("kernels", str(BAD / f"{name}.yaml"))
    assert run.code == 1
    _assert_one_library_error(run.err, run.out, name)


@pytest.mark.parametrize("command", ["compile", "check", "partition", "verify"])
@pytest.mark.parametrize("name", _params(LOAD_TIME, {}))
def test_model_commands_report_a_bad_library(
    cli, broken_model: Path, tmp_path: Path, command: str, name: str
) -> None:
    out = tmp_path / "out.vgf"
    args = [command, str(broken_model), "--kernels", str(BAD / f"{name}.yaml")]
    if command == "compile":
        args += ["-o", str(out), "--report", str(tmp_path / "report.json")]
    run = cli(*args)
    assert run.code == 1
    _assert_one_library_error(run.err, run.out, name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.tosa"]


@pytest.mark.parametrize("command", ["compile", "check"])
@pytest.mark.parametrize("name", _params(SHADER_TIME, {}))
def test_a_model_using_a_bad_kernel_names_the_library(
    cli, broken_model: Path, tmp_path: Path, command: str, name: str
) -> None:
    out = tmp_path / "out.vgf"
    args = [command, str(broken_model), "--kernels", str(BAD / f"{name}.yaml")]
    if command == "compile":
        args += ["-o", str(out)]
    run = cli(*args)
    assert run.code == 1
    _assert_one_library_error(run.err, run.out, name)
    assert not out.exists()


@pytest.mark.parametrize("command", ["compile", "check"])
@pytest.mark.parametrize("name", SHADER_TIME)
def test_a_model_using_a_bad_kernel_fails_cleanly(
    cli, broken_model: Path, tmp_path: Path, command: str, name: str
) -> None:
    """What already holds for shader-time errors: exit 1, one message, nothing written."""
    out = tmp_path / "out.vgf"
    args = [command, str(broken_model), "--kernels", str(BAD / f"{name}.yaml")]
    if command == "compile":
        args += ["-o", str(out)]
    run = cli(*args)
    assert run.code == 1
    errors = [line for line in run.err.splitlines() if ": error: " in line]
    assert len(errors) == 1, run.err
    assert BAD_LIBRARIES[name][1] in errors[0] or "binding 2" in errors[0]
    assert "Traceback" not in run.err + run.out
    assert not out.exists()


def test_an_unknown_op_names_the_op_and_suggests_an_entry(cli, tmp_path: Path) -> None:
    model = tmp_path / "model.tosa"
    model.write_bytes(
        build(
            [T("x", (1, 2, 3, 4)), T("y", (1, 2, 3, 4))],
            [custom(["x"], ["y"], name="Afine", domain="test", attrs={"scale": 1.0})],
            ["x"],
            ["y"],
        )
    )
    out = tmp_path / "model.vgf"
    run = cli("compile", str(model), "--kernels", str(OPS), "-o", str(out))
    assert run.code == 1
    errors = [line for line in run.err.splitlines() if ": error: " in line]
    assert len(errors) == 1, run.err
    assert "op #0 CUSTOM 'Afine' (test)" in errors[0]
    assert "no kernel library entry for test/Afine" in errors[0]
    assert f"searched {OPS}" in errors[0]
    assert "did you mean test/Affine?" in errors[0]
    assert "Traceback" not in run.err
    assert not out.exists()


def test_a_custom_op_without_libraries_points_at_kernels(cli, tmp_path: Path) -> None:
    model = tmp_path / "model.tosa"
    model.write_bytes(
        build(
            [T("x", (1, 4)), T("y", (1, 4))],
            [custom(["x"], ["y"], name="Anything", domain="com.example")],
            ["x"],
            ["y"],
        )
    )
    run = cli("compile", str(model))
    assert run.code == 1
    assert "no kernel for custom operator com.example/Anything" in run.err
    assert "--kernels" in run.err
