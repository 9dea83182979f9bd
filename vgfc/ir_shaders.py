"""The IR's resolved-op types: what a custom op runs as once the resolve stage bound it.

Part of the IR (:mod:`vgfc.ir` re-exports them: ``from vgfc.ir import ShaderSpec``), kept in a
module of their own because they are the resolve stage's output, not the graph the reader builds:
a model without custom ops never loads them (the IR module loads this one when one of these names
is first asked for). Nothing here imports :mod:`vgfc.ir`.
"""

from __future__ import annotations

from vgfc.record import record

__all__ = ["IMAGE_DESCRIPTORS", "PushConstant", "Sampler", "ShaderResource", "ShaderSpec"]


IMAGE_DESCRIPTORS = frozenset(
    {
        "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
        "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE",
        "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
    }
)
"""Descriptor types through which a shader sees an image (the rest are buffers or tensors)."""


@record
class Sampler:
    """Sampler state of a combined image sampler, as Vulkan enum names."""

    min_filter: str
    mag_filter: str
    address_mode_u: str
    address_mode_v: str
    border_color: str


@record
class ShaderResource:
    """How the shader sees one operand (``input``) or result (``output``)."""

    role: str
    """``input`` or ``output``."""
    index: int
    tensor: str
    """The TOSA tensor bound to it."""
    binding: int
    set: int
    descriptor_type: str
    """``VK_DESCRIPTOR_TYPE_*`` name."""
    format: str
    """``VK_FORMAT_*`` name."""
    kind: str | None
    """``tensor``, ``image`` or ``buffer`` when ``input_N_type`` is given."""
    sampler: Sampler | None = None

    @property
    def key(self) -> str:
        """``input_0`` / ``output_1``: the prefix of this resource's keys."""
        return f"{self.role}_{self.index}"

    @property
    def is_image(self) -> bool:
        return self.descriptor_type in IMAGE_DESCRIPTORS


@record
class PushConstant:
    name: str
    offset: int
    size: int


@record
class ShaderSpec:
    """Everything a Vulkan custom shader op declares about itself."""

    name: str
    """The op's ``operator_name``."""
    entry_point: str
    workgroup_counts: tuple[int, int, int] | None
    """``workgroup_sizes`` as given: the dispatch's workgroup counts."""
    global_size: tuple[int, int, int] | None
    """vgfc's ``global_size`` extension: invocations wanted; counts are derived from it."""
    language: str | None
    """``GLSL``, ``HLSL``, ``SPIR-V``; ``None`` for a code-less placeholder."""
    code: str | None
    """Source text (GLSL/HLSL); ``None`` for SPIR-V and placeholders."""
    spirv: bytes | None
    """The decoded binary when the language is ``SPIR-V``."""
    push_constants: tuple[PushConstant, ...]
    inputs: tuple[ShaderResource, ...]
    outputs: tuple[ShaderResource, ...]
    defines: tuple[tuple[str, str], ...] = ()
    """Preprocessor macros for this op's compile (kernel library parameters), before the
    command line's own."""
    include_dirs: tuple[str, ...] = ()
    """Folders searched for ``#include`` (a kernel library's), before the command line's."""
    source_file: str | None = None
    """The file the code came from (a kernel library shader) as the user would name it
    (:func:`vgfc.resolve.bind.shader_file`), for diagnostics and the dependency file."""
    metadata: tuple[tuple[str, str], ...] = ()
    """Payload keys vgfc does not read (ExecuTorch's ``operator_name``, ``input_scale``, ...),
    each with its value as JSON text, in payload order: kept for the report."""

    @property
    def resources(self) -> tuple[ShaderResource, ...]:
        return self.inputs + self.outputs

    @property
    def push_constant_size(self) -> int:
        return sum(p.size for p in self.push_constants)
