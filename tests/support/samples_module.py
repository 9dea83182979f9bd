"""Import ``samples/build_samples.py`` by path (it is a script, not a package module)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from paths import SAMPLES_DIR

__all__ = ["SAMPLES_DIR", "load_samples_module"]


def load_samples_module() -> ModuleType:
    name = "vgfc_samples_build"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SAMPLES_DIR / "build_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
