"""Custom ops the runtime runs itself: the Arm.ExperimentalMLOperations.1 CALL's names and
numbers, and the ``DOMAIN:N`` values of ``--custom-op-domain-to-opcode``.

A leaf (it imports nothing of vgfc): the option table reads it for its help and checks, the
graph lowering for the instruction it writes (:mod:`vgfc.lower.call`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BESPOKE_DOMAIN", "CALL_INSTRUCTION", "CALL_SET", "OPCODE_MAX", "parse_opcodes"]

CALL_SET = "Arm.ExperimentalMLOperations.1"
"""The extended instruction set whose instruction :data:`CALL_INSTRUCTION` runs a custom op the
graph module cannot express otherwise, as the reference converter writes it."""

CALL_INSTRUCTION = 0
"""CALL's number in :data:`CALL_SET`."""

BESPOKE_DOMAIN = "com.arm.bespoke"
"""The custom-op domain ``--enable-bespoke`` lowers to a CALL with opcode 0."""

OPCODE_MAX = (1 << 32) - 1
"""The largest CALL opcode: one SPIR-V literal word."""


def _pair(item: Any) -> tuple[Any, int | None]:
    """(domain, opcode or ``None`` when it is no whole number) of one value."""
    if isinstance(item, str):
        domain, colon, text = item.rpartition(":")
        if not colon:
            raise ValueError(f"{item!r} is not DOMAIN:N (no ':')")
        digits = text.isascii() and text.isdigit() and len(text) <= 10
        return domain, int(text) if digits else None
    if isinstance(item, tuple) and len(item) == 2:
        domain, number = item
        whole = isinstance(number, int) and not isinstance(number, bool)
        return domain, number if whole else None
    raise ValueError(f"{item!r} is not DOMAIN:N or (DOMAIN, N)")


def parse_opcodes(items: tuple[Any, ...], *, refused: str) -> tuple[tuple[str, int], ...]:
    """``DOMAIN:N`` strings (or ``(DOMAIN, N)`` pairs) as (domain, opcode) pairs in the order
    first given; a domain given twice must be given the same opcode, and domain ``refused`` not
    at all. Raises ValueError saying what is wrong with which value."""
    pairs: dict[str, int] = {}
    for item in items:
        domain, number = _pair(item)
        if not isinstance(domain, str) or not domain:
            raise ValueError(f"{item!r} names no domain (DOMAIN:N)")
        if domain == refused:
            raise ValueError(f"{refused} ops carry their own shader and run as shaders, not CALLs")
        if number is None or not 0 <= number <= OPCODE_MAX:
            given = item.rpartition(":")[2] if isinstance(item, str) else item[1]
            raise ValueError(
                f"the opcode of {domain!r} must be a whole number from 0 to {OPCODE_MAX}, "
                f"not {given!r}"
            )
        if pairs.setdefault(domain, number) != number:
            raise ValueError(f"{domain!r} is given two opcodes, {pairs[domain]} and {number}")
    return tuple(pairs.items())
