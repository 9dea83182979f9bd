"""vgfc: compile TOSA models with Vulkan custom shaders into VGF files.

Library entry points::

    import vgfc
    vgfc.compile("model.tosa", "model.vgf", kernels=["ops.yaml"])  # as `vgfc compile`
    graph = vgfc.load("model.tosa")   # read and verify
    plan = vgfc.partition(graph)      # ML and shader partitions

The names below are imported on first use (PEP 562 ``__getattr__``): ``import vgfc`` alone, which
every ``vgfc`` command does, must not pull in numpy and the reader before a command needs them.
``partition`` and ``verify`` are also the names of submodules, which the import system binds on
the package when they are first imported; properties of the package's module type keep the two
names meaning the functions, as they did when this file imported them eagerly.
"""

from __future__ import annotations

import os
import sys
import types
from importlib import import_module

TYPE_CHECKING = False
"""Not typing's: the ``vgfc`` command imports this package first thing, and typing costs 2.5 ms
to import (type checkers take any ``TYPE_CHECKING`` name as true)."""
if TYPE_CHECKING:
    from typing import Any

    from vgfc.compiler import Compilation, compile
    from vgfc.diagnostics import VgfcError
    from vgfc.ir import Graph
    from vgfc.partition import Plan, partition
    from vgfc.read import loads
    from vgfc.verify import verify

__all__ = [
    "Compilation",
    "Graph",
    "Plan",
    "VgfcError",
    "__version__",
    "compile",
    "load",
    "loads",
    "partition",
    "verify",
]

__version__ = "0.1.0"

_LAZY = {
    "Compilation": "vgfc.compiler",
    "compile": "vgfc.compiler",
    "Graph": "vgfc.ir",
    "Plan": "vgfc.partition",
    "VgfcError": "vgfc.diagnostics",
    "loads": "vgfc.read.reader",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vgfc' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def _function_of(name: str) -> property:
    """A package attribute that means the function ``name`` of the submodule of the same name.

    The import system binds the submodule itself when it is first imported: that assignment is
    ignored. Any other assignment (a test patching ``vgfc.partition``) is kept.
    """

    def get(package: types.ModuleType) -> Any:
        own = package.__dict__.get(f"_{name}_set")
        return own if own is not None else getattr(import_module(f"vgfc.{name}"), name)

    def put(package: types.ModuleType, value: Any) -> None:
        if not isinstance(value, types.ModuleType):
            package.__dict__[f"_{name}_set"] = value

    def drop(package: types.ModuleType) -> None:
        """What ``unittest.mock.patch`` does on exit: back to the function."""
        package.__dict__.pop(f"_{name}_set", None)

    return property(get, put, drop)


class _Package(types.ModuleType):
    partition = _function_of("partition")
    verify = _function_of("verify")

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *__all__})


sys.modules[__name__].__class__ = _Package


def load(path: str | os.PathLike[str], *, check: bool = True) -> Graph:
    """Read a ``.tosa`` file and, unless ``check`` is false, verify it: its structure and the
    specification's conditions."""
    from vgfc.read import load as read
    from vgfc.verify import verify

    graph = read(path)
    if check:
        verify(graph)
    return graph
