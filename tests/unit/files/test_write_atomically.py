"""vgfc.files.outputs.write_atomically: the one way outputs are written.

A temporary file beside the target, renamed over it once complete; only a regular file is ever
replaced, never an input; permissions as a plain ``open()`` would give (umask; no setuid); a
write error or an interrupt leaves the target as it was, no temporary file, and says which.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from vgfc.diagnostics import InputError
from vgfc.files.interrupts import Interrupted
from vgfc.files.outputs import WRITES, Staged, commit, discard, stage, write_atomically


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def refusal(path: Path | str, **how: object) -> str:
    with pytest.raises(InputError) as caught:
        write_atomically(path, b"new", **how)  # type: ignore[arg-type]
    return caught.value.render()


def test_writes_and_replaces_a_regular_file(tmp_path: Path) -> None:
    target = tmp_path / "out.vgf"
    write_atomically(target, b"one")
    write_atomically(target, lambda f: f.write(b"two" * 1000))
    assert target.read_bytes() == b"two" * 1000
    assert leftovers(tmp_path) == []


def test_a_device_is_never_replaced() -> None:
    text = refusal("/dev/null")
    assert text == (
        "/dev/null: cannot write output file: it is a character device: vgfc writes only regular "
        "files and never replaces anything else"
    )
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_and_a_folder_are_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    assert "it is a FIFO (named pipe)" in refusal(tmp_path / "fifo")
    assert "it is a folder" in refusal(tmp_path)
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


def test_an_input_is_never_replaced_under_any_name(tmp_path: Path) -> None:
    model = tmp_path / "m.tosa"
    model.write_bytes(b"model")
    os.link(model, tmp_path / "link.tosa")
    os.symlink(model, tmp_path / "sym.tosa")
    for name in ("m.tosa", "link.tosa", "sym.tosa"):
        text = refusal(tmp_path / name, inputs=[model])
        assert text.endswith(f"it is {model}, an input of this command")
    assert model.read_bytes() == b"model"


def test_the_folder_must_exist(tmp_path: Path) -> None:
    text = refusal(tmp_path / "missing" / "out.vgf")
    assert text.endswith(
        f"the folder {tmp_path / 'missing'} does not exist (vgfc creates a folder only for "
        "-d OUTDIR)"
    )
    (tmp_path / "file").write_text("x")
    assert refusal(tmp_path / "file" / "out.vgf").endswith(
        "a part of the path is a file, not a folder"
    )
    assert refusal(str(tmp_path / "a\0b")).endswith("the path holds a NUL byte")
    assert refusal("/proc/self/out.vgf").endswith(
        f"cannot create a file in /proc/{os.getpid()}: it cannot hold files"
    )


@pytest.fixture
def umask_077() -> Iterator[None]:
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def test_a_new_file_respects_the_umask(tmp_path: Path, umask_077: None) -> None:
    write_atomically(tmp_path / "new", b"x")
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o600


def test_an_existing_file_keeps_its_mode_but_not_setuid_or_setgid(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_bytes(b"old")
    os.chmod(target, 0o6755)
    write_atomically(target, b"new")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o755


def test_an_error_while_writing_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_bytes(b"old")

    def broken(f: object) -> None:
        f.write(b"half")  # type: ignore[attr-defined]
        raise ValueError("the encoder failed")

    with pytest.raises(ValueError):
        write_atomically(target, broken)
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []


def test_a_full_disk_is_one_line_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write

    def full(fd: int, data: object) -> int:
        if fd > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "write", full)
    text = refusal(tmp_path / "out.vgf")
    monkeypatch.undo()
    assert text == f"{tmp_path / 'out.vgf'}: cannot write output file: no space left on the device"
    assert list(tmp_path.iterdir()) == []


def _mount(folder: Path, options: str) -> bool:
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
    )
    return done.returncode == 0


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0, reason="mounts need Linux and root"
)
def test_a_real_full_file_system_and_a_read_only_one(tmp_path: Path) -> None:
    tiny, readonly = tmp_path / "tiny", tmp_path / "ro"
    if not (_mount(tiny, "size=64k") and _mount(readonly, "ro,size=64k")):
        pytest.skip("this machine does not let root mount a tmpfs")
    try:
        (tiny / "out").write_bytes(b"old")
        with pytest.raises(InputError, match="no space left on the device"):
            write_atomically(tiny / "out", b"x" * (1 << 20))
        assert (tiny / "out").read_bytes() == b"old" and leftovers(tiny) == []
        with pytest.raises(InputError, match="read-only file system"):
            write_atomically(readonly / "out", b"x")
    finally:
        for folder in (tiny, readonly):
            subprocess.run(["umount", "-l", str(folder)], check=False)


def test_an_interrupt_unwinds_and_the_log_says_what_was_left(tmp_path: Path) -> None:
    target = tmp_path / "out.vgf"
    target.write_bytes(b"old")
    WRITES.clear()

    def interrupted(f: object) -> None:
        f.write(b"partial")  # type: ignore[attr-defined]
        raise Interrupted(15)

    with pytest.raises(Interrupted):
        write_atomically(target, interrupted)
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []
    assert WRITES.outcome() == f"{target} was left as it was"
    WRITES.clear()
    write_atomically(tmp_path / "new.vgf", b"x")
    assert WRITES.outcome() == f"{tmp_path / 'new.vgf'} was written"


def test_outputs_written_together_are_all_old_or_all_new(tmp_path: Path) -> None:
    vgf, report = tmp_path / "m.vgf", tmp_path / "m.json"
    vgf.write_bytes(b"old vgf")
    report.write_bytes(b"old report")
    together: list[Staged] = []

    def write(f: object) -> None:
        f.write(b"new vgf")  # type: ignore[attr-defined]
        together.append(stage(report, b"new report"))
        raise Interrupted(1)  # after the report was staged, before either is renamed

    with pytest.raises(Interrupted):
        write_atomically(vgf, write, together=together)
    assert (vgf.read_bytes(), report.read_bytes()) == (b"old vgf", b"old report")
    assert leftovers(tmp_path) == []
    together.clear()
    write_atomically(
        vgf, lambda f: together.append(stage(report, b"r")) or f.write(b"v"), together=together
    )
    assert (vgf.read_bytes(), report.read_bytes()) == (b"v", b"r")


def test_held_outputs_wait_for_commit_or_discard(tmp_path: Path) -> None:
    target = tmp_path / "out"
    held: list[Staged] = []
    write_atomically(target, b"new", hold=held)
    assert not target.exists() and len(leftovers(tmp_path)) == 1
    discard(held)
    assert not target.exists() and leftovers(tmp_path) == []
    held.clear()
    write_atomically(target, b"new", hold=held)
    commit(held)
    assert target.read_bytes() == b"new" and leftovers(tmp_path) == []


def test_sigterm_in_a_process_removes_the_temporary_file(tmp_path: Path) -> None:
    """The handlers a command installs turn SIGTERM into Interrupted: sent in the middle of a
    write (by the writer itself, so no timing is involved), it removes the temporary file."""
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from vgfc.files.interrupts import Interrupted, interrupt_on_signals
        from vgfc.files.outputs import WRITES, write_atomically
        interrupt_on_signals()
        def write(f):
            f.write(b"half")
            os.kill(os.getpid(), signal.SIGTERM)
            f.write(b"never")
        try:
            write_atomically({str(tmp_path / "out")!r}, write)
        except Interrupted as e:
            print(e.name, WRITES.outcome())
            sys.exit(1)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert done.stdout.strip() == f"SIGTERM {tmp_path / 'out'} was not written"
    assert list(tmp_path.iterdir()) == []
