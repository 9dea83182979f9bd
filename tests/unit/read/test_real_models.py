"""vgfc's reader against real TOSA files and an independent description of them.

``tests/data/real/`` holds models converted from TFLite models shipped on PyPI and single-op
conformance tests from tosa-tools. ``manifest.json`` beside them was computed from ``flatc --json``
dumps of each file, without vgfc (``scripts/make_real_models.py`` regenerates both).
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from paths import DATA

import vgfc
from vgfc.verify import verify

REAL = DATA / "real"
MANIFEST: dict[str, Any] = json.loads((REAL / "manifest.json").read_text())
MODELS: list[dict[str, Any]] = MANIFEST["models"]
CONFORMANCE = [m for m in MODELS if m["kind"] == "conformance"]


def _ids(models: list[dict[str, Any]]) -> list[str]:
    return [
        Path(m["file"]).parent.name if m["kind"] == "conformance" else m["file"] for m in models
    ]


@cache
def _load(file: str) -> Any:
    return vgfc.load(REAL / file)


def test_manifest_lists_every_file() -> None:
    on_disk = {p.relative_to(REAL).as_posix() for p in REAL.rglob("*.tosa")}
    assert on_disk == {m["file"] for m in MODELS}


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_file_is_the_one_described(model: dict[str, Any]) -> None:
    data = (REAL / model["file"]).read_bytes()
    assert len(data) == model["size_bytes"]
    assert hashlib.sha256(data).hexdigest() == model["sha256"], "rerun make_real_models.py"


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_version(model: dict[str, Any]) -> None:
    assert str(_load(model["file"]).version) == model["version"]


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_operators(model: dict[str, Any]) -> None:
    graph = _load(model["file"])
    assert graph.op_histogram() == model["op_histogram"]
    assert [op.op for op in graph.operators] == model["op_sequence"]
    assert [op.index for op in graph.operators] == list(range(model["num_operators"]))


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_inputs_and_outputs(model: dict[str, Any]) -> None:
    graph = _load(model["file"])
    assert tuple(graph.inputs) == tuple(model["inputs"])
    assert tuple(graph.outputs) == tuple(model["outputs"])


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_tensors(model: dict[str, Any]) -> None:
    graph = _load(model["file"])
    tensors: dict[str, Any] = model["tensors"]
    shapes: dict[str, Any] = model["shapes"]
    assert len(tensors) == model["num_tensors"]
    assert len(shapes) == model["num_shapes"]
    # Shape values (the block's ``shapes`` table) may or may not be exposed as tensors.
    assert set(tensors) <= set(graph.tensors) <= set(tensors) | set(shapes)
    for name, expected in tensors.items():
        tensor = graph.tensors[name]
        assert tensor.name == name
        want_shape = None if expected["shape"] is None else tuple(expected["shape"])
        assert tensor.shape == want_shape, name
        assert tensor.dtype.value == expected["dtype"], name


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_constant_data(model: dict[str, Any]) -> None:
    graph = _load(model["file"])
    for name, expected in model["tensors"].items():
        data = graph.tensors[name].data
        if "elements" not in expected:
            assert data is None, f"{name} has no data in the file"
            continue
        if expected.get("variable") and data is None:
            continue  # a variable's initial value: the contract only requires constants' data
        assert data is not None, name
        # tosa-opt pads constant buffers to 8 bytes: the padding must not become elements.
        assert data.size == expected["elements"] == math.prod(expected["shape"]), name


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_shape_values(model: dict[str, Any]) -> None:
    graph = _load(model["file"])
    for name, values in model["shapes"].items():
        tensor = graph.tensors.get(name)
        if tensor is not None and tensor.data is not None:
            assert [int(v) for v in tensor.data.reshape(-1)] == values, name


@pytest.mark.parametrize("model", MODELS, ids=_ids(MODELS))
def test_verify_accepts(model: dict[str, Any]) -> None:
    verify(_load(model["file"]))


@pytest.mark.parametrize("model", CONFORMANCE, ids=_ids(CONFORMANCE))
def test_conformance_interface_matches_desc(model: dict[str, Any]) -> None:
    desc = json.loads((REAL / model["desc"]).read_text())
    graph = _load(model["file"])
    assert list(graph.inputs) == desc["ifm_name"]
    assert list(graph.outputs) == desc["ofm_name"]
    assert desc["tosa_file"] == Path(model["file"]).name
    for name, shape in zip(desc["ofm_name"], desc["test_details"]["output_shapes"], strict=True):
        assert graph.tensors[name].shape == tuple(shape)
