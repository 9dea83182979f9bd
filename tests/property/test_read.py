"""Properties of the reader: each fast path gives what the plain way it stands in for gives.

- :meth:`vgfc.read.bulk._Columns.texts` splits all strings out of one blob, and slices them one by
  one when a string holds a NUL or is not ASCII: both give what reading each string does.
- Operator locations are read in bulk: the same as one at a time, errors included.
- Big tensor and operator tables are read in bulk: on truncated and byte-flipped files, the same
  graph or the same error as reading table by table.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tosa_factory import Op, T, build
from tosa_reading import as_read, every_op_model

from vgfc.diagnostics import VgfcError
from vgfc.read import reader as tosa_reader
from vgfc.read.buffer import Buffer
from vgfc.read.bulk import _Columns

# Names of every kind: empty, ASCII, with a NUL, not ASCII, longer than the limit of 30 bytes.
NAMES = st.lists(
    st.text(max_size=12) | st.sampled_from(["", "with\0nul", "名前", "x" * 40]), max_size=8
)


@settings(max_examples=200, deadline=None)
@example(["a", "bb", "", "ccc"])
@example(["with\0nul", "plain"])
@example(["ünïcode", "plain", "名前"])
@example([])
@example(["x" * 40, "y"])
@given(NAMES)
def test_texts_are_the_strings_read_one_by_one(names: list[str]) -> None:
    blob = bytearray()
    at = []
    for name in names:
        raw = name.encode("utf-8", "surrogatepass")
        at.append(len(blob))
        blob += len(raw).to_bytes(4, "little") + raw + b"\0\0\0\0"
    buffer = Buffer(bytes(blob))
    found, bad = _Columns(buffer).texts(np.array(at, np.int64), 30)
    limit = [len(n.encode("utf-8", "surrogatepass")) > 30 for n in names]
    expected = []
    for a, too_long in zip(at, limit, strict=True):
        try:
            expected.append("" if too_long else buffer.raw_string(a).decode())
        except UnicodeDecodeError:
            expected.append(None)
    # A string that is not UTF-8 is left to the one-by-one reading: flagged bad, text empty.
    assert bad.tolist() == [
        too_long or e is None for too_long, e in zip(limit, expected, strict=True)
    ]
    assert found == [e or "" for e in expected]


def test_a_string_that_is_not_utf8_is_left_to_the_one_by_one_reading() -> None:
    blob = b"\x02\0\0\0ok\0\0" + b"\x02\0\0\0\xff\xfe\0\0"
    found, bad = _Columns(Buffer(blob)).texts(np.array([0, 8], np.int64), 30)
    assert found == ["ok", ""] and bad.tolist() == [False, True]


def _located(locations: list[Any]) -> bytes:
    """A chain of operators (enough to be read in bulk) with ``locations`` as theirs."""
    names = ["x", *(f"t{i}" for i in range(len(locations)))]
    ops = [
        Op("ABS", [names[i]], [names[i + 1]], location=location)
        for i, location in enumerate(locations)
    ]
    return build([T(n) for n in names], ops, ["x"], [names[-1]])


def _both_ways(data: bytes) -> list[Any]:
    results: list[Any] = []
    default = tosa_reader._BULK_FROM
    try:
        for bulk_from in (0, 1 << 62):
            tosa_reader._BULK_FROM = bulk_from
            reader = tosa_reader.Reader(data, "m.tosa")
            try:
                graph = reader.graph()
                results.append([op.location_text for op in graph.operators])
                assert reader.fell_back == 0
            except VgfcError as e:
                results.append(str(e))
    finally:
        tosa_reader._BULK_FROM = default
    return results


def test_locations_read_in_bulk_as_one_by_one() -> None:
    locations = [f'loc("m.mlir":{i}:1)' if i % 3 else None for i in range(80)]
    locations[7] = ""  # an empty text reads as no location
    bulk, one_by_one = _both_ways(_located(locations))
    assert bulk == one_by_one == [text or None for text in locations]


def test_a_location_that_is_not_utf8_fails_alike() -> None:
    locations: list[Any] = ["fine"] * 80
    locations[42] = b"\xffbad"
    bulk, one_by_one = _both_ways(_located(locations))
    assert bulk == one_by_one
    assert "not valid UTF-8" in bulk


LOCATIONS = st.none() | st.text(max_size=10) | st.binary(max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(LOCATIONS, min_size=65, max_size=90))
def test_random_locations_read_in_bulk_as_one_by_one(locations: list[Any]) -> None:
    bulk, one_by_one = _both_ways(_located(locations))
    assert bulk == one_by_one


@pytest.fixture(scope="module")
def big_model() -> bytes:
    return every_op_model()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bulk_and_table_by_table_agree_on_broken_files(
    data: st.DataObject, big_model: bytes
) -> None:
    """Truncations and byte flips: the same graph or the same error, either way of reading."""
    model = bytearray(big_model)
    cut = data.draw(st.just(len(model)) | st.integers(8, len(model)))  # flips read further
    for _ in range(data.draw(st.integers(0, 4))):
        pos = data.draw(st.integers(8, len(model) - 1))
        model[pos] = data.draw(st.integers(0, 255))
    broken = bytes(model[:cut])
    results = []
    default = tosa_reader._BULK_FROM
    for bulk_from in (0, 1 << 62):
        tosa_reader._BULK_FROM = bulk_from
        try:
            graph = tosa_reader.loads(broken, "broken.tosa")
            results.append(json.dumps(as_read(graph), default=repr))
        except VgfcError as e:
            results.append(str(e))
        finally:
            tosa_reader._BULK_FROM = default
    assert results[0] == results[1]
