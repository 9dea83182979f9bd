"""The on-disk shader cache: where it is, and the lookup and store a compile uses.

:func:`load` finds the entry for a :class:`~vgfc.shader.cache_keys.ShaderRequest` (its name
comes from :mod:`vgfc.shader.cache_keys`, its layout and include manifest from
:mod:`vgfc.shader.cache_entries`) and :func:`store` adds one. An entry is read like any input: a
regular file of a bounded size, never through a symbolic link, never a FIFO or device. Entries
are written to a temporary file in the same folder and renamed into place, so two vgfc
processes compiling at once each see either no entry or a whole one. Failing to read or write
the cache never fails a compile.

Where: ``$VGFC_CACHE_DIR/shaders`` (``~`` expanded; a relative path is refused, as each command
of a build runs in its own folder), else ``shaders`` in the user cache folder (``platformdirs``:
``~/.cache/vgfc`` on Linux). :func:`cache_problem` says why a folder cannot be used (a compile
warns ``[-Wunusable-cache]`` and compiles every shader afresh). ``--no-cache``
(``CompileOptions(cache=False)``) leaves it alone.
``vgfc cache`` looks after it (:mod:`vgfc.shader.cache_admin`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import threading
import time
from pathlib import Path

from vgfc.shader.cache_entries import (
    ENTRY_BYTES_MAX,
    CompiledShader,
    _decode,
    _encode,
    _read_all,
)
from vgfc.shader.cache_keys import FORMAT, ShaderRequest, _key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.shader.includer import IncludeProbe

__all__ = ["CACHE_ENV", "cache_dir", "cache_problem", "load", "store"]

CACHE_ENV = "VGFC_CACHE_DIR"
"""Environment variable naming the cache folder (the user cache folder when unset or empty)."""


def cache_dir() -> Path:
    """The folder that holds the shader cache (which need not exist yet)."""
    return Path(_folder())


def _folder() -> str:
    """:func:`cache_dir` as a string (pathlib's parsing costs more than a lookup's other path
    handling)."""
    root = os.environ.get(CACHE_ENV)
    if root:
        root = os.path.expanduser(root)
    else:
        try:
            import platformdirs

            root = platformdirs.user_cache_dir("vgfc", appauthor=False)
        except ImportError:  # pragma: no cover - a dependency; the XDG rule as a fallback
            root = os.path.join(
                os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vgfc"
            )
    return os.path.join(root, "shaders")


def cache_problem(folder: Path | str | None = None) -> str | None:
    """Why the cache folder (default :func:`cache_dir`) cannot be used, or ``None``: a relative
    ``VGFC_CACHE_DIR``, or a folder that cannot be made, read or written. Makes the folder."""
    root = os.environ.get(CACHE_ENV)
    if root and not os.path.isabs(os.path.expanduser(root)):
        return f"{CACHE_ENV} {root!r} is a relative path (give an absolute one)"
    return _unusable(_folder() if folder is None else str(folder))


@functools.cache
def _unusable(folder: str) -> str | None:
    layout = os.path.join(folder, f"v{FORMAT}")
    try:
        os.makedirs(layout, exist_ok=True)
    except OSError as e:
        return f"cannot make the folder {layout}: {_why(e)}"
    if not os.access(layout, os.R_OK | os.W_OK | os.X_OK):
        return f"cannot read and write the folder {layout}: permission denied"
    return None


def _why(e: OSError) -> str:
    import errno

    if e.errno == errno.EEXIST or e.errno == errno.ENOTDIR:
        return "a file that is not a folder stands in its path"
    return (e.strerror or str(e)).lower()


def load(request: ShaderRequest, folder: Path | None = None) -> CompiledShader | None:
    """The cached result for ``request``, or ``None`` (missing, stale or corrupt entry).
    ``folder``: :func:`cache_dir`, from a caller that looks up many shaders (finding the user
    cache folder takes longer than reading an entry).

    An entry is read like any input: a regular file of at most :data:`ENTRY_BYTES_MAX`, never
    through a symbolic link, never a FIFO or device (which could block or never end). Anything
    else where an entry belongs is removed, so the compile that misses stores a good one."""
    if cache_problem(folder) is not None:
        return None
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
    if cache_problem() is not None:
        return
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


def _entry(key: str, folder: Path | None = None) -> str:
    return os.path.join(_folder() if folder is None else folder, f"v{FORMAT}", key)
