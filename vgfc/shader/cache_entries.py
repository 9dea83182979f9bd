"""The shader cache's entries: their layout, and the manifest of include files each records.

An entry is: a magic, the length of a JSON header, the header (the key, the include probes,
the reflection), the SPIR-V, and the SHA-256 of all that, checked on every read: a truncated,
damaged or foreign file is a miss, recompiled and replaced, never trusted.

Include files cannot be part of an entry's name (:mod:`vgfc.shader.cache_keys`), since which
files a shader reads is known only once it has been compiled. So each entry records, like
ccache's manifest, every path glslang's includer looked at and what it found there: a file and
the SHA-256 of its contents, or nothing. A lookup repeats those probes (:func:`_still`) and
reuses the entry only when every answer is the same, which is exactly when the includer would
hand glslang the same text again (a changed include file, a new file that now shadows one in a
later include folder, a deleted one: all misses).

The reflection is stored as JSON and read back only when it is laid out exactly as
:func:`_info_json` writes it.
"""

from __future__ import annotations

import json
import os
import stat
import struct

from vgfc.record import asdict, fields, record
from vgfc.shader.cache_keys import sha256
from vgfc.spirv.reflect_records import Element, ResourceBinding, ShaderInfo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.shader.includer import IncludeProbe

__all__ = ["ENTRY_BYTES_MAX", "CompiledShader"]

_MAGIC = b"vgfc-shader\x00"
_LENGTH = struct.Struct("<I")
_DIGEST = 32


@record
class CompiledShader:
    """A validated SPIR-V module and its reflection."""

    spirv: bytes
    info: ShaderInfo
    includes: tuple[str, ...] = ()
    """The files its ``#include`` directives opened, in the order opened (a dependency file
    lists them): recorded with the entry, so a cache hit knows them too."""


ENTRY_BYTES_MAX = 64 << 20
"""Largest cache entry read: a module's SPIR-V (at most the 3 MiB base64 ``shader_code`` holds,
or what glslang makes of 4 MiB of source) and its reflection take far less."""


def _read_all(fd: int, size: int) -> bytes:
    """At most ``size`` bytes from ``fd`` (a file that grows meanwhile is not read further)."""
    chunks = []
    left = size
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _encode(key: str, compiled: CompiledShader, includes: tuple[IncludeProbe, ...]) -> bytes:
    header = {
        "key": key,
        "includes": [list(p) for p in includes],
        "info": _info_json(compiled.info),
    }
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    body = _MAGIC + _LENGTH.pack(len(text)) + text + compiled.spirv
    return body + sha256(body).digest()


def _decode(data: bytes, key: str) -> CompiledShader | None:
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    start = len(_MAGIC) + _LENGTH.size
    if len(data) < start + _DIGEST or not body.startswith(_MAGIC):
        return None
    if sha256(body).digest() != digest:
        return None
    (size,) = _LENGTH.unpack_from(body, len(_MAGIC))
    spirv = body[start + size :]
    try:
        header = json.loads(body[start : start + size])
        if header["key"] != key or len(spirv) % 4:
            return None
        if not all(_still(path, sha) for path, sha in header["includes"]):
            return None
        info = _info_from_json(header["info"])
        includes = tuple(path for path, sha in header["includes"] if sha is not None)
        if not all(isinstance(path, str) for path in includes):
            return None
    except (ValueError, TypeError, KeyError):
        return None
    return CompiledShader(spirv, info, includes) if info is not None else None


def _still(path: str, sha: str | None) -> bool:
    """Whether the includer would find what it found when the entry was made (an include that
    is no longer a regular file of a sane size is a change: the entry is not used)."""
    if sha is None:
        return not os.path.isfile(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > ENTRY_BYTES_MAX:
            return False
        return sha256(_read_all(fd, info.st_size)).hexdigest() == sha
    except OSError:
        return False
    finally:
        os.close(fd)


_BINDING_FIELDS = fields(ResourceBinding)


def _info_json(info: ShaderInfo) -> dict[str, Any]:
    """``info`` as JSON values (lists for tuples, as JSON gives them back)."""

    def binding(b: ResourceBinding) -> dict[str, Any]:
        out = {name: getattr(b, name) for name in _BINDING_FIELDS}
        if b.element is not None:  # the element type, a dataclass of plain values
            out["element"] = asdict(b.element)
        return out

    return {
        "entry_points": [list(e) for e in info.entry_points],
        "local_size": None if info.local_size is None else list(info.local_size),
        "bindings": [binding(b) for b in info.bindings],
        "push_constant_size": info.push_constant_size,
        "spirv_version": list(info.spirv_version),
        "unused": [binding(b) for b in info.unused],
    }


_INFO_FIELDS = frozenset(
    ("entry_points", "local_size", "bindings", "push_constant_size", "spirv_version", "unused")
)
_BINDING_KEYS = frozenset(_BINDING_FIELDS)


def _info_from_json(data: Any) -> ShaderInfo | None:
    """The reflection :func:`_info_json` wrote, or ``None`` when ``data`` is not laid out the
    way it writes one (the layout changed under the same format number): exactly its fields,
    each array of the length and element type reflection gives it, each binding exactly the
    fields of :class:`ResourceBinding`."""
    if not isinstance(data, dict) or data.keys() != _INFO_FIELDS:
        return None
    entry_points = data["entry_points"]
    local_size = data["local_size"]
    push_constant_size = data["push_constant_size"]
    spirv_version = data["spirv_version"]
    bindings = _bindings_from_json(data["bindings"])
    unused = _bindings_from_json(data["unused"])
    if (
        not isinstance(entry_points, list)
        or not all(_array_of(e, str, 2) for e in entry_points)
        or not (local_size is None or _array_of(local_size, int, 3))
        or not (push_constant_size is None or type(push_constant_size) is int)
        or not _array_of(spirv_version, int, 2)
        or bindings is None
        or unused is None
    ):
        return None
    return ShaderInfo(
        entry_points=tuple((name, model) for name, model in entry_points),
        local_size=None if local_size is None else (local_size[0], local_size[1], local_size[2]),
        bindings=bindings,
        push_constant_size=push_constant_size,
        spirv_version=(spirv_version[0], spirv_version[1]),
        unused=unused,
    )


def _array_of(value: Any, kind: type, length: int) -> bool:
    """Whether ``value`` is a JSON array of ``length`` values of type ``kind`` (``int`` not
    ``bool``)."""
    return isinstance(value, list) and len(value) == length and all(type(v) is kind for v in value)


def _bindings_from_json(value: Any) -> tuple[ResourceBinding, ...] | None:
    if not isinstance(value, list):
        return None
    if not all(isinstance(b, dict) and b.keys() == _BINDING_KEYS for b in value):
        return None
    try:
        return tuple(_binding_from_json(b) for b in value)
    except TypeError:  # an element type laid out another way
        return None


def _binding_from_json(b: dict[str, Any]) -> ResourceBinding:
    element = b["element"]
    if element is not None and not isinstance(element, dict):
        raise TypeError("element")
    return ResourceBinding(**{**b, "element": None if element is None else Element(**element)})
