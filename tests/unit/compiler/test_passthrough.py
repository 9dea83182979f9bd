"""A graph output that is also a graph input: the pass gives it a value of its own, and the VGF
binds it apart from the input under the model's name."""

from __future__ import annotations

from pathlib import Path

import pytest
from tosa_factory import Op, T, build

import vgfc
from vgfc.passthrough import COPY_REASON, copy_passthrough_outputs
from vgfc.read import loads
from vgfc.vgf.decode import decode

ADD_AND_INPUT = build(
    [T("x"), T("y"), T("z")], [Op("ADD", ["x", "y"], ["z"])], ["x", "y"], ["x", "z"]
)
ONLY_INPUT = build([T("x")], [], ["x"], ["x"])


def test_an_output_that_is_an_input_becomes_an_identity_of_it() -> None:
    graph = copy_passthrough_outputs(loads(ADD_AND_INPUT))
    assert graph.outputs == ("x.output", "z")
    assert graph.output_names == ("x", "z")
    copy = graph.operators[-1]
    assert (copy.op, copy.inputs, copy.outputs, copy.inserted) == (
        "IDENTITY",
        ("x",),
        ("x.output",),
        COPY_REASON,
    )
    assert copy.index == 1
    assert graph.tensors["x.output"].shape == graph.tensors["x"].shape
    assert graph.tensors["x.output"].dtype == graph.tensors["x"].dtype


def test_a_graph_without_one_is_left_as_it_is() -> None:
    graph = loads(build([T("x"), T("z")], [Op("ABS", ["x"], ["z"])], ["x"], ["z"]))
    assert copy_passthrough_outputs(graph) is graph


def test_the_copy_takes_a_name_the_model_does_not_use() -> None:
    model = build(
        [T("x"), T("x.output"), T("x.output.1")],
        [Op("ABS", ["x"], ["x.output"]), Op("NEGATE", ["x"], ["x.output.1"])],
        ["x"],
        ["x.output", "x", "x.output.1"],
    )
    graph = copy_passthrough_outputs(loads(model))
    assert graph.outputs == ("x.output", "x.output.2", "x.output.1")
    assert graph.output_names == ("x.output", "x", "x.output.1")


def test_an_input_listed_twice_as_an_output_gets_one_copy() -> None:
    graph = copy_passthrough_outputs(loads(build([T("x")], [], ["x"], ["x", "x"])))
    assert graph.outputs == ("x.output", "x.output")
    assert [op.op for op in graph.operators] == ["IDENTITY"]


def test_a_name_that_is_no_tensor_is_left_for_verify_to_refuse(tmp_path: Path) -> None:
    model = tmp_path / "m.tosa"
    model.write_bytes(build([T("z")], [], ["ghost"], ["ghost", "z"]))
    assert copy_passthrough_outputs(loads(model.read_bytes())).outputs == ("ghost", "z")
    with pytest.raises(vgfc.VgfcError, match="graph input is not a tensor of the model"):
        vgfc.compile(model)


@pytest.mark.parametrize("model", [ADD_AND_INPUT, ONLY_INPUT], ids=["with-add", "only-input"])
def test_the_vgf_binds_the_output_apart_under_the_models_name(tmp_path: Path, model: bytes) -> None:
    path = tmp_path / "m.tosa"
    path.write_bytes(model)
    result = vgfc.compile(path)
    assert result.vgf is not None
    vgf = decode(result.vgf)
    inputs = {i.name: i for i in vgf.inputs}
    outputs = {o.name: o for o in vgf.outputs}
    assert next(iter(outputs)) == "x" and "x" in inputs
    assert outputs["x"].binding != inputs["x"].binding
    assert outputs["x"].resource != inputs["x"].resource
    [segment] = vgf.segments
    assert outputs["x"].binding in [slot.binding for slot in segment.outputs]
