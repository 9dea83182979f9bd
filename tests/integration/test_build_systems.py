"""vgfc as a build step of real GNU make, ninja and CMake (Ninja and Makefile generators), driven by
its dependency files (``-MD``/``-MF``), with the recipes docs/build-systems.md shows, read from
the doc itself.

The oracle is what the build tools decide, never time: a ``vgfc`` on ``PATH`` that notes each VGF
it is asked to write, and the tools' own "up to date" answers (``make -q``, ``ninja -n``). Two
models share ``include/shared.glsl``; ``a`` also includes ``include/a.glsl``, which includes
``include/only_a.glsl``. Touching an include rebuilds exactly the models that use it, and a build
with nothing changed runs nothing, on a cold shader cache and a warm one (touched includes keep
their contents, so the rebuilds after the first come from the cache). The tools are Debian packages
that ``make test`` installs (make, ninja-build, cmake).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from paths import ROOT
from shader_models import COPY, attrs, model

import vgfc

pytestmark = pytest.mark.slow

DOC = ROOT / "docs" / "build-systems.md"


def recipe(language: str) -> str:
    """The one fenced block of ``language`` in docs/build-systems.md."""
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1, language
    return blocks[0]


def shader(*includes: str, scale: str) -> str:
    lines = "".join(f'#include "{name}"\n' for name in includes)
    return COPY.replace("#version 450\n", f"#version 450\n{lines}").replace(
        "x[i] * 2.0", f"x[i] * {scale}"
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """models/a.tosa and models/b.tosa, include/, and a logging ``vgfc`` first on ``PATH``."""
    root = tmp_path / "project"
    (root / "models").mkdir(parents=True)
    include = root / "include"
    include.mkdir()
    (include / "shared.glsl").write_text("#define SHARED 1.0\n")
    (include / "a.glsl").write_text('#include "only_a.glsl"\n')
    (include / "only_a.glsl").write_text("#define ONLY_A 2.0\n")
    for name, code in (
        ("a", shader("shared.glsl", "a.glsl", scale="(SHARED * ONLY_A)")),
        ("b", shader("shared.glsl", scale="SHARED")),
    ):
        built = model(tmp_path, attrs(code))
        built.rename(root / "models" / f"{name}.tosa")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "compiled.log"
    script = bin_dir / "vgfc"
    # The vgfc under test (this checkout), noting the VGF each call writes (the word after -o;
    # a call with -M writes none).
    program = (
        "import sys; from vgfc.cli import console_main; "
        "sys.argv[0] = 'vgfc'; "
        "'-M' in sys.argv or "
        f"open({str(log)!r}, 'a').write(sys.argv[sys.argv.index('-o') + 1] + '\\n'); "
        "console_main()"
    )
    package_root = str(Path(vgfc.__file__).resolve().parents[1])
    script.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH={_sh(package_root)}${{PYTHONPATH:+:$PYTHONPATH}} "
        f'exec {_sh(sys.executable)} -c {_sh(program)} "$@"\n'
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(root)
    return root


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def compiled(project: Path) -> set[str]:
    """The models compiled since the last call (by the stem of the VGF written)."""
    log = project.parent / "compiled.log"
    if not log.exists():
        return set()
    names = {Path(line).stem for line in log.read_text().splitlines()}
    log.unlink()
    return names


def tool(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    found = shutil.which(args[0])
    assert found is not None, f"{args[0]} is missing: `make apt-deps` installs it"
    return subprocess.run(
        [found, *args[1:]], capture_output=True, text=True, cwd=cwd, timeout=600, check=False
    )


def ok(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def touch(path: Path) -> None:
    """A newer modification time than any file built so far (and none in the future, which the
    next build's outputs would not pass), the contents unchanged (so the shader cache still
    holds the result)."""
    newest = max(p.stat().st_mtime_ns for p in path.parent.parent.rglob("*") if p.is_file())
    when = max(time.time_ns(), newest + 1000)
    os.utime(path, ns=(when, when))


def exercise(
    project: Path,
    build: Callable[[], None],
    up_to_date: Callable[[], bool] | None,
    *,
    phony: bool,
) -> None:
    """The rebuilds every build system must get right. ``up_to_date``: the tool's own dry run,
    where it has one that can be trusted."""
    include = project / "include"
    build()
    assert compiled(project) == {"a", "b"}
    assert up_to_date is None or up_to_date()
    build()
    assert compiled(project) == set()

    touch(include / "shared.glsl")
    assert up_to_date is None or not up_to_date()
    build()
    assert compiled(project) == {"a", "b"}  # from the shader cache: the rules list the same files

    touch(include / "only_a.glsl")  # included by an include
    build()
    assert compiled(project) == {"a"}
    build()
    assert compiled(project) == set()

    touch(include / "shared.glsl")  # the rules written on a warm cache still name it
    build()
    assert compiled(project) == {"a", "b"}

    touch(project / "models" / "b.tosa")
    build()
    assert compiled(project) == {"b"}

    if phony:  # an include deleted along with its #include: the model is rebuilt, no error
        (include / "a.glsl").write_text("#define ONLY_A 3.0\n")
        (include / "only_a.glsl").unlink()
        build()
        assert compiled(project) == {"a"}
        build()
        assert compiled(project) == set()


def test_gnu_make(project: Path) -> None:
    (project / "Makefile").write_text(recipe("make"))
    exercise(
        project,
        lambda: ok(tool("make", "-s")) and None,
        lambda: tool("make", "-q").returncode == 0,
        phony=True,
    )
    # After only_a.glsl went: the rule, then -MP's empty rules for all but the model.
    assert (project / "build" / "a.d").read_text() == (
        "build/a.vgf: \\\n  models/a.tosa \\\n  include/shared.glsl \\\n  include/a.glsl\n"
        "\ninclude/shared.glsl:\n\ninclude/a.glsl:\n"
    )


def test_gnu_make_with_rules_made_by_dash_m(project: Path) -> None:
    """The rules come from ``vgfc compile -M`` before any VGF is built (make remakes the
    included ``.d`` files first); the same rebuilds follow as with ``-MD``."""
    (project / "Makefile").write_text(recipe("makefile"))
    exercise(
        project,
        lambda: ok(tool("make", "-s")) and None,
        lambda: tool("make", "-q").returncode == 0,
        phony=True,
    )
    assert (project / "build" / "a.d").read_text() == (
        "build/a.vgf build/a.d: \\\n  models/a.tosa \\\n  include/shared.glsl \\\n"
        "  include/a.glsl\n\ninclude/shared.glsl:\n\ninclude/a.glsl:\n"
    )


def test_ninja(project: Path) -> None:
    (project / "build.ninja").write_text(recipe("ninja"))

    def up_to_date() -> bool:
        run = tool("ninja", "-n", "-d", "explain")
        ok(run)
        return "ninja: no work to do." in run.stdout

    exercise(project, lambda: ok(tool("ninja")) and None, up_to_date, phony=True)
    deps = ok(tool("ninja", "-t", "deps", "build/b.vgf"))
    assert "models/b.tosa" in deps and "include/shared.glsl" in deps
    assert "only_a.glsl" not in deps


@pytest.mark.parametrize("generator", ["Ninja", "Unix Makefiles"])
def test_cmake(project: Path, generator: str) -> None:
    (project / "CMakeLists.txt").write_text(recipe("cmake"))
    build_dir = project / "cmake-build"
    ok(tool("cmake", "-S", str(project), "-B", str(build_dir), "-G", generator))

    def up_to_date() -> bool:
        return "ninja: no work to do." in ok(tool("ninja", "-n", cwd=build_dir))

    # The Makefile generator's dry run cannot tell: it reads the dependency files in a step
    # (cmake_depends) that make -n only prints; the builds' own log is the oracle there.
    exercise(
        project,
        lambda: ok(tool("cmake", "--build", str(build_dir))) and None,
        up_to_date if generator == "Ninja" else None,
        phony=False,
    )


def test_odd_file_names_reach_make_and_ninja_intact(project: Path) -> None:
    """Spaces, ``$`` and ``#`` in an include folder's name, escaped as gcc escapes them and read
    back by both tools: touching the include rebuilds the model."""
    odd = project / "odd dir $#"
    (project / "include").rename(odd)
    (project / "Makefile").write_text(
        "build/%.vgf: models/%.tosa\n"
        "\tmkdir -p build && vgfc compile $< -o $@ -I 'odd dir $$#' -MD -MP -q\n"
        "-include build/a.d\n"
    )
    (project / "build.ninja").write_text(
        "rule vgfc\n"
        "  command = vgfc compile $in -o $out -I 'odd dir $$#' -MF $out.d -q\n"
        "  depfile = $out.d\n"
        "  deps = gcc\n"
        "build nbuild/a.vgf: vgfc models/a.tosa\n"
    )
    ok(tool("make", "-s", "build/a.vgf"))
    ok(tool("ninja"))
    assert compiled(project) == {"a"}
    assert "odd\\ dir\\ $$\\#/shared.glsl" in (project / "build" / "a.d").read_text()
    assert tool("make", "-q", "build/a.vgf").returncode == 0
    assert "no work to do" in ok(tool("ninja", "-n"))
    touch(odd / "shared.glsl")
    assert tool("make", "-q", "build/a.vgf").returncode == 1
    ok(tool("make", "-s", "build/a.vgf"))
    ok(tool("ninja"))
    assert compiled(project) == {"a"}
