"""Properties of the SPIR-V module builder under random type and constant requests.

Equal requests share one id and the module stays valid (SPIRV-Tools, ``vulkan1.3`` rules); and
a module built on a copy of a shared prologue, the way graph lowering starts every module, is
byte for byte the module built from scratch, while the prologue stays as it was.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from spirv_modules import graph_module

from vgfc.ir import DType
from vgfc.spirv.builder import ModuleBuilder
from vgfc.spirv.grammar import core_grammar, opcode
from vgfc.spirv.spirv_tools import validate
from vgfc.spirv.tensors import (
    BASE_CAPABILITIES,
    BASE_EXTENSIONS,
    element_type,
    scalar_constant,
    tensor_constant,
    tensor_type,
    value_bits,
)

_DTYPES = (
    DType.BOOL,
    DType.INT8,
    DType.INT16,
    DType.INT32,
    DType.INT48,
    DType.FP16,
    DType.FP32,
    DType.BF16,
    DType.FP8E4M3,
    DType.SHAPE,
)


@st.composite
def requests(draw: st.DrawFn) -> tuple[Any, ...]:
    kind = draw(st.sampled_from(["element", "tensor", "u32", "scalar", "constant"]))
    dtype = draw(st.sampled_from(_DTYPES))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    if dtype is DType.SHAPE:
        shape = shape[:1]
    count = int(np.prod(shape))
    small = st.integers(-3, 3) if dtype is not DType.BOOL else st.booleans()
    values = tuple(draw(st.lists(small, min_size=count, max_size=count)))
    return (kind, dtype, shape, values, draw(st.booleans()), draw(st.integers(0, 5)))


def _request(
    b: ModuleBuilder, kind: str, dtype: DType, shape: Any, values: Any, rep: bool, n: int
) -> int:
    if kind == "element":
        return element_type(b, dtype)
    if kind == "tensor":
        return tensor_type(b, dtype, shape)
    if kind == "u32":
        return b.constant_u32(n)
    flat = [float(v) for v in np.asarray(values, dtype=np.float64).reshape(-1)]
    if dtype is not DType.BOOL and not dtype.is_float:
        flat = [int(v) for v in flat]
    bits = value_bits(dtype, flat)
    if kind == "scalar":
        return scalar_constant(b, dtype, bits[0])
    return tensor_constant(b, dtype, shape, bits, replicate=rep)


@settings(max_examples=60, deadline=None)
@given(st.lists(requests(), min_size=1, max_size=12))
def test_random_requests_are_shared_and_the_module_validates(batch: list[tuple[Any, ...]]) -> None:
    b = ModuleBuilder()
    first: dict[tuple[Any, ...], int] = {}
    for request in batch * 2:  # every request twice: the second answer must be the first
        got = _request(b, *request)
        assert first.setdefault(_key(request), got) == got
    module = graph_module(b)
    validate(module.to_bytes(), "vulkan1.3")
    # No declaration appears twice: equal requests, and different requests that encode the
    # same (a u32 constant and an INT32 scalar of the same value), share one id.
    declarations = _declarations(module.words())
    assert len(declarations) == len(set(declarations))


def _declarations(words: list[int]) -> list[tuple[int, ...]]:
    """(opcode, operands without the result id) of every type and constant declaration."""
    grammar = core_grammar()
    found, i = [], 5
    while i < len(words):
        count, code = words[i] >> 16, words[i] & 0xFFFF
        kind = grammar.classes.get(code, "")
        if kind in ("Type-Declaration", "Constant-Creation") or code == opcode(
            "OpGraphConstantARM"
        ):
            operands = words[i + 1 : i + count]
            typed = grammar.operands[code][0][0] == "IdResultType"
            found.append((code, *(operands[:1] + operands[2:] if typed else operands[1:])))
        i += count
    return found


def _key(request: tuple[Any, ...]) -> tuple[Any, ...]:
    kind, dtype, shape, values, rep, n = request
    if kind == "element":
        return (kind, dtype)
    if kind == "tensor":
        return (kind, dtype, shape)
    if kind == "u32":
        return (kind, n)
    if kind == "scalar":
        return (kind, dtype, values[:1])
    return (kind, dtype, shape, values, rep)


@settings(max_examples=40, deadline=None)
@given(st.lists(requests(), max_size=8), st.lists(requests(), min_size=1, max_size=8))
def test_a_copy_of_a_prologue_builds_what_a_fresh_builder_builds(
    shared: list[tuple[Any, ...]], more: list[tuple[Any, ...]]
) -> None:
    def prologue() -> ModuleBuilder:
        b = ModuleBuilder()
        b.capability(*BASE_CAPABILITIES)
        b.extension(*BASE_EXTENSIONS)
        for request in shared:
            _request(b, *request)
        return b

    original = prologue()
    before = original.to_bytes()
    copy = original.copy()
    fresh = prologue()
    for request in more:
        assert _request(copy, *request) == _request(fresh, *request)
    assert graph_module(copy).to_bytes() == graph_module(fresh).to_bytes()
    assert original.to_bytes() == before
