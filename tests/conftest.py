from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent

# tests/executorch needs torch and ExecuTorch, which vgfc's own environment does not hold:
# `make test-executorch` (which .ci/run calls) runs that folder in a venv of its own.
collect_ignore = [] if importlib.util.find_spec("torch") else ["executorch"]
sys.path.insert(0, str(Path(__file__).resolve().parent))


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def cli():
    """Run ``vgfc`` in-process; returns exit code, stdout and stderr separately."""
    from vgfc.cli import cli as entry

    def run(*args: str) -> Run:
        result = CliRunner().invoke(entry, list(args), prog_name="vgfc")
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def vgfc_exe():
    """Run the installed ``vgfc`` console script in a real subprocess."""
    exe = Path(sys.executable).parent / "vgfc"

    def run(*args: str, cwd: Path | None = None) -> Run:
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
        p = subprocess.run(
            [str(exe), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
        )
        return Run(p.returncode, p.stdout, p.stderr)

    return run


@pytest.fixture(autouse=True)
def isolated_shader_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
):
    """Each test gets its own empty shader cache (``VGFC_CACHE_DIR``, which subprocesses
    inherit): the suite never reads or fills the user's cache, and no test sees another's
    entries."""
    folder = tmp_path_factory.mktemp("vgfc-cache")
    monkeypatch.setenv("VGFC_CACHE_DIR", str(folder))
    return folder
