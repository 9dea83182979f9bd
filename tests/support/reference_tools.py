"""The independent oracles the tests run: the reference converter and vgf_dump.

Both come from PyPI packages in the test extras (ai-ml-sdk-model-converter, ai-ml-sdk-vgf-
library). They are looked up next to the running Python, then on PATH, then in the packages'
own files.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path


@functools.cache
def tool(name: str, distribution: str) -> Path:
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return beside
    found = shutil.which(name)
    if found:
        return Path(found)
    files = metadata.distribution(distribution).files or ()
    for f in files:
        if f.name == name and "bin" in f.parts:
            return Path(str(f.locate()))
    raise AssertionError(f"{name} is missing: make test installs {distribution}")


def reference_convert(model: Path, out: Path) -> Path:
    """Convert ``model`` with the reference converter (model-converter)."""
    exe = tool("model-converter", "ai-ml-sdk-model-converter")
    run = subprocess.run(
        [str(exe), "--input", str(model), "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return out


def vgf_dump(vgf: Path, out: Path) -> Path:
    """Dump ``vgf`` to JSON with the VGF library's own tool."""
    exe = tool("vgf_dump", "ai-ml-sdk-vgf-library")
    run = subprocess.run(
        [str(exe), "-i", str(vgf), "-o", str(out)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out
