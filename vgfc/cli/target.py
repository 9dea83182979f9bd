"""The ``--target`` option: which runtime the VGF is for (:mod:`vgfc.vgf.profiles`)."""

from __future__ import annotations

import click

__all__ = ["target_option"]

# The names are repeated from vgfc.vgf.profiles.TARGETS so that building the command line does
# not import the back end; tests/test_profiles.py keeps the two equal.
TARGET_NAMES = ("scenario-runner", "executorch")

target_option = click.option(
    "--target",
    type=click.Choice(TARGET_NAMES),
    default="scenario-runner",
    show_default=True,
    help="The runtime the VGF is for. executorch: also hold the file to the rules of "
    "ExecuTorch's Arm VGF runtime (SPIR-V in every module, one descriptor set per segment, "
    "tensors only in graph segments, ...), each violation an error with the way out.",
)
