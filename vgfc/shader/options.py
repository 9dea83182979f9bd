"""What a shader is compiled from and how: the options and the language.

Apart from :mod:`vgfc.shader.glslang` so that the command line and the compiler can build
options without importing glslang's bindings (ctypes, the worker process machinery): a model
without GLSL or HLSL shaders never needs them.
"""

from __future__ import annotations

import enum

from vgfc.environments import SPIRV_VERSIONS
from vgfc.options import DEFAULTS
from vgfc.record import record

__all__ = ["DEFAULT_TIMEOUT", "CompileOptions", "Language"]

DEFAULT_TIMEOUT: float = DEFAULTS["shader_timeout"]
"""Seconds of CPU time one shader's compile may use (``--shader-timeout``); ordinary ones use
1-2 ms."""


class Language(enum.Enum):
    """Source language of a shader."""

    GLSL = "GLSL"
    HLSL = "HLSL"


@record
class CompileOptions:
    """How to compile a shader; the defaults match the Vulkan 1.3 target vgfc writes."""

    target_env: str = DEFAULTS["target_env"]
    """Vulkan version the module is for: ``vulkan1.0`` .. ``vulkan1.4``."""
    spirv_version: tuple[int, int] | None = None
    """SPIR-V version to emit; must be one the target environment accepts. ``None``: the newest
    it accepts (:data:`vgfc.environments.SPIRV_VERSIONS`: 1.0, 1.3, 1.5, 1.6, 1.6 for Vulkan 1.0 to
    1.4), see :meth:`spirv`."""
    include_dirs: tuple[str, ...] = DEFAULTS["include_dirs"]
    """Folders searched, in order, for ``#include "..."`` and ``#include <...>``."""
    defines: tuple[tuple[str, str], ...] = DEFAULTS["defines"]
    """Preprocessor macros, as with ``-D NAME=VALUE``; an empty value defines the name only."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds of CPU time the compilation may use: it runs in a worker process, killed when it
    has used them (or, as a backstop, after :func:`vgfc.processes.backstop` seconds of wall
    time). ``0`` (or infinity): no limit, compiled in this process."""
    memory_mib: int = DEFAULTS["shader_memory"]
    """MiB of address space the worker may add while compiling (``RLIMIT_AS``, Linux only;
    ``--shader-memory``); ``0``: no cap. Ordinary shaders need a few. Applies only with a
    ``timeout``."""
    cache: bool = DEFAULTS["cache"]
    """Look compiled shaders up in, and add them to, the on-disk shader cache
    (:mod:`vgfc.shader.cache`; ``--no-cache`` turns it off). :func:`compile_shader` itself never
    uses the cache: the lowering stage does."""

    def spirv(self) -> tuple[int, int]:
        """The SPIR-V version shaders are compiled to: :attr:`spirv_version`, or the newest the
        target environment accepts (SPIR-V 1.6 for an environment vgfc does not know, which the
        compile then names)."""
        if self.spirv_version is not None:
            return self.spirv_version
        return SPIRV_VERSIONS.get(self.target_env, (1, 6))
