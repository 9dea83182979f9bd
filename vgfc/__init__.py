"""vgfc: compile TOSA models with Vulkan custom shaders into VGF files.

Library entry points::

    import vgfc
    graph = vgfc.load("model.tosa")   # read and verify
    plan = vgfc.partition(graph)      # ML and shader partitions
"""

from __future__ import annotations

import os

from vgfc.diagnostics import VgfcError
from vgfc.ir import Graph
from vgfc.partition import Plan, partition
from vgfc.tosa_reader import load as _read
from vgfc.tosa_reader import loads
from vgfc.verify import verify

__all__ = ["Graph", "Plan", "VgfcError", "__version__", "load", "loads", "partition", "verify"]

__version__ = "0.1.0"


def load(path: str | os.PathLike[str], *, check: bool = True) -> Graph:
    """Read a ``.tosa`` file and, unless ``check`` is false, verify its structure."""
    graph = _read(path)
    if check:
        verify(graph)
    return graph
