"""Which Vulkan environment a shader needs, when it fails for the one asked for.

A shader that uses a feature of a newer SPIR-V (subgroup operations need SPIR-V 1.3, say), or a
SPIR-V binary given at a version the target environment does not accept, fails to compile or
validate for an older ``--target-env`` with a message about SPIR-V, not about the option that
would fix it. :func:`explain` finds the oldest environment the shader builds for and says so.
It runs only after a failure (a shader that builds pays nothing): it builds the shader again for
each newer environment, which costs a compile each, and stops at the first that works.
"""

from __future__ import annotations

from vgfc.diagnostics import ShaderError, VgfcError
from vgfc.environments import SPIRV_VERSIONS, TARGET_ENVS
from vgfc.record import replace
from vgfc.shader.cache_keys import ShaderRequest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from vgfc.shader.cache_entries import CompiledShader

__all__ = ["binary_version", "explain"]


def binary_version(spirv: bytes) -> tuple[int, int] | None:
    """The SPIR-V version in a binary's header, or ``None`` when it has no readable header."""
    from vgfc.spirv.binary import words_of

    try:
        words = words_of(spirv)
    except ShaderError:
        return None
    return (words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF


def explain(
    request: ShaderRequest,
    error: ShaderError,
    build: Callable[[ShaderRequest], CompiledShader],
) -> ShaderError:
    """``error`` with the environment the shader needs, when it builds for a newer one than
    ``request`` asks for (``build`` builds a request, without the cache); else ``error``."""
    env = request.options.target_env
    if env not in TARGET_ENVS or request.options.spirv_version is not None:
        return error  # an unknown environment is named already; a chosen version is kept
    newest = SPIRV_VERSIONS[env]
    if isinstance(request.code, bytes):
        version = binary_version(request.code)
        if version is not None and version > newest:
            return _needs(error, env, version, "the SPIR-V binary is version", alone=True)
    for newer in TARGET_ENVS[TARGET_ENVS.index(env) + 1 :]:
        if SPIRV_VERSIONS[newer] == SPIRV_VERSIONS[TARGET_ENVS[TARGET_ENVS.index(newer) - 1]]:
            continue  # the same SPIR-V as the one before: it failed there too
        options = replace(request.options, target_env=newer, cache=False)
        try:
            build(replace(request, options=options))
        except VgfcError:
            continue
        return _needs(error, env, SPIRV_VERSIONS[newer], "it needs SPIR-V")
    return error


def _needs(
    error: ShaderError, env: str, version: tuple[int, int], what: str, *, alone: bool = False
) -> ShaderError:
    """``error``, its message followed by the environment that accepts ``version`` (or, with
    ``alone``, replaced by it: the validator's own words say the same less clearly)."""
    fit = next(e for e in TARGET_ENVS if SPIRV_VERSIONS[e] >= version)
    newest = SPIRV_VERSIONS[env]
    hint = (
        f"{what} {version[0]}.{version[1]}, and {env} accepts SPIR-V up to "
        f"{newest[0]}.{newest[1]}: use --target-env {fit} or newer"
    )
    message = hint if alone else f"{error.message} ({hint})"
    return ShaderError(message, error.location, excerpt=error.excerpt)
