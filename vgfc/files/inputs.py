"""The one way vgfc opens what it reads: inputs that may be anything.

Every path a command is given, and every path a file it reads names (a kernel library's shader,
an ``#include``), can be anything: a FIFO that blocks ``open()`` for ever, ``/dev/zero`` that
never ends, a sparse file of 3 GB that holds one byte, a symlink loop, a name with a NUL byte.
So nothing in vgfc calls ``open()`` on an input directly.

Reading::

    with open_input(path, what="kernel library", limit=LIMITS.library_bytes_max) as f:
        f.size              # bytes, from fstat, checked against ``limit`` already
        head = f.header(64)  # the first bytes alone: check a magic or a header before the rest
        data = f.read()      # everything, as bytes (at most ``size``: a file that grows or a
                             # /proc file whose stat says 0 is refused)
        view = f.map()       # everything, as a read-only mmap (b"" for an empty file); the map
                             # stays valid after the file is closed

    read_input(path, what=..., limit=...)   # open_input + read, in one call
    map_input(path, what=..., limit=...)    # open_input + map
    read_text(path, what=..., limit=...)    # read_input, decoded as UTF-8

With ``stdin=True`` the path ``-`` (:data:`STDIN`) is standard input, named ``standard input``
in messages: a regular file redirected in is read as any file; a pipe is read to its end into an
anonymous file first (at most ``stdin_bytes_max`` bytes), so that everything above works on it;
a terminal (nothing piped in), a folder or a device is refused.

What :func:`open_input` guarantees: the path holds no NUL byte; ``stat`` says a regular file
(a FIFO, a device, a socket or a folder is refused *before* it is opened, so a FIFO never
blocks); the file is opened ``O_NONBLOCK | O_NOCTTY`` and ``fstat`` again (the file checked is
the file read, even if the path changes in between); its size is at most ``limit`` bytes
(``None``: no limit) before a byte is read. Every refusal is an :class:`InputError` that names
the file, in one line: ``lib.yaml: cannot read the kernel library: a FIFO (named pipe), not a
regular file``. ``shown`` is how the path appears in messages (default: the path as given);
``where`` is a :class:`~vgfc.diagnostics.Location` to report at instead (a library file's line
and key, when the path came from the library), with the shown path leading the message.

It also owns how a path and an ``OSError`` read in a message (:func:`shown_path`,
:func:`_kind`, :func:`_reason`), which :mod:`vgfc.files.outputs` shares.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import stat
from collections.abc import Callable, Iterator

from vgfc.diagnostics import InputError, Location, VgfcError
from vgfc.limits import quote
from vgfc.record import replace as _replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "STDIN",
    "STDIN_SHOWN",
    "InputFile",
    "Pathish",
    "map_input",
    "named_input",
    "open_input",
    "read_input",
    "read_text",
    "shown_path",
]

Pathish = str | os.PathLike[str]

STDIN = "-"
"""The path that means standard input where a command reads one (``cat m.tosa | vgfc check -``)."""

STDIN_SHOWN = "standard input"
"""How standard input is named in messages."""

_SHOWN_PATH_LENGTH = 300
"""Characters of a path shown in a message (a path may be 4096 characters long)."""


def shown_path(path: Pathish | bytes) -> str:
    """``path`` as messages show it: on one line, cut when very long."""
    text = os.fsdecode(path) if isinstance(path, bytes) else os.fspath(path)
    return quote(text, _SHOWN_PATH_LENGTH)


def _kind(mode: int) -> str | None:
    """What a file that is not a regular one is, for a message; ``None`` for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


_REASONS = {
    errno.ENOENT: "no such file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ELOOP: "a symbolic link loop (or too many links)",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.ENAMETOOLONG: "the path is too long",
    errno.EISDIR: "a folder",
}


def _reason(e: OSError) -> str:
    return _REASONS.get(e.errno or 0) or (e.strerror or type(e).__name__).lower()


class InputFile:
    """A regular file opened for reading by :func:`open_input` (see the module docstring)."""

    def __init__(self, fd: int, size: int, fail: Callable[[str], InputError]) -> None:
        self.fd = fd
        self.size = size
        """Bytes, as ``fstat`` gave them when the file was opened."""
        self._fail = fail

    def header(self, count: int) -> bytes:
        """At most ``count`` bytes from the start of the file (fewer when it is shorter)."""
        return self._read_at(0, min(count, self.size))

    def read(self) -> bytes:
        """The whole file. A file that turns out longer than its size said is refused."""
        data = self._read_at(0, self.size + 1)
        if len(data) > self.size:
            raise self._fail(
                f"it grew past the {self.size} bytes its size said while it was read (a file "
                "being written, or a /proc file)"
            )
        return data

    def map(self) -> mmap.mmap | bytes:
        """The whole file, memory-mapped read-only (``b""`` when it is empty: nothing maps
        zero bytes). Pages are read when they are touched, so a check of the first bytes costs
        no more than reading them."""
        if self.size == 0:
            return b""
        try:
            return mmap.mmap(self.fd, self.size, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise self._fail(f"cannot map it: {e}") from None

    def _read_at(self, offset: int, count: int) -> bytes:
        chunks = []
        done = 0
        while done < count:
            try:
                chunk = os.pread(self.fd, min(count - done, 1 << 24), offset + done)
            except OSError as e:
                raise self._fail(_reason(e)) from None
            if not chunk:
                break
            chunks.append(chunk)
            done += len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _failure(what: str, shown: str, where: Location | None) -> Callable[[str], InputError]:
    def fail(reason: str) -> InputError:
        if where is None:
            return InputError(f"cannot read the {what}: {reason}", file=shown)
        return InputError(f"{shown}: cannot read the {what}: {reason}", where)

    return fail


@contextlib.contextmanager
def open_input(
    path: Pathish,
    *,
    what: str = "file",
    limit: int | None = None,
    limit_name: str | None = None,
    shown: str | None = None,
    where: Location | None = None,
    stdin: bool = False,
) -> Iterator[InputFile]:
    """Open ``path`` for reading, or raise :class:`InputError` (see the module docstring).
    ``what`` names the file's role in messages (``kernel library``); ``limit`` is the most
    bytes it may have, ``limit_name`` the name of that limit in :mod:`vgfc.limits`; ``stdin``:
    ``-`` is standard input."""
    text = os.fspath(path)
    if stdin and text == STDIN:
        shown = STDIN_SHOWN
    fail = _failure(what, shown if shown is not None else shown_path(path), where)
    fd = _standard_input(fail) if stdin and text == STDIN else _open(text, fail)
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:  # the path was swapped for something else since the stat
            raise fail(f"{kind}, not a regular file")
        if limit is not None and info.st_size > limit:
            name = f" ({limit_name})" if limit_name else ""
            article = "an" if what[:1] in "aeiou" else "a"
            raise fail(
                f"{info.st_size} bytes, more than the {limit} {article} {what} may have{name}"
            )
        opened = InputFile(fd, info.st_size, fail)
    except BaseException:
        os.close(fd)
        raise
    try:
        yield opened
    finally:
        opened.close()


def _open(text: str, fail: Callable[[str], InputError]) -> int:
    """``text`` opened for reading, once ``stat`` says it is a regular file."""
    if "\0" in text:
        raise fail("the path holds a NUL byte")
    try:
        info = os.stat(text)
    except OSError as e:
        raise fail(_reason(e)) from None
    except ValueError as e:  # a path the system cannot take (NUL bytes after encoding)
        raise fail(str(e)) from None
    kind = _kind(info.st_mode)
    if kind is not None:
        raise fail(f"{kind}, not a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        return os.open(text, flags)
    except OSError as e:
        raise fail(_reason(e)) from None


def _standard_input(fail: Callable[[str], InputError]) -> int:
    """A file descriptor of a regular file holding what standard input gives: its own when it
    is one (``< m.tosa``), else an anonymous file it was read into (a pipe), at most
    ``stdin_bytes_max`` bytes."""
    from vgfc.limits import LIMITS

    try:
        info = os.fstat(0)
    except OSError:
        raise fail("it is closed") from None
    if os.isatty(0):
        raise fail("it is a terminal: pipe the file in, or name it instead of -")
    if stat.S_ISREG(info.st_mode):
        return os.dup(0)
    if stat.S_ISCHR(info.st_mode) and _is_null(info):  # `< /dev/null`, or closed: nothing
        import tempfile

        with tempfile.TemporaryFile() as empty:
            return os.dup(empty.fileno())
    if not (stat.S_ISFIFO(info.st_mode) or stat.S_ISSOCK(info.st_mode)):
        raise fail(f"{_kind(info.st_mode)}, not a regular file or a pipe")
    limit = LIMITS.stdin_bytes_max
    import tempfile

    spool = tempfile.TemporaryFile()  # noqa: SIM115 - its descriptor outlives the object
    fd = os.dup(spool.fileno())
    spool.close()
    try:
        done = 0
        while True:
            try:
                chunk = os.read(0, 1 << 20)
            except InterruptedError:
                continue
            except OSError as e:
                raise fail(_reason(e)) from None
            if not chunk:
                return fd
            done += len(chunk)
            if done > limit:
                raise fail(f"more than the {limit} bytes it may give (stdin_bytes_max)")
            view = memoryview(chunk)
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except InterruptedError:
                    continue
                except OSError as e:
                    raise fail(f"cannot hold what it gives: {_reason(e)}") from None
    except BaseException:
        os.close(fd)
        raise


def _is_null(info: os.stat_result) -> bool:
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return info.st_rdev == null.st_rdev


@contextlib.contextmanager
def named_input(path: Pathish, *, what: str) -> Iterator[Pathish]:
    """``path``, or for ``-`` a file holding what standard input gives (read as
    :func:`open_input` reads it), for a command whose tools need a file's name (``vgfc verify``
    hands the model to other programs). The file is removed when the block ends, and an error
    of the block that names it names ``standard input`` instead."""
    if os.fspath(path) != STDIN:
        yield path
        return
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="vgfc-stdin-") as folder:
        named = os.path.join(folder, "stdin")
        with open_input(STDIN, what=what, stdin=True) as f, open(named, "wb") as out:
            os.lseek(f.fd, 0, os.SEEK_SET)
            with open(f.fd, "rb", closefd=False) as source:
                shutil.copyfileobj(source, out)
        try:
            yield named
        except VgfcError as e:
            if e.location.file == named:
                e.location = _replace(e.location, file=STDIN_SHOWN)
            raise


def read_input(path: Pathish, **how: Any) -> bytes:
    """The bytes of ``path`` through :func:`open_input` (same keyword arguments)."""
    with open_input(path, **how) as f:
        return f.read()


def map_input(path: Pathish, **how: Any) -> mmap.mmap | bytes:
    """``path`` memory-mapped through :func:`open_input` (same keyword arguments)."""
    with open_input(path, **how) as f:
        return f.map()


def read_text(path: Pathish, **how: Any) -> str:
    """The text of ``path`` (UTF-8) through :func:`open_input` (same keyword arguments)."""
    with open_input(path, **how) as f:
        data = f.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise f._fail(f"not UTF-8 text: {e.reason} at byte {e.start}") from None
