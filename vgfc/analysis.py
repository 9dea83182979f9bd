"""Per-operator analysis (``--experimental-analysis``): one line for each operator of a compile,
saying where it went or why it did not.

The reference converter prints ``Successfully lowered: tosa.<op> at loc(...)`` for each operator
it lowers and stops at the first that fails. These lines keep that form, go on past every
failure (the compile runs with ``keep_going``, as ``vgfc check`` does), and say for each
operator which partition runs it, or the error that stopped it, or the operator whose failure
left it unlowered. They only read a :class:`~vgfc.compilation.Compilation`.
"""

from __future__ import annotations

import json

from vgfc.diagnostics import Severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.compilation import Compilation
    from vgfc.diagnostics import Diagnostic
    from vgfc.ir import Operator
    from vgfc.partition import Partition

__all__ = ["LOWERED", "NOT_LOWERED", "analysis_lines"]

LOWERED = "Successfully lowered"
"""How a line about an operator that was lowered starts: the reference converter's words."""
NOT_LOWERED = "Failed to lower"
"""How a line about an operator that was not lowered starts."""


def _loc(op: Operator) -> str:
    """The op's location as the reference prints it: the MLIR location the file stored, else
    ``loc(unknown)``."""
    text = op.location_text
    if not text:
        return "loc(unknown)"
    return text if text.startswith("loc(") else f"loc({json.dumps(text)})"


def _which(op: Operator) -> str:
    """``op #3`` with the custom op's name and domain, and why vgfc added the op if it did."""
    text = f"op #{op.file_index}"
    if op.custom_name is not None:
        text += f" '{op.custom_name}' ({op.domain})"
    if op.inserted:
        text += f", {op.inserted}"
    return text


def _partition_name(p: Partition) -> str:
    return f"{'graph' if p.kind.value == 'ml' else 'shader'} partition {p.id}"


def analysis_lines(done: Compilation) -> list[str]:
    """One line per operator of ``done.graph`` (the graph after resolve, in the file's order),
    or none when the model could not be read."""
    graph = done.graph
    if graph is None:
        return []
    errors: dict[int, Diagnostic] = {}
    for d in done.diagnostics:
        index = d.location.op_index
        if d.severity is Severity.ERROR and index is not None:
            errors.setdefault(index, d)
    where: dict[int, tuple[Partition, bool]] = {}
    plan = done.plan
    if plan is not None:
        for p in plan.partitions:
            for i in p.operators:
                where[i] = (p, False)
            for i in p.constants:
                where.setdefault(i, (p, True))
    lowered = done.modules
    stages = [name for name, _ in done.timings]
    stopped = stages[-1] if stages else "read"
    by_index = {op.index: op for op in graph.operators}
    lines = []
    for op in graph.operators:
        head = f"tosa.{op.op.lower()} at {_loc(op)} ({_which(op)}"
        error = errors.get(op.file_index)
        placed = where.get(op.index)
        if error is not None:
            lines.append(f"{NOT_LOWERED}: {head}): {error.message}")
        elif placed is None and plan is not None and op.op in ("CONST", "CONST_SHAPE"):
            lines.append(f"{LOWERED}: {head}): a constant no partition reads, left out")
        elif placed is None or len(lowered) <= placed[0].id:
            lines.append(f"{NOT_LOWERED}: {head}): not reached: the compile stopped at {stopped}")
        elif lowered[placed[0].id] is None:
            members = {by_index[j].file_index for j in placed[0].operators if j in by_index}
            failed = sorted(i for i in errors if i in members)
            why = f": op #{failed[0]} failed" if failed else ""
            lines.append(
                f"{NOT_LOWERED}: {head}): its {_partition_name(placed[0])} was not lowered{why}"
            )
        else:
            p, constant = placed
            into = f"a constant of {_partition_name(p)}" if constant else _partition_name(p)
            if op.call_opcode is not None:
                into += f" as Arm.ExperimentalMLOperations.1 CALL {op.call_opcode}"
            lines.append(f"{LOWERED}: {head}, {into})")
    return lines
