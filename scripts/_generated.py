"""The command line of the scripts that write a generated module (make_tosa_tables.py,
make_spirv_tables.py): write it, or with ``--check`` fail when the checked-in file differs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(target: Path, render: Callable[[], str], script: str, doc: str | None) -> None:
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the file is out of date")
    args = parser.parse_args()
    text = render()
    shown = target.relative_to(Path(script).resolve().parent.parent)
    if args.check:
        if not target.exists() or target.read_text() != text:
            sys.exit(f"{shown} is out of date: run {Path(script).name}")
        return
    target.write_text(text)
    print(f"wrote {shown}")
