"""vgfc as a Bazel action: the ``vgf_model`` macro the project ships (bazel/vgfc.bzl), run by real
Bazel (Debian's bazel-bootstrap, which ``make test`` installs; offline: a genrule needs no rule
set) in its Linux sandbox, with a disk cache standing in for a remote one.

One workspace and few Bazel commands, since each costs seconds: a sandboxed build of three
models (two with shaders that include headers, one through a kernel library), ``bazel clean``
then the same build served from the cache with the same bytes, a header changed rebuilding
exactly the model that declares it, and a model whose nested include is left undeclared failing
in the sandbox although the file is in the source tree; an option that would write an undeclared
file is refused. The oracle is Bazel's own account of what it ran (``N processes: ...
linux-sandbox``, ``remote cache hit``), and the files' bytes.
Bazel runs as the user running the suite, root included (nothing here needs another user).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT, SAMPLES_DIR
from shader_models import COPY, attrs, model

import vgfc

pytestmark = pytest.mark.slow

BUILD = """\
load("//bazel:vgfc.bzl", "vgf_model")

vgf_model(
    name = "a",
    model = "models/a.tosa",
    includes = ["include/shared.glsl", "include/a.glsl", "include/only_a.glsl"],
    include_dirs = ["include"],
)

vgf_model(
    name = "b",
    model = "models/b.tosa",
    includes = ["include/shared.glsl"],
    include_dirs = ["include"],
)

vgf_model(
    name = "k",
    model = "kernels/model.tosa",
    kernels = ["kernels/example_ops.yaml"],
    shaders = ["kernels/channel_scale.comp"],
)

# a.tosa again, with the include that a.glsl includes left out.
vgf_model(
    name = "undeclared",
    model = "models/a.tosa",
    includes = ["include/shared.glsl", "include/a.glsl"],
    include_dirs = ["include"],
    tags = ["manual"],
)
"""


def shader(*includes: str, scale: str) -> str:
    lines = "".join(f'#include "{name}"\n' for name in includes)
    return COPY.replace("#version 450\n", f"#version 450\n{lines}").replace(
        "x[i] * 2.0", f"x[i] * {scale}"
    )


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A Bazel workspace as docs/build-systems.md has a user make one: the shipped .bzl copied
    in, and tools/vgfc, a wrapper that runs the vgfc under test."""
    ws = tmp_path / "ws"
    for folder in ("bazel", "tools", "include", "models", "kernels"):
        (ws / folder).mkdir(parents=True)
    (ws / "WORKSPACE").write_text("")
    (ws / "BUILD").write_text(BUILD)
    (ws / "bazel" / "BUILD").write_text("")
    shutil.copy(ROOT / "bazel" / "vgfc.bzl", ws / "bazel" / "vgfc.bzl")
    (ws / "tools" / "BUILD").write_text('exports_files(["vgfc"])\n')
    package_root = str(Path(vgfc.__file__).resolve().parents[1])
    program = "import sys; from vgfc.cli import console_main; sys.argv[0] = 'vgfc'; console_main()"
    wrapper = ws / "tools" / "vgfc"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH={_sh(package_root)} exec {_sh(sys.executable)} -c {_sh(program)} "$@"\n'
    )
    wrapper.chmod(0o755)
    include = ws / "include"
    (include / "shared.glsl").write_text("#define SHARED 1.0\n")
    (include / "a.glsl").write_text('#include "only_a.glsl"\n')
    (include / "only_a.glsl").write_text("#define ONLY_A 2.0\n")
    for name, code in (
        ("a", shader("shared.glsl", "a.glsl", scale="(SHARED * ONLY_A)")),
        ("b", shader("shared.glsl", scale="SHARED")),
    ):
        model(tmp_path, attrs(code)).rename(ws / "models" / f"{name}.tosa")
    for name in ("model.tosa", "example_ops.yaml", "channel_scale.comp"):
        shutil.copy(SAMPLES_DIR / "kernels" / name, ws / "kernels" / name)
    return ws


class Bazel:
    """Bazel commands in one workspace, with its server and caches under the test's folder."""

    def __init__(self, ws: Path) -> None:
        found = shutil.which("bazel")
        assert found is not None, "bazel is missing: `make apt-deps` installs bazel-bootstrap"
        self.ws = ws
        self.startup = [
            found,
            # No user's or workspace's settings; the system's are the installation's (Debian's
            # names its install base and JDK there).
            "--nohome_rc",
            "--noworkspace_rc",
            f"--output_user_root={ws.parent / 'bazel-root'}",
            "--max_idle_secs=60",  # a server left by a killed test goes away by itself
        ]
        self.flags = [
            "--spawn_strategy=linux-sandbox",
            f"--disk_cache={ws.parent / 'bazel-cache'}",
            "--color=no",
            "--curses=no",
        ]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        flags = self.flags if args[0] == "build" else []
        return subprocess.run(
            [*self.startup, args[0], *flags, *args[1:]],
            cwd=self.ws,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    def build(self, *targets: str) -> dict[str, int]:
        """Build ``targets``; Bazel's count of the processes by how each was run."""
        run = self.run("build", *targets)
        assert run.returncode == 0, run.stdout + run.stderr
        return processes(run.stderr)


def processes(log: str) -> dict[str, int]:
    """``INFO: 4 processes: 3 remote cache hit, 1 internal.`` as {kind: count}."""
    found = re.findall(r"INFO: \d+ process(?:es)?: (.*)\.\n", log)
    assert found, log
    return {kind: int(n) for n, kind in re.findall(r"(\d+) ([a-z -]+?)(?:,|$)", found[-1])}


def test_vgf_model_in_the_sandbox_with_a_cache(workspace: Path) -> None:
    bazel = Bazel(workspace)
    out = workspace / "bazel-bin"
    names = ("a.vgf", "b.vgf", "k.vgf")
    try:
        # Every compile in the sandbox, giving the bytes a compile outside Bazel gives.
        assert bazel.build("//...").get("linux-sandbox") == 3
        first = {name: (out / name).read_bytes() for name in names}
        direct = vgfc.compile(
            workspace / "models" / "a.tosa", include_dirs=[workspace / "include"], cache=False
        )
        assert first["a.vgf"] == direct.vgf

        # After bazel clean every action comes from the cache, the same bytes.
        assert bazel.run("clean").returncode == 0
        assert not (out / "a.vgf").exists()
        ran = bazel.build("//...")
        assert ran.get("remote cache hit") == 3 and "linux-sandbox" not in ran, ran
        assert {name: (out / name).read_bytes() for name in names} == first

        # A header changed: only the model that declares it is compiled again.
        (workspace / "include" / "only_a.glsl").write_text("#define ONLY_A 3.0\n")
        assert bazel.build("//...").get("linux-sandbox") == 1
        assert (out / "a.vgf").read_bytes() != first["a.vgf"]
        assert (out / "b.vgf").read_bytes() == first["b.vgf"]

        # A nested include left undeclared is not in the sandbox: the compile fails, naming it.
        run = bazel.run("build", "//:undeclared")
        assert run.returncode != 0
        assert re.search(r"include/a\.glsl:1:\d+: error: .*only_a\.glsl", run.stderr), run.stderr
        assert not (out / "undeclared.vgf").exists()

        # An option that would write a file Bazel does not know of is refused on loading.
        (workspace / "bad").mkdir()
        (workspace / "bad" / "BUILD").write_text(
            'load("//bazel:vgfc.bzl", "vgf_model")\n'
            'vgf_model(name = "r", model = "//:models/b.tosa", copts = ["--report"])\n'
        )
        run = bazel.run("build", "//bad:r")
        assert run.returncode != 0
        assert "vgf_model r: copts: --report writes a file the rule does not declare" in run.stderr
    finally:
        bazel.run("shutdown")
