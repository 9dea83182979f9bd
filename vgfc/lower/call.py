"""A CUSTOM op of a mapped domain -> an ``Arm.ExperimentalMLOperations.1`` CALL in its graph.

``--custom-op-domain-to-opcode DOMAIN:N`` (and ``--enable-bespoke``, ``com.arm.bespoke:0``)
leaves such an op to the runtime: the graph module runs it as instruction 0 (CALL) of the
Arm.ExperimentalMLOperations.1 set, laid out word for word as the reference converter
(model-converter 0.11.0) writes it, read from its modules (SPIRV-Tools 2025.5 cannot disassemble
that set)::

    %r = OpExtInst %result_type %set 0 N %name %attrs %input0 %input1 ...

``N`` is a literal word; ``%name`` and ``%attrs`` are ``OpConstantComposite`` arrays of 8-bit
unsigned integers holding the op's ``operator_name`` and ``implementation_attrs`` bytes; the
inputs follow in the op's order. One output is typed by its tensor type; several by an
``OpTypeStruct`` of them, each taken out with ``OpCompositeExtract``.
"""

from __future__ import annotations

from vgfc.custom_calls import CALL_INSTRUCTION, CALL_SET
from vgfc.diagnostics import UnsupportedError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.ir import Operator
    from vgfc.lower.graph import _Emitter
    from vgfc.spirv.builder import ModuleBuilder

__all__ = ["check_call", "lower_call"]


def _bytes_of(op: Operator, key: str) -> bytes:
    value = op.attrs.get(key)
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return b""


def check_call(op: Operator) -> None:
    """What a CALL cannot carry, refused before anything is built."""
    if not op.outputs:
        raise UnsupportedError("a CALL needs at least one output")


def _byte_array(b: ModuleBuilder, data: bytes) -> int:
    """The bytes as an array constant; none as one zero byte (a SPIR-V array holds at least one
    element), as the reference converter passes an empty name or payload."""
    data = data or b"\0"
    u8 = b.type_int(8)
    array = b.type_array(u8, len(data))
    return b.constant_composite(array, [b.constant(u8, byte) for byte in data])


def lower_call(em: _Emitter, op: Operator) -> None:
    """Emit ``op`` (``call_opcode`` set by resolve) as a CALL and record its outputs' values."""
    assert op.call_opcode is not None
    b = em.builder
    call_set = b.import_set(CALL_SET)
    types = [em.type_of(name) for name in op.outputs]
    result_type = types[0] if len(types) == 1 else b.type_struct(*types)
    name = _byte_array(b, _bytes_of(op, "operator_name"))
    attrs = _byte_array(b, _bytes_of(op, "implementation_attrs"))
    inputs = [em.operand(tensor) for tensor in op.inputs]
    result = b.ext_inst(
        result_type, call_set, CALL_INSTRUCTION, [op.call_opcode, name, attrs, *inputs]
    )
    for index, tensor in enumerate(op.outputs):
        value = result if len(types) == 1 else b.composite_extract(types[index], result, index)
        em.values[tensor] = value
        em.computed.add(tensor)
