"""Every script under scripts/ and benchmarks/ starts and answers ``--help``: they import the
test builders from tests/support and vgfc's own modules, and a move of either must not leave a
script that fails at its first line (``make bench`` once did)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from paths import ROOT

NEEDS_TORCH = {
    "export_executorch_models.py",
    "export_executorch_shader_payloads.py",
    "executorch_suite_offline.py",  # a pytest plugin, tested in tests/executorch
}
"""Run in ExecuTorch's venv (make test-executorch, test-executorch-suite), which has torch."""

SCRIPTS = sorted(
    p
    for folder in ("scripts", "benchmarks")
    for p in (ROOT / folder).glob("*.py")
    if p.name not in NEEDS_TORCH and not p.name.startswith("_")  # _name.py: a shared module
)


@pytest.mark.parametrize("script", SCRIPTS, ids=[f"{p.parent.name}/{p.name}" for p in SCRIPTS])
def test_the_script_starts(script: object) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout.lower(), done.stdout[-500:]


def test_the_bench_models_are_made(tmp_path: object) -> None:
    """make bench's first step, on its smallest model: the script reads the builders it stamps
    its models with (a moved builder once failed it after --help had passed)."""
    from pathlib import Path

    out = Path(str(tmp_path))
    only = ("--only", "chain1k")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_bench_models.py"), "--out", str(out), *only],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "chain1k.tosa").stat().st_size > 0
