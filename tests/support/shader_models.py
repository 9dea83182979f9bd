"""A model with a Vulkan custom shader op, and the ways its payload breaks ``vgfc check``.

``model`` builds x -> ABS -> shader -> ... -> y (1x64 fp32 each) around the payloads ``attrs``
makes: a GLSL shader (``COPY``) with one storage buffer in and one out, declared to match
(``AFFINE`` is a plain shader of the same bindings for front-end tests).
``CHECK_CASES`` holds one broken payload per contract and cross-check error, with the message
``vgfc check`` gives after the op's location (``where``); the check tests, the pipeline's
check-equals-compile test and the goldens all use them. ``INFO`` is a reflection with every kind
of binding a cache entry stores.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tosa_factory import SHADER_DOMAIN, Op, T, build, custom

from vgfc.spirv.reflect_records import ResourceBinding, ShaderInfo

COPY = """#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < 64u) y[i] = x[i] * 2.0;
}
"""


AFFINE = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    y[i] = 2.0 * x[i] + 1.0;
}
"""
"""y = 2x + 1 over a storage buffer, 64 invocations a workgroup: the front end's plain GLSL case."""


def attrs(code: str = COPY, **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": [4, 1, 1],
        "shader_language": "GLSL",
        "shader_code": code,
        "input_0_binding": 0,
        "input_0_descriptorset": 0,
        "input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
        "input_0_vkformat": "VK_FORMAT_R32_SFLOAT",
        "output_0_binding": 1,
        "output_0_descriptorset": 0,
        "output_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
        "output_0_vkformat": "VK_FORMAT_R32_SFLOAT",
    }
    base.update(over)
    return {k: v for k, v in base.items() if v is not None}


def model(tmp_path: Path, *payloads: dict[str, Any], domain: str = SHADER_DOMAIN) -> Path:
    """x -> ABS -> shader -> shader ... -> y, each tensor 1x64 fp32."""
    names = ["x", "a"] + [f"s{i}" for i in range(len(payloads))]
    ops = [Op("ABS", ["x"], ["a"])]
    for i, p in enumerate(payloads):
        ops.append(custom([names[i + 1]], [names[i + 2]], f"k{i}", domain=domain, attrs=p))
    path = tmp_path / "m.tosa"
    path.write_bytes(build([T(n, (1, 64)) for n in names], ops, ["x"], [names[-1]]))
    return path


PIXELS = """#version 450
layout(local_size_x = LX, local_size_y = LY) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    uint p = gl_GlobalInvocationID.y * 8u + gl_GlobalInvocationID.x;
    if (p >= 64u) return;
    for (uint c = 0u; c < 4u; ++c) y[p * 4u + c] = x[p * 4u + c] * 2.0;
}
"""


def pixel_model(folder: Path, local: tuple[int, int] = (8, 8), **over: Any) -> Path:
    """x -> ABS -> shader -> y, each [1, 8, 8, 4] fp32, the shader writing the 4 channels of one
    pixel per invocation (local size ``local``), the payload ``attrs(**over)``."""
    code = PIXELS.replace("LX", str(local[0])).replace("LY", str(local[1]))
    payload = attrs(code, **over)
    ops = [Op("ABS", ["x"], ["a"]), custom(["a"], ["y"], "k", domain=SHADER_DOMAIN, attrs=payload)]
    path = folder / "m.tosa"
    path.write_bytes(build([T(n, (1, 8, 8, 4)) for n in "xay"], ops, ["x"], ["y"]))
    return path


def where(i: int = 1) -> str:
    return f"op #{i} CUSTOM 'k{i - 1}' ({SHADER_DOMAIN})"


CHECK_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "syntax error keeps the shader's line number",
        attrs(COPY.replace("x[i] * 2.0", "x[i] * undefined_thing")),
        "shader_code:7:32: GLSL compilation failed: 'undefined_thing': undeclared identifier",
    ),
    (
        "declared binding the shader lacks",
        attrs(input_0_binding=3),
        "input_0_binding: declared at set 0 binding 3, but the shader has nothing there "
        "(it has set 0 binding 0 (storage_buffer 'In'), set 0 binding 1 (storage_buffer 'Out'))",
    ),
    (
        "wrong descriptor set",
        attrs(output_0_descriptorset=2),
        "output_0_binding: declared at set 2 binding 1, but the shader has nothing there",
    ),
    (
        "descriptor kind mismatch",
        attrs(
            COPY.replace(
                "layout(set = 0, binding = 0) readonly buffer In { float x[]; };",
                "layout(set = 0, binding = 0) uniform sampler2D img;",
            ).replace("x[i] * 2.0", "texelFetch(img, ivec2(i, 0), 0).x"),
        ),
        "input_0_vkdescriptortype: declared as VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, but the "
        "shader's set 0 binding 0 (combined_image_sampler 'img') is a combined_image_sampler",
    ),
    (
        "undeclared shader binding",
        attrs(
            COPY.replace(
                "void main() {",
                "layout(set = 1, binding = 7) buffer Extra { float e[]; };\nvoid main() {",
            ).replace("y[i] = x[i] * 2.0;", "y[i] = x[i] * e[0];"),
        ),
        "the shader uses set 1 binding 7 (storage_buffer 'Extra'), which no input_N/output_N "
        "declares",
    ),
    (
        "result bound to a read-only buffer",
        attrs(
            COPY.replace("writeonly buffer Out", "readonly buffer Out").replace(
                "y[i] = x[i] * 2.0;", "float unused = y[i] + x[i];"
            )
        ),
        "output_0_binding: a result is bound to set 0 binding 1 (storage_buffer 'Out'), which "
        "the shader declares read-only",
    ),
    (
        "shader writes to an input",
        attrs(
            COPY.replace("readonly buffer In", "buffer In").replace(
                "y[i] = x[i] * 2.0;", "x[i] = 0.0; y[i] = 1.0;"
            )
        ),
        "input_0_binding: the shader writes to set 0 binding 0 (storage_buffer 'In'), but it "
        "holds an input (tensor 'a'), which other readers share",
    ),
    (
        "atomic write to an input",
        attrs(
            COPY.replace("readonly buffer In { float x[]; }", "buffer In { uint x[]; }").replace(
                "y[i] = x[i] * 2.0;", "atomicAdd(x[0], 1u); y[i] = 1.0;"
            )
        ),
        "input_0_binding: the shader writes to set 0 binding 0",
    ),
    (
        "push constants declared, none in the shader",
        attrs(push_constants="scale: 4"),
        "push_constants: declares 4 bytes, but the shader's push-constant block has 0 bytes",
    ),
    (
        "push constant block not declared",
        attrs(
            COPY.replace(
                "void main() {",
                "layout(push_constant) uniform P { float scale; vec2 pad; } pc;\nvoid main() {",
            ).replace("* 2.0", "* pc.scale"),
        ),
        "push_constants: declares none, but the shader's push-constant block has 16 bytes",
    ),
    (
        "wrong entry point",
        attrs(entry_point="run"),
        "shader_code: ",
    ),
]


INFO = ShaderInfo(
    entry_points=(("main", "GLCompute"),),
    local_size=(64, 1, 1),
    bindings=(
        ResourceBinding(0, 0, "storage_buffer", "In", True, False),
        ResourceBinding(0, 1, "storage_image", None, False, True, "Rgba32f", 4, True),
    ),
    push_constant_size=8,
    spirv_version=(1, 6),
    unused=(ResourceBinding(1, 0, "uniform_buffer", "U", True, False),),
)
