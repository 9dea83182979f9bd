"""The reader's fast paths, each held to the plain way it stands in for.

- :meth:`vgfc.read.bulk._Columns.texts` splits all strings out of one blob, and slices them
  one by one when a string holds a NUL or is not ASCII: both give what reading each string does.
- Operator locations are read in bulk: the same as one at a time, errors included.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tosa_factory import Op, T, build

from vgfc.diagnostics import VgfcError
from vgfc.read import reader as tosa_reader
from vgfc.read.buffer import Buffer
from vgfc.read.bulk import _Columns


@pytest.mark.parametrize(
    "names",
    [
        ["a", "bb", "", "ccc"],
        ["with\0nul", "plain"],
        ["ünïcode", "plain", "名前"],
        [],
        ["x" * 40, "y"],
    ],
)
def test_texts_are_the_strings_read_one_by_one(names: list[str]) -> None:
    blob = bytearray()
    at = []
    for name in names:
        raw = name.encode()
        at.append(len(blob))
        blob += len(raw).to_bytes(4, "little") + raw + b"\0\0\0\0"
    buffer = Buffer(bytes(blob))
    found, bad = _Columns(buffer).texts(np.array(at, np.int64), 30)
    expected = [
        buffer.raw_string(a).decode() if len(n.encode()) <= 30 else ""
        for a, n in zip(at, names, strict=True)
    ]
    assert found == expected
    assert bad.tolist() == [len(n.encode()) > 30 for n in names]


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


def _both_ways(data: bytes, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    results: list[Any] = []
    for bulk_from in (0, 1 << 62):
        monkeypatch.setattr(tosa_reader, "_BULK_FROM", bulk_from)
        reader = tosa_reader._Reader(data, "m.tosa")
        try:
            graph = reader.graph()
            results.append([op.location_text for op in graph.operators])
            assert reader.fell_back == 0
        except VgfcError as e:
            results.append(str(e))
    return results


def test_locations_read_in_bulk_as_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    locations = [f'loc("m.mlir":{i}:1)' if i % 3 else None for i in range(80)]
    locations[7] = ""  # an empty text reads as no location
    bulk, one_by_one = _both_ways(_located(locations), monkeypatch)
    assert bulk == one_by_one == [text or None for text in locations]


def test_a_location_that_is_not_utf8_fails_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    locations: list[Any] = ["fine"] * 80
    locations[42] = b"\xffbad"
    bulk, one_by_one = _both_ways(_located(locations), monkeypatch)
    assert bulk == one_by_one
    assert "not valid UTF-8" in bulk
