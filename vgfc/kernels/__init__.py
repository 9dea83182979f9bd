"""Kernel libraries: how custom operators that carry no shader are compiled.

A library (``--kernels lib.yaml``, format in ``schemas/kernel_library.schema.json``) maps a custom
op's domain and operator name to either a small graph of TOSA built-ins (``compose``) or a list of
partial shader kernels selected by the operands' dtypes and layouts (``kernels``), with the
op's parameters decoded from its ``implementation_attrs`` and rules for its output types and
shapes. :mod:`vgfc.kernels.library` reads a file, :mod:`vgfc.kernels.bind` binds one op, and the
resolve stage (:mod:`vgfc.custom.resolve`) splices the result into the graph.

Libraries shipped with vgfc are named instead of given as a path: ``--kernels mediapipe``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from vgfc.kernels.library import Entry, Library, load_library

__all__ = ["BUNDLED", "Entry", "Library", "bundled_path", "load_libraries", "load_library"]

BUNDLED = ("mediapipe",)
"""Libraries shipped in the package, by the name ``--kernels`` takes."""


def bundled_path(name: str) -> Path:
    """The file of a bundled library."""
    return Path(str(resources.files("vgfc.kernels").joinpath(name).joinpath(f"{name}.yaml")))


def load_libraries(specs: Sequence[str | os.PathLike[str]]) -> tuple[Library, ...]:
    """Each ``--kernels`` value: a bundled library's name or a file. Raises InputError."""
    out = []
    for spec in specs:
        text = os.fspath(spec)
        if text in BUNDLED and not Path(text).exists():
            out.append(load_library(bundled_path(text), shown=text))
        else:
            out.append(load_library(text))
    return tuple(out)
