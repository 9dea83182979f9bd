"""When the bulk reads (:mod:`vgfc.read.bulk`) hand a table back to the one-by-one reading.

Only :class:`~vgfc.read.bulk.Fallback` does that, for the layouts bulk.py's docstring lists; a
bug in the bulk code goes on up instead of turning into a silent slow path. (That both ways read
the same graph, or fail with the same error, on every model and on broken files:
tests/unit/read/test_reader_reference.py and tests/property/test_read.py.)
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from tosa_factory import Op, T, build

from vgfc.diagnostics import InputError
from vgfc.read import bulk
from vgfc.read import reader as tosa_reader
from vgfc.read.buffer import Corrupt

WIDTH = 40


@pytest.fixture
def chain() -> bytes:
    """A chain of ``WIDTH`` ABS operators (read in bulk once ``_BULK_FROM`` is lowered)."""
    names = ["x", *(f"t{i}" for i in range(WIDTH))]
    ops = [Op("ABS", [names[i]], [names[i + 1]]) for i in range(WIDTH)]
    return build([T(n) for n in names], ops, ["x"], [names[-1]])


@pytest.fixture
def in_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tosa_reader, "_BULK_FROM", 0)


def _one_by_one(data: bytes, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(tosa_reader, "_BULK_FROM", 1 << 62)
        return tosa_reader.loads(data, "m.tosa")


def _tensor_tables(data: bytes) -> list[int]:
    """Where the tables of the main block's tensors lie."""
    r = tosa_reader.Reader(data, None)
    layouts = r.schema.voffsets
    root = r.table(0)
    regions_at = r.fields(root, layouts["TosaGraph"])[1]
    region = r.offsets(root + regions_at)[0]
    blocks_at = r.fields(region, layouts["TosaRegion"])[1]
    block = r.offsets(region + blocks_at)[0]
    tensors_at = r.fields(block, layouts["TosaBasicBlock"])[1]
    return r.offsets(block + tensors_at)


def _bug(*_: object) -> None:
    raise TypeError("a bug in the bulk reads")


@pytest.mark.parametrize("where", ["_by_code", "_tuples"])
@pytest.mark.usefixtures("in_bulk")
def test_a_bug_in_the_bulk_reads_goes_on_up(
    chain: bytes, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, where, _bug)
    reader = tosa_reader.Reader(chain, "m.tosa")
    with pytest.raises(TypeError, match="a bug in the bulk reads"):
        reader.graph()
    assert reader.fell_back == 0


@pytest.mark.usefixtures("in_bulk")
def test_a_bug_in_the_bulk_reads_is_not_read_around(
    chain: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bug(*_: object) -> None:
        raise RuntimeError("a bug in the bulk reads")

    monkeypatch.setattr(bulk._Columns, "texts", bug)
    with pytest.raises(RuntimeError, match="a bug in the bulk reads"):
        tosa_reader.loads(chain, "m.tosa")


@pytest.mark.usefixtures("in_bulk")
def test_fallback_reads_the_tables_one_by_one_to_the_same_graph(
    chain: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    def overlapping(*_: object) -> None:
        raise bulk.Fallback  # as for names that overlap (shared strings)

    expected = _one_by_one(chain, monkeypatch)
    monkeypatch.setattr(bulk._Columns, "texts", overlapping)
    reader = tosa_reader.Reader(chain, "m.tosa")
    graph = reader.graph()
    assert reader.fell_back == 2  # tensors and operators
    assert graph == expected
    assert len(graph.operators) == WIDTH


@pytest.mark.usefixtures("in_bulk")
def test_a_vtable_out_of_range_falls_back_and_fails_as_one_by_one(
    chain: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = bytearray(chain)
    table = _tensor_tables(chain)[WIDTH // 2]
    struct.pack_into("<i", broken, table, table + 100)  # its vtable 100 bytes before the start
    with pytest.raises(InputError) as one_by_one:
        _one_by_one(bytes(broken), monkeypatch)
    assert f"table at {table} has its vtable at -100" in str(one_by_one.value)
    reader = tosa_reader.Reader(bytes(broken), "m.tosa")
    with pytest.raises(InputError) as in_bulk:
        tosa_reader.loads(bytes(broken), "m.tosa")
    assert str(in_bulk.value) == str(one_by_one.value)
    with pytest.raises(Corrupt, match="has its vtable at -100"):
        reader.graph()
    assert reader.fell_back == 1
