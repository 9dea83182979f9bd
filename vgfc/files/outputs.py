"""The one way vgfc writes what it makes: atomic outputs, never through a non-regular file.

:func:`write_atomically` is the one way outputs are written (a VGF, a report, a partition
plan): a temporary file in the target's folder, renamed over the target only once it is
complete. The target must be a regular file or absent (``/dev/null``, a FIFO or a folder is
refused, never replaced), must not be any file the command reads (``inputs``), and its folder
must exist (:func:`check_output`). A new file gets ``0666`` less the umask, an existing one
keeps its permission bits but never its setuid/setgid bits. A write error (no space left,
read-only file system, permission denied) is an :class:`InputError` naming the path, and the
temporary file is gone.

Outputs that belong together (a VGF and the report that describes it) are staged
(:func:`stage`, :class:`Staged`) and renamed into place together (:func:`commit`) or dropped
(:func:`discard`). The first of a group is the file the others describe: the others' old
files are removed first, then the first is renamed into place, then the others, so a report
found beside a VGF always describes it (a kill in between leaves a VGF without a report, never
with another file's). Writers of one folder rename their groups one at a time (a lock on the
folder, :func:`vgfc.files.writers.folders_locked`). Temporary files carry their writer's
process id, and the first write of a process into a folder removes those whose writer is gone
(:mod:`vgfc.files.writers`). An interrupt
(:class:`~vgfc.files.interrupts.Interrupted`) unwinds through all of this and removes the
temporary files; the rename and the record of it happen with the interrupt signals held
(:func:`~vgfc.files.interrupts.signals_held`), so :data:`WRITES` always knows whether a target
was replaced: :meth:`WriteLog.outcome` says which files were written and which were left as
they were.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from vgfc.diagnostics import InputError
from vgfc.files.inputs import Pathish, _kind, _reason, shown_path
from vgfc.files.interrupts import signals_held
from vgfc.files.writers import folders_locked, hold_while_writing, sweep_once, temporary_name
from vgfc.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "WRITES",
    "Staged",
    "WriteLog",
    "check_output",
    "commit",
    "discard",
    "folder_error",
    "stage",
    "write_atomically",
]


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

    def _record(self, shown: str, *, replaced: bool, existed: bool, removed: bool = False) -> None:
        with self._lock:
            if replaced:
                self.written.append(shown)
            elif removed:  # a report whose VGF could not be renamed into place after it
                self.kept.append(f"{shown} was removed")
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
        if e.errno == errno.EACCES:
            raise _output_error(path, _unsearchable(text)) from None
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
        if e.errno == errno.EACCES:
            raise _output_error(path, _unsearchable(os.fspath(folder))) from None
        raise _output_error(path, f"its folder: {_reason(e)}") from None
    if not stat.S_ISDIR(folder_info.st_mode):
        raise _output_error(path, f"{shown_path(folder)} is not a folder")
    return target


def _unsearchable(path: str) -> str:
    """Why ``path`` cannot be looked at: the nearest folder on its way that cannot be searched
    (a folder of mode 000, say), named."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        parent = os.path.dirname(folder)
        if parent == folder or os.access(parent, os.X_OK):
            break
        folder = parent
    if not os.access(folder, os.X_OK):
        return f"permission denied: the folder {shown_path(folder)} cannot be searched"
    return "permission denied"


def folder_error(folder: Pathish, e: OSError) -> InputError:
    """``-d OUTDIR`` could not be created: one line naming it and why."""
    if e.errno == errno.EACCES:
        reason = _unsearchable(os.path.join(os.fspath(folder), "x"))
    elif e.errno in (errno.ENOTDIR, errno.EEXIST):
        reason = "a part of the path is a file, not a folder"
    else:
        reason = _write_reason(e)
    return InputError(f"cannot create the output folder: {reason}", file=shown_path(folder))


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
        self.removed = False
        """The old target was removed (:meth:`remove_target`) and nothing replaced it yet."""
        output: _Output | None = None
        try:
            # Created and recorded with the interrupts held: an interrupt right after the file
            # appears finds it recorded here, and the cleanup below removes it.
            with signals_held():
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
            with signals_held():
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

    def remove_target(self) -> None:
        """Remove the old target before the file it describes is replaced (callers hold the
        interrupt signals)."""
        try:
            os.unlink(self.target)
        except FileNotFoundError:
            return
        except OSError as e:
            raise _output_error(self.path, _write_reason(e)) from None
        self.removed = True

    def discard(self) -> None:
        """Remove the temporary file; the target stays as it was (or removed, where
        :meth:`remove_target` removed it)."""
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None
            WRITES._record(self.shown, replaced=False, existed=self.existed, removed=self.removed)


def _open_temporary(target: Path, path: Pathish) -> tuple[int, Path]:
    """A new file beside ``target``, created with mode 0666 so that the umask applies."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    sweep_once(target.parent)
    for _ in range(100):
        tmp = temporary_name(target)
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as e:
            reason = _write_reason(e) if e.errno != errno.ENOENT else "it cannot hold files"
            raise _output_error(
                path, f"cannot create a file in {shown_path(target.parent)}: {reason}"
            ) from None
        hold_while_writing(fd)
        return fd, tmp
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
    a report that records the VGF's digest; they are renamed into place after this one
    (:func:`commit`: their old files removed first), with the interrupt signals held, so an
    interrupt never leaves one that describes another file than ``path``.

    ``hold``: a list that gets the staged outputs instead, written but not renamed, for
    :func:`commit` or :func:`discard` later (until then a :class:`BaseException`, an
    interrupt, must end in one of them)."""
    inputs = tuple(inputs)
    others = together if together is not None else []
    try:
        staged = Staged(path, data, inputs)
    except BaseException:
        with signals_held():
            for other in others:
                other.discard()
        raise
    group = [staged, *others]
    if hold is not None:
        hold.extend(group)
        return
    commit(group)


def commit(group: Sequence[Staged]) -> None:
    """Rename staged outputs into place together, with the interrupt signals held and the
    folders locked against other writers: the first is the file the others describe (a VGF,
    then its report). The others' old files are removed before the first is renamed, and
    renamed after it, so that no moment shows a report beside a VGF it does not describe."""
    if not group:
        return
    with folders_locked(sorted({item.target.parent for item in group})), signals_held():
        try:
            for item in group[1:]:
                item.remove_target()
            for item in group:
                item.commit()
        finally:
            for item in group:
                item.discard()


def discard(group: Sequence[Staged]) -> None:
    """Remove staged outputs' temporary files: their targets stay as they were."""
    with signals_held():
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
