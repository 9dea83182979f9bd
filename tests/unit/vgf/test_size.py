"""vgfc's VGF is no larger than the reference converter's on a small FP32 residual conv block
(two CONV2D, a skip ADD, CLAMP as ReLU), the shape of ExecuTorch's ``test_residual_conv_block``.

The bytes vgfc used to spend over the reference were binding-slot tables written once per list
that holds them (a segment's descriptor set, its inputs and outputs, the model sequence's inputs
and outputs) where the reference writes each (binding, resource) once and shares it."""

from __future__ import annotations

from pathlib import Path

from reference_tools import reference_convert
from residual import residual_block

from vgfc.compilation import make_options
from vgfc.compiler import compile_model
from vgfc.vgf.decode import decode


def test_residual_block_vgf_is_no_larger_than_the_reference(tmp_path: Path) -> None:
    model = tmp_path / "residual.tosa"
    model.write_bytes(residual_block())
    reference = reference_convert(model, tmp_path / "reference.vgf").read_bytes()
    for optimize in (True, False):
        done = compile_model(model, make_options(optimize=optimize))
        assert done.vgf is not None
        ours = bytes(done.vgf)
        assert len(ours) <= len(reference), (optimize, len(ours), len(reference))
        # sharing the slot tables keeps every list a runtime reads whole
        back = decode(ours)
        (segment,) = back.segments
        assert [s.binding for s in segment.inputs] == [s.binding for s in back.inputs]
        assert [s.binding for s in segment.outputs] == [s.binding for s in back.outputs]
        assert {s.binding for d in segment.descriptor_sets for s in d.slots} == {
            s.binding for s in (*back.inputs, *back.outputs)
        }
