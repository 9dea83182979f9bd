"""The Vulkan environments vgfc compiles for and the SPIR-V versions they take: a leaf that the
option table, the shader front ends and the graph lowering all read."""

from __future__ import annotations

__all__ = ["GRAPH_MIN_SPIRV", "GRAPH_SPIRV", "SPIRV_VERSIONS", "TARGET_ENVS"]

SPIRV_VERSIONS: dict[str, tuple[int, int]] = {
    "vulkan1.0": (1, 0),
    "vulkan1.1": (1, 3),
    "vulkan1.2": (1, 5),
    "vulkan1.3": (1, 6),
    "vulkan1.4": (1, 6),
}
"""Each Vulkan environment shaders can be compiled and validated for (``--target-env``), and the
newest SPIR-V version it accepts: the version GLSL and HLSL shaders are compiled to for it."""

TARGET_ENVS = tuple(SPIRV_VERSIONS)
"""The names ``--target-env`` accepts."""

GRAPH_SPIRV = (1, 5)
"""The SPIR-V version of a graph module (an ML partition), as the reference converter writes it;
an older environment gets the newest version it accepts, down to :data:`GRAPH_MIN_SPIRV`."""

GRAPH_MIN_SPIRV = (1, 3)
"""The oldest SPIR-V a graph module can be: it uses the Vulkan memory model
(SPV_KHR_vulkan_memory_model needs SPIR-V 1.3), so vulkan1.0 cannot hold one."""
