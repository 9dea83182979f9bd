"""Kernel libraries are untrusted input: bounded while they load, and every refusal names the
library file with its line, the entry and the key.

Each case is a small change to the sample library (samples/kernels/example_ops.yaml) that once
crashed, hung or compiled something wrong (issue 22): alias bombs, deep nesting, huge numbers,
long chains of composed ops, paths that leave the library's folder, broken composed ops.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from paths import SAMPLES_DIR

from vgfc.diagnostics import InputError
from vgfc.resolve.library.load import load_library

SAMPLE = SAMPLES_DIR / "kernels"
TEXT = (SAMPLE / "example_ops.yaml").read_text()
KERNEL = """  - domain: com.example
    name: Extra
    inputs: [x]
    outputs: [y]
    kernels:
      - name: k
        shader: SHADER
        resources: {x: {binding: 0}, y: {binding: 1}}
        dispatch: {global: [GLOBAL]}
"""


def library(folder: Path, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    shutil.copy(SAMPLE / "channel_scale.comp", folder)
    path = folder / "lib.yaml"
    path.write_text(text)
    return path


def changed(folder: Path, old: str, new: str) -> Path:
    assert old in TEXT
    return library(folder, TEXT.replace(old, new, 1))


def extra_kernel(folder: Path, shader: str = "{file: channel_scale.comp}", size: str = "1") -> Path:
    return library(folder, TEXT + KERNEL.replace("SHADER", shader).replace("GLOBAL", size))


def refused(path: Path, **how: object) -> str:
    with pytest.raises(InputError) as caught:
        load_library(path, **how)  # type: ignore[arg-type]
    text = caught.value.render()
    assert "\n" not in text and len(text) < 1000
    return text


def test_the_sample_loads(tmp_path: Path) -> None:
    assert len(load_library(library(tmp_path, TEXT)).entries) == 2


# -- YAML bounded while it is parsed ------------------------------------------------------------


def test_an_alias_bomb_is_refused_naming_the_file(tmp_path: Path) -> None:
    bomb = "vgfc_kernels: 1\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" if i else "a0: &a0 [x, x]\n"
        for i in range(12)
    )
    path = library(tmp_path, bomb)
    assert refused(path) == (
        f"{path}: the document expands to more than 200000 values through its aliases "
        "(yaml_nodes_max)"
    )
    assert "yaml_nodes_max" in refused(library(tmp_path, "a: &a [*a]\n"))


def test_deep_nesting_is_refused_at_its_line(tmp_path: Path) -> None:
    path = library(tmp_path, TEXT + "x: " + "[" * 5000 + "]" * 5000 + "\n")
    line = TEXT.count("\n") + 1
    assert refused(path) == (
        f"{path}:{line}: lists and maps nested more than 64 deep (yaml_depth_max)"
    )


def test_a_huge_number_is_refused_before_python_converts_it(tmp_path: Path) -> None:
    path = changed(tmp_path, "x: {binding: 0}", "x: {binding: " + "9" * 5000 + "}")
    assert refused(path).endswith(
        "a number of 5000 characters, more than the 64 one may have (yaml_scalar_length_max)"
    )


def test_a_compose_chain_of_1500_ops_loads_in_order(tmp_path: Path) -> None:
    ops = "\n".join(
        f"        - {{op: ABS, inputs: [{f't{i - 1}' if i else 'x'}], "
        f"outputs: [{f't{i}' if i < 1499 else 'y'}]}}"
        for i in reversed(range(1500))  # written last op first: ordering has work to do
    )
    tensors = ", ".join(f"t{i}: {{same_as: x}}" for i in range(1499))
    entry = (
        "  - domain: com.example\n    name: Chain\n    inputs: [x]\n    outputs: [y]\n"
        f"    compose:\n      tensors: {{{tensors}}}\n      ops:\n{ops}\n"
    )
    chain = load_library(library(tmp_path, TEXT + entry)).entries[("com.example", "Chain")]
    assert chain.compose is not None
    assert [o.outputs[0] for o in chain.compose.ops][:2] == ["t0", "t1"]
    assert chain.compose.ops[-1].outputs == ("y",)


# -- expressions, dispatch sizes and constants ----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "key", "message"),
    [
        (
            "CHANNELS: C",
            'CHANNELS: "round(7, -100000000)"',
            "kernels[0].shader.defines.CHANNELS",
            "round to -100000000 digits: at most 64 either way",
        ),
        (
            "shape: [1, 1, 1, 1], value: 3.0",
            'shape: [1, "10**30", 1, 1], value: 3.0',
            "compose.constants.three.shape[1]",
            "'10**30': the result goes beyond 2**64",
        ),
        (
            "shape: [1, 1, 1, 1], value: 3.0",
            "shape: [1, 4294967295, 1, 1], value: 3.0",
            "compose.constants.three",
            "more than the 1048576 elements a composed op's constant may have",
        ),
        (
            "shift: {dtype: INT8, shape: [1], value: 0}",
            "shift: {dtype: INT8, shape: [1], value: .nan}",
            "compose.constants.shift.value",
            "nan: nan is not a finite number",
        ),
        (
            "shift: {dtype: INT8, shape: [1], value: 0}",
            "shift: {dtype: INT8, shape: [1], value: 300}",
            "compose.constants.shift",
            "300 does not fit in INT8 (-128 to 127)",
        ),
        (
            "shift: {dtype: INT8, shape: [1], value: 0}",
            "shift: {dtype: INT8, shape: [1], value: 0.5}",
            "compose.constants.shift",
            "0.5 is not a whole number, and the constant is INT8",
        ),
        (
            "shift: {dtype: INT8, shape: [1], value: 0}",
            'shift: {dtype: INT8, shape: [1], value: "1e308 * 10"}',
            "compose.constants.shift.value",
            "inf is not a finite number",
        ),
    ],
)
def test_values_out_of_range_are_refused(
    tmp_path: Path, old: str, new: str, key: str, message: str
) -> None:
    path = changed(tmp_path, old, new)
    text = refused(path)
    assert text.startswith(f"{path}:")
    assert f": {key}: " in text and message in text, text


@pytest.mark.parametrize(
    ("size", "message"),
    [
        ('"ceil(1e308)"', "'ceil(1e308)': a number beyond 2**64"),
        ('"2**40"', "gives a dispatch size of 1099511627776: it must be from 1 to 4294967295"),
        ("0", "gives a dispatch size of 0"),
    ],
)
def test_dispatch_sizes_are_range_checked(tmp_path: Path, size: str, message: str) -> None:
    text = refused(extra_kernel(tmp_path, size=size))
    assert "com.example/Extra: kernels[0].dispatch.global[0]: " in text and message in text


# -- composed ops against the TOSA instructions -------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "key", "message"),
    [
        ("{op: ADD, inputs", "{op: x, inputs", "ops[0].op", "'x' is not a TOSA operator"),
        ("{op: ADD, inputs", "{op: ADDD, inputs", "ops[0].op", "(did you mean ADD?)"),
        (
            "{op: ADD, inputs",
            "{op: CONST, inputs",
            "ops[0].op",
            "'CONST' cannot be composed",
        ),
        (
            "inputs: [x, clamped, shift]",
            "inputs: [x, clamped]",
            "ops[2].inputs",
            "MUL takes 3 input(s) (input1, input2, shift), the op gives 2: 'shift' is missing",
        ),
        (
            "nan_mode: PROPAGATE",
            "nan_mode: PROPAGATE, bogus: 1",
            "ops[1].attrs.bogus",
            "CLAMP has no attribute 'bogus' (it takes min_val, max_val, nan_mode)",
        ),
        (
            "nan_mode: PROPAGATE",
            "nan_mode: SOMETIMES",
            "ops[1].attrs.nan_mode",
            "CLAMP nan_mode: SOMETIMES is not one of PROPAGATE, IGNORE",
        ),
        (
            "min_val: 0.0",
            "min_val: [1]",
            "ops[1].attrs.min_val",
            "CLAMP min_val: expects a number",
        ),
        (
            ", nan_mode: PROPAGATE",
            "",
            "ops[1].attrs",
            "CLAMP needs the attribute 'nan_mode'",
        ),
    ],
)
def test_composed_ops_are_held_to_their_instructions(
    tmp_path: Path, old: str, new: str, key: str, message: str
) -> None:
    path = changed(tmp_path, old, new)
    text = refused(path)
    assert text.startswith(f"{path}:") and "com.example/HardSwish: compose." + key in text
    assert message in text, text


def test_a_composed_op_with_too_many_outputs(tmp_path: Path) -> None:
    text = TEXT.replace("gated: {same_as: x}", "gated: {same_as: x}\n        spare: {same_as: x}")
    text = text.replace("outputs: [gated]", "outputs: [gated, spare]")
    message = refused(library(tmp_path, text))
    assert "HardSwish: compose.ops[2].outputs: MUL gives 1 output(s), the op names 2" in message


def test_an_attribute_nested_600_deep_is_refused(tmp_path: Path) -> None:
    path = changed(tmp_path, "min_val: 0.0", "min_val: " + "[" * 600 + "0" + "]" * 600)
    assert "nested more than 64 deep" in refused(path)


# -- a library reads only files in its own folder -----------------------------------------------


def test_shader_files_and_include_folders_stay_in_the_library_folder(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.comp").write_text("SECRET\n")
    cases = [
        ("{file: /etc/passwd, language: GLSL}", "file", "'/etc/passwd' lies outside"),
        ("{file: ../outside/secret.comp}", "file", "'../outside/secret.comp' lies outside"),
        ("{file: channel_scale.comp, include_dirs: [/]}", "include_dirs[0]", "'/' lies outside"),
        ("{file: channel_scale.comp, include_dirs: [..]}", "include_dirs[0]", "'..' lies outside"),
        ('{file: "a\\0b.comp"}', "file", "the file name holds a NUL byte"),
    ]
    for shader, key, message in cases:
        text = refused(extra_kernel(lib, shader))
        assert f"kernels[0].shader.{key}: {message}" in text, text
        assert "SECRET" not in text and "root:" not in text
    os.symlink(outside / "secret.comp", lib / "link.comp")
    assert "'link.comp' lies outside" in refused(extra_kernel(lib, "{file: link.comp}"))
    # A folder the user names with -I is allowed.
    text = TEXT + KERNEL.replace("SHADER", "{file: ../outside/secret.comp, language: GLSL}")
    loaded = load_library(library(lib, text.replace("GLOBAL", "1")), include_dirs=[outside])
    assert ("com.example", "Extra") in loaded.entries


def test_a_shader_file_that_is_not_a_regular_file(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    path = extra_kernel(lib, "{file: bad.comp}")
    os.mkfifo(lib / "bad.comp")
    assert "bad.comp: a FIFO (named pipe), not a regular file" in refused(path)
    (lib / "bad.comp").unlink()
    os.symlink("bad.comp", lib / "bad.comp")
    assert "bad.comp: a symbolic link loop" in refused(path)
    (lib / "bad.comp").unlink()
    with open(lib / "bad.comp", "wb") as f:
        f.truncate(3 << 30)
    assert "bad.comp: 3221225472 bytes, more than the 4194304" in refused(path)
