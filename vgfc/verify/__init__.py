"""The verify stage: a graph's structure (:mod:`~vgfc.verify.structure`) and the conditions of
the TOSA specification (:mod:`~vgfc.verify.spec`), checked before anything is built.

The structural checks come first (names, definitions, cycles, element types, regions): the
specification's conditions and every later stage rely on them. Then every ``ERROR_IF`` the
graph breaks is found, so that an invalid graph fails at build time rather than on the device.
"""

from __future__ import annotations

from vgfc.ir import Graph
from vgfc.verify import structure
from vgfc.verify.structure import data_producers, topological_order

__all__ = ["data_producers", "topological_order", "verify"]


def verify(graph: Graph) -> tuple[int, ...]:
    """Raise :class:`~vgfc.diagnostics.VgfcError` for the first problem of ``graph``: of its
    structure, then of the specification's conditions; return the operator indices in
    dependency order (:func:`topological_order`), which later stages take instead of computing
    it again. The compile pipeline's verify stage runs the two parts itself, so that
    ``vgfc check`` can report every condition broken."""
    from vgfc.verify.spec import spec_errors

    order = structure.verify(graph)
    errors = spec_errors(graph, first_only=True)
    if errors:
        raise errors[0]
    return order
