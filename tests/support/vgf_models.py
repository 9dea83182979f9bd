"""VGF models for the codec's tests: hypothesis strategies that generate any model the format
holds (``models``), and ``RICH``, one hand-built model with every feature (samplers, alias groups,
push-constant ranges, constants and their bindings, GLSL/HLSL/placeholder modules).

``without_version`` is ``model_json`` less what a file does not hold, for comparing a model with
its decoded file.
"""

from __future__ import annotations

import sys
from typing import Any

from hypothesis import strategies as st

from vgfc.ir_shaders import Sampler
from vgfc.vgf.model import (
    COMPUTE_STAGE,
    Category,
    Constant,
    DescriptorSet,
    Interface,
    Model,
    Module,
    ModuleType,
    PushConstantRange,
    Resource,
    Segment,
    Slot,
    model_json,
)
from vgfc.vulkan_names import (
    border_colors,
    descriptor_types,
    filters,
    formats,
    sampler_address_modes,
)

U32 = 2**32 - 1
SPIRV_MAGIC = (0x07230203).to_bytes(4, sys.byteorder)


def _first_names(table: dict[str, int]) -> list[str]:
    """The names the decoder gives back: the first listed for each value (aliases left out)."""
    first: dict[int, str] = {}
    for name, value in table.items():
        first.setdefault(value, name)
    return sorted(first.values())


FORMATS = _first_names(formats())
DESCRIPTOR_TYPES = _first_names(descriptor_types())
FILTERS = _first_names(filters())
ADDRESS_MODES = _first_names(sampler_address_modes())
BORDER_COLORS = _first_names(border_colors())


def without_version(m: Model) -> dict[str, Any]:
    """``model_json`` less what a file does not hold: its version (the encoder writes its own)
    and provenance (the tensor a resource holds, the partition a segment runs)."""
    data = model_json(m)
    del data["version"]
    for r in data["resources"]:
        r.pop("tensor", None)
    for s in data["segments"]:
        s.pop("partition", None)
    return data


# Names are stored as C strings: no NUL. Empty names decode as segment_<i> / input_<i>, so the
# names of segments and interfaces are never empty; modules' names may be.
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
NAME = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12)
U32S = st.integers(0, 7) | st.integers(0, U32)
# 0xFFFFFFFF is the library's "no alias group" / "set index not given" value.
ALIAS_GROUPS = st.none() | st.integers(0, 7) | st.integers(0, U32 - 1)
SET_INDICES = st.integers(0, 7) | st.integers(0, U32 - 1)
# Non-empty SPIR-V (empty code is a placeholder module), a whole number of words.
SPIRV = st.integers(0, 15).flatmap(
    lambda n: st.binary(min_size=4 * n, max_size=4 * n).map(lambda b: SPIRV_MAGIC + b)
)
SAMPLERS = st.builds(
    Sampler,
    st.sampled_from(FILTERS),
    st.sampled_from(FILTERS),
    st.sampled_from(ADDRESS_MODES),
    st.sampled_from(ADDRESS_MODES),
    st.sampled_from(BORDER_COLORS),
)


@st.composite
def modules(draw: st.DrawFn) -> Module:
    kind = draw(st.sampled_from(ModuleType))
    name, entry = draw(TEXT), draw(NAME)
    code = "SPIR-V"
    if kind is ModuleType.COMPUTE:
        code = draw(st.sampled_from(["SPIR-V", "GLSL", "HLSL", "none"]))
    if code == "SPIR-V":
        return Module(kind, name, entry, spirv=draw(SPIRV))
    if code == "none":
        return Module(kind, name, entry)
    return Module(kind, name, entry, source=draw(TEXT), language=code)


@st.composite
def resources(draw: st.DrawFn) -> Resource:
    category = draw(st.sampled_from(Category))
    constant = category is Category.CONSTANT
    return Resource(
        category=category,
        descriptor_type=None if constant else draw(st.sampled_from(DESCRIPTOR_TYPES)),
        format=draw(st.sampled_from(FORMATS)),
        shape=tuple(draw(st.lists(st.integers(-1, 2**40), max_size=5))),
        strides=tuple(draw(st.lists(st.integers(0, 2**40), max_size=5))),
        # The file holds no alias group for a constant.
        alias_group=None if constant else draw(ALIAS_GROUPS),
        sampler=draw(st.none() | SAMPLERS),
        tensor=draw(st.none() | NAME),  # provenance: not stored, not compared
    )


@st.composite
def models(draw: st.DrawFn) -> Model:
    mods = tuple(draw(st.lists(modules(), max_size=4)))
    res = tuple(draw(st.lists(resources(), max_size=8)))
    constant_resources = [i for i, r in enumerate(res) if r.category is Category.CONSTANT]
    consts: tuple[Constant, ...] = ()
    if constant_resources:
        consts = tuple(
            draw(
                st.lists(
                    st.builds(
                        Constant,
                        st.sampled_from(constant_resources),
                        st.binary(min_size=1, max_size=48),
                        st.integers(-1, 7) | st.integers(-1, 2**31 - 1),
                    ),
                    max_size=4,
                )
            )
        )
    resource_index = st.integers(0, len(res) - 1) if res else st.nothing()
    slots = st.lists(st.builds(Slot, U32S, resource_index), max_size=4) if res else st.just([])
    bindings = (
        st.lists(st.tuples(U32S, st.integers(0, len(consts) - 1)), max_size=3)
        if consts
        else st.just([])
    )

    segs = []
    for _ in range(draw(st.integers(0, 4)) if mods else 0):
        module = draw(st.integers(0, len(mods) - 1))
        segs.append(
            Segment(
                # The file records a segment's type from its module's.
                type=mods[module].type,
                name=draw(NAME),
                module=module,
                descriptor_sets=tuple(
                    DescriptorSet(draw(SET_INDICES), tuple(draw(slots)))
                    for _ in range(draw(st.integers(0, 3)))
                ),
                inputs=tuple(draw(slots)),
                outputs=tuple(draw(slots)),
                constant_bindings=tuple(draw(bindings)),
                dispatch=draw(st.tuples(U32S, U32S, U32S)),
                push_constant_ranges=tuple(
                    draw(
                        st.lists(
                            st.builds(
                                PushConstantRange,
                                st.just(COMPUTE_STAGE) | U32S,
                                U32S,
                                U32S,
                            ),
                            max_size=3,
                        )
                    )
                ),
                partition=draw(st.none() | st.integers(0, 9)),  # provenance
            )
        )
    interfaces = (
        st.lists(st.builds(Interface, NAME, U32S, resource_index), max_size=3)
        if res
        else st.just([])
    )
    return Model(
        modules=mods,
        segments=tuple(segs),
        resources=res,
        constants=consts,
        inputs=tuple(draw(interfaces)),
        outputs=tuple(draw(interfaces)),
        vk_header_version=draw(st.integers(0, 2**16 - 1)),
        version=draw(st.none() | st.just("9.9.9")),  # not compared: the encoder writes its own
    )


SAMPLER = Sampler(
    "VK_FILTER_LINEAR",
    "VK_FILTER_NEAREST",
    "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER",
    "VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT",
    "VK_BORDER_COLOR_INT_OPAQUE_WHITE",
)
RICH = Model(
    modules=(
        Module(ModuleType.GRAPH, "graph", "main", spirv=SPIRV_MAGIC + bytes(range(12))),
        Module(ModuleType.COMPUTE, "glsl", "main", source="void main() {}", language="GLSL"),
        Module(ModuleType.COMPUTE, "hlsl", "CSMain", source="[numthreads(1,1,1)]", language="HLSL"),
        Module(ModuleType.COMPUTE, "placeholder", "main"),
    ),
    segments=(
        Segment(
            ModuleType.GRAPH,
            "graph_segment",
            0,
            (DescriptorSet(0, (Slot(0, 0), Slot(1, 1))),),
            (Slot(0, 0),),
            (Slot(1, 1),),
            constant_bindings=((7, 1), (3, 0)),
        ),
        Segment(
            ModuleType.COMPUTE,
            "compute_segment",
            2,
            (DescriptorSet(2, (Slot(0, 1), Slot(5, 3))), DescriptorSet(0, (Slot(1, 0),))),
            (Slot(0, 1),),
            (Slot(5, 3),),
            dispatch=(4, 2, 1),
            push_constant_ranges=(
                PushConstantRange(COMPUTE_STAGE, 0, 16),
                PushConstantRange(COMPUTE_STAGE, 16, 8),
            ),
        ),
    ),
    resources=(
        Resource(
            Category.INPUT,
            "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
            "VK_FORMAT_R32G32B32A32_SFLOAT",
            (1, 4, 8, 4),
            sampler=SAMPLER,
        ),
        Resource(
            Category.INTERMEDIATE,
            "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
            "VK_FORMAT_R8_SINT",
            (1, 3),
            (3, 1),
            alias_group=5,
        ),
        Resource(Category.CONSTANT, None, "VK_FORMAT_R16_SFLOAT", (2, 2)),
        Resource(
            Category.OUTPUT,
            "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            "VK_FORMAT_R32_SFLOAT",
            (6,),
            alias_group=5,
        ),
    ),
    constants=(Constant(2, b"\x00\x3c\x00\x40\x00\x42\x00\x44"), Constant(2, b"\x01" * 3, 1)),
    inputs=(Interface("image", 0, 0),),
    outputs=(Interface("result", 5, 3),),
)
