"""``--emit-debug-info``: the reference converter's NonSemantic.Graph.DebugInfo.1 instructions.

Read from model-converter 0.11.0's modules (``--emit-debug-info``), the set has three
instructions, each ``OpExtInst %void %set N ...`` with an ``OpString`` operand:

* 1 ``(graph, name)``: the graph and the name of the function it came from (``main``);
* 3 ``(value, location)``: each graph input (with the graph's name), each constant the graph
  reads (with its CONST's location) and each graph output (with the location of the op that
  computes it);
* 2 ``(graph debug, location, value...)``: each location the operations have, with the values
  the operations there compute (in program order; no location is a location too).

A location is the text the flatbuffer stored for the op (an MLIR location, ``loc("f.py":3:5)``),
as the reference writes it for a flatbuffer, and nothing where the op has none. (From MLIR the
reference writes MLIR's own locations, ``f.py:3:5``; vgfc reads MLIR as tosa-opt serialises it,
so it writes the text the serialiser stored.) The reference also declares
``OpString "<unknown>"``, read by nothing; so does vgfc. The reference writes the operations'
instructions in no order vgfc could find (neither the program's nor the strings'); vgfc writes
them in the order their locations first appear.

The reference puts these instructions after ``OpGraphEndARM``, where SPIRV-Tools (2025.5)
refuses them ("OpExtInst must appear in a graph body"); vgfc puts the same instructions in the
graph body before its first ``OpGraphSetOutputARM``, where every module passes ``spirv-val``.
Non-semantic instructions change nothing a graph computes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from vgfc.ir import Operator
    from vgfc.lower.graph import _Emitter

__all__ = ["DEBUG_SET", "emit_debug_info", "location_string"]

DEBUG_SET = "NonSemantic.Graph.DebugInfo.1"
DEBUG_EXTENSION = "SPV_KHR_non_semantic_info"
GRAPH, OPERATION, VALUE = 1, 2, 3
"""The set's instructions, by the number the reference writes."""
GRAPH_NAME = "main"
"""The function a TOSA model's main block is (the reference names the graph after it)."""


def location_string(text: str | None) -> str:
    """An op's location as the reference writes it for a TOSA flatbuffer: the text the file
    stored (an MLIR location such as ``loc("f.py":3:5)``), or nothing."""
    return text or ""


def emit_debug_info(
    em: _Emitter,
    graph_id: int,
    ops: Sequence[Operator],
    constants: Sequence[Operator],
    inputs: Sequence[str],
    outputs: Sequence[str],
    output_values: Sequence[int],
) -> None:
    """Emit the debug instructions of the graph ``em`` is building, in its body (see above)."""
    b = em.builder
    b.extension(DEBUG_EXTENSION)
    debug = b.import_set(DEBUG_SET)
    void = b.type_void()
    b.string("<unknown>")
    name = b.string(GRAPH_NAME)
    producer = {tensor: op for op in ops for tensor in op.outputs}

    def at(op: Operator | None) -> int:
        return b.string(location_string(op.location_text if op is not None else None))

    for tensor in inputs:
        b.ext_inst(void, debug, VALUE, [em.values[tensor], name])
    for op in constants:
        for tensor in op.outputs:
            if tensor in em.values:
                b.ext_inst(void, debug, VALUE, [em.values[tensor], at(op)])
    for tensor, value in zip(outputs, output_values, strict=True):
        b.ext_inst(void, debug, VALUE, [value, at(producer.get(tensor))])
    scope = b.ext_inst(void, debug, GRAPH, [graph_id, name])
    located: dict[int, list[int]] = {}
    for op in ops:
        computed = next((em.values[t] for t in op.outputs if t in em.computed), None)
        if computed is not None:
            located.setdefault(at(op), []).append(computed)
    for where, values in located.items():
        b.ext_inst(void, debug, OPERATION, [scope, where, *values])
