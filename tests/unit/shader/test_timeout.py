"""Shader compilation under a deadline and a memory cap (``--shader-timeout``, issue 14).

A macro that doubles at each of 28 levels costs glslang 2^28 tokens, minutes of work in an
uninterruptible ctypes call; vgfc compiles in a worker process that it kills when the compile has
used its CPU time (or, as a backstop, at a wall-clock deadline far above it). Nothing here
measures time: each test asserts what the limit does (the error that names it, the worker process
killed and replaced, nothing written), or that a loaded machine fails no correct shader.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
from pathlib import Path

import pytest
from shader_models import attrs, model, where

from vgfc.diagnostics import ShaderError
from vgfc.processes import Worker, backstop
from vgfc.shader import glslang
from vgfc.shader.glslang import DEFAULT_TIMEOUT, CompileOptions, Language, compile_shader

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")


def bomb(levels: int) -> str:
    """2^levels tokens for the preprocessor to evaluate, in constant memory."""
    lines = ["#define A0 1"]
    lines += [f"#define A{i} A{i - 1} + A{i - 1}" for i in range(1, levels + 1)]
    return "\n".join([*lines, f"#if A{levels} == 0", "#error never", "#endif", ""])


GLSL_BODY = """layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < 64u) y[i] = x[i];
}
"""

HLSL_BODY = """[[vk::binding(0, 0)]] StructuredBuffer<float> x;
[[vk::binding(1, 0)]] RWStructuredBuffer<float> y;
[numthreads(16, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) {
    if (id.x < 64) y[id.x] = x[id.x];
}
"""


def shader(language: str, levels: int) -> dict[str, object]:
    if language == "GLSL":
        return attrs("#version 450\n" + bomb(levels) + GLSL_BODY)
    return attrs(bomb(levels) + HLSL_BODY, entry_point="CSMain", shader_language="HLSL")


def running_worker() -> int:
    """The pid of the shader compiler's worker, started by compiling a small shader."""
    compile_shader("#version 450\n" + GLSL_BODY, Language.GLSL, "main")
    process = glslang._WORKER._process
    assert process is not None
    return process.pid


def assert_ended(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


@pytest.mark.parametrize("language", ["GLSL", "HLSL"])
def test_small_version_of_the_bomb_compiles(cli, tmp_path: Path, language: str) -> None:
    run = cli("check", str(model(tmp_path, shader(language, 4))), "--shader-timeout", "2")
    assert run.code == 0, run.err


@pytest.mark.parametrize("language", ["GLSL", "HLSL"])
@pytest.mark.parametrize(("command", "timeout"), [("check", "1"), ("compile", "0.5")])
def test_bomb_stops_at_the_deadline(
    cli, tmp_path: Path, language: str, command: str, timeout: str
) -> None:
    path = model(tmp_path, shader(language, 28))
    worker = running_worker()
    run = cli(command, str(path), "--shader-timeout", timeout)
    assert run.code == 1
    assert_ended(worker)  # the worker busy with the bomb was killed, not waited for
    assert run.err.splitlines() == [
        f"{path}: error: {where(1)}: shader_code: shader compilation exceeded {timeout} s "
        "of CPU time (--shader-timeout)"
    ]
    assert list(tmp_path.iterdir()) == [path]  # compile wrote nothing


@pytest.mark.slow
def test_default_timeout_applies_without_the_option(cli, tmp_path: Path) -> None:
    path = model(tmp_path, shader("GLSL", 28))
    worker = running_worker()
    run = cli("check", str(path))
    assert run.code == 1
    assert_ended(worker)
    assert f"exceeded {DEFAULT_TIMEOUT:g} s of CPU time (--shader-timeout)" in run.err


def test_the_next_shader_compiles_after_a_timeout(cli, tmp_path: Path) -> None:
    (tmp_path / "bombed").mkdir()
    bombed = model(tmp_path / "bombed", shader("HLSL", 28))
    run = cli("check", str(bombed), "--shader-timeout", "1")
    assert "exceeded 1 s" in run.err
    fine = model(tmp_path, shader("GLSL", 0))
    run = cli("check", str(fine))
    assert run.code == 0, run.err


def test_cli_passes_its_timeout_to_the_worker(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[float] = []
    real = glslang._WORKER.run

    def spy(function, args, timeout, memory):
        seen.append(timeout)
        return real(function, args, timeout, memory)

    monkeypatch.setattr(glslang._WORKER, "run", spy)
    path = model(tmp_path, shader("GLSL", 0))
    assert cli("check", str(path)).code == 0
    # --no-cache: the shader is in the cache since the check, and a hit compiles nothing.
    assert cli("compile", str(path), "-q", "--shader-timeout", "0.25", "--no-cache").code == 0
    assert seen == [DEFAULT_TIMEOUT, 0.25]


def test_zero_compiles_in_process(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("the worker was used")

    monkeypatch.setattr(glslang._WORKER, "run", refuse)
    path = model(tmp_path, shader("HLSL", 2))
    run = cli("compile", str(path), "-q", "--shader-timeout", "0")
    assert run.code == 0, run.err


def test_worker_and_in_process_agree() -> None:
    source = "#version 450\n" + bomb(3) + GLSL_BODY
    unbounded = CompileOptions(timeout=0)
    assert compile_shader(source, Language.GLSL, "main") == compile_shader(
        source, Language.GLSL, "main", unbounded
    )
    broken = source.replace("x[i]", "x[i] * nope")
    messages = []
    for options in (CompileOptions(), unbounded):
        with pytest.raises(ShaderError) as err:
            compile_shader(broken, Language.GLSL, "main", options)
        messages.append(err.value.message)
    assert messages[0] == messages[1] == ("GLSL compilation failed: 'nope': undeclared identifier")


def test_relative_include_folders_follow_the_callers_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_shader("#version 450\n" + GLSL_BODY, Language.GLSL, "main")  # the worker runs
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "copy.glsl").write_text("float copy(float v) { return v; }\n")
    source = '#version 450\n#include "copy.glsl"\n' + GLSL_BODY.replace("x[i];", "copy(x[i]);")
    monkeypatch.chdir(tmp_path)
    assert compile_shader(source, Language.GLSL, "main", CompileOptions(include_dirs=("inc",)))


@linux_only
def test_memory_bomb_stops_at_the_cap() -> None:
    # Each level doubles the parse tree: 2^20 additions take about 800 MB.
    defines = ["#define A0 1.0"] + [f"#define A{i} (A{i - 1} + A{i - 1})" for i in range(1, 21)]
    source = "#version 450\n" + "\n".join(defines) + "\n" + GLSL_BODY.replace("x[i]", "A20")
    options = CompileOptions(timeout=60, memory_mib=64)
    with pytest.raises(
        ShaderError,
        match=r"^shader compilation exceeded its memory limit \(64 MiB, --shader-memory\)$",
    ):
        compile_shader(source, Language.GLSL, "main", options)
    assert compile_shader("#version 450\n" + GLSL_BODY, Language.GLSL, "main", options)


@linux_only
def test_shader_memory_caps_the_compile_on_the_command_line(cli, tmp_path: Path) -> None:
    # Each level doubles the parse tree: 2^20 additions take about 800 MB.
    defines = ["#define A0 1.0"] + [f"#define A{i} (A{i - 1} + A{i - 1})" for i in range(1, 21)]
    source = "#version 450\n" + "\n".join(defines) + "\n" + GLSL_BODY.replace("x[i]", "A20")
    path = model(tmp_path, attrs(source))
    args = ("--shader-timeout", "60", "--no-cache")
    run = cli("compile", str(path), "--shader-memory", "64", *args)
    assert run.code == 1
    assert run.err.splitlines() == [
        f"{path}: error: {where(1)}: shader_code: shader compilation exceeded its memory limit "
        "(64 MiB, --shader-memory)"
    ]
    assert list(tmp_path.iterdir()) == [path]  # nothing written
    assert cli("check", str(path), "--shader-memory", "x").code == 2  # a usage error


# --- the worker itself --------------------------------------------------------------------------


@pytest.fixture
def worker():
    w = glslang.new_worker(load=False)
    yield w
    w.close()


def test_worker_timeout_kills_and_replaces_the_process(worker: Worker) -> None:
    first = worker.run(os.getpid, (), 5, 0)
    # A call that burns the CPU without end (as glslang on a bomb) is killed when it has used
    # its CPU time.
    with pytest.raises(ShaderError) as err:
        worker.run(sum, (range(1 << 62),), 0.5, 0)
    assert err.value.message == ("shader compilation exceeded 0.5 s of CPU time (--shader-timeout)")
    assert_ended(first)
    second = worker.run(os.getpid, (), 5, 0)
    assert second not in (first, os.getpid())
    assert worker.run(os.getpid, (), 5, 0) == second  # reused


def test_a_hung_call_meets_the_wall_clock_backstop(worker: Worker) -> None:
    first = worker.run(os.getpid, (), 5, 0)
    # signal.pause blocks using no CPU until a signal comes, and the worker ignores SIGINT: only
    # the kill at the wall-clock backstop ends it.
    with pytest.raises(ShaderError) as err:
        worker.run(signal.pause, (), 0.5, 0, wall=0.5)
    assert err.value.message == (
        "shader compilation did not end in 0.5 s of wall time (the backstop of --shader-timeout)"
    )
    assert_ended(first)
    assert worker.run(os.getpid, (), 5, 0) != first


def test_the_backstop_is_far_above_the_limit() -> None:
    for limit in (0.01, 1, DEFAULT_TIMEOUT, 600):
        assert backstop(limit) >= 10 * limit + 60


def _burn_a_second() -> None:
    while time.process_time() < 1.0:
        pass


def test_the_workers_set_up_is_not_counted() -> None:
    # The limit counts the call's own CPU time: a set-up (glslang's first use) that takes more
    # than it, done before the worker takes work, does not fail the first call.
    worker = Worker(glslang.LABELS, _burn_a_second)
    try:
        assert worker.run(time.process_time, (), 0.5, 0) >= 1.0
    finally:
        worker.close()


def test_worker_returns_exceptions_as_they_are(worker: Worker) -> None:
    with pytest.raises(ValueError, match="invalid literal"):
        worker.run(int, ("x",), 5, 0)
    assert worker.run(int, ("7",), 5, 0) == 7


def test_worker_crash_is_a_shader_error(worker: Worker) -> None:
    with pytest.raises(ShaderError, match=r"^the shader compiler crashed \(signal SIGABRT\)"):
        worker.run(os.abort, (), 5, 0)
    assert worker.run(len, ("abc",), 5, 0) == 3


def test_a_crash_quotes_only_what_its_own_request_wrote(worker: Worker) -> None:
    # A fuzzer finding: check and compile reported one crash differently because the message
    # quoted stderr an earlier request of the same worker had left behind.
    assert worker.run(os.write, (2, b"said by an earlier request\n"), 5, 0) > 0
    with pytest.raises(ShaderError) as err:
        worker.run(os.abort, (), 5, 0)
    assert err.value.message == "the shader compiler crashed (signal SIGABRT)"


@linux_only
def test_worker_limits(worker: Worker) -> None:
    with pytest.raises(ShaderError, match=r"exceeded its memory limit \(64 MiB, --shader-memory\)"):
        worker.run(bytes, (1 << 33,), 5, 64 << 20)
    soft, _ = worker.run(resource.getrlimit, (resource.RLIMIT_AS,), 5, 1 << 30)
    assert soft != resource.RLIM_INFINITY
    assert worker.run(resource.getrlimit, (resource.RLIMIT_AS,), 5, 0)[0] == resource.RLIM_INFINITY
    cpu, _ = worker.run(resource.getrlimit, (resource.RLIMIT_CPU,), 5, 0)
    assert 6 <= cpu <= 60  # the deadline plus a second of CPU time: it ends an orphaned worker
    assert worker.run(signal.getsignal, (signal.SIGINT,), 5, 0) == signal.SIG_IGN


def test_cli_option(cli, tmp_path: Path) -> None:
    for command in ("check", "compile"):
        assert "--shader-timeout SECONDS" in cli(command, "--help").out
    path = model(tmp_path, shader("GLSL", 0))
    run = cli("check", str(path), "--shader-timeout", "-1")
    assert run.code == 2
    assert "-1" in run.err
