"""Temporary files carry their writer's pid; :func:`sweep` removes those whose writer is gone
(no such process, and nothing holds the file's lock) and nothing else."""

from __future__ import annotations

import fcntl
import os
import subprocess
from pathlib import Path

from vgfc.files.writers import folders_locked, sweep, temporary_name


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_temporary_name_carries_the_writers_pid(tmp_path: Path) -> None:
    name = temporary_name(tmp_path / "m.vgf").name
    assert name.startswith(f".m.vgf.{os.getpid()}.") and name.endswith(".tmp")


def test_sweep_removes_only_what_a_gone_writer_left(tmp_path: Path) -> None:
    gone = dead_pid()
    stale = tmp_path / f".m.vgf.{gone}.0123abcd.tmp"
    mine = tmp_path / f".m.vgf.{os.getpid()}.0123abcd.tmp"
    others = [
        tmp_path / ".m.vgf.tmp",  # not a name vgfc writes
        tmp_path / f".m.vgf.{gone}.zzzz.tmp",
        tmp_path / f"m.vgf.{gone}.0123abcd.tmp",  # not hidden
        tmp_path / "m.vgf",
    ]
    for path in (stale, mine, *others):
        path.write_bytes(b"x")
    link = tmp_path / f".n.vgf.{gone}.0123abcd.tmp"
    link.symlink_to(tmp_path / "m.vgf")
    assert sweep(tmp_path) == [stale]
    assert sorted(tmp_path.iterdir()) == sorted([mine, *others, link])


def test_a_locked_file_is_a_writer_still_writing(tmp_path: Path) -> None:
    """A writer in another pid namespace (or host) has a pid that means nothing here: its lock
    on the file says it is still writing."""
    path = tmp_path / f".m.vgf.{dead_pid()}.0123abcd.tmp"
    path.write_bytes(b"x")
    fd = os.open(path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    try:
        assert sweep(tmp_path) == []
    finally:
        os.close(fd)
    assert sweep(tmp_path) == [path]


def test_sweep_of_a_folder_that_cannot_be_listed_is_nothing(tmp_path: Path) -> None:
    assert sweep(tmp_path / "missing") == []
    (tmp_path / "file").write_bytes(b"")
    assert sweep(tmp_path / "file") == []


def test_the_folder_lock_excludes_another_writer(tmp_path: Path) -> None:
    with folders_locked([tmp_path, tmp_path / ".", tmp_path]):  # one folder, locked once
        fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                raise AssertionError("the folder was not locked")
            except BlockingIOError:
                pass
        finally:
            os.close(fd)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again
    os.close(fd)
