"""Golden tests of the messages that stop silent wrong numbers: each case builds its inputs in a
fresh folder, runs one ``vgfc`` command there (paths relative, so the text is the same on every
machine) and compares the exit code and stderr with ``tests/golden/diagnostics/<case>.txt``.

``VGFC_UPDATE_GOLDENS=1 pytest tests/golden/test_wrong_numbers_goldens.py`` rewrites the files;
review the diff before committing it.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import GOLDEN
from tosa_factory import T, build, custom

from vgfc.record import replace

GOLDENS = GOLDEN / "diagnostics"
STORAGE = "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
SAMPLER = {
    "min_filter": "VK_FILTER_NEAREST",
    "mag_filter": "VK_FILTER_NEAREST",
    "address_mode_u": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
    "address_mode_v": "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
    "border_color": "VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK",
}


def glsl(inp: str, out: str, body: str = "y[i] = x[i];", local: int = 1) -> str:
    return textwrap.dedent(
        f"""\
        #version 450
        #extension GL_EXT_shader_16bit_storage : require
        #extension GL_EXT_shader_explicit_arithmetic_types : require
        layout(local_size_x = {local}) in;
        layout(set = 0, binding = 0) readonly buffer In {{ {inp}; }};
        layout(set = 0, binding = 1) writeonly buffer Out {{ {out}; }};
        void main() {{
            uint i = gl_GlobalInvocationID.x;
            {body}
        }}
        """
    )


def shader_model(
    path: Path,
    code: str,
    dtype: str = "FP32",
    fmt: str = "VK_FORMAT_R32_SFLOAT",
    *,
    shape: tuple[int, ...] = (1, 16),
    counts: tuple[int, int, int] = (16, 1, 1),
    outputs: int = 1,
    descriptors: tuple[str, str] = (STORAGE, STORAGE),
    **extra: Any,
) -> None:
    attrs: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": list(counts),
        "shader_language": "GLSL",
        "shader_code": code,
    }
    roles = ["input_0"] + [f"output_{k}" for k in range(outputs)]
    for i, role in enumerate(roles):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": descriptors[min(i, 1)],
            f"{role}_vkformat": fmt,
        }
    attrs |= extra
    names = ["y", "z"][:outputs]
    tensors = [T("x", shape, dtype)] + [T(n, shape, dtype) for n in names]
    path.write_bytes(build(tensors, [custom(["x"], names, "k", attrs=attrs)], ["x"], names))


def library_model(path: Path, name: str, dtype: str = "FP32") -> None:
    tensors = [T("x", (1, 16), dtype), T("y", (1, 16), dtype)]
    op = custom(["x"], ["y"], name, domain="test", attrs={})
    path.write_bytes(build(tensors, [op], ["x"], ["y"]))


def library(folder: Path, kernel: str, shader: str, extra: str = "", entry: str = "") -> None:
    (folder / "k.comp").write_text(shader)
    (folder / "lib.yaml").write_text(
        textwrap.dedent(
            """\
            vgfc_kernels: 1
            operators:
              - domain: test
                name: Op
                inputs: [x]
                outputs: [y]
            {entry}    kernels:
                  - name: k
            {kernel}        shader: {{file: k.comp}}
                    resources: {{x: {{binding: 0}}, y: {{binding: 1}}}}
            {extra}"""
        ).format(entry=entry, kernel=kernel, extra=extra)
    )


# -- the cases: each writes its files into the current folder and returns the command --------


def image_copy(
    path: Path,
    *,
    sampler: str = "sampler2D",
    qualifier: str = "rgba32f",
    fetch: str = "texelFetch(src, p, 0)",
    fmt: str,
) -> None:
    """A 4x4 four-channel image copied by a shader: a combined image sampler in, a storage image
    out; the cases change the sampler's type, the output's format qualifier or the format."""
    code = textwrap.dedent(
        f"""\
        #version 450
        layout(local_size_x = 4, local_size_y = 4) in;
        layout(set = 0, binding = 0) uniform {sampler} src;
        layout(set = 0, binding = 1, {qualifier}) uniform writeonly image2D dst;
        void main() {{
            ivec2 p = ivec2(gl_GlobalInvocationID.xy);
            imageStore(dst, p, {fetch});
        }}
        """
    )
    shader_model(
        path,
        code,
        fmt=fmt,
        shape=(1, 4, 4, 4),
        counts=(1, 1, 1),
        descriptors=(
            "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
        ),
        input_0_sampler=SAMPLER,
    )


def element_float_over_fp16(d: Path) -> list[str]:
    shader_model(d / "m.tosa", glsl("float x[]", "float y[]"), "FP16", "VK_FORMAT_R16_SFLOAT")
    return ["compile", "m.tosa", "-q"]


def element_raw_bits_note(d: Path) -> list[str]:
    code = glsl("uint x[]", "float y[]", "y[i] = uintBitsToFloat(x[i]) * 2.0;")
    shader_model(d / "m.tosa", code)
    return ["compile", "m.tosa"]


def element_vec3_stride(d: Path) -> list[str]:
    shader_model(d / "m.tosa", glsl("vec3 x[]", "float y[]", "y[i] = x[i].x;"))
    return ["compile", "m.tosa", "-q"]


def element_header_offset(d: Path) -> list[str]:
    shader_model(d / "m.tosa", glsl("uint n; float x[]", "float y[]", "y[i] = x[i] + float(n);"))
    return ["compile", "m.tosa", "-q"]


def element_sampled_image_type(d: Path) -> list[str]:
    image_copy(
        d / "m.tosa",
        sampler="isampler2D",
        fetch="vec4(texelFetch(src, p, 0))",
        fmt="VK_FORMAT_R32G32B32A32_SFLOAT",
    )
    return ["compile", "m.tosa", "-q"]


def element_storage_image_qualifier(d: Path) -> list[str]:
    image_copy(d / "m.tosa", qualifier="rgba16f", fmt="VK_FORMAT_R32G32B32A32_SFLOAT")
    return ["compile", "m.tosa", "-q"]


def element_library_kernel(d: Path) -> list[str]:
    library(
        d,
        "        arg_meta: {x: [FP32], y: [FP32]}\n",
        glsl("int x[]", "float y[]", "y[i] = float(x[i]);", 16),
        "        dispatch: {global: [16]}\n",
    )
    library_model(d / "m.tosa", "Op")
    return ["compile", "m.tosa", "--kernels", "lib.yaml", "-q"]


def lossy_refused(d: Path) -> list[str]:
    library(
        d,
        "        arg_meta: {x: [FP16], y: [FP16]}\n",
        glsl("float16_t x[]", "float16_t y[]", local=16),
        "        dispatch: {global: [16]}\n",
    )
    library_model(d / "m.tosa", "Op")
    return ["compile", "m.tosa", "--kernels", "lib.yaml", "-q"]


def lossy_allowed_warning(d: Path) -> list[str]:
    library(
        d,
        "        arg_meta: {x: [FP16], y: [FP16]}\n        allow_lossy: [x]\n",
        glsl("float16_t x[]", "float16_t y[]", local=16),
        "        dispatch: {global: [16]}\n",
    )
    library_model(d / "m.tosa", "Op")
    return ["compile", "m.tosa", "--kernels", "lib.yaml", "-q"]


def dispatch_two_outputs_partly_unwritten(d: Path) -> list[str]:
    code = textwrap.dedent(
        """\
        #version 450
        layout(local_size_x = 4) in;
        layout(set = 0, binding = 0) readonly buffer In { float x[]; };
        layout(set = 0, binding = 1) writeonly buffer A { float y[]; };
        layout(set = 0, binding = 2) writeonly buffer B { float z[]; };
        void main() { uint i = gl_GlobalInvocationID.x; y[i] = x[i]; z[i] = -x[i]; }
        """
    )
    shader_model(d / "m.tosa", code, counts=(2, 1, 1), outputs=2)
    return ["compile", "m.tosa", "-q"]


def library_dispatch_global_short(d: Path) -> list[str]:
    library(
        d,
        "        arg_meta: {x: [FP32], y: [FP32]}\n",
        glsl("float x[]", "float y[]", local=4),
        "        dispatch: {global: [8]}\n",
    )
    library_model(d / "m.tosa", "Op")
    return ["compile", "m.tosa", "--kernels", "lib.yaml", "-q"]


def library_shader_error_names_its_file(d: Path) -> list[str]:
    library(
        d,
        "",
        glsl("float x[]", "float y[]", "y[i] = x[i] +;", 16),
        "        dispatch: {global: [16]}\n",
    )
    library_model(d / "m.tosa", "Op")
    return ["compile", "m.tosa", "--kernels", "lib.yaml", "-q"]


def compose_error_names_the_library(d: Path) -> list[str]:
    (d / "lib.yaml").write_text(
        textwrap.dedent(
            """\
            vgfc_kernels: 1
            operators:
              - domain: test
                name: Twice
                inputs: [x]
                outputs: [y]
                compose:
                  constants:
                    two: {dtype: x, shape: [1, 1], value: 2.0}
                  ops:
                    - {op: MUL, inputs: [x, two], outputs: [y]}
            """
        )
    )
    library_model(d / "m.tosa", "Twice")
    return ["compile", "m.tosa", "--kernels", "lib.yaml", "-q"]


def image_c4_declared_r32(d: Path) -> list[str]:
    image_copy(d / "m.tosa", fmt="VK_FORMAT_R32_SFLOAT")
    return ["compile", "m.tosa", "-q"]


def shader_language_unknown(d: Path) -> list[str]:
    shader_model(d / "m.tosa", glsl("float x[]", "float y[]"), shader_language="GLSL4")
    return ["compile", "m.tosa", "-q"]


HALF = glsl("float x[]", "float y[]", "y[i] = x[i] * 2.0;")


def _half_vgf(d: Path) -> None:
    from vgfc.compiler import compile_to

    shader_model(d / "m.tosa", HALF, counts=(8, 1, 1))
    compile_to(d / "m.tosa", d / "m.vgf")
    np.save(d / "x.npy", np.arange(16, dtype=np.float32).reshape(1, 16))


def run_reports_unwritten_elements(d: Path) -> list[str]:
    _half_vgf(d)
    return ["run", "m.vgf", "-i", "x.npy"]


def verify_reports_unwritten_elements(d: Path) -> list[str]:
    _half_vgf(d)
    np.save(d / "y.npy", 2 * np.arange(16, dtype=np.float32).reshape(1, 16))
    return ["verify", "m.tosa", "-i", "x=x.npy", "-e", "y=y.npy"]


def verify_unverified_shader(d: Path) -> list[str]:
    shader_model(d / "m.tosa", HALF)
    return ["verify", "m.tosa"]


def verify_reference_converter_not_independent(d: Path) -> list[str]:
    shader_model(d / "m.tosa", HALF)
    return ["verify", "m.tosa", "--against", "reference"]


def verify_reference_cannot_be_imported(d: Path) -> list[str]:
    verify_reference_not_shipped(d)
    return ["verify", "m.tosa", "--kernels", "lib.yaml", "--allow-reference-imports"]


def verify_reference_not_shipped(d: Path) -> list[str]:
    library(
        d,
        "        arg_meta: {x: [FP32], y: [FP32]}\n",
        glsl("float x[]", "float y[]", local=16),
        "        dispatch: {global: [16]}\n",
        entry="    reference: no_such_module:op\n",
    )
    library_model(d / "m.tosa", "Op")
    return ["verify", "m.tosa", "--kernels", "lib.yaml"]


def run_dispatch_beyond_the_limit(d: Path) -> list[str]:
    from vgfc.vgf.decode import read_vgf
    from vgfc.vgf.encode import encode_to

    _half_vgf(d)
    model = read_vgf(d / "m.vgf")
    patched = [replace(s, dispatch=(65535, 65535, 64)) for s in model.segments]
    with (d / "big.vgf").open("wb") as out:
        encode_to(replace(model, segments=tuple(patched)), out)
    return ["run", "big.vgf", "-i", "x.npy"]


def run_timeout_must_be_positive(d: Path) -> list[str]:
    _half_vgf(d)
    return ["run", "m.vgf", "-i", "x.npy", "--timeout", "0"]


def run_push_constants_op_target(d: Path) -> list[str]:
    _half_vgf(d)
    (d / "pc.bin").write_bytes(b"\0" * 4)
    return ["run", "m.vgf", "-i", "x.npy", "--push-constants", "op:0=pc.bin"]


def verify_push_constants_bare_number(d: Path) -> list[str]:
    shader_model(d / "m.tosa", HALF)
    (d / "pc.bin").write_bytes(b"\0" * 4)
    return ["verify", "m.tosa", "--push-constants", "0=pc.bin"]


CASES: dict[str, Callable[[Path], list[str]]] = {
    f.__name__: f
    for f in (
        element_float_over_fp16,
        element_raw_bits_note,
        element_vec3_stride,
        element_header_offset,
        element_sampled_image_type,
        element_storage_image_qualifier,
        element_library_kernel,
        lossy_refused,
        lossy_allowed_warning,
        dispatch_two_outputs_partly_unwritten,
        library_dispatch_global_short,
        library_shader_error_names_its_file,
        compose_error_names_the_library,
        image_c4_declared_r32,
        shader_language_unknown,
        run_reports_unwritten_elements,
        verify_reports_unwritten_elements,
        verify_unverified_shader,
        verify_reference_converter_not_independent,
        verify_reference_cannot_be_imported,
        verify_reference_not_shipped,
        run_dispatch_beyond_the_limit,
        run_timeout_must_be_positive,
        run_push_constants_op_target,
        verify_push_constants_bare_number,
    )
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_message_matches_its_golden(
    case: str, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    args = CASES[case](tmp_path)
    run = cli(*args)
    text = f"$ vgfc {' '.join(args)}\nexit {run.code}\n{run.err}"
    golden = GOLDENS / f"{case}.txt"
    if os.environ.get("VGFC_UPDATE_GOLDENS") == "1":
        golden.write_text(text)
    assert golden.is_file(), f"no golden for {case}: run with VGFC_UPDATE_GOLDENS=1"
    assert text == golden.read_text(), json.dumps(text)


def test_every_golden_has_a_case() -> None:
    files = {p.stem for p in GOLDENS.glob("*.txt")}
    assert files <= set(CASES), sorted(files - set(CASES))
