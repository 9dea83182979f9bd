"""The ``vgfc`` command line: one module per command, the shared plumbing in
:mod:`vgfc.cli.support`.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
No traceback is shown unless ``--debug`` is given.
"""

from __future__ import annotations

import click

import vgfc
from vgfc.cli.check import check
from vgfc.cli.compile import compile_command
from vgfc.cli.inspect import inspect
from vgfc.cli.kernels import kernels
from vgfc.cli.partition import partition
from vgfc.cli.run import run
from vgfc.cli.verify import verify

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(vgfc.__version__, prog_name="vgfc")
@click.option("--debug", is_flag=True, help="Show Python tracebacks for errors.")
def cli(debug: bool) -> None:
    """Compile TOSA models with Vulkan custom shaders into VGF files.

    \b
    vgfc partition model.tosa          how the model splits into ML and shader work
    vgfc partition model.tosa --dot    the same as a Graphviz graph
    vgfc check model.tosa              every check compile runs, all errors, nothing written
    vgfc compile model.tosa -o m.vgf   write the VGF file (--report r.json for a report)
    vgfc inspect m.vgf                 what a VGF file holds
    vgfc run m.vgf -i x.npy -o out/    run it on the CPU (lavapipe + ML emulation layers)
    vgfc verify model.tosa             compile, run, compare with an independent oracle
    vgfc kernels lib.yaml              check a kernel library (--kernels) without a model
    \b
    Exit codes: 0 ok, 1 error in the input, 2 usage error, 3 internal error.
    """


for _command in (partition, check, compile_command, inspect, run, verify, kernels):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="vgfc")
