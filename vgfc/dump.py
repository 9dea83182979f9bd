"""``--dump-mlir``: the model on standard error as TOSA MLIR, before vgfc's passes, and what
each pass changed.

The reference converter's ``--dump-mlir`` prints its module before (and after) each of its MLIR
passes, each block under a header ``// -----// IR Dump Before NAME ... //----- //``; its first
block is the module it read. vgfc prints the same kind of headers, naming its own passes
(:data:`vgfc.passes.PASSES`):

- before the first pass, the module read: the TOSA flatbuffer vgfc reads (a model given as MLIR
  is that MLIR as tosa-opt serialised it) printed as MLIR by tosa-tools' own translator
  (:func:`vgfc.read.mlir.deserialize`). tosa-opt and both converters read it again, and it
  compiles to the same VGF;
- after each pass that changed the graph, one comment line per operator it changed (as the
  report's ``passes`` section lists them: ``// op #3 ADD: folded``), not the module: vgfc writes
  no TOSA flatbuffer of its own graph for the translator to print, and a hand-written MLIR
  printer is what vgfc does not write (the format's owner prints MLIR). A pass that changed
  nothing prints nothing, as MLIR's ``-mlir-print-ir-after-change``.

Everything is comments or MLIR, so the whole of what is printed reads as one MLIR file. The
lines go out as each stage runs, so a compile that fails later still shows them.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap
    from collections.abc import Iterable

    from vgfc.passes import Rewrite

__all__ = ["dump_read", "dump_rewrites", "header"]

_SCOPE = "('builtin.module' operation)"


def header(when: str, pass_name: str) -> str:
    """The line above a block, in the reference converter's (MLIR's) form: ``when`` is
    ``Before`` or ``After``."""
    return f"// -----// IR Dump {when} {pass_name} {_SCOPE} //----- //"


def _first_pass(optimize: bool) -> str:
    from vgfc.passes import PASSES

    return next(p.name for p in PASSES if optimize or p.required)


def dump_read(
    flatbuffer: bytes | bytearray | memoryview | mmap.mmap, shown: str, optimize: bool
) -> None:
    """Print the module read (the TOSA flatbuffer ``flatbuffer`` of the model ``shown``) as
    MLIR under the header of the first pass that runs."""
    from vgfc.read.mlir import deserialize

    text = deserialize(flatbuffer, shown)
    _write(f"{header('Before', _first_pass(optimize))}\n{text.rstrip()}\n\n")


def dump_rewrites(rewrites: Iterable[Rewrite]) -> None:
    """Print, after each pass that changed the graph, one comment line per operator it
    changed."""
    by_pass: dict[str, list[Rewrite]] = {}
    for r in rewrites:
        by_pass.setdefault(r.pass_name, []).append(r)
    lines: list[str] = []
    for name, done in by_pass.items():
        lines.append(f"{header('After', name)}")
        lines.append(f"// {len(done)} operator(s) changed; vgfc prints no module after a pass:")
        for r in done:
            why = f" ({r.why})" if r.why else ""
            lines.append(f"// op #{r.op} {r.kind}: {r.action}{why}".replace("\n", " "))
        lines.append("")
    if lines:
        _write("\n".join(lines) + "\n")


def _write(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
