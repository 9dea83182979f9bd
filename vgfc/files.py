"""The one way vgfc writes its outputs: atomically, never a partial file.

Every file a command writes (a VGF, a report, a partition plan) goes through
:func:`write_atomically`: a temporary file in the target's folder, renamed over the target only
once it is complete, so a reader never sees half a file and an error leaves the old one as it was.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vgfc.diagnostics import InputError

__all__ = ["write_atomically"]


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomically(path: Path, data: bytes | Callable[[Any], object]) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never a partial file.

    ``data`` is the bytes, or a function that writes them to the binary file it is given (so
    that a large output, a VGF with gigabytes of constants, streams to disk instead of being
    built in memory first); if it raises, nothing is written."""
    target = path.resolve()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise InputError(f"cannot write output file: {e.strerror}", file=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
        # mkstemp creates 0600; give the file the mode a plain open() would: the existing file's,
        # else 0666 less the umask.
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
