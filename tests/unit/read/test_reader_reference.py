"""The reader against the specification: every model read through the generated ``tosa``
classes, field by field, must read the same through :mod:`vgfc.read.reader`, which decodes the
flatbuffer itself (see its docstring for why). Both of its ways are checked: table by table, and
in bulk (the way it reads big tensor and operator tables); that the two agree on broken files too
is a property in ``tests/property/test_read.py``.
"""

from __future__ import annotations

import importlib
import mmap
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tosa.Attribute
import tosa.DType
import tosa.NanPropagationMode
import tosa.Op
import tosa.ResizeMode
import tosa.RoundingMode
from paths import ROOT
from tosa.TosaGraph import TosaGraph
from tosa_reading import ATTRIBUTES, OPS, as_read, every_op_model

from vgfc.diagnostics import VgfcError
from vgfc.ir import DType, Graph
from vgfc.read import reader as tosa_reader

MODELS = sorted(
    p for folder in (ROOT / "samples", ROOT / "tests" / "data") for p in folder.rglob("*.tosa")
)

sys.path.insert(0, str(ROOT / "scripts"))


def _names(enum: type) -> dict[int, str]:
    return {v: k for k, v in vars(enum).items() if not k.startswith("_")}


DTYPES = _names(tosa.DType.DType)
ENUMS = {
    "AccType": DTYPES,
    "NanMode": _names(tosa.NanPropagationMode.NanPropagationMode),
    "Mode": _names(tosa.ResizeMode.ResizeMode),
    "RoundingMode": _names(tosa.RoundingMode.RoundingMode),
}


def _text(raw: bytes | None) -> str:
    return "" if raw is None else raw.decode("utf-8")


def _array(value: Any) -> np.ndarray:
    return np.zeros(0, np.uint8) if isinstance(value, int) else value


def _accessors(cls: type) -> list[str]:
    """The field accessors of a generated table class, in schema order."""
    name = cls.__name__
    skip = {"Init", "GetRootAs", f"GetRootAs{name}", f"{name}BufferHasIdentifier"}
    return [
        m
        for m in vars(cls)
        if not m.startswith("_")
        and m not in skip
        and not m.endswith(("Length", "IsNone", "AsNumpy"))
    ]


def _attribute(op: Any) -> dict[str, Any]:
    """Every field of the operator's attribute table, through its generated class."""
    kind = op.AttributeType()
    table = op.Attribute()
    if kind == 0 or table is None:
        return {}
    name = ATTRIBUTES[kind]
    cls = getattr(importlib.import_module(f"tosa.{name}"), name)
    attr = cls()
    attr.Init(table.Bytes, table.Pos)
    fields = {}
    for method in _accessors(cls):
        if hasattr(attr, f"{method}AsNumpy"):
            value: Any = getattr(attr, f"{method}AsNumpy")()
            if isinstance(value, int):  # absent
                value = b""
            elif value.dtype == np.uint8:
                value = value.tobytes()
            else:
                value = tuple(int(v) for v in value)
        else:
            value = getattr(attr, method)()
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            elif method in ENUMS:
                value = ENUMS[method][value]
        fields[method] = value
    return fields


def reference(data: bytes) -> dict[str, Any]:
    """The main block of a model, read plainly through the generated ``tosa`` package."""
    root = TosaGraph.GetRootAs(data, 0)
    v = root.Version()
    regions = [root.Regions(i) for i in range(root.RegionsLength())]
    names = [_text(r.Name()) or f"region_{i}" for i, r in enumerate(regions)]
    block = regions[names.index("main") if "main" in names else 0].Blocks(0)
    tensors = []
    for i in range(block.TensorsLength()):
        t = block.Tensors(i)
        raw = _array(t.DataAsNumpy()).tobytes()
        if not raw and t.Offset() > 1:
            raw = data[t.Offset() : t.Offset() + t.Size()]
        shape = None if t.IsUnranked() else tuple(int(d) for d in _array(t.ShapeAsNumpy()))
        tensors.append((_text(t.Name()), shape, DTYPES[t.Type()], raw, bool(t.Variable())))
    for i in range(block.ShapesLength()):
        s = block.Shapes(i)
        raw = _array(s.DataAsNumpy()).tobytes()
        tensors.append((_text(s.Name()), (s.Rank(),), "SHAPE", raw, False))
    operators = []
    for i in range(block.OperatorsLength()):
        op = block.Operators(i)
        location = op.Location()
        operators.append(
            (
                OPS[op.Op()],
                tuple(_text(op.Inputs(j)) for j in range(op.InputsLength())),
                tuple(_text(op.Outputs(j)) for j in range(op.OutputsLength())),
                _attribute(op),
                (_text(location.Text()) or None) if location is not None else None,
            )
        )
    return {
        "version": (v._Major(), v._Minor(), v._Patch(), bool(v._Draft())),
        "regions": tuple(names),
        "tensors": tensors,
        "operators": operators,
        "inputs": tuple(_text(block.Inputs(i)) for i in range(block.InputsLength())),
        "outputs": tuple(_text(block.Outputs(i)) for i in range(block.OutputsLength())),
    }


def _trimmed(ref: dict[str, Any]) -> dict[str, Any]:
    """The reference with values cut to the bytes that hold them, which is what the reader
    keeps: constant data to what the shape needs, CLAMP bounds to one element."""
    tensors = []
    for name, shape, dtype, raw, variable in ref["tensors"]:
        if raw and shape is not None:
            bits = DType[dtype].storage_bits
            raw = raw[: (int(np.prod(shape, dtype=np.int64)) * bits + 7) // 8]
        tensors.append((name, shape, dtype, raw, variable))
    # CLAMP bounds hold one element of the input's type; writers pad them (to 8 bytes).
    dtypes = {name: DType[dtype] for name, _, dtype, _, _ in tensors}
    operators = []
    for op, inputs, outputs, attrs, location in ref["operators"]:
        if op == "CLAMP" and inputs and inputs[0] in dtypes:
            size = (dtypes[inputs[0]].storage_bits + 7) // 8
            attrs = {k: v[:size] if k in ("MinVal", "MaxVal") else v for k, v in attrs.items()}
        operators.append((op, inputs, outputs, attrs, location))
    return {**ref, "tensors": tensors, "operators": operators}


@pytest.fixture(params=["bulk", "one by one"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(tosa_reader, "_BULK_FROM", 0 if request.param == "bulk" else 1 << 62)
    return str(request.param)


def _read(data: bytes | mmap.mmap) -> tuple[Graph, int]:
    """The graph, and how often a bulk reading gave up on the way."""
    reader = tosa_reader.Reader(data, None)
    return reader.graph(), reader.fell_back


def _check(data: bytes) -> None:
    try:
        graph, fell_back = _read(data)
    except VgfcError:
        with pytest.raises(VgfcError):
            tosa_reader.loads(data)
        return  # vgfc refuses the file (tests/fuzz/test_fuzz_corpus.py says why)
    assert fell_back == 0
    expected = _trimmed(reference(data))
    assert as_read(graph) == expected


@pytest.mark.parametrize("path", MODELS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_model_reads_as_the_generated_classes_read_it(path: Path, mode: str) -> None:
    _check(path.read_bytes())


def test_every_op_and_attribute_table_reads_as_the_generated_classes_read_it(mode: str) -> None:
    data = every_op_model()
    graph, _ = _read(data)
    assert len(graph.operators) > 64  # one bulk batch at least
    _check(data)


def test_the_bench_models_read_as_the_generated_classes_read_them(mode: str) -> None:
    import bench_models

    _check(bench_models.chain_model(300, (1, 4)))
    _check(bench_models.constants_model(count=3, elements=1000, n_ops=80))


def test_constants_are_views_of_the_memory_map(tmp_path: Path) -> None:
    import bench_models

    path = tmp_path / "m.tosa"
    path.write_bytes(bench_models.constants_model(count=2, elements=5000, n_ops=70))
    graph = tosa_reader.load(path)
    for name in ("c0", "c1"):
        data = graph.tensors[name].data
        assert data is not None and not data.flags.writeable and not data.flags.owndata
        assert data.raw.readonly and isinstance(data.raw.obj, mmap.mmap)
        assert data.origin is not None and data.origin[0] is data.raw.obj
        base: Any = data.array
        while isinstance(base, np.ndarray):
            base = base.base
        assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)
