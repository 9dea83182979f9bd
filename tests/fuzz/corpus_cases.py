"""The regression corpus ``tests/data/fuzz/``, built by hand from what the fuzzer found.

Each case is the smallest model that shows one finding (or, for classes vgfc handles now, one
input of the kind the mutator makes to probe them), named after what it tests. The files are
checked in; this script says how each was made and writes them again:

    python tests/fuzz/corpus_cases.py            # rewrite tests/data/fuzz/*.tosa
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tosa_tree
from tosa_factory import Op, T, build, custom

CORPUS = Path(__file__).resolve().parent.parent / "data" / "fuzz"
RELU = """#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) readonly buffer Input { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Output { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    y[i] = max(x[i], 0.0);
}
"""
ADD_HLSL = """[[vk::binding(0, 0)]] StructuredBuffer<float> a;
[[vk::binding(1, 0)]] RWStructuredBuffer<float> z;
[numthreads(64, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) {
    void main() {}
    z[id.x] = a[id.x];
}
"""


def _attrs(code: str = RELU, language: str = "GLSL", entry: str = "main") -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "entry_point": entry,
        "workgroup_sizes": [4, 1, 1],
        "shader_language": language,
        "shader_code": code,
    }
    for binding, io in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{io}_binding": binding,
            f"{io}_descriptorset": 0,
            f"{io}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            f"{io}_vkformat": "VK_FORMAT_R32_SFLOAT",
            f"{io}_type": "Buffer",
        }
    return attrs


def _shader(attrs: dict[str, Any] | bytes) -> bytes:
    """x[256] -> CUSTOM -> y[256], fp32."""
    op = custom(["x"], ["y"], name="relu", attrs=attrs)
    return build([T("x", (256,)), T("y", (256,))], [op], ["x"], ["y"])


def int4_graph_input_message_without_file() -> bytes:
    """An INT4 graph input: the error ('INT4 tensors have no Vulkan tensor format') carried no
    location at all, neither the file nor the tensor. (INT4 tensors now compile, one byte per
    element as the reference converter writes them.)"""
    return build(
        [T("x", (38,), "INT4"), T("y", (38,), "FP16")], [Op("ERF", ["x"], ["y"])], ["x"], ["y"]
    )


def identity_reshaping_emits_invalid_spirv() -> bytes:
    """IDENTITY from [38, 4] to [38]: folded away unchecked, so the graph module sets an output
    of the wrong type and spirv-val refuses the VGF that vgfc wrote."""
    tensors = [T("x", (38, 4), "FP16"), T("y", (38,), "FP16")]
    return build(tensors, [Op("IDENTITY", ["x"], ["y"])], ["x"], ["y"])


def shader_reads_variable_tensor() -> bytes:
    """A shader reads a variable tensor that is not a graph input: layout raises KeyError (ML ops
    refuse variables as stateful; the shader path does not)."""
    tree = tosa_tree.decode(_shader(_attrs()))
    block = tree["regions"][0]["blocks"][0]
    block["tensors"][0]["variable"] = True
    block["inputs"] = []
    return tosa_tree.encode(tree)


def shader_code_lone_surrogate() -> bytes:
    """shader_code is the JSON string "\\ud800": valid JSON, but not encodable as UTF-8 (the
    shader compiler's ``str.encode`` raised UnicodeEncodeError)."""
    return _shader(_attrs("\ud800"))


def hlsl_nested_function_crashes_glslang() -> bytes:
    """A function defined inside a function in HLSL: glslang 13 dies with SIGSEGV. In-process that
    took vgfc down; the bounded compile worker turns it into an error."""
    return _shader(_attrs(ADD_HLSL, "HLSL", "CSMain"))


def glsl_macro_expansion_exceeds_timeout() -> bytes:
    """Twenty macros, each doubling the one before: 2**20 additions from 1.7 KB of source, which
    glslang takes far longer than the shader timeout to compile."""
    lines = RELU.split("\n")
    macros = ["#define L0 x[i]"] + [f"#define L{k} (L{k - 1} + L{k - 1})" for k in range(1, 21)]
    body = [line.replace("max(x[i], 0.0)", "L20") for line in lines[1:]]
    return _shader(_attrs("\n".join([lines[0], *macros, *body])))


def json_nesting_10000_deep() -> bytes:
    """workgroup_sizes nested 10,000 lists deep: Python's JSON parser recurses once a level."""
    text = json.dumps(_attrs()).replace("[4, 1, 1]", "[" * 10_000 + "]" * 10_000)
    return _shader(text.encode())


def json_integer_5000_digits() -> bytes:
    """A binding of 5,000 digits: past Python's int-from-text limit (4,300 digits)."""
    text = json.dumps(_attrs()).replace('"input_0_binding": 0', '"input_0_binding": 1' + "0" * 4999)
    return _shader(text.encode())


def tensor_name_5000_characters() -> bytes:
    """A tensor name of 5,000 characters that an operator refers to but nothing defines: the
    message must not quote all of it."""
    name = "n" * 5000
    return build([T("x"), T("y")], [Op("ABS", [name], ["y"])], ["x"], ["y"])


CASES: dict[str, Callable[[], bytes]] = {
    "int4-graph-input-message-without-file": int4_graph_input_message_without_file,
    "identity-reshaping-emits-invalid-spirv": identity_reshaping_emits_invalid_spirv,
    "shader-reads-variable-tensor": shader_reads_variable_tensor,
    "shader-code-lone-surrogate": shader_code_lone_surrogate,
    "hlsl-nested-function-crashes-glslang": hlsl_nested_function_crashes_glslang,
    "glsl-macro-expansion-exceeds-timeout": glsl_macro_expansion_exceeds_timeout,
    "json-nesting-10000-deep": json_nesting_10000_deep,
    "json-integer-5000-digits": json_integer_5000_digits,
    "tensor-name-5000-characters": tensor_name_5000_characters,
}
"""File stem -> the function that builds it."""


def main() -> None:
    CORPUS.mkdir(parents=True, exist_ok=True)
    for stem, make in CASES.items():
        data = make()
        (CORPUS / f"{stem}.tosa").write_bytes(data)
        print(f"{stem}.tosa: {len(data)} bytes")


if __name__ == "__main__":
    main()
