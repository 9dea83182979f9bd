"""Resolve, partition and lowering are linear in the number of library ops: no per-op copy of a
whole-graph table. Binding a custom op used to copy the graph's tensor dictionary (and the set of
its names, twice more within the binding), so 4,000 library ops took 36 s.

Nothing here is timed: the graph's tensor table counts how often it is walked whole (a copy, a
set of its names, an iteration), and the count must not grow with the number of ops.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from kernel_models import OPS, SHAPE, op, write
from tosa_factory import T

from vgfc.ir import Tensor
from vgfc.partition import partition
from vgfc.read import load
from vgfc.record import replace
from vgfc.resolve import resolve
from vgfc.resolve.library.load import load_library
from vgfc.verify import verify


class Walks(Mapping[str, Tensor]):
    """A tensor table that counts the times it is walked whole."""

    def __init__(self, tensors: Mapping[str, Tensor]) -> None:
        self.tensors = dict(tensors)
        self.walks = 0

    def __getitem__(self, name: str) -> Tensor:
        return self.tensors[name]

    def __contains__(self, name: object) -> bool:
        return name in self.tensors

    def __iter__(self) -> Iterator[str]:
        self.walks += 1
        return iter(self.tensors)

    def __len__(self) -> int:
        return len(self.tensors)

    def keys(self):  # type: ignore[override]
        self.walks += 1
        return self.tensors.keys()

    def items(self):  # type: ignore[override]
        self.walks += 1
        return self.tensors.items()

    def values(self):  # type: ignore[override]
        self.walks += 1
        return self.tensors.values()


def _model(tmp_path: Path, count: int) -> Path:
    """x -> HardSwish (composed) -> HalfAffine (a kernel, with a CAST each side) -> ...: both ways a
    library binds an op, ``count`` ops in all."""
    names = ["x", *[f"t{i}" for i in range(1, count)], "y"]
    ops = [
        op("HardSwish", [names[i]], [names[i + 1]])
        if i % 2 == 0
        else op("HalfAffine", [names[i]], [names[i + 1]], {"scale": 2.0})
        for i in range(count)
    ]
    folder = tmp_path / str(count)
    folder.mkdir()
    return write(folder / "m.tosa", [T(n, SHAPE) for n in names], ops, ["x"], ["y"])


def _walks(tmp_path: Path, count: int) -> tuple[int, int, int]:
    """How often resolve, then partition, walk their input's tensor table whole; and how many
    ops resolve made."""
    graph = load(_model(tmp_path, count))
    order = verify(graph)
    counted = Walks(graph.tensors)
    resolution = resolve(replace(graph, tensors=counted), order, libraries=[load_library(OPS)])
    bound = resolution.graph
    assert resolution.diagnostics == () or all("lossy" in d.message for d in resolution.diagnostics)
    after = Walks(bound.tensors)
    partition(replace(bound, tensors=after), resolution.order)
    return counted.walks, after.walks, len(bound.operators)


def test_tables_are_walked_a_fixed_number_of_times_whatever_the_op_count(tmp_path: Path) -> None:
    small = 10
    resolve_small, partition_small, ops_small = _walks(tmp_path, small)
    resolve_large, partition_large, ops_large = _walks(tmp_path, 4 * small)
    assert ops_large > 3 * ops_small  # the ops were bound and expanded
    assert resolve_large == resolve_small
    assert partition_large == partition_small


def test_the_view_reads_as_the_merged_table() -> None:
    from vgfc.dtypes import DType
    from vgfc.ir import TensorsAdded

    base = {"a": Tensor("a", (1,), DType.FP32), "b": Tensor("b", (2,), DType.FP32)}
    added = {"b": Tensor("b", (3,), DType.FP16), "c": Tensor("c", (4,), DType.INT8)}
    view = TensorsAdded(base, added)
    assert dict(view) == {**base, **added}
    assert len(view) == 3
    assert list(view) == ["b", "c", "a"]
    assert "c" in view and "a" in view and "d" not in view
    assert view.get("d") is None
    added["d"] = Tensor("d", (5,), DType.INT8)  # a view: later additions show
    assert view["d"].shape == (5,)
