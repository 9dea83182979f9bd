"""What a pass returns and what it is given: a leaf the passes import, so that none of them
imports the stage (:mod:`vgfc.passes`) that lists them."""

from __future__ import annotations

from vgfc.ir import Graph
from vgfc.record import record

__all__ = ["Rewrite", "Rewritten", "Settings"]


@record
class Rewrite:
    """One operator a pass changed."""

    pass_name: str
    op: int
    """The op's index in the file (:attr:`vgfc.ir.Operator.file_index`)."""
    kind: str
    """The op's TOSA name (``RESHAPE``)."""
    action: str
    """``folded`` (made a constant), ``removed``, ``replaced`` (by another op's result or a
    composed op), ``written out`` (control flow), ``narrowed`` (FP32 made FP16), ``inserted``
    (an op a pass added: ``op`` is the index of the op it was added for)."""
    why: str = ""


@record
class Rewritten:
    """What a pass returns: the new graph and what it changed."""

    graph: Graph
    rewrites: tuple[Rewrite, ...] = ()


@record
class Settings:
    """What the compile's options ask of the passes."""

    optimize: bool = True
    """Run the optimising passes (off: ``-O0``)."""
    type_narrowing: str = "none"
    """``none``, ``full`` or ``partial`` (``--type-narrowing``)."""
