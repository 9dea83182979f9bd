#!/usr/bin/env python3
"""Regenerate ``tests/data/mediapipe_ops/``: one tiny TOSA model per MediaPipe TFLite custom op.

Each model holds a single TFLite custom operator (``Convolution2DTransposeBias``,
``MaxPoolingWithArgmax2D``, ``MaxUnpooling2D``, ``Landmarks2TransformMatrix``,
``TransformTensorBilinear``, ``TransformLandmarks``) on tiny, deliberately asymmetric shapes
(height != width, stride_h != stride_w, ...) so that a swapped field or axis shows.

The models go through the same tool chain as the real ones in ``tests/data/real/mediapipe``, so
their ``CUSTOM`` operators are encoded exactly as the converter encodes real models:

1. this script writes a one-operator ``.tflite`` flatbuffer itself (TFLite schema 3, with the
   custom options encoded as MediaPipe's models carry them: a little-endian C struct for the
   pooling and transposed-convolution ops, a FlexBuffers map for the transform ops);
2. ``tosa-converter-for-tflite`` and ``tosa-opt --tosa-serialize`` turn it into TOSA
   (``make_real_models.tflite_to_tosa``), and ``tosa-opt --tosa-validate`` checks the result.

``manifest.json`` records for each file the parameters this script encoded (``params``, in the
TFLite field names), the TFLite operator version, and a ``flatc --json`` description of the TOSA
file (as ``make_real_models.py`` writes for real models), including each custom operator's
domain, name and ``implementation_attrs`` as hex. Nothing here uses vgfc.

The output is deterministic: rerunning the script rewrites identical files. It needs the
``test`` extra (tosa-tools, tosa-converter-for-tflite) but no network. Usage::

    python scripts/make_mediapipe_ops.py [--out DIR] [--work DIR]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import struct
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
from flatbuffers import flexbuffers

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_real_models import (
    Tools,
    _dumps,
    describe,
    flatc_json,
    log,
    sha256,
    tflite_to_tosa,
)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "mediapipe_ops"

# TFLite enums used here.
BUILTIN_CUSTOM = 32
TENSOR_FLOAT32 = 0
PADDING_SAME = 1
PADDING_VALID = 2
ACTIVATION_NONE = 0


# --- Custom options, encoded as MediaPipe's models carry them ------------------------------------


def pool_options(
    padding: int, stride_w: int, stride_h: int, filter_w: int, filter_h: int, activation: int
) -> bytes:
    """``TfLitePoolParams``: ten int32 (the six fields, then ``computed.padding``, left zero)."""
    return struct.pack(
        "<10i", padding, stride_w, stride_h, filter_w, filter_h, activation, 0, 0, 0, 0
    )


def transpose_conv_options(padding: int, stride_w: int, stride_h: int) -> bytes:
    """``TfLiteTransposeConvParams`` as MediaPipe's selfie model has it: three int32."""
    return struct.pack("<3i", padding, stride_w, stride_h)


def flex_map(values: dict[str, int | float | list[int]]) -> bytes:
    """A FlexBuffers map, built as the real models' options are (byte-identical for theirs).

    Python ints become FlexBuffers ints, floats 32-bit floats when exact, int lists typed
    vectors; the builder sorts the keys, as FlexBuffers maps require.
    """
    b = flexbuffers.Builder()
    with b.Map():
        for key, value in values.items():
            b.Key(key)
            if isinstance(value, list):
                b.TypedVectorFromElements(value)
            elif isinstance(value, float):
                b.Float(value)
            else:
                b.Int(value)
    return bytes(b.Finish())


# --- A one-operator TFLite flatbuffer ------------------------------------------------------------


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]
    data: np.ndarray[Any, np.dtype[np.float32]] | None = None
    """Constant contents (float32), or None for a graph input/output."""


@dataclass(frozen=True)
class OpModel:
    """One TFLite custom operator with its operands and results, and what to record about it."""

    name: str
    custom_code: str
    version: int
    options: bytes
    params: dict[str, Any]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    description: str
    notes: list[str] = field(default_factory=list)


def tflite_model(model: OpModel) -> bytes:
    """Serialize ``model`` as a TFLite flatbuffer (schema version 3, identifier ``TFL3``).

    Tables are written by field slot (TFLite's ``schema.fbs``): Model{version 0,
    operator_codes 1, subgraphs 2, description 3, buffers 4}, OperatorCode{
    deprecated_builtin_code 0, custom_code 1, version 2, builtin_code 3}, SubGraph{tensors 0,
    inputs 1, outputs 2, operators 3, name 4}, Tensor{shape 0, type 1, buffer 2, name 3},
    Operator{opcode_index 0, inputs 1, outputs 2, custom_options 5, custom_options_format 6},
    Buffer{data 0}.
    """
    b = flatbuffers.Builder(1024)

    def int_vector(values: Sequence[int]) -> int:
        b.StartVector(4, len(values), 4)
        for v in reversed(values):
            b.PrependInt32(v)
        end: int = b.EndVector()
        return end

    def table_vector(offsets: Sequence[int]) -> int:
        b.StartVector(4, len(offsets), 4)
        for off in reversed(offsets):
            b.PrependUOffsetTRelative(off)
        end: int = b.EndVector()
        return end

    def table(slots: int, fill: Any) -> int:
        b.StartObject(slots)
        fill()
        end: int = b.EndObject()
        return end

    tensors = [*model.inputs, *model.outputs]
    # Buffer 0 is the conventional empty buffer; each constant gets one of its own.
    buffer_data: list[bytes] = [b""]
    buffer_of: list[int] = []
    for t in tensors:
        if t.data is None:
            buffer_of.append(0)
        else:
            buffer_of.append(len(buffer_data))
            buffer_data.append(np.ascontiguousarray(t.data, dtype="<f4").tobytes())

    buffers = []
    for data in buffer_data:
        vec = b.CreateByteVector(data) if data else None

        def fill_buffer(vec: int | None = vec) -> None:
            if vec is not None:
                b.PrependUOffsetTRelativeSlot(0, vec, 0)

        buffers.append(table(1, fill_buffer))

    tensor_tables = []
    for t, buf in zip(tensors, buffer_of, strict=True):
        name = b.CreateString(t.name)
        shape = int_vector(t.shape)

        def fill_tensor(shape: int = shape, buf: int = buf, name: int = name) -> None:
            b.PrependUOffsetTRelativeSlot(0, shape, 0)
            b.PrependInt8Slot(1, TENSOR_FLOAT32, 0)
            b.PrependUint32Slot(2, buf, 0)
            b.PrependUOffsetTRelativeSlot(3, name, 0)

        tensor_tables.append(table(4, fill_tensor))

    code_name = b.CreateString(model.custom_code)

    def fill_code() -> None:
        b.PrependInt8Slot(0, BUILTIN_CUSTOM, 0)
        b.PrependUOffsetTRelativeSlot(1, code_name, 0)
        b.PrependInt32Slot(2, model.version, 1)
        b.PrependInt32Slot(3, BUILTIN_CUSTOM, 0)

    code = table(4, fill_code)

    # Graph inputs are the non-constant operands; constants are read from their buffers.
    n_in = len(model.inputs)
    op_inputs = int_vector(range(n_in))
    op_outputs = int_vector(range(n_in, len(tensors)))
    options = b.CreateByteVector(model.options) if model.options else None

    def fill_operator() -> None:
        b.PrependUint32Slot(0, 0, 0)
        b.PrependUOffsetTRelativeSlot(1, op_inputs, 0)
        b.PrependUOffsetTRelativeSlot(2, op_outputs, 0)
        if options is not None:
            b.PrependUOffsetTRelativeSlot(5, options, 0)
        b.PrependInt8Slot(6, 0, 0)  # custom_options_format FLEXBUFFERS (the only value)

    operator = table(7, fill_operator)

    graph_inputs = int_vector([i for i, t in enumerate(model.inputs) if t.data is None])
    graph_outputs = int_vector(range(n_in, len(tensors)))
    tensor_vec = table_vector(tensor_tables)
    operator_vec = table_vector([operator])
    subgraph_name = b.CreateString("main")

    def fill_subgraph() -> None:
        b.PrependUOffsetTRelativeSlot(0, tensor_vec, 0)
        b.PrependUOffsetTRelativeSlot(1, graph_inputs, 0)
        b.PrependUOffsetTRelativeSlot(2, graph_outputs, 0)
        b.PrependUOffsetTRelativeSlot(3, operator_vec, 0)
        b.PrependUOffsetTRelativeSlot(4, subgraph_name, 0)

    subgraph = table(5, fill_subgraph)
    codes = table_vector([code])
    subgraphs = table_vector([subgraph])
    buffer_vec = table_vector(buffers)
    description = b.CreateString(f"vgfc test model: one {model.custom_code}")

    def fill_model() -> None:
        b.PrependUint32Slot(0, 3, 0)
        b.PrependUOffsetTRelativeSlot(1, codes, 0)
        b.PrependUOffsetTRelativeSlot(2, subgraphs, 0)
        b.PrependUOffsetTRelativeSlot(3, description, 0)
        b.PrependUOffsetTRelativeSlot(4, buffer_vec, 0)

    root = table(5, fill_model)
    b.Finish(root, file_identifier=b"TFL3")
    return bytes(b.Output())


# --- The models -------------------------------------------------------------------------------


def _ramp(
    shape: tuple[int, ...], step: float, offset: float
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """Deterministic constants, exact in float32: ``(i % 7 - 3) * step + offset``."""
    count = int(np.prod(shape))
    values = ((np.arange(count) % 7) - 3) * step + offset
    return values.astype(np.float32).reshape(shape)


def models() -> list[OpModel]:
    conv_w = _ramp((3, 3, 2, 2), 0.25, 0.0)  # OHWI: 3 outputs, 3x2 kernel, 2 input channels
    conv_b = np.array([0.5, -0.25, 1.0], dtype=np.float32)
    l2tm: dict[str, int | float | list[int]] = {
        "left_rotation_idx": 0,
        "output_height": 8,
        "output_width": 8,
        "right_rotation_idx": 1,
        "scale_x": 1.5,
        "scale_y": 1.25,
        "subset_idxs": [0, 2, 3, 4, 5],
        "target_rotation_radians": 0.25,
    }
    ttb: dict[str, int | float | list[int]] = {"output_height": 4, "output_width": 3}
    return [
        OpModel(
            name="convolution2d_transpose_bias",
            custom_code="Convolution2DTransposeBias",
            version=1,
            options=transpose_conv_options(PADDING_SAME, stride_w=1, stride_h=2),
            params={"padding": "SAME", "stride_width": 1, "stride_height": 2},
            inputs=(
                Tensor("input", (1, 3, 4, 2)),
                Tensor("weights", conv_w.shape, conv_w),
                Tensor("bias", conv_b.shape, conv_b),
            ),
            outputs=(Tensor("output", (1, 5, 4, 3)),),
            description="SAME, stride h=2 w=1, 3x2 kernel: height pads 2 (1 cut at the top), "
            "width pads 1 (cut at the end); constant OHWI weights and bias",
        ),
        OpModel(
            name="max_pooling_with_argmax_2d",
            custom_code="MaxPoolingWithArgmax2D",
            version=1,
            options=pool_options(PADDING_SAME, 2, 1, 2, 3, ACTIVATION_NONE),
            params={
                "padding": "SAME",
                "stride_width": 2,
                "stride_height": 1,
                "filter_width": 2,
                "filter_height": 3,
                "activation": "NONE",
            },
            inputs=(Tensor("input", (1, 5, 6, 2)),),
            outputs=(Tensor("values", (1, 5, 3, 2)), Tensor("indices", (1, 5, 3, 2))),
            description="SAME, stride h=1 w=2, filter h=3 w=2: padding top 1, left 0; two "
            "float32 results (maxima, argmax indices)",
        ),
        OpModel(
            name="max_unpooling_2d",
            custom_code="MaxUnpooling2D",
            version=1,
            options=pool_options(PADDING_SAME, 3, 2, 3, 2, ACTIVATION_NONE),
            params={
                "padding": "SAME",
                "stride_width": 3,
                "stride_height": 2,
                "filter_width": 3,
                "filter_height": 2,
                "activation": "NONE",
            },
            inputs=(Tensor("input", (1, 3, 3, 2)), Tensor("indices", (1, 3, 3, 2))),
            outputs=(Tensor("output", (1, 6, 9, 2)),),
            description="stride = filter (h=2, w=3): output H*2 x W*3, no padding",
        ),
        OpModel(
            name="landmarks2_transform_matrix",
            custom_code="Landmarks2TransformMatrix",
            version=2,
            options=flex_map(dict(l2tm)),
            params=l2tm,
            inputs=(Tensor("landmarks", (1, 6, 3)),),
            outputs=(Tensor("matrix", (1, 4, 4)),),
            description="version 2 options (same keys as the face model's); an odd subset_idxs "
            "count (the real model has 71); a non-zero target rotation",
        ),
        OpModel(
            name="transform_tensor_bilinear",
            custom_code="TransformTensorBilinear",
            version=2,
            options=flex_map(dict(ttb)),
            params=ttb,
            inputs=(Tensor("input", (1, 6, 5, 3)), Tensor("matrix", (1, 4, 4))),
            outputs=(Tensor("output", (1, 4, 3, 3)),),
            description="version 2 (pixel-centre sampling): 6x5x3 feature map resampled to "
            "4x3 through a 1x4x4 matrix operand",
        ),
        OpModel(
            name="transform_landmarks",
            custom_code="TransformLandmarks",
            version=2,
            options=b"",
            params={},
            inputs=(Tensor("landmarks", (1, 5, 2)), Tensor("matrix", (1, 4, 4))),
            outputs=(Tensor("output", (1, 5, 2)),),
            description="version 2, no custom options (as in the face model): 2D landmarks",
        ),
        OpModel(
            name="transform_landmarks_3d",
            custom_code="TransformLandmarks",
            version=2,
            options=b"",
            params={},
            inputs=(Tensor("landmarks", (1, 4, 3)), Tensor("matrix", (1, 4, 4))),
            outputs=(Tensor("output", (1, 4, 3)),),
            description="version 2, no custom options: 3D landmarks (z is copied)",
        ),
    ]


def make(tools: Tools, model: OpModel, work: Path, out: Path) -> dict[str, Any]:
    log(f"mediapipe op: {model.name}")
    tflite = work / f"{model.name}.tflite"
    tflite.write_bytes(tflite_model(model))
    tosa, commands = tflite_to_tosa(tools, tflite, work)
    dest = out / tosa.name
    shutil.copyfile(tosa, dest)
    facts = describe(flatc_json(tools, dest), dest.name)
    (custom,) = facts["custom_ops"]
    if bytes.fromhex(custom["implementation_attrs"]) != model.options:
        raise SystemExit(f"{model.name}: the converter did not keep the custom options verbatim")
    return {
        "file": dest.name,
        "operator_name": model.custom_code,
        "tflite_version": model.version,
        "params": model.params,
        "description": model.description,
        "constants": {
            t.name: custom["inputs"][i]["name"]
            for i, t in enumerate(model.inputs)
            if t.data is not None
        },
        "source_details": {"tflite_sha256": sha256(tflite), "commands": commands},
        "size_bytes": dest.stat().st_size,
        "sha256": sha256(dest),
    } | facts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--work", type=Path, help="keep intermediate files here (default: temp)")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    tools = Tools.find()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work.resolve() if args.work else Path(tmp)
        stage = work / "mediapipe_ops"
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        entries = [make(tools, m, work, stage) for m in models()]
        manifest = {
            "generated_by": "scripts/make_mediapipe_ops.py",
            "tools": {
                "tosa-tools": importlib.metadata.version("tosa-tools"),
                "tosa-converter-for-tflite": importlib.metadata.version(
                    "tosa-converter-for-tflite"
                ),
                "flatbuffers": importlib.metadata.version("flatbuffers"),
            },
            "models": entries,
        }
        (stage / "manifest.json").write_text(_dumps(manifest) + "\n")
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(stage, out)
    log(f"wrote {len(entries)} models and manifest.json to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
