"""VGF input is bounded: ``vgfc inspect`` (and ``--diff``) read a file's header alone and check
every section against the file's size before anything else; FIFOs and devices are refused, a
sparse file of gigabytes costs one small read."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from paths import SAMPLES_DIR

from vgfc.compiler import compile_to
from vgfc.diagnostics import InputError
from vgfc.vgf.decode import read_vgf


@pytest.fixture(scope="module")
def vgf_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("vgf") / "m.vgf"
    compile_to(SAMPLES_DIR / "simple.tosa", path)
    return path.read_bytes()


def refusal(path: Path | str) -> str:
    with pytest.raises(InputError) as caught:
        read_vgf(path)
    text = caught.value.render()
    assert text.startswith(f"{path}: ") and "\n" not in text
    return text


def test_a_good_file_reads(tmp_path: Path, vgf_bytes: bytes) -> None:
    (tmp_path / "m.vgf").write_bytes(vgf_bytes)
    assert read_vgf(tmp_path / "m.vgf").modules


def test_not_regular_files_are_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.vgf")
    assert refusal(tmp_path / "fifo.vgf").endswith("a FIFO (named pipe), not a regular file")
    assert refusal("/dev/zero").endswith("a character device, not a regular file")
    os.symlink("loop.vgf", tmp_path / "loop.vgf")
    assert "symbolic link loop" in refusal(tmp_path / "loop.vgf")


def test_a_sparse_file_with_a_real_header_is_refused_from_the_header(
    tmp_path: Path, vgf_bytes: bytes
) -> None:
    path = tmp_path / "huge.vgf"
    with open(path, "wb") as f:
        f.truncate(3 << 30)
        f.write(vgf_bytes[:128])  # the header points at sections that now hold zeros
    assert refusal(path).endswith("malformed VGF file: a section does not decode")
    with open(path, "wb") as f:
        f.truncate(3 << 30)
    assert refusal(path).endswith("not a VGF file (bad header)")


@pytest.mark.parametrize("field", range(0x10, 0x50, 8))
def test_a_section_beyond_the_end_is_refused_before_it_is_read(
    tmp_path: Path, vgf_bytes: bytes, field: int
) -> None:
    data = bytearray(vgf_bytes)
    data[field : field + 8] = struct.pack("<Q", 2**40)
    path = tmp_path / "m.vgf"
    path.write_bytes(bytes(data))
    text = refusal(path)
    assert "lies beyond the end of the file" in text or "bad header" in text


def test_truncated_files(tmp_path: Path, vgf_bytes: bytes) -> None:
    path = tmp_path / "m.vgf"
    for size in (0, 10, 128, len(vgf_bytes) - 1):
        path.write_bytes(vgf_bytes[:size])
        text = refusal(path)
        assert "too short" in text or "beyond the end" in text or "bad header" in text
