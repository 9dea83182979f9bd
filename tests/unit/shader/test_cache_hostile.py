"""The shader cache read as any input is: what stands where an entry belongs may be anything a
user, a crash or another process left there, and none of it may hang, crash or mislead a compile;
``vgfc cache clear`` never reaches outside the cache folder and says what it could not remove."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR

from vgfc.compiler import compile_model
from vgfc.shader import cache, cache_entries, cache_keys

MODEL = SAMPLES_DIR / "chain.tosa"
"""Two GLSL shaders between graph operators."""


def _entries() -> list[Path]:
    return sorted((cache.cache_dir() / f"v{cache_keys.FORMAT}").iterdir())


@pytest.fixture
def filled() -> tuple[bytes, list[Path]]:
    """The model's VGF, and the cache entries its compile stored."""
    vgf = compile_model(MODEL).vgf
    assert vgf is not None
    found = [p for p in _entries() if not p.name.startswith(".")]
    assert len(found) == 2
    return vgf, found


def _replace(entry: Path, how: str, tmp_path: Path) -> None:
    entry.unlink()
    if how == "fifo":
        os.mkfifo(entry)
    elif how == "device":
        entry.symlink_to("/dev/zero")
    elif how == "directory":
        entry.mkdir()
    elif how == "sparse":
        with open(entry, "wb") as f:
            f.truncate(cache_entries.ENTRY_BYTES_MAX + 1)
    elif how == "loop":
        entry.symlink_to(entry)
    elif how == "outside":
        outside = tmp_path / "elsewhere"
        outside.write_bytes(b"not an entry")
        entry.symlink_to(outside)
    elif how == "garbage":
        entry.write_bytes(b"\0" * 100)


@pytest.mark.parametrize(
    "how", ["fifo", "device", "directory", "sparse", "loop", "outside", "garbage"]
)
def test_a_bad_entry_is_a_miss_and_is_rebuilt(
    filled: tuple[bytes, list[Path]], how: str, tmp_path: Path
) -> None:
    vgf, entries = filled
    for entry in entries:
        _replace(entry, how, tmp_path)
    assert compile_model(MODEL).vgf == vgf  # no hang, no error, the same bytes
    for entry in entries:
        if how == "directory":
            assert entry.is_dir()  # a folder is not removed; the compile works around it
        else:
            assert entry.is_file() and not entry.is_symlink()  # rebuilt, stored anew
            assert cache._read_entry(str(entry)) is not None
    if how == "outside":
        assert (tmp_path / "elsewhere").read_bytes() == b"not an entry"


def test_an_include_that_became_a_fifo_makes_the_entry_stale(tmp_path: Path) -> None:
    include = tmp_path / "inc"
    include.mkdir()
    (include / "scale.glsl").write_text("const float SCALE = 2.0;\n")
    recorded = str(include / "scale.glsl")
    import hashlib

    sha = hashlib.sha256((include / "scale.glsl").read_bytes()).hexdigest()
    assert cache_entries._still(recorded, sha)
    (include / "scale.glsl").unlink()
    os.mkfifo(include / "scale.glsl")
    assert not cache_entries._still(recorded, sha)  # and it returned: the FIFO was never read


def test_a_planted_link_never_redirects_a_store(
    filled: tuple[bytes, list[Path]], tmp_path: Path
) -> None:
    vgf, entries = filled
    target = tmp_path / "victim"
    target.write_bytes(b"keep me")
    folder = entries[0].parent
    for entry in entries:
        entry.unlink()
    tmp = folder / f".tmp-{os.getpid()}-{__import__('threading').get_ident()}"
    tmp.symlink_to(target)
    assert compile_model(MODEL).vgf == vgf
    assert target.read_bytes() == b"keep me"


def test_clear_never_leaves_the_cache_folder(
    filled: tuple[bytes, list[Path]], tmp_path: Path, cli
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    name = "0" * 64
    (outside / name).write_bytes(b"someone else's file")
    (cache.cache_dir() / "v9").symlink_to(outside, target_is_directory=True)
    _, entries = filled
    entries[0].unlink()
    entries[0].symlink_to(outside / name)
    run = cli("cache", "clear")
    assert run.code == 0, run.err
    assert (outside / name).read_bytes() == b"someone else's file"
    assert (cache.cache_dir() / "v9").is_symlink()  # not a layout folder of the cache's own
    assert not entries[0].exists() and not entries[0].is_symlink()
    assert "removed 2 files" in run.out


def test_clear_says_what_it_could_not_remove(
    filled: tuple[bytes, list[Path]], cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path.unlink

    def refuse(self: Path, missing_ok: bool = False) -> None:
        if self.parent.name == f"v{cache_keys.FORMAT}":
            raise PermissionError(13, "Permission denied")
        real(self, missing_ok)

    monkeypatch.setattr(Path, "unlink", refuse)
    run = cli("cache", "clear")
    assert run.code == 1
    assert "removed 0 files" in run.out
    assert run.err.count("cannot remove: Permission denied") == 2


def test_a_cache_folder_that_cannot_be_read_is_an_error(cli, tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder's parent should be")
    monkeypatch.setenv("VGFC_CACHE_DIR", str(blocker))
    for args in (("cache",), ("cache", "clear")):
        run = cli(*args)
        assert run.code == 1, args
        assert "the shader cache cannot be used: cannot make the folder" in run.err
        assert "Traceback" not in run.err
