"""The shader cache's upkeep, for ``vgfc cache``: how much it holds, and clearing it.

The cache has no size limit of its own: an entry is a few kilobytes (a SPIR-V module and its
reflection), and each distinct shader and option set adds one. ``vgfc cache`` shows its size and
``vgfc cache clear [--older-than DAYS]`` removes entries (:func:`usage`, :func:`clear`); a hit
refreshes its entry's time at most once a day (:func:`vgfc.shader.cache.load`), so
``--older-than`` drops entries not used lately. Only names the cache itself writes are touched,
and only below the cache folder.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from vgfc.record import record
from vgfc.shader.cache import cache_dir
from vgfc.shader.cache_keys import FORMAT

__all__ = ["Cleared", "Usage", "clear", "usage"]

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
