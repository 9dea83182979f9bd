"""vgfc.files.inputs.open_input: the one way vgfc opens what it reads.

Only regular files are read; everything else is refused before it is opened (a FIFO would block
``open()`` for ever, ``/dev/zero`` never ends), sizes are checked with ``fstat`` before a byte is
read, and every refusal is one InputError naming the file.
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path

import pytest

from vgfc.diagnostics import InputError, Location
from vgfc.files.inputs import map_input, open_input, read_input, read_text


def refusal(path: str | Path, **how: object) -> str:
    with pytest.raises(InputError) as caught:
        read_input(path, what="kernel library", **how)
    return caught.value.render()


def test_a_regular_file_reads_whole_in_parts_and_mapped(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"0123456789")
    with open_input(path, limit=10) as f:
        assert f.size == 10
        assert f.header(4) == b"0123"
        assert f.header(100) == b"0123456789"
        assert f.read() == b"0123456789"
        mapped = f.map()
    assert isinstance(mapped, mmap.mmap) and mapped[:] == b"0123456789"  # valid after close
    assert map_input(tmp_path / "f.bin")[:] == mapped[:]
    (tmp_path / "empty").write_bytes(b"")
    assert map_input(tmp_path / "empty") == b""


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "lib.yaml"
    os.mkfifo(fifo)
    text = refusal(fifo)
    assert (
        text == f"{fifo}: cannot read the kernel library: a FIFO (named pipe), not a regular file"
    )


@pytest.mark.parametrize(
    ("path", "kind"),
    [("/dev/zero", "a character device"), ("/dev/null", "a character device")],
)
def test_devices_are_refused(path: str, kind: str) -> None:
    assert refusal(path).endswith(f"{kind}, not a regular file")


def test_a_folder_a_loop_a_missing_file_and_a_nul_byte(tmp_path: Path) -> None:
    assert refusal(tmp_path).endswith("a folder, not a regular file")
    loop = tmp_path / "loop"
    os.symlink("loop", loop)
    assert refusal(loop).endswith("a symbolic link loop (or too many links)")
    assert refusal(tmp_path / "missing").endswith(": no such file")
    assert refusal(str(tmp_path / "a\0b")).endswith("the path holds a NUL byte")
    (tmp_path / "file").write_text("x")
    assert refusal(tmp_path / "file" / "x").endswith("a part of the path is not a folder")


def test_the_size_is_checked_before_anything_is_read(tmp_path: Path) -> None:
    sparse = tmp_path / "huge.yaml"
    with open(sparse, "wb") as f:
        f.truncate(3 << 30)  # 3 GB that take no space: reading them would
    text = refusal(sparse, limit=4 << 20, limit_name="library_bytes_max")
    assert text.endswith(
        "3221225472 bytes, more than the 4194304 a kernel library may have (library_bytes_max)"
    )


def test_a_file_longer_than_its_size_says_is_refused() -> None:
    # /proc files report size 0 and hold text.
    assert "grew past the 0 bytes its size said" in refusal("/proc/self/environ")


def test_refusals_name_the_path_as_shown_or_at_a_location(tmp_path: Path) -> None:
    fifo = tmp_path / "k.comp"
    os.mkfifo(fifo)
    assert refusal(fifo, shown="k.comp").startswith("k.comp: cannot read")
    where = Location(file="lib.yaml:12", key="test/Op: kernels[0].shader.file")
    with pytest.raises(InputError) as caught:
        read_input(fifo, what="shader", shown="k.comp", where=where)
    assert caught.value.render() == (
        "lib.yaml:12: test/Op: kernels[0].shader.file: k.comp: cannot read the shader: a FIFO "
        "(named pipe), not a regular file"
    )


def test_read_text_refuses_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "lib.yaml"
    path.write_bytes(b"ok\n\xff\n")
    with pytest.raises(InputError, match="not UTF-8 text: invalid start byte at byte 3"):
        read_text(path, what="kernel library")
