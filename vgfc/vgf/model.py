"""The one description of a VGF file: what vgfc lays out, encodes, decodes, diffs and runs.

Every cross-reference is an index into a table of the :class:`Model` (a slot names a resource, a
segment names a module, a constant names its resource), as in the file itself. Vulkan enums are
held once, as their ``VK_*`` names: :mod:`vgfc.vgf.encode` turns them into values and
:mod:`vgfc.vgf.decode` turns values back into names, refusing values it does not know.

Provenance (the TOSA tensor a resource holds, the partition a segment runs) is known only for a
model vgfc laid out itself; a decoded file has none. It never takes part in comparisons, so
``decode(encode(m)) == m`` holds for every well-formed model (a tested property). Well formed means
what the file format can express: a constant resource has no descriptor type or alias group, a
segment has the type of its module, names are non-empty text without NUL characters, and
constants hold at least one byte.
"""

from __future__ import annotations

import enum

from vgfc.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap
    from typing import Any

    from vgfc.ir_shaders import Sampler  # a VGF carries samplers as the IR holds them

__all__ = [
    "COMPUTE_STAGE",
    "Category",
    "Constant",
    "DescriptorSet",
    "Interface",
    "Model",
    "Module",
    "ModuleType",
    "PushConstantRange",
    "Resource",
    "Segment",
    "Slot",
    "model_json",
]

COMPUTE_STAGE = 0x20
"""``VK_SHADER_STAGE_COMPUTE_BIT``: the stage of every push-constant range vgfc writes."""


class ModuleType(enum.Enum):
    """What a module (and the segment that runs it) is: a SPIR-V graph or a compute shader."""

    GRAPH = "graph"
    COMPUTE = "compute"


class Category(enum.Enum):
    """How a resource takes part in the model sequence."""

    INPUT = "input"
    OUTPUT = "output"
    INTERMEDIATE = "intermediate"
    CONSTANT = "constant"


@record
class Slot:
    """A binding slot: a binding number pointing at a resource."""

    binding: int
    resource: int
    """Index into :attr:`Model.resources`."""


@record
class DescriptorSet:
    set: int
    slots: tuple[Slot, ...]


@record
class PushConstantRange:
    stage_flags: int
    offset: int
    size: int


@record
class Module:
    """One entry of the module table: SPIR-V, shader source, or neither (a placeholder)."""

    type: ModuleType
    name: str
    entry_point: str
    spirv: bytes | None = None
    source: str | None = None
    """GLSL/HLSL text, for modules stored as source."""
    language: str | None = None
    """``GLSL`` or ``HLSL`` when :attr:`source` is set."""

    @property
    def code(self) -> str:
        """``SPIR-V``, ``GLSL``, ``HLSL`` or ``none``."""
        if self.spirv is not None:
            return "SPIR-V"
        if self.source is not None and self.language is not None:
            return self.language
        return "none"

    @property
    def code_size(self) -> int:
        """Bytes of SPIR-V or characters of source."""
        if self.spirv is not None:
            return len(self.spirv)
        return len(self.source or "")


@record
class Segment:
    """One entry of the model sequence: a module run with its descriptor sets."""

    type: ModuleType
    name: str
    module: int
    """Index into :attr:`Model.modules`."""
    descriptor_sets: tuple[DescriptorSet, ...]
    inputs: tuple[Slot, ...]
    outputs: tuple[Slot, ...]
    constant_bindings: tuple[tuple[int, int], ...] = ()
    """(graph constant id, index into :attr:`Model.constants`)."""
    dispatch: tuple[int, int, int] = (0, 0, 0)
    """Workgroup counts of a compute segment; zeros for a graph segment."""
    push_constant_ranges: tuple[PushConstantRange, ...] = ()
    partition: int | None = field(default=None, compare=False)
    """Provenance: the partition this segment runs (``None`` for a decoded file)."""

    @property
    def constants(self) -> tuple[int, ...]:
        """Indices of the constants the segment reads, as the file lists them."""
        return tuple(c for _, c in self.constant_bindings)

    @property
    def push_constant_size(self) -> int:
        """Bytes of push constants the segment declares (end of its last range), 0 for none."""
        return max((r.offset + r.size for r in self.push_constant_ranges), default=0)


@record
class Resource:
    """One entry of the model resource table."""

    category: Category
    descriptor_type: str | None
    """``VK_DESCRIPTOR_TYPE_*`` name; ``None`` for constants."""
    format: str
    """``VK_FORMAT_*`` name."""
    shape: tuple[int, ...]
    strides: tuple[int, ...] = ()
    alias_group: int | None = None
    sampler: Sampler | None = None
    tensor: str | None = field(default=None, compare=False)
    """Provenance: the TOSA tensor it holds (``None`` for a decoded file)."""


@record
class Constant:
    """One entry of the constant section."""

    resource: int
    """Index of its CONSTANT resource."""
    data: bytes | memoryview
    """The bytes the file stores: for a constant vgfc laid out, often a read-only view of the
    input file (a byte view, so ``len`` is its size), which the encoder streams to the output."""
    sparsity_dimension: int = -1
    origin: tuple[mmap.mmap, int] | None = field(default=None, compare=False, repr=False)
    """Provenance: the read-only memory map ``data`` is a view of, and where in it ``data``
    starts (the encoder lets the pages go once written)."""


@record
class Interface:
    """An input or output of the model sequence."""

    name: str
    binding: int
    """The logical binding id a runtime binds the value to."""
    resource: int


@record
class Model:
    """Everything a VGF file holds, with every cross-reference an index."""

    modules: tuple[Module, ...]
    segments: tuple[Segment, ...]
    resources: tuple[Resource, ...]
    constants: tuple[Constant, ...]
    inputs: tuple[Interface, ...]
    outputs: tuple[Interface, ...]
    vk_header_version: int = 345
    version: str | None = field(default=None, compare=False)
    """VGF format version of a decoded file; the encoder writes its own."""

    def module_of(self, segment: Segment) -> Module:
        return self.modules[segment.module]

    def resource_of(self, slot: Slot | Interface) -> Resource:
        return self.resources[slot.resource]


def _slot_json(slot: Slot) -> dict[str, int]:
    return {"binding": slot.binding, "resource": slot.resource}


def model_json(model: Model) -> dict[str, Any]:
    """The model as plain JSON data: ``vgfc inspect --json``, and the ``modules``, ``segments``,
    ``resources`` and ``constants`` sections of the compile report. Provenance fields appear only
    where they are known."""
    segments = []
    for i, s in enumerate(model.segments):
        entry: dict[str, Any] = {
            "index": i,
            "type": s.type.name,
            "name": s.name,
            "module": s.module,
            "descriptor_sets": [
                {"set": d.set, "bindings": [_slot_json(x) for x in d.slots]}
                for d in s.descriptor_sets
            ],
            "inputs": [_slot_json(x) for x in s.inputs],
            "outputs": [_slot_json(x) for x in s.outputs],
            "constants": list(s.constants),
            "constant_bindings": [list(b) for b in s.constant_bindings],
            "dispatch_shape": list(s.dispatch),
            "push_constant_ranges": [
                {"stage_flags": r.stage_flags, "offset": r.offset, "size": r.size}
                for r in s.push_constant_ranges
            ],
        }
        if s.partition is not None:
            entry["partition"] = s.partition
        segments.append(entry)
    resources = []
    for i, r in enumerate(model.resources):
        entry = {
            "index": i,
            "category": r.category.name,
            "descriptor_type": r.descriptor_type,
            "format": r.format,
            "shape": list(r.shape),
            "strides": list(r.strides),
            "alias_group": r.alias_group,
            "sampler": None
            if r.sampler is None
            else {
                "min_filter": r.sampler.min_filter,
                "mag_filter": r.sampler.mag_filter,
                "address_mode_u": r.sampler.address_mode_u,
                "address_mode_v": r.sampler.address_mode_v,
                "border_color": r.sampler.border_color,
            },
        }
        if r.tensor is not None:
            entry["tensor"] = r.tensor
        resources.append(entry)
    return {
        "version": model.version,
        "vk_header_version": model.vk_header_version,
        "modules": [
            {
                "index": i,
                "type": m.type.name,
                "name": m.name,
                "entry_point": m.entry_point,
                "code": m.code,
                "code_size": m.code_size,
            }
            for i, m in enumerate(model.modules)
        ],
        "segments": segments,
        "resources": resources,
        "constants": [
            {
                "index": i,
                "resource": c.resource,
                "size": len(c.data),
                "sparsity_dimension": c.sparsity_dimension,
            }
            for i, c in enumerate(model.constants)
        ],
        "inputs": [[x.name, {"binding": x.binding, "resource": x.resource}] for x in model.inputs],
        "outputs": [
            [x.name, {"binding": x.binding, "resource": x.resource}] for x in model.outputs
        ],
    }
