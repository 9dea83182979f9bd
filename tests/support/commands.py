"""Running a command of this environment as a user would, for the tests that compare vgfc's
command line with the reference converter's: its output as text, no colour, a generous limit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def run_text(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``args`` run with ``NO_COLOR`` set, stdout and stderr captured as text."""
    return subprocess.run(
        [*map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=300,
    )
