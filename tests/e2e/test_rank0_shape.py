"""A RESHAPE to rank 0 whose CONST_SHAPE is the shape of no dimensions, ``[]``, as ExecuTorch
writes it: the flatbuffer stores no bytes for that value. The specification allows it; the
reference converter compiles it; vgfc did not (``constant has no data``). Both VGFs now run and
give the input's one value back through the graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from reference_tools import reference_convert
from tosa_factory import Op, T, build

from vgfc import compile as vgfc_compile
from vgfc.read import load
from vgfc.runner import run_vgf


def test_a_rank0_reshape_compiles_and_runs_as_the_references_does(tmp_path: Path) -> None:
    model = tmp_path / "rank0.tosa"
    model.write_bytes(
        build(
            [T("x", (1, 1)), T("r", ()), T("y", ())],
            [
                Op("CONST_SHAPE", [], ["s"]),
                Op("RESHAPE", ["x", "s"], ["r"]),
                Op("ABS", ["r"], ["y"]),
            ],
            ["x"],
            ["y"],
            shapes=[("s", 0, None)],
        )
    )
    shape = load(model).tensors["s"]
    assert shape.shape == (0,) and shape.data is not None and shape.data.numbers() == []

    ours = tmp_path / "vgfc.vgf"
    vgfc_compile(model, ours)
    theirs = reference_convert(model, tmp_path / "reference.vgf")
    x = np.array([[-2.5]], np.float32)
    for vgf in (ours, theirs):
        (out,) = run_vgf(vgf, [x]).values()
        assert out.shape == () and out == np.float32(2.5), vgf
