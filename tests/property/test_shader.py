"""Properties of the shader cache's stored reflection: an entry's header holds the reflection as
JSON, and reading it back is the plain way it stands in for reflecting the module again.

Any reflection reads back equal; and a header changed in any one place (a field dropped or added,
a value of another type or length) reads back as a miss, or as exactly the reflection the changed
header spells (a value swapped for another of its type), never as anything else.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from shader_models import INFO

from vgfc.shader import cache_entries
from vgfc.spirv.reflect_records import ResourceBinding, ShaderInfo

SMALL = st.integers(0, 2**32 - 1)
NAMES = st.none() | st.text(max_size=8)

BINDINGS = st.builds(
    ResourceBinding,
    SMALL,
    SMALL,
    st.sampled_from(["storage_buffer", "uniform_buffer", "storage_image", "tensor"]),
    NAMES,
    st.booleans(),
    st.booleans(),
    st.none() | st.sampled_from(["Rgba32f", "R32f", "Unknown"]),
    st.none() | st.integers(0, 64),
    st.booleans(),
)
INFOS = st.builds(
    ShaderInfo,
    st.lists(
        st.tuples(st.text(max_size=8), st.sampled_from(["GLCompute", "Kernel"])), max_size=3
    ).map(tuple),
    st.none() | st.tuples(SMALL, SMALL, SMALL),
    st.lists(BINDINGS, max_size=4).map(tuple),
    st.none() | st.integers(0, 256),
    st.tuples(st.integers(1, 1), st.integers(0, 6)),
    st.lists(BINDINGS, max_size=2).map(tuple),
)
OTHER_VALUES = st.sampled_from([None, True, 1, 1.0, "1", [], [1], [1, 2, 3], {}, {"a": 1}])


def stored(info: ShaderInfo) -> Any:
    """``info`` as an entry's header holds it: written as JSON and read back."""
    return json.loads(json.dumps(cache_entries._info_json(info)))


@settings(max_examples=200, deadline=None)
@example(INFO)
@given(INFOS)
def test_a_stored_reflection_reads_back_equal(info: ShaderInfo) -> None:
    assert cache_entries._info_from_json(stored(info)) == info


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: the value itself and, within it, each item and field."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*path, i))
    return found


@settings(max_examples=300, deadline=None)
@example(INFO, 0, None)
@given(INFOS, st.integers(0, 10_000), OTHER_VALUES)
def test_a_changed_header_reads_as_what_it_was_or_as_a_miss(
    info: ShaderInfo, pick: int, other: Any
) -> None:
    data = stored(info)
    places = _paths(data)
    path = places[pick % len(places)]
    if not path:
        data = other
    else:
        *parent_path, last = path
        parent = data
        for key in parent_path:
            parent = parent[key]
        if isinstance(parent, dict) and pick % 3 == 0:
            del parent[last]  # a field missing
        elif isinstance(parent, dict) and pick % 3 == 1:
            parent[f"{last}_extra"] = other  # a field more
        else:
            parent[last] = other  # a value of another type or shape
    back = cache_entries._info_from_json(data)
    assert back is None or back == info or stored(back) == data
