"""Who writes an output: temporary files named after their writer, the sweep of those whose
writer is gone, and the lock that lets one writer at a time rename files into a folder.

Several compiles may write one output at once (a CI farm, two make jobs that share a target),
and a compile may be killed (``kill -9``, the out-of-memory killer) between creating its
temporary file and renaming it. So:

* a temporary file is named ``.<target name>.<pid>.<random>.tmp`` (:func:`temporary_name`):
  the process that writes it, and while it writes, it holds a ``flock`` on it;
* :func:`sweep` removes the temporary files of a folder whose writer is gone: the process of
  the name does not exist here *and* nothing holds the file's lock (a writer in another pid
  namespace or on another host of a network file system still holds it while it writes).
  the first write of a process into a folder sweeps it (:func:`sweep_once`), so a killed
  compile's leftovers go with the next compile into that folder;
* :func:`folders_locked` takes an exclusive ``flock`` on each folder a group of outputs is
  renamed into, so that two writers of one VGF and its report rename theirs one group after the
  other, never interleaved (the lock is the folder's own: no lock file is left behind).

Why by hand: the standard library's ``tempfile`` names carry no writer, and nothing removes
what a killed process left.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["folders_locked", "hold_while_writing", "sweep", "sweep_once", "temporary_name"]

_TEMPORARY = re.compile(r"\..+\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp")
"""What :func:`temporary_name` makes (and the only names :func:`sweep` ever removes)."""


def temporary_name(target: Path) -> Path:
    """A fresh temporary name beside ``target``, carrying this process's id."""
    return target.parent / f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


def _writer_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, as another user's process
        return True
    return True


def _locked(path: Path) -> bool:
    """Whether something holds ``path``'s lock (a writer still writing it)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return True  # cannot tell: leave it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def sweep(folder: Path) -> list[Path]:
    """Remove the temporary files of ``folder`` whose writer is gone; the paths removed. A
    folder that cannot be listed is left as it is (the write that follows says why)."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        match = _TEMPORARY.fullmatch(entry.name)
        if match is None or _writer_alive(int(match["pid"])):
            continue
        path = Path(entry.path)
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False) and not _locked(path):
                os.unlink(path)
                removed.append(path)
    return removed


_swept: set[Path] = set()
_swept_lock = threading.Lock()


def sweep_once(folder: Path) -> None:
    """:func:`sweep` ``folder`` the first time this process writes there."""
    with _swept_lock:
        if folder in _swept:
            return
        _swept.add(folder)
    sweep(folder)


def hold_while_writing(fd: int) -> None:
    """Mark the temporary file open at ``fd`` as being written (:func:`sweep` leaves it); the
    mark goes when the file is closed or the process ends."""
    import fcntl

    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)


@contextlib.contextmanager
def folders_locked(folders: Iterable[Path]) -> Iterator[None]:
    """Hold an exclusive lock on each of ``folders`` (in one order for every process, so two
    writers cannot wait on each other) until the block ends. A folder that cannot be opened
    (no read permission) is not locked."""
    import fcntl

    opened: dict[tuple[int, int], int] = {}
    try:
        for folder in folders:
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) in opened:
                os.close(fd)
                continue
            opened[(info.st_dev, info.st_ino)] = fd
        for key in sorted(opened):
            while True:
                try:
                    fcntl.flock(opened[key], fcntl.LOCK_EX)
                    break
                except InterruptedError:
                    continue
                except OSError as e:
                    if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.EBADF):
                        # A file system without locks (or, over NFS, flock emulated with
                        # locks a folder opened for reading cannot take): go on unlocked.
                        break
                    raise
        yield
    finally:
        for fd in opened.values():
            os.close(fd)
