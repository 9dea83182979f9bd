"""How vgfc reads its inputs and writes its outputs, when either may be anything.

:mod:`vgfc.files.inputs` opens what vgfc reads (a regular file of a bounded size; never a FIFO,
a device or a symlink loop), :mod:`vgfc.files.outputs` writes what it makes (atomically, never
through anything but a regular file), and :mod:`vgfc.files.interrupts` turns the signals that
end a command into :class:`~vgfc.files.interrupts.Interrupted` without cutting a rename short.
Import from those modules. The outputs and the interrupt that :mod:`vgfc.compiler` and
:mod:`vgfc.cli.quick` import from ``vgfc.files`` are also found here, each loaded on first use.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.files.interrupts import Interrupted
    from vgfc.files.outputs import Staged, commit, discard, stage, write_atomically

__all__ = ["Interrupted", "Staged", "commit", "discard", "stage", "write_atomically"]

_LAZY = {
    "Interrupted": "vgfc.files.interrupts",
    "Staged": "vgfc.files.outputs",
    "commit": "vgfc.files.outputs",
    "discard": "vgfc.files.outputs",
    "stage": "vgfc.files.outputs",
    "write_atomically": "vgfc.files.outputs",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vgfc.files' has no attribute {name!r}")
    return getattr(import_module(module), name)
