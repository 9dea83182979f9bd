"""The verify stage: a graph's structure (:mod:`~vgfc.verify.structure`) and the conditions of
the TOSA specification (:mod:`~vgfc.verify.spec`), checked before anything is built.

:func:`verify` raises the first structural problem (names, definitions, cycles, element types,
regions): the later checks and stages rely on those. :func:`~vgfc.verify.spec.spec_errors` then finds every
``ERROR_IF`` the graph breaks, so that an invalid graph fails at build time rather than on the
device.
"""

from __future__ import annotations

from vgfc.verify.structure import data_producers, topological_order, verify

__all__ = ["data_producers", "topological_order", "verify"]
