"""The smallest valid SPIR-V graph module (y = ABS(x) over a 2x3 fp32 tensor), for tests of the
module builder: a test adds its own requests to a builder, then ``graph_module`` finishes it as a
module that SPIRV-Tools can validate."""

from __future__ import annotations

from vgfc.ir import DType
from vgfc.spirv.builder import ModuleBuilder
from vgfc.spirv.extinst import TOSA_SET, tosa_instructions
from vgfc.spirv.spirv_tools import disassemble
from vgfc.spirv.tensors import BASE_CAPABILITIES, BASE_EXTENSIONS, tensor_type


def graph_module(b: ModuleBuilder | None = None) -> ModuleBuilder:
    """Finish ``b`` (or a new builder) as the smallest valid graph module: y = ABS(x)."""
    b = b or ModuleBuilder()
    b.capability(*BASE_CAPABILITIES)
    b.extension(*BASE_EXTENSIONS)
    tosa = b.import_set(TOSA_SET)
    b.memory_model("Logical", "Vulkan")
    t = tensor_type(b, DType.FP32, (2, 3))
    variables = []
    for binding in (0, 1):
        variables.append(b.variable(b.type_pointer("UniformConstant", t), "UniformConstant"))
        b.decorate(variables[-1], "DescriptorSet", 0)
        b.decorate(variables[-1], "Binding", binding)
    graph = b.new_id()
    b.graph_entry_point(graph, "main", variables)
    b.begin_graph(b.type_graph([t], [t]), graph)
    x = b.graph_input(t, 0)
    b.graph_set_output(b.ext_inst(t, tosa, tosa_instructions()["ABS"].opcode, [x]), 0)
    b.end_graph()
    return b


def lines(b: ModuleBuilder) -> list[str]:
    return [line.strip() for line in disassemble(b.to_bytes()).splitlines()]
