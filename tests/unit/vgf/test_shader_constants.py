"""A constant a shader reads: a graph segment before the shader writes it out and the shader's
descriptor aliases it, as the reference converter lays such a file out; a large one stays a
view of the input file all the way to the VGF's constant section."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from shader_models import attrs
from tosa_factory import Op, T, build, custom

from vgfc.compiler import compile_model
from vgfc.vgf.model import Category, ModuleType

SCALE = """#version 450
layout(local_size_x = 16) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 2) readonly buffer S { float s[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < 64u) y[i] = x[i] * s[i % uint(s.length())];
}
"""


def _model(tmp_path: Path, count: int, *, leading_ml: bool) -> Path:
    payload = attrs(
        SCALE,
        input_1_binding=2,
        input_1_descriptorset=0,
        input_1_vkdescriptortype="VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
        input_1_vkformat="VK_FORMAT_R32_SFLOAT",
    )
    data = np.arange(1, count + 1, dtype=np.float32)
    first = "a" if leading_ml else "x"
    ops = [Op("CONST", [], ["c"])]
    tensors = [T("x", (1, 64)), T("c", (count,), data=data), T("y", (1, 64))]
    if leading_ml:
        ops.append(Op("ABS", ["x"], ["a"]))
        tensors.append(T("a", (1, 64)))
    ops.append(custom([first, "c"], ["y"], "scale", attrs=payload))
    path = tmp_path / "m.tosa"
    path.write_bytes(build(tensors, ops, ["x"], ["y"]))
    return path


@pytest.mark.parametrize("leading_ml", [True, False])
@pytest.mark.parametrize("count", [4, 64])
def test_the_constant_reaches_the_shader_through_a_graph_segment(
    tmp_path: Path, count: int, leading_ml: bool
) -> None:
    model = compile_model(_model(tmp_path, count, leading_ml=leading_ml)).model
    assert model is not None
    graph, compute = model.segments
    assert (graph.type, compute.type) == (ModuleType.GRAPH, ModuleType.COMPUTE)
    # The graph segment writes the constant out (after ABS's result, if any) ...
    written = [model.resources[s.resource] for s in graph.outputs]
    assert written[-1].tensor == "c" and written[-1].descriptor_type.endswith("TENSOR_ARM")
    # ... and the shader reads the same logical value through its storage buffer at binding 2.
    (dset,) = compute.descriptor_sets
    by_binding = {s.binding: model.resources[s.resource] for s in dset.slots}
    read = by_binding[2]
    assert read.tensor == "c" and read.descriptor_type.endswith("STORAGE_BUFFER")
    assert read.alias_group is not None and read.alias_group == written[-1].alias_group
    assert read.category is Category.INTERMEDIATE and read.shape == (count,)
    assert graph.outputs[-1].binding in {s.binding for s in compute.inputs}
    # Small constants are inlined in the graph module; a large one is a VGF constant.
    assert len(model.constants) == (1 if count > 16 else 0)


def test_a_large_constant_stays_a_view_of_the_input_file(tmp_path: Path) -> None:
    model = compile_model(_model(tmp_path, 64, leading_ml=True)).model
    assert model is not None
    (constant,) = model.constants
    assert isinstance(constant.data, memoryview) and constant.origin is not None
    assert bytes(constant.data) == np.arange(1, 65, dtype=np.float32).tobytes()
