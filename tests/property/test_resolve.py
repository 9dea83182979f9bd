"""Properties of resolve: each fast path gives what the plain way it stands in for gives, and
binding keeps the partitioning rules.

- ``vgfc.resolve.attrs_schema.conforms`` (the plain-code check on the hot path) gives jsonschema's
  verdict on ``implementation_attrs.schema.json`` for every payload, valid or not. The payloads
  are built from the schema's own keys with values that are right, nearly right (0 where the
  minimum is 1, a float for an integer, a bool, a string with a trailing newline) and wrong, so
  that a rule changed in the schema and not in the code, or the reverse, shows up.
- The walk for lone surrogates is skipped when the payload's bytes hold no ``\\u`` escape (strict
  UTF-8 cannot spell one otherwise): the attribute parser then finds exactly the surrogates a walk
  over every string of the payload finds, at the same key.
- Random graphs of built-ins and custom ops of the test kernel library, resolved (composed ops
  expanded, conversions inserted), keep the partitioning rules of ``partition_checks`` with
  one shader partition per kernel-bound op, and as few partitions as any valid plan on small
  graphs.
"""

from __future__ import annotations

import functools
import json
from types import MappingProxyType
from typing import Any

import jsonschema
import numpy as np
from attrs_graphs import PREFIX, graph, payload
from hypothesis import example, given, settings
from hypothesis import strategies as st
from kernel_models import ML, OPS, SH
from partition_checks import brute_force_minimum, check_plan

from vgfc.diagnostics import InputError
from vgfc.dtypes import DType
from vgfc.ir import Graph, Operator, Tensor, Version
from vgfc.partition import partition, program_order_count
from vgfc.resolve import resolve
from vgfc.resolve.attrs import parse_shader_spec
from vgfc.resolve.attrs_schema import conforms
from vgfc.resolve.library.load import load_library
from vgfc.resolve.library.records import Library
from vgfc.schema import load_schema
from vgfc.verify import topological_order, verify

SCHEMA = load_schema("implementation_attrs.schema.json")
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=4),
    st.sampled_from([1.0, 2.5, -1.0]),
    st.sampled_from(
        [
            "",
            "main",
            "x\n",
            "GLSL",
            "glsl",
            "SPIR-V",
            "HLSL",
            "Tensor",
            "IMAGE",
            "buffer\n",
            "sampler",
            "VK_FORMAT_R32_SFLOAT",
            "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
            "vk_format_r8",
            "a: 4",
            "a: 4, b_2: 8",
            " a :4 ,b:12 ",
            "a: x",
            "4: a",
            "a: 4,",
            "\n",
        ]
    ),
)
xyz = st.one_of(
    st.lists(st.integers(min_value=-1, max_value=3), min_size=2, max_size=4),
    st.lists(st.sampled_from([1, 2, 1.0, True, "1"]), min_size=3, max_size=3),
    scalars,
)
sampler_keys = ["min_filter", "mag_filter", "address_mode_u", "address_mode_v", "border_color"]
sampler = st.one_of(
    st.fixed_dictionaries(
        {k: st.sampled_from(["VK_FILTER_LINEAR", 1, None]) for k in sampler_keys}
    ),
    st.dictionaries(st.sampled_from([*sampler_keys, "extra"]), st.sampled_from(["x", 2])),
    scalars,
)
operand_keys = st.builds(
    lambda role, index, field: f"{role}_{index}_{field}",
    st.sampled_from(["input", "output", "inputs"]),
    st.sampled_from(["0", "1", "12", "01", "x"]),
    st.sampled_from(
        ["binding", "descriptorset", "vkdescriptortype", "vkformat", "type", "sampler", "other"]
    ),
)


valid_values: dict[str, st.SearchStrategy[Any]] = {
    "entry_point": st.sampled_from(["main", "k"]),
    "workgroup_sizes": st.lists(st.integers(1, 3), min_size=3, max_size=3),
    "global_size": st.lists(st.sampled_from([1, 2, 2.0]), min_size=3, max_size=3),
    "shader_language": st.sampled_from(["GLSL", "HLSL", "SPIR-V", ""]),
    "shader_code": st.sampled_from(["", "void main() {}"]),
    "push_constants": st.sampled_from(["", "a: 4", "a: 4, b_2: 8", " a :4 ,b:12 "]),
    "binding": st.integers(0, 3),
    "descriptorset": st.sampled_from([0, 1, 0.0]),
    "vkdescriptortype": st.sampled_from(["VK_DESCRIPTOR_TYPE_TENSOR_ARM", "VK_DESCRIPTOR_TYPE_"]),
    "vkformat": st.sampled_from(["VK_FORMAT_R32_SFLOAT", "VK_FORMAT_R8G8B8A8_UNORM"]),
    "type": st.sampled_from(["Tensor", "IMAGE", "buffer", "bUfFeR"]),
    "sampler": st.fixed_dictionaries({k: st.just("VK_FILTER_LINEAR") for k in sampler_keys}),
}


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    """A valid payload with some of its values dropped or replaced by near-misses."""
    keys = [
        "entry_point",
        "workgroup_sizes",
        "global_size",
        "shader_language",
        "shader_code",
        "push_constants",
    ]
    for role, index in (("input", "0"), ("input", "1"), ("output", "0")):
        fields = ["binding", "descriptorset", "vkdescriptortype", "vkformat", "type"]
        keys += [f"{role}_{index}_{field}" for field in fields]
    keys.append("input_0_sampler")
    payload: dict[str, Any] = {}
    broken = draw(st.sets(st.sampled_from(keys), max_size=3))
    for key in keys:
        if key == "global_size" and draw(st.booleans()):
            continue  # one of workgroup_sizes / global_size is enough
        if key not in broken:
            payload[key] = draw(
                valid_values[key.rsplit("_", 1)[-1] if key.startswith(("input", "output")) else key]
            )
            continue
        action = draw(st.sampled_from(["drop", "scalar", "xyz", "sampler"]))
        if action != "drop":
            payload[key] = draw({"scalar": scalars, "xyz": xyz, "sampler": sampler}[action])
    for key in draw(st.lists(operand_keys, max_size=2)):
        payload[key] = draw(sampler if key.endswith("sampler") else scalars)
    return payload


@settings(max_examples=3000, deadline=None)
@given(payloads())
def test_plain_check_gives_the_schemas_verdict(payload: dict[str, Any]) -> None:
    assert conforms(payload) == VALIDATOR.is_valid(payload), payload


def test_a_full_valid_payload_conforms() -> None:
    payload = {
        "entry_point": "main",
        "workgroup_sizes": [1, 2, 3],
        "shader_language": "GLSL",
        "shader_code": "void main() {}",
        "push_constants": "scale: 4, bias: 4",
        "input_0_binding": 0,
        "input_0_descriptorset": 0,
        "input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
        "input_0_vkformat": "VK_FORMAT_R8G8B8A8_UNORM",
        "input_0_type": "Image",
        "input_0_sampler": dict.fromkeys(sampler_keys, "VK_FILTER_LINEAR"),
    }
    assert VALIDATOR.is_valid(payload)
    assert conforms(payload)


# -- lone surrogates: the walk skipped without a \u escape ----------------------------------------

# Strings that may hold a lone surrogate (category Cs), non-ASCII text, or a backslash and a "u".
TEXTS = st.text(st.characters(codec=None, categories=["L", "N", "P", "Cs"]), max_size=6) | (
    st.sampled_from(["\\ud800", "\\u0041", "é", "main"])
)
VALUES = st.recursive(
    TEXTS | st.integers(-2, 2),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
    max_leaves=6,
)


def _first_surrogate(value: object, key: str = "") -> str | None:
    """The key of the first string (key or value) of ``value`` that UTF-8 cannot encode, by a
    plain walk in document order, as the parser reports keys (``a.b`` for nested objects)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return key
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            found = _first_surrogate(k, key)
            if found is None:
                found = _first_surrogate(v, f"{key}.{k}" if key else k)
            if found is not None:
                return found
    if isinstance(value, list):
        for v in value:
            found = _first_surrogate(v, key)
            if found is not None:
                return found
    return None


@settings(max_examples=400, deadline=None)
@example({"x\udc00": 1}, True)
@example({"input_0_sampler": {"min_filter": "VK_\ud800"}}, True)
@example({"note": "\\ud800 é"}, False)
@given(st.dictionaries(TEXTS, VALUES, max_size=3), st.booleans())
def test_surrogates_are_found_as_a_full_walk_finds_them(
    extra: dict[str, object], ascii: bool
) -> None:
    document = {**extra, **payload()}
    key = _first_surrogate(document)
    if key is not None or ascii:
        raw = json.dumps(document).encode()  # escapes every non-ASCII character as \uXXXX
    else:
        raw = json.dumps(document, ensure_ascii=False).encode()  # no escape, no surrogate
    g = graph(raw)
    try:
        parse_shader_spec(g.operators[0], g)
    except InputError as e:
        surrogate = "a lone surrogate" in str(e)
        assert surrogate == (key is not None), str(e)
        if surrogate:
            where = f"{key}: " if key else ""
            assert str(e).startswith(f"{PREFIX}{where}not valid Unicode text"), (str(e), key)
    else:
        assert key is None


PROPERTY_SHAPE = (1, 3, 2, 3)
CUSTOM_KINDS = {
    # name: (implementation_attrs, inserts conversions)
    "Affine": ({"scale": 2.0}, False),
    "HardSwish": ({}, False),
    "ScaleBias": ({"scale": 0.5, "bias": [1.0, 2.0, 3.0]}, False),
    "ChannelAdd": ({"step": 1.0}, True),  # TRANSPOSE
    "HalfAffine": ({"scale": 2.0}, True),  # CAST
    "ImageGain": ({}, True),  # PAD / SLICE
}


@functools.cache
def _library() -> Library:
    """The test library, read once: a Library is immutable, and reading it for each of the
    hundreds of examples would cost more than resolving them."""
    return load_library(OPS)


@st.composite
def kernel_dags(draw: st.DrawFn, max_ops: int = 8, repeat_conversions: bool = False) -> Graph:
    """Random DAGs of built-ins (ADD, ABS, constants) and custom ops of the test library, every
    tensor FP32 of one shape. Without ``repeat_conversions`` each converting kind appears once."""
    n = draw(st.integers(1, max_ops))
    tensors = {f"x{i}": Tensor(f"x{i}", PROPERTY_SHAPE, DType.FP32) for i in range(2)}
    values = ["x0", "x1"]  # what a shader may read (no constants)
    operators: list[Operator] = []
    used: set[str] = set()
    for i in range(n):
        choices = [
            "ADD",
            "ABS",
            "CONST",
            *(k for k in CUSTOM_KINDS if repeat_conversions or k not in used),
        ]
        kind = draw(st.sampled_from(choices))
        out = f"t{i}"
        attrs: dict[str, Any] = {}
        data = None
        if kind == "CONST":
            ins: list[str] = []
            data = np.full(PROPERTY_SHAPE, 0.5, np.float32)
        elif kind == "ADD":
            ins = [draw(st.sampled_from(sorted(tensors))), draw(st.sampled_from(sorted(tensors)))]
        elif kind == "ABS":
            ins = [draw(st.sampled_from(sorted(tensors)))]
        else:
            payload, converts = CUSTOM_KINDS[kind]
            if converts:
                used.add(kind)
            ins = [draw(st.sampled_from(values))]
            attrs = {
                "operator_name": kind,
                "domain_name": "test",
                "implementation_attrs": json.dumps(payload).encode(),
            }
            kind = "CUSTOM"
        operators.append(Operator(i, kind, tuple(ins), (out,), MappingProxyType(attrs)))
        tensors[out] = Tensor(out, PROPERTY_SHAPE, DType.FP32, data)
        if kind != "CONST":
            values.append(out)
    if all(o.is_constant for o in operators):
        operators.append(Operator(n, "ABS", ("x0",), ("last",)))
        tensors["last"] = Tensor("last", PROPERTY_SHAPE, DType.FP32)
    read = {t for o in operators for t in o.inputs}
    outputs = [o.outputs[0] for o in operators if o.outputs[0] not in read and not o.is_constant]
    return Graph(
        tensors=MappingProxyType(tensors),
        operators=tuple(operators),
        inputs=("x0", "x1"),
        outputs=tuple(outputs),
        version=Version(1, 0, 0, False),
        source="random.tosa",
    )


def _check_resolved(g: Graph, library: Library) -> None:
    resolution = resolve(g, libraries=(library,))
    r = resolution.graph
    verify(r)  # well formed: every tensor defined once, acyclic
    order = tuple(o.index for o in topological_order(r))
    plan = partition(r, order)
    check_plan(r, plan)
    assert plan.program_order_count == program_order_count(r, order)
    non_orphan = [p for p in plan.partitions if p.operators]
    shaders = sum(o.is_shader for o in r.operators)
    has_ml = any(not o.is_shader and not o.is_constant for o in r.operators)
    assert len(non_orphan) <= program_order_count(r, order)
    assert len(non_orphan) >= shaders + has_ml
    # One shader partition per kernel-bound op; every added op is ML work.
    bound = sum(
        o.op == "CUSTOM"
        and o.attrs["operator_name"] in ("Affine", "ChannelAdd", "HalfAffine", "ImageGain")
        for o in g.operators
    )
    assert sum(p.kind is SH for p in plan.partitions) == bound == shaders
    part = {i: p for p in plan.partitions for i in p.operators}
    for o in r.operators:
        if o.inserted and not o.is_constant:
            assert part[o.index].kind is ML
    assert {k[0] for k in resolution.kernels} <= {o.index for o in r.operators}


@settings(max_examples=150, deadline=None)
@given(kernel_dags())
def test_random_graphs_with_kernel_ops_keep_the_partition_rules(g: Graph) -> None:
    _check_resolved(g, _library())


@settings(max_examples=60, deadline=None)
@given(kernel_dags(max_ops=4))
def test_partition_count_stays_minimal_with_expanded_ops(g: Graph) -> None:
    r = resolve(g, libraries=(_library(),)).graph
    plan = partition(r, tuple(o.index for o in topological_order(r)))
    assert sum(bool(p.operators) for p in plan.partitions) == brute_force_minimum(r)


@settings(max_examples=150, deadline=None)
@given(kernel_dags(repeat_conversions=True))
def test_random_graphs_with_repeated_conversions_keep_the_partition_rules(g: Graph) -> None:
    _check_resolved(g, _library())
