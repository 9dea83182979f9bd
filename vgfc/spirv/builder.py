"""A small SPIR-V module builder for graph modules (``SPV_ARM_graph`` / ``SPV_ARM_tensors``).

It hands out result ids, keeps each instruction in the section the logical layout of a module
requires, and deduplicates types and constants, so callers may ask for the same type or value as
often as they like. Opcodes and enumerant values come from the SPIR-V core grammar
(:mod:`vgfc.spirv.grammar`). The output depends only on the sequence of calls: no hashing order,
no timestamps.

Graph declarations follow the layout the reference converter writes and SPIRV-Tools accepts:
``OpGraphEntryPointARM`` after every global declaration, then the graph definition
(``OpGraphARM``, its inputs, its body, ``OpGraphSetOutputARM`` and ``OpGraphEndARM``).
"""

from __future__ import annotations

import enum
import functools
import struct
import sys
from array import array
from collections.abc import Callable, Sequence

from vgfc.diagnostics import InternalError
from vgfc.spirv.grammar import enumerant, min_words, opcode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias, Union

    Operand: TypeAlias = Union[int, str]  # noqa: UP007
    """An instruction operand: a word (an id or a literal number) or a literal string."""
else:
    Operand = object  # a type alias for type checkers (vgfc.ir says why)

__all__ = ["MAGIC", "ModuleBuilder", "Operand", "Section"]

MAGIC = 0x07230203


class Section(enum.IntEnum):
    """The parts of a module, in the order the logical layout requires."""

    CAPABILITY = 0
    EXTENSION = 1
    EXT_IMPORT = 2
    MEMORY_MODEL = 3
    DEBUG = 4
    ANNOTATION = 5
    GLOBAL = 6
    """Types, constants (including ``OpGraphConstantARM``) and global variables."""
    GRAPH_ENTRY = 7
    GRAPH = 8


def _string_words(text: str) -> list[int]:
    raw = text.encode("utf-8") + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


@functools.cache
def _layout(opname: str) -> tuple[int, int]:
    """The opcode of ``opname`` and the fewest words an instruction of it takes (each
    instruction costs two grammar lookups otherwise, and a graph emits one per operator)."""
    return opcode(opname), min_words(opname)


_OP_STRING = opcode("OpString")

_LAYOUT = tuple(Section)  # iterating the enum class runs a generator each time


class ModuleBuilder:
    """Accumulates one SPIR-V module; :meth:`to_bytes` writes it out.

    Methods named ``type_*`` and ``constant*`` return the id of an existing identical
    declaration when there is one. Variables, graphs and graph-body instructions are never
    shared.
    """

    def __init__(self, version: tuple[int, int] = (1, 5), generator: int = 0) -> None:
        self.version = version
        self.generator = generator
        self._bound = 1
        self._sections: dict[Section, list[list[int]]] = {s: [] for s in _LAYOUT}
        self._body = self._sections[Section.GRAPH]
        self._capabilities: dict[str, None] = {}
        self._extensions: dict[str, None] = {}
        self._imports: dict[str, int] = {}
        self._shared: dict[tuple[object, ...], int] = {}
        # constant_u32 by value: array lengths, shape dimensions and enum operands ask for few
        # values many times, and this skips building the key of the OpConstant each time.
        self._u32: dict[int, int] = {}
        self.replicated_composites = True
        """Whether constants of equal elements may be written as
        ``OpConstantCompositeReplicateEXT`` (:func:`vgfc.spirv.tensors.tensor_constant`); off,
        they are spelt out, and the module needs no VK_EXT_shader_replicated_composites."""

    def copy(self) -> ModuleBuilder:
        """An independent builder holding everything this one holds, to go on from: what
        every module of a kind starts with can be built once and copied."""
        other = ModuleBuilder(self.version, self.generator)
        other._bound = self._bound
        # Instructions are never changed once emitted, so the lists holding them are copied
        # but the instructions are shared.
        for section, insts in self._sections.items():
            other._sections[section] += insts
        other._capabilities = dict(self._capabilities)
        other._extensions = dict(self._extensions)
        other._imports = dict(self._imports)
        other._shared = dict(self._shared)
        other._u32 = dict(self._u32)
        other.replicated_composites = self.replicated_composites
        return other

    # -- ids and raw instructions ---------------------------------------------------------

    def new_id(self) -> int:
        """A fresh result id."""
        self._bound += 1
        return self._bound - 1

    def emit(self, section: Section, opname: str, *operands: Operand) -> None:
        """Append one instruction; the opcode comes from the grammar."""
        code, min_words = _layout(opname)
        inst = [0]  # the first word, word count and opcode, is known last
        for operand in operands:
            if isinstance(operand, str):
                inst += _string_words(operand)
            elif 0 <= operand <= 0xFFFFFFFF:
                inst.append(operand)
            else:
                raise InternalError(f"SPIR-V operand {operand} does not fit in a 32-bit word")
        if len(inst) < min_words:
            raise InternalError(f"{opname} needs more operands than {list(operands)}")
        if len(inst) > 0xFFFF:
            raise InternalError(f"{opname} has {len(inst) - 1} operands, more than one word holds")
        inst[0] = len(inst) << 16 | code
        self._sections[section].append(inst)

    def _emit_body(self, opname: str, inst: list[int]) -> None:
        """Append ``inst`` to the graph body: an instruction whose first word is left to fill
        in and whose operands are all ids this builder handed out (or small literal indices).
        :meth:`emit` without encoding and range-checking each operand, which the body's one
        instruction per operator would pay for; :meth:`to_bytes` still refuses a word out of
        range."""
        if len(inst) > 0xFFFF:
            raise InternalError(f"{opname} has {len(inst) - 1} operands, more than one word holds")
        inst[0] = len(inst) << 16 | _layout(opname)[0]
        self._body.append(inst)

    def _shared_result(self, section: Section, opname: str, *operands: Operand) -> int:
        """Emit ``%r = opname operands`` once; later identical requests return the same id."""
        key = (opname, *operands)
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = self.new_id()
            self.emit(section, opname, found, *operands)
        return found

    def _typed_result(self, opname: str, type_id: int, *operands: Operand) -> int:
        """Like :meth:`_shared_result` for instructions whose result type comes first."""
        key = (opname, type_id, *operands)
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = self.new_id()
            self.emit(Section.GLOBAL, opname, type_id, found, *operands)
        return found

    # -- module-level declarations --------------------------------------------------------

    def capability(self, *names: str) -> None:
        """Declare capabilities (by grammar name); each is written once, in first-use order."""
        for name in names:
            if name not in self._capabilities:
                self._capabilities[name] = None
                self.emit(Section.CAPABILITY, "OpCapability", enumerant("Capability", name))

    def extension(self, *names: str) -> None:
        """Declare extensions; each is written once, in first-use order."""
        for name in names:
            if name not in self._extensions:
                self._extensions[name] = None
                self.emit(Section.EXTENSION, "OpExtension", name)

    def import_set(self, name: str) -> int:
        """The id of an ``OpExtInstImport`` of the extended instruction set ``name``."""
        if name not in self._imports:
            self._imports[name] = self.new_id()
            self.emit(Section.EXT_IMPORT, "OpExtInstImport", self._imports[name], name)
        return self._imports[name]

    def memory_model(self, addressing: str, model: str) -> None:
        """Set the ``OpMemoryModel`` (once)."""
        if self._sections[Section.MEMORY_MODEL]:
            raise InternalError("the memory model is already set")
        self.emit(
            Section.MEMORY_MODEL,
            "OpMemoryModel",
            enumerant("AddressingModel", addressing),
            enumerant("MemoryModel", model),
        )

    def string(self, text: str) -> int:
        """The id of an ``OpString`` of ``text`` (one per text), placed before every ``OpName``
        as the debug section's order requires."""
        key = ("OpString", text)
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = self.new_id()
            self.emit(Section.DEBUG, "OpString", found, text)
            debug = self._sections[Section.DEBUG]
            strings = sum(1 for inst in debug if inst[0] & 0xFFFF == _OP_STRING)
            debug.insert(strings - 1, debug.pop())
        return found

    def name(self, target: int, text: str) -> None:
        """Attach a debug name (``OpName``)."""
        self.emit(Section.DEBUG, "OpName", target, text)

    def decorate(self, target: int, decoration: str, *literals: int) -> None:
        """``OpDecorate target decoration literals...``."""
        self.emit(
            Section.ANNOTATION, "OpDecorate", target, enumerant("Decoration", decoration), *literals
        )

    # -- types ----------------------------------------------------------------------------

    def type_void(self) -> int:
        return self._shared_result(Section.GLOBAL, "OpTypeVoid")

    def type_bool(self) -> int:
        return self._shared_result(Section.GLOBAL, "OpTypeBool")

    def type_int(self, width: int, signed: bool = False) -> int:
        return self._shared_result(Section.GLOBAL, "OpTypeInt", width, int(signed))

    def type_float(self, width: int, encoding: str | None = None) -> int:
        """``OpTypeFloat``; ``encoding`` names an FPEncoding such as ``BFloat16KHR``."""
        extra = () if encoding is None else (enumerant("FPEncoding", encoding),)
        return self._shared_result(Section.GLOBAL, "OpTypeFloat", width, *extra)

    def type_array(self, element: int, length: int) -> int:
        """An array of ``length`` elements (the length becomes a 32-bit unsigned constant)."""
        return self._shared_result(
            Section.GLOBAL, "OpTypeArray", element, self.constant_u32(length)
        )

    def type_struct(self, *members: int) -> int:
        return self._shared_result(Section.GLOBAL, "OpTypeStruct", *members)

    def type_pointer(self, storage: str, pointee: int) -> int:
        return self._shared_result(
            Section.GLOBAL, "OpTypePointer", enumerant("StorageClass", storage), pointee
        )

    def type_tensor(self, element: int, shape: Sequence[int]) -> int:
        """A ranked, fully shaped ``OpTypeTensorARM``; the shape is an array constant."""
        # A graph asks for few types, each many times.
        return self.memo(("tensor", element, *shape), lambda: self._type_tensor(element, shape))

    def memo(self, key: tuple[object, ...], make: Callable[[], int]) -> int:
        """The id ``make()`` returned the first time ``key`` was asked for (``make`` runs once).

        For callers that derive a type from values of their own (a TOSA dtype and shape) many
        times over; keys are tuples that start with a string no opcode name equals."""
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = make()
        return found

    def _type_tensor(self, element: int, shape: Sequence[int]) -> int:
        if not shape or any(d <= 0 for d in shape):
            raise InternalError(f"a tensor type needs a static shape of rank >= 1, got {shape}")
        uint = self.type_int(32)
        dims = self.type_array(uint, len(shape))
        shape_id = self.constant_composite(dims, [self.constant_u32(d) for d in shape])
        return self._shared_result(
            Section.GLOBAL, "OpTypeTensorARM", element, self.constant_u32(len(shape)), shape_id
        )

    def type_graph(self, inputs: Sequence[int], outputs: Sequence[int]) -> int:
        """``OpTypeGraphARM``: the number of inputs, then input and output types."""
        return self._shared_result(Section.GLOBAL, "OpTypeGraphARM", len(inputs), *inputs, *outputs)

    # -- constants ------------------------------------------------------------------------

    def constant(self, type_id: int, *words: int) -> int:
        """``OpConstant``: ``words`` is the value, low-order word first."""
        return self._typed_result("OpConstant", type_id, *words)

    def constant_u32(self, value: int) -> int:
        """A 32-bit unsigned integer constant (array lengths, indices, enum values)."""
        found = self._u32.get(value)
        if found is None:
            found = self._u32[value] = self.constant(self.type_int(32), value)
        return found

    def constant_bool(self, value: bool) -> int:
        return self._typed_result(
            "OpConstantTrue" if value else "OpConstantFalse", self.type_bool()
        )

    def constant_composite(self, type_id: int, constituents: Sequence[int]) -> int:
        return self._typed_result("OpConstantComposite", type_id, *constituents)

    def constant_null(self, type_id: int) -> int:
        return self._typed_result("OpConstantNull", type_id)

    def constant_replicate(self, type_id: int, value: int) -> int:
        """``OpConstantCompositeReplicateEXT``: every element of ``type_id`` equal to ``value``."""
        self.capability("ReplicatedCompositesEXT")
        self.extension("SPV_EXT_replicated_composites")
        return self._typed_result("OpConstantCompositeReplicateEXT", type_id, value)

    def graph_constant(self, type_id: int, constant_id: int) -> int:
        """``OpGraphConstantARM``: a tensor the runtime supplies under ``constant_id``."""
        return self._typed_result("OpGraphConstantARM", type_id, constant_id)

    # -- variables and graphs -------------------------------------------------------------

    def variable(self, pointer_type: int, storage: str) -> int:
        """A new global ``OpVariable`` (never shared)."""
        result = self.new_id()
        self.emit(
            Section.GLOBAL,
            "OpVariable",
            pointer_type,
            result,
            enumerant("StorageClass", storage),
        )
        return result

    def graph_entry_point(self, graph: int, name: str, interface: Sequence[int]) -> None:
        self.emit(Section.GRAPH_ENTRY, "OpGraphEntryPointARM", graph, name, *interface)

    def begin_graph(self, graph_type: int, result: int | None = None) -> int:
        """Start ``OpGraphARM``; ``result`` may be an id taken earlier for the entry point."""
        graph = self.new_id() if result is None else result
        self.emit(Section.GRAPH, "OpGraphARM", graph_type, graph)
        return graph

    def graph_input(self, type_id: int, index: int) -> int:
        result = self.new_id()
        self._emit_body("OpGraphInputARM", [0, type_id, result, self.constant_u32(index)])
        return result

    def ext_inst(
        self, type_id: int, instruction_set: int, code: int, operands: Sequence[int]
    ) -> int:
        """``OpExtInst`` in the graph body."""
        result = self.new_id()
        self._emit_body("OpExtInst", [0, type_id, result, instruction_set, code, *operands])
        return result

    def composite_extract(self, type_id: int, composite: int, index: int) -> int:
        result = self.new_id()
        self._emit_body("OpCompositeExtract", [0, type_id, result, composite, index])
        return result

    def graph_set_output(self, value: int, index: int) -> None:
        self._emit_body("OpGraphSetOutputARM", [0, value, self.constant_u32(index)])

    def end_graph(self) -> None:
        self.emit(Section.GRAPH, "OpGraphEndARM")

    # -- output ---------------------------------------------------------------------------

    def words(self) -> list[int]:
        """The module as 32-bit words: header, then every section in layout order."""
        major, minor = self.version
        out = [MAGIC, major << 16 | minor << 8, self.generator, self._bound, 0]
        for insts in self._sections.values():  # created in layout order
            for inst in insts:
                out += inst
        return out

    def to_bytes(self) -> bytes:
        """The module as little-endian bytes."""
        try:
            words = array("I", self.words())
        except OverflowError:  # an operand of _emit_body; emit checks its own
            raise InternalError("a SPIR-V operand does not fit in a 32-bit word") from None
        if sys.byteorder == "big":
            words.byteswap()
        return words.tobytes()
