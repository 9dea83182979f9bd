"""Every script under scripts/ and benchmarks/ starts and answers ``--help``: they import the
test builders from tests/support and vgfc's own modules, and a move of either must not leave a
script that fails at its first line (``make bench`` once did)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from paths import ROOT

NEEDS_TORCH = {"export_executorch_models.py"}
"""Run in ExecuTorch's venv (make test-executorch), which has torch."""

SCRIPTS = sorted(
    p
    for folder in ("scripts", "benchmarks")
    for p in (ROOT / folder).glob("*.py")
    if p.name not in NEEDS_TORCH
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
