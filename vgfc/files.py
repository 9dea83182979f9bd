"""The one way vgfc opens what it reads and writes what it makes.

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

What :func:`open_input` guarantees: the path holds no NUL byte; ``stat`` says a regular file
(a FIFO, a device, a socket or a folder is refused *before* it is opened, so a FIFO never
blocks); the file is opened ``O_NONBLOCK | O_NOCTTY`` and ``fstat`` again (the file checked is
the file read, even if the path changes in between); its size is at most ``limit`` bytes
(``None``: no limit) before a byte is read. Every refusal is an :class:`InputError` that names
the file, in one line: ``lib.yaml: cannot read the kernel library: a FIFO (named pipe), not a
regular file``. ``shown`` is how the path appears in messages (default: the path as given);
``where`` is a :class:`~vgfc.diagnostics.Location` to report at instead (a library file's line
and key, when the path came from the library), with the shown path leading the message.

Writing: :func:`write_atomically` is the one way outputs are written (a VGF, a report, a
partition plan): a temporary file in the target's folder, renamed over the target only once it
is complete. The target must be a regular file or absent (``/dev/null``, a FIFO or a folder is
refused, never replaced), must not be any file the command reads (``inputs``), and its folder
must exist. A new file gets ``0666`` less the umask, an existing one keeps its permission bits
but never its setuid/setgid bits. A write error (no space left, read-only file system,
permission denied) is an :class:`InputError` naming the path, and the temporary file is gone.

Interrupts: :func:`interrupt_on_signals` (the command line calls it) turns SIGTERM, SIGHUP and
SIGQUIT into :class:`Interrupted`, which unwinds like Ctrl-C's ``KeyboardInterrupt`` through
:func:`write_atomically` and removes its temporary file. The rename and the record of it happen
with those signals blocked, so :data:`WRITES` always knows whether a target was replaced:
:meth:`WriteLog.outcome` says which files were written and which were left as they were.
"""

from __future__ import annotations

import contextlib
import errno
import io
import mmap
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from types import FrameType

from vgfc.diagnostics import InputError, Location
from vgfc.limits import quote
from vgfc.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "WRITES",
    "InputFile",
    "Interrupted",
    "Staged",
    "WriteLog",
    "check_output",
    "commit",
    "discard",
    "interrupt_on_signals",
    "map_input",
    "open_input",
    "read_input",
    "read_text",
    "shown_path",
    "stage",
    "write_atomically",
]

Pathish = str | os.PathLike[str]

_SHOWN_PATH_LENGTH = 300
"""Characters of a path shown in a message (a path may be 4096 characters long)."""


def shown_path(path: Pathish | bytes) -> str:
    """``path`` as messages show it: on one line, cut when very long."""
    text = os.fsdecode(path) if isinstance(path, bytes) else os.fspath(path)
    return quote(text, _SHOWN_PATH_LENGTH)


# --- reading --------------------------------------------------------------------------------


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
) -> Iterator[InputFile]:
    """Open ``path`` for reading, or raise :class:`InputError` (see the module docstring).
    ``what`` names the file's role in messages (``kernel library``); ``limit`` is the most
    bytes it may have, ``limit_name`` the name of that limit in :mod:`vgfc.limits`."""
    fail = _failure(what, shown if shown is not None else shown_path(path), where)
    text = os.fspath(path)
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
        fd = os.open(text, flags)
    except OSError as e:
        raise fail(_reason(e)) from None
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


# --- interrupts -----------------------------------------------------------------------------

INTERRUPTS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name)
)
"""The signals :func:`interrupt_on_signals` turns into :class:`Interrupted`."""
_BLOCKED = frozenset((signal.SIGINT, *INTERRUPTS))


class Interrupted(BaseException):
    """A signal asked the command to end (SIGTERM, SIGHUP, SIGQUIT): unwinds like
    ``KeyboardInterrupt``, removing temporary files on the way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


_interrupted: list[int] = []
"""The signal that raised :class:`Interrupted` (or KeyboardInterrupt), once one has."""
_deferred: list[int] = []
"""Signals that came while a rename or a cleanup was under way, raised when it ends."""
_holding = [0]
"""How deep the main thread is in :func:`_signals_held` sections."""


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    # Only the first signal raises: a second one must not cut short the cleanup the first
    # one started (removing temporary files, ending workers). One that comes while a temporary
    # file is being created, renamed or removed waits until that is done.
    if _interrupted:
        return
    if _holding[0]:
        _deferred.append(signum)
        return
    _raise_now(signum)


def _raise_now(signum: int) -> None:
    _interrupted.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(signum)


def interrupt_on_signals() -> None:
    """Make SIGTERM, SIGHUP and SIGQUIT raise :class:`Interrupted` in the main thread, and
    SIGINT ``KeyboardInterrupt`` as it does, but never in the middle of creating, renaming or
    removing an output's temporary file (a command's process; a library user's process keeps
    its own handlers)."""
    _interrupted.clear()
    _deferred.clear()
    for signum in (signal.SIGINT, *INTERRUPTS):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, _raise_interrupted)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold the interrupts until the block ends. Python runs signal handlers in the main
    thread, but the kernel may deliver a signal to any thread (numpy's, say), so the handlers
    of :func:`interrupt_on_signals` defer it while a block runs; blocking the signals in this
    thread as well covers a process without those handlers."""
    _holding[0] += 1
    old = None
    if hasattr(signal, "pthread_sigmask"):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        _holding[0] -= 1
        if not _holding[0] and _deferred and not _interrupted:
            signum = _deferred[0]
            _deferred.clear()
            _raise_now(signum)


# --- writing --------------------------------------------------------------------------------


@record(frozen=False)
class WriteLog:
    """Which outputs this process has replaced, and which it left alone after starting them."""

    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """Writes that did not happen: ``out.vgf was left as it was`` (or ``was not written``)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def clear(self) -> None:
        with self._lock:
            self.written.clear()
            self.kept.clear()

    def outcome(self) -> str:
        """``out.vgf was written; out.report.json was left as it was``, or ``no file was
        written``."""
        with self._lock:
            parts = [f"{name} was written" for name in self.written] + self.kept
            return "; ".join(parts) if parts else "no file was written"

    def _record(self, shown: str, *, replaced: bool, existed: bool) -> None:
        with self._lock:
            if replaced:
                self.written.append(shown)
            else:
                self.kept.append(f"{shown} was {'left as it was' if existed else 'not written'}")


WRITES = WriteLog()
"""What :func:`write_atomically` did in this process (the command line reports it when a
command is interrupted)."""


class _WriteFailed(Exception):
    """An OSError from writing the temporary file (not from what produced the data)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error)
        self.error = error


class _Output(io.RawIOBase):
    """The temporary file: every ``write`` writes all it is given (raw writes may be short),
    and an error of the file system becomes :class:`_WriteFailed`."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            try:
                done += os.write(self._fd, view[done : done + (1 << 30)])
            except InterruptedError:
                continue
            except OSError as e:
                raise _WriteFailed(e) from None
        return done

    def close(self) -> None:
        if not self.closed:
            super().close()
            fd, self._fd = self._fd, -1
            try:
                os.close(fd)
            except OSError as e:  # a network file system reports some write errors here
                raise _WriteFailed(e) from None


def _output_error(path: Pathish, reason: str) -> InputError:
    return InputError(f"cannot write output file: {reason}", file=shown_path(path))


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_output(path: Pathish, *, inputs: Iterable[Pathish] = ()) -> Path:
    """The real path ``path`` would be written at, or :class:`InputError`: a path with a NUL
    byte, an existing target that is not a regular file (a device such as ``/dev/null``, a
    FIFO, a folder), a target that is one of ``inputs`` (the same file under any name, hard
    links included), a folder that does not exist or is not a folder. Commands call it for
    every output before they start work; :func:`write_atomically` calls it again."""
    text = os.fspath(path)
    if "\0" in text:
        raise _output_error(path, "the path holds a NUL byte")
    try:
        info: os.stat_result | None = os.stat(text)
    except FileNotFoundError:
        info = None
    except OSError as e:
        if e.errno == errno.ENOTDIR:
            raise _output_error(path, "a part of the path is a file, not a folder") from None
        raise _output_error(path, _reason(e)) from None
    if info is not None:
        kind = _kind(info.st_mode)
        if kind is not None:
            raise _output_error(
                path,
                f"it is {kind}: vgfc writes only regular files and never replaces anything else",
            )
        for source in inputs:
            try:
                same = _same_file(info, os.stat(os.fspath(source)))
            except (OSError, ValueError):
                continue
            if same:
                raise _output_error(path, f"it is {shown_path(source)}, an input of this command")
    target = Path(os.path.realpath(text))
    folder = target.parent
    try:
        folder_info = os.stat(folder)
    except FileNotFoundError:
        raise _output_error(
            path,
            f"the folder {shown_path(folder)} does not exist (vgfc creates a folder only for "
            "-d OUTDIR)",
        ) from None
    except OSError as e:
        raise _output_error(path, f"its folder: {_reason(e)}") from None
    if not stat.S_ISDIR(folder_info.st_mode):
        raise _output_error(path, f"{shown_path(folder)} is not a folder")
    return target


class Staged:
    """An output written to its temporary file, waiting to be renamed into place
    (:func:`write_atomically` with ``together``)."""

    def __init__(self, path: Pathish, data: bytes | Callable[[Any], object], inputs: Any) -> None:
        self.path = path
        self.shown = shown_path(path)
        self.target = check_output(path, inputs=inputs)
        self.existed = self.target.exists()
        self.tmp: Path | None = None
        self.done = False
        output: _Output | None = None
        try:
            # Created and recorded with the interrupts held: an interrupt right after the file
            # appears finds it recorded here, and the cleanup below removes it.
            with _signals_held():
                fd, self.tmp = _open_temporary(self.target, path)
                output = _Output(fd)
            with contextlib.suppress(OSError):  # an existing file's permission bits, never
                os.fchmod(fd, os.stat(self.target).st_mode & 0o777)  # its setuid/setgid
            with output:
                if callable(data):
                    data(output)
                else:
                    output.write(data)
        except BaseException as e:
            with _signals_held():
                if output is not None and not output.closed:
                    with contextlib.suppress(Exception):
                        output.close()
                self.discard()
            if isinstance(e, _WriteFailed):
                raise _output_error(path, _write_reason(e.error)) from None
            raise

    def commit(self) -> None:
        """Rename into place (callers hold the interrupt signals)."""
        assert self.tmp is not None
        try:
            os.replace(self.tmp, self.target)
        except OSError as e:
            raise _output_error(self.path, _write_reason(e)) from None
        self.tmp = None
        self.done = True
        WRITES._record(self.shown, replaced=True, existed=self.existed)

    def discard(self) -> None:
        """Remove the temporary file; the target stays as it was."""
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None
            WRITES._record(self.shown, replaced=False, existed=self.existed)


def _open_temporary(target: Path, path: Pathish) -> tuple[int, Path]:
    """A new file beside ``target``, created with mode 0666 so that the umask applies."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = target.parent / f".{target.name}.{os.urandom(4).hex()}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as e:
            reason = _write_reason(e) if e.errno != errno.ENOENT else "it cannot hold files"
            raise _output_error(
                path, f"cannot create a file in {shown_path(target.parent)}: {reason}"
            ) from None
    raise _output_error(path, "no free name for a temporary file")


def write_atomically(
    path: Pathish,
    data: bytes | Callable[[Any], object],
    *,
    inputs: Iterable[Pathish] = (),
    together: list[Staged] | None = None,
    hold: list[Staged] | None = None,
) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never a partial file,
    never anything but a regular file replaced, never one of ``inputs`` (:func:`check_output`).

    ``data`` is the bytes, or a function that writes them to the binary file it is given (so
    that a large output, a VGF with gigabytes of constants, streams to disk instead of being
    built in memory first); if it raises, or the write fails, or an interrupt comes, nothing is
    written and the temporary file is removed.

    ``together``: outputs staged (:func:`stage`) before or while ``data`` is written, such as
    a report that records the VGF's digest; they are renamed into place with this one, with
    the interrupt signals held, so an interrupt leaves all of them old or all of them new.

    ``hold``: a list that gets the staged outputs instead, written but not renamed, for
    :func:`commit` or :func:`discard` later (until then a :class:`BaseException`, an
    interrupt, must end in one of them)."""
    inputs = tuple(inputs)
    others = together if together is not None else []
    try:
        staged = Staged(path, data, inputs)
    except BaseException:
        with _signals_held():
            for other in others:
                other.discard()
        raise
    group = [*others, staged]
    if hold is not None:
        hold.extend(group)
        return
    commit(group)


def commit(group: Sequence[Staged]) -> None:
    """Rename staged outputs into place together, with the interrupt signals held."""
    with _signals_held():
        try:
            for item in group:
                item.commit()
        finally:
            for item in group:
                item.discard()


def discard(group: Sequence[Staged]) -> None:
    """Remove staged outputs' temporary files: their targets stay as they were."""
    with _signals_held():
        for item in group:
            item.discard()


def stage(path: Pathish, data: bytes, *, inputs: Iterable[Pathish] = ()) -> Staged:
    """``data`` written to a temporary file beside ``path``, for ``write_atomically(...,
    together=[...])`` to rename into place with the output it belongs to."""
    return Staged(path, data, tuple(inputs))


def _write_reason(e: OSError) -> str:
    if e.errno == errno.ENOSPC:
        return "no space left on the device"
    if e.errno == errno.EROFS:
        return "read-only file system"
    if e.errno == errno.EDQUOT:
        return "disk quota exceeded"
    return _reason(e)
