#!/usr/bin/env python3
"""The converter ExecuTorch's tests call in ``make test-executorch-suite``: it keeps each input.

ExecuTorch runs ``$MODEL_CONVERTER_PATH [flags] -i X.tosa -o X.tosa.vgf``. This wrapper copies
``X.tosa`` into ``$VGFC_SUITE_KEEP/<test>/call-<n>.tosa`` (``<test>`` from the
``PYTEST_CURRENT_TEST`` pytest sets for the test that runs), records the command line, exit
code and stderr beside it (``call-<n>.json``), and runs ``$VGFC_SUITE_CONVERTER`` (default: the
``vgfc-model-converter`` beside this Python, else on PATH) with the same arguments. Standard
library only: it starts in whatever Python the test's environment has.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path


def folder_name(test: str) -> str:
    """``<file>__<test>[params]`` for the pytest node ``path/file.py::test[params]``."""
    path, _, name = test.rsplit(" (", 1)[0].partition("::")
    label = f"{Path(path).stem}__{name}" if name else Path(path).stem
    return re.sub(r"[^A-Za-z0-9_.\[\]+=-]", "_", label)[:200]


def test_folder(keep: Path) -> Path:
    """The running test's folder in ``keep`` (``unknown`` outside a test)."""
    return keep / folder_name(os.environ.get("PYTEST_CURRENT_TEST", "unknown"))


def input_of(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg in ("-i", "--input") and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--input="):
            return arg.split("=", 1)[1]
    return None


def main(argv: list[str]) -> int:
    beside = Path(sys.executable).parent / "vgfc-model-converter"
    default = str(beside) if beside.is_file() else "vgfc-model-converter"
    converter = os.environ.get("VGFC_SUITE_CONVERTER") or default
    keep = os.environ.get("VGFC_SUITE_KEEP")
    source = input_of(argv)
    if not keep or source is None or not os.path.isfile(source):
        return subprocess.call([converter, *argv])
    folder = test_folder(Path(keep))
    folder.mkdir(parents=True, exist_ok=True)
    n = sum(1 for _ in folder.glob("call-*.tosa"))
    shutil.copyfile(source, folder / f"call-{n}.tosa")
    run = subprocess.run([converter, *argv], stderr=subprocess.PIPE, text=True)
    sys.stderr.write(run.stderr)
    record = {"argv": argv, "returncode": run.returncode, "stderr": run.stderr[-4000:]}
    (folder / f"call-{n}.json").write_text(json.dumps(record, indent=1) + "\n")
    return run.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
