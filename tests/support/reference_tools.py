"""The independent oracles the tests run: the reference converter and vgf_dump.

Both come from PyPI packages in the test extras (ai-ml-sdk-model-converter, ai-ml-sdk-vgf-
library). They are looked up next to the running Python, then on PATH, then in the packages'
own files.

Several suites compare with the reference converter's file of the same model (the conformance
tests, the differential suite, the codec and runner tests), so within one test run each model is
converted once: :func:`run_reference` keeps what the converter wrote and said in the folder that
``VGFC_TEST_REFERENCE_CACHE`` names (tests/conftest.py makes one per run, shared by
pytest-xdist's workers), keyed by the model's bytes. The converter is deterministic; outside a
test run (the variable unset) every call runs it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

CACHE_VARIABLE = "VGFC_TEST_REFERENCE_CACHE"


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


def run_reference(model: Path, out: Path) -> tuple[int, str]:
    """``model-converter --input model --output out``: its exit code and what it printed
    (stdout, then stderr); ``out`` exists when it wrote one. Run once per model and test run."""
    folder = os.environ.get(CACHE_VARIABLE)
    if not folder:
        return _convert(model, out)
    entry = Path(folder) / hashlib.sha256(model.read_bytes()).hexdigest()
    said = entry.with_suffix(".json")
    if not said.exists():
        with tempfile.TemporaryDirectory(dir=folder) as work:
            vgf = Path(work) / "out.vgf"
            code, output = _convert(model, vgf)
            if vgf.exists():
                os.replace(vgf, entry.with_suffix(".vgf"))
            # Written last, and atomically: an entry whose .json exists is whole.
            (Path(work) / "said.json").write_text(json.dumps([code, output]))
            os.replace(Path(work) / "said.json", said)
    code, output = json.loads(said.read_text())
    if entry.with_suffix(".vgf").exists():
        shutil.copyfile(entry.with_suffix(".vgf"), out)
    return code, output


def _convert(model: Path, out: Path) -> tuple[int, str]:
    exe = tool("model-converter", "ai-ml-sdk-model-converter")
    run = subprocess.run(
        [str(exe), "--input", str(model), "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run.returncode, run.stdout + run.stderr


def reference_convert(model: Path, out: Path) -> Path:
    """Convert ``model`` with the reference converter (model-converter); it must succeed."""
    code, output = run_reference(model, out)
    assert code == 0 and out.is_file(), output[-4000:]
    return out


def vgf_dump(vgf: Path, out: Path) -> Path:
    """Dump ``vgf`` to JSON with the VGF library's own tool."""
    exe = tool("vgf_dump", "ai-ml-sdk-vgf-library")
    run = subprocess.run(
        [str(exe), "-i", str(vgf), "-o", str(out)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out
