"""What a shader's ``#include`` directives opened, cold and from the shader cache: the list a
dependency file is made of (vgfc/shader/cache_entries.py, build.py, vgfc.lower). A cache hit must
name the same files a compile names, and an entry that does not record them is never trusted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from shader_models import COPY, attrs, model

from vgfc.compiler import Options, compile_model
from vgfc.shader import cache_entries, cache_keys, glslang
from vgfc.shader.cache import cache_dir
from vgfc.shader.options import CompileOptions

INCLUDING = COPY.replace("#version 450\n", '#version 450\n#include "scale.glsl"\n').replace(
    "x[i] * 2.0", "x[i] * SCALE"
)


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources glslang is asked to compile while the test runs."""
    seen: list[str] = []
    real = glslang.compile_recorded

    def counting(source: str, *args: Any, **kwargs: Any) -> glslang.Compiled:
        seen.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(glslang, "compile_recorded", counting)
    return seen


def _layout(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    """A model whose shader includes scale.glsl, which includes value.glsl, from ``inc`` (the
    first of two include folders: ``empty`` is searched first and holds nothing)."""
    inc, empty = tmp_path / "inc", tmp_path / "empty"
    inc.mkdir()
    empty.mkdir()
    (inc / "scale.glsl").write_text('#include "value.glsl"\n#define SCALE VALUE\n')
    (inc / "value.glsl").write_text("#define VALUE 2.0\n")
    return model(tmp_path, attrs(INCLUDING)), (str(empty), str(inc))


def _reads(path: Path, dirs: tuple[str, ...], **options: Any) -> tuple[str, ...]:
    result = compile_model(path, Options(CompileOptions(include_dirs=dirs, **options)))
    assert result.vgf is not None
    return result.reads


def test_a_cache_hit_names_the_files_the_compile_included(
    tmp_path: Path, compiles: list[str]
) -> None:
    path, dirs = _layout(tmp_path)
    cold = _reads(path, dirs)
    warm = _reads(path, dirs)
    assert len(compiles) == 1  # the second was a hit
    assert warm == cold
    names = [Path(p).name for p in cold]
    # The model, then the includes opened (not the folders searched in vain).
    assert names == ["m.tosa", "scale.glsl", "value.glsl"]
    assert cold[1] == str(Path(dirs[1]) / "scale.glsl")
    assert all(Path(p).is_file() for p in cold)


def test_without_the_cache_the_same_files(tmp_path: Path) -> None:
    path, dirs = _layout(tmp_path)
    assert _reads(path, dirs, cache=False) == _reads(path, dirs)


def test_a_shader_without_includes_reads_only_the_model(tmp_path: Path) -> None:
    path = model(tmp_path, attrs())
    assert _reads(path, ()) == (str(path),)
    assert _reads(path, ()) == (str(path),)  # from the cache


def _rewrite_entries(change: Any) -> int:
    """Apply ``change`` to the JSON header of every cache entry, sealed again as the cache seals
    an entry (so only the header's content decides whether it is used)."""
    count = 0
    for entry in (cache_dir() / f"v{cache_keys.FORMAT}").iterdir():
        if entry.name.startswith("."):
            continue
        data = entry.read_bytes()
        body = data[: -cache_entries._DIGEST]
        start = len(cache_entries._MAGIC) + cache_entries._LENGTH.size
        (size,) = cache_entries._LENGTH.unpack_from(body, len(cache_entries._MAGIC))
        header = json.loads(body[start : start + size])
        change(header)
        text = json.dumps(header).encode()
        new = cache_entries._MAGIC + cache_entries._LENGTH.pack(len(text)) + text
        new += body[start + size :]
        entry.write_bytes(new + cache_keys.sha256(new).digest())
        count += 1
    return count


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda h: h.pop("includes"), id="no include list"),
        pytest.param(lambda h: h.update(includes=[[5, "0" * 64]]), id="a path that is no string"),
        pytest.param(lambda h: h.update(includes="inc/scale.glsl"), id="not a list"),
    ],
)
def test_an_entry_without_a_usable_include_list_is_a_miss(
    tmp_path: Path, compiles: list[str], change: Any
) -> None:
    """An entry that does not say what it included (written by an older layout, or damaged
    and sealed again) is compiled afresh, never served with an empty list."""
    path, dirs = _layout(tmp_path)
    cold = _reads(path, dirs)
    assert _rewrite_entries(change) == 1
    assert _reads(path, dirs) == cold
    assert len(compiles) == 2


def test_an_include_list_that_is_accurate_is_used(tmp_path: Path, compiles: list[str]) -> None:
    """The sealing of _rewrite_entries on its own leaves a usable entry (so the misses above
    come from the include lists)."""
    path, dirs = _layout(tmp_path)
    cold = _reads(path, dirs)
    assert _rewrite_entries(lambda h: None) == 1
    assert _reads(path, dirs) == cold
    assert len(compiles) == 1
