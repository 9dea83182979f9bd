"""Run VGF files on the CPU: lavapipe, Arm's ML emulation layers and the scenario runner.

    from vgfc.runner import run_vgf
    outputs = run_vgf("model.vgf", {"input_0": x})      # {"output_0": array, ...}

Needs ``pip install 'vgfc[run]'`` and the Debian packages ``mesa-vulkan-drivers libvulkan1``;
:func:`find_stack` says which piece is missing.
"""

from __future__ import annotations

from vgfc.runner.coverage import Unwritten
from vgfc.runner.inputs import Inputs, match_inputs
from vgfc.runner.run import DEFAULT_TIMEOUT, RunResult, run_checked, run_vgf
from vgfc.runner.stack import Stack, find_stack
from vgfc.runner.validation import ValidationError
from vgfc.vgf.decode import read_vgf
from vgfc.vgf.model import Model

__all__ = [
    "DEFAULT_TIMEOUT",
    "Inputs",
    "Model",
    "RunResult",
    "Stack",
    "Unwritten",
    "ValidationError",
    "find_stack",
    "match_inputs",
    "read_vgf",
    "run_checked",
    "run_vgf",
]
