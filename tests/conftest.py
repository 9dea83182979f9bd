"""Fixtures every kind of test shares, and the one place ``tests/support/`` is put on ``sys.path``.

Tests are grouped by stage and kind (``unit/<stage>/``, ``property/``, ``golden/``,
``differential/``, ``e2e/``, ``fuzz/``) and import their builders from ``tests/support/`` as
plain modules (``from tosa_factory import build``); a test module never imports another test
module. pytest imports test modules with ``--import-mode=importlib`` (pyproject.toml), so two
folders may each hold a ``test_model.py``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

from needs import missing
from paths import DATA, ROOT
from reference_tools import CACHE_VARIABLE

# The suite must pass on a loaded machine: no property test is held to a time (per example, or
# for generating its data). Hangs are caught by the tests' own bounds, not by hypothesis.
settings.register_profile(
    "loaded", settings(), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("loaded")

__all__ = ["ROOT", "Run"]

# tests/executorch needs torch and ExecuTorch, which vgfc's own environment does not hold:
# `make test-executorch` (which .ci/run calls) runs that folder in a venv of its own.
collect_ignore = [] if importlib.util.find_spec("torch") else ["executorch"]


def pytest_configure(config: pytest.Config) -> None:
    """One folder per run for the reference converter's files (``reference_tools``), made by the
    process that starts the run: pytest-xdist's workers inherit its name and share it."""
    if hasattr(config, "workerinput") or os.environ.get(CACHE_VARIABLE):
        return
    folder = tempfile.mkdtemp(prefix="vgfc-reference-")
    os.environ[CACHE_VARIABLE] = folder
    config.add_cleanup(lambda: (shutil.rmtree(folder, ignore_errors=True), _unset(folder)))


def _unset(folder: str) -> None:
    if os.environ.get(CACHE_VARIABLE) == folder:
        del os.environ[CACHE_VARIABLE]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite the golden files under tests/golden/ with what the code gives now "
        "(VGFC_UPDATE_GOLDENS=1 does the same)",
    )


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def cli() -> Callable[..., Run]:
    """Run ``vgfc`` in-process; returns exit code, stdout and stderr separately."""
    from vgfc.cli import cli as entry

    def run(*args: str) -> Run:
        result = CliRunner().invoke(entry, list(args), prog_name="vgfc")
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)

    return run


@pytest.fixture
def chain_model(tmp_path: Path) -> Path:
    """A model of three elementwise graph ops and no custom op (``tosa_factory.chain``)."""
    from tosa_factory import chain

    path = tmp_path / "chain.tosa"
    path.write_bytes(chain(3))
    return path


@pytest.fixture
def vgfc_exe() -> Callable[..., Run]:
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
) -> Path:
    """Each test gets its own empty shader cache (``VGFC_CACHE_DIR``, which subprocesses
    inherit): the suite never reads or fills the user's cache, and no test sees another's
    entries."""
    folder = tmp_path_factory.mktemp("vgfc-cache")
    monkeypatch.setenv("VGFC_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def stack() -> object:
    """The CPU emulation stack (lavapipe, Arm's ML emulation layers, the scenario runner), for
    tests that run a VGF; they skip without it, except in CI, where they fail."""
    from vgfc.diagnostics import UnsupportedError
    from vgfc.runner import find_stack

    try:
        return find_stack()
    except UnsupportedError as e:
        missing(str(e))


@pytest.fixture(scope="session")
def reference_model() -> None:
    """tosa-tools' ``tosa_reference_model``, the oracle of composed kernels and ``vgfc verify``."""
    from vgfc.diagnostics import UnsupportedError
    from vgfc.runner.numeric import _program

    try:
        _program("tosa_reference_model", "tosa-tools")
    except UnsupportedError as e:
        missing(str(e))


@pytest.fixture(scope="session")
def lib() -> object:
    """The test kernel library, ``tests/data/kernels/ops.yaml`` (read once: a Library is
    immutable)."""
    from vgfc.resolve.library.load import load_library

    return load_library(DATA / "kernels" / "ops.yaml")


class Goldens:
    """Compares text with a checked-in golden file, or rewrites the file when asked to
    (``pytest --update-goldens`` or ``VGFC_UPDATE_GOLDENS=1``)."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, path: Path, text: str) -> None:
        if self.update or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if not self.update:
                pytest.fail(f"{path.relative_to(ROOT)} did not exist: written, check it in")
            return
        assert text == path.read_text(), (
            f"{path.relative_to(ROOT)} differs; if the change is intended: "
            "pytest --update-goldens (or VGFC_UPDATE_GOLDENS=1)"
        )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Goldens:
    update = request.config.getoption("--update-goldens") or os.environ.get(
        "VGFC_UPDATE_GOLDENS", ""
    ) not in ("", "0")
    return Goldens(bool(update))
