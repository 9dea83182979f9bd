#!/usr/bin/env python3
# mypy: disable-error-code="import-untyped,import-not-found"
"""Make ``tests/data/real/trained/``: small int8 TFLite networks trained and quantized here.

Why: the held-out count of issue 39 names two int8 TFLite networks that are not in the repo, a
TensorFlow Lite Micro "hello world" sine model and an int8 MediaPipe network. These are
networks of the same kinds, made from scratch so that anyone can make them again:

* ``sine_int8``: Dense 1->16 ReLU, 16->16 ReLU, 16->1 trained on sin(x) (TFLM's hello world),
  full-integer int8 (int8 input and output too), batch 1.
* ``blazeface_int8``: the layout of MediaPipe's BlazeFace short-range detector (5x5 stride-2
  stem, 16 BlazeBlocks of depthwise 3x3 + pointwise conv with residual ADD, MAX_POOL2D and
  channel PAD on the stride-2 shortcuts, classifier and regressor heads RESHAPEd and
  CONCATenated), random weights, full-integer int8 with a random representative dataset.

Two steps, as TensorFlow does not live in vgfc's venv. With a Python that has
``tensorflow-cpu`` (2.21.0 made the committed files)::

    python scripts/make_trained_models.py tflite WORK

then with the project's venv (``test`` extra: tosa-converter-for-tflite, tosa-tools)::

    python scripts/make_trained_models.py tosa WORK

which converts as ``make_real_models.py`` does, copies the TOSA files to
``tests/data/real/trained/`` and puts their entries into ``tests/data/real/manifest.json``
(``make_real_models.py`` keeps them when it rewrites the manifest). Training is seeded but
TensorFlow's kernels are not bit-reproducible across versions or machines: a new run gives
equivalent networks (same operators), not the same bytes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

GROUP = "trained"
SEED = 1337
SINE = "sine_int8"
BLAZEFACE = "blazeface_int8"
BLAZE_BLOCKS = (
    (24, 1), (28, 1), (32, 2), (36, 1), (42, 1), (48, 2), (56, 1), (64, 1), (72, 1), (80, 1),
    (88, 1), (96, 2), (96, 1), (96, 1), (96, 1), (96, 1),
)  # fmt: skip
"""(output channels, stride) of each BlazeBlock; the 11th block's result feeds the 16x16 heads."""
DESCRIPTIONS = {
    SINE: "TensorFlow Lite Micro hello-world sine model (Dense 1->16 ReLU, 16->16 ReLU, 16->1, "
    "trained on sin(x)), full-integer int8 quantized, int8 input 1x1 and output 1x1",
    BLAZEFACE: "BlazeFace-layout detector (MediaPipe short-range face detection's blocks, "
    "random weights), full-integer int8 quantized, int8 input 1x128x128x3, outputs 1x896x16 "
    "and 1x896x1",
}


def _quantized(tf: Any, model: Any, samples: Any) -> bytes:
    convert = tf.lite.TFLiteConverter.from_keras_model(model)
    convert.optimizations = [tf.lite.Optimize.DEFAULT]
    convert.representative_dataset = lambda: ([s] for s in samples)
    convert.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    convert.inference_input_type = tf.int8
    convert.inference_output_type = tf.int8
    return bytes(convert.convert())


def make_tflite(work: Path) -> None:
    """Train and quantize both networks into ``work/<name>.tflite`` (needs TensorFlow)."""
    import numpy as np
    import tensorflow as tf

    layers = tf.keras.layers
    rng = np.random.default_rng(SEED)
    tf.random.set_seed(SEED)
    work.mkdir(parents=True, exist_ok=True)

    x = rng.uniform(0, 2 * np.pi, 1000).astype(np.float32)
    y = (np.sin(x) + 0.1 * rng.standard_normal(1000)).astype(np.float32)
    sine = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(1,), batch_size=1),
            layers.Dense(16, activation="relu"),
            layers.Dense(16, activation="relu"),
            layers.Dense(1),
        ]
    )
    sine.compile(optimizer="adam", loss="mse")
    sine.fit(x, y, epochs=200, batch_size=64, verbose=0)
    samples = [np.array([[v]], np.float32) for v in x[:500]]
    (work / f"{SINE}.tflite").write_bytes(_quantized(tf, sine, samples))

    def block(t: Any, channels: int, stride: int) -> Any:
        h = layers.DepthwiseConv2D(3, strides=stride, padding="same")(t)
        h = layers.Conv2D(channels, 1)(h)
        if stride == 2:
            t = layers.MaxPool2D(2, 2)(t)
        extra = channels - t.shape[-1]
        if extra:
            pad = [[0, 0], [0, 0], [0, 0], [0, extra]]
            t = layers.Lambda(lambda v, pad=pad: tf.pad(v, pad))(t)
        return layers.ReLU()(layers.Add()([h, t]))

    image = tf.keras.Input((128, 128, 3), batch_size=1)
    t = layers.ReLU()(layers.Conv2D(24, 5, strides=2, padding="same")(image))
    for i, (channels, stride) in enumerate(BLAZE_BLOCKS):
        t = block(t, channels, stride)
        if i == 10:
            f16 = t
    heads = [(f16, 2, 32), (t, 6, 96)]
    scores = [layers.Reshape((-1, 1))(layers.Conv2D(c, 1)(f)) for f, c, _ in heads]
    boxes = [layers.Reshape((-1, 16))(layers.Conv2D(r, 1)(f)) for f, _, r in heads]
    outputs = [layers.Concatenate(axis=1)(boxes), layers.Concatenate(axis=1)(scores)]
    blaze = tf.keras.Model(image, outputs)
    images = [rng.uniform(-1, 1, (1, 128, 128, 3)).astype(np.float32) for _ in range(16)]
    (work / f"{BLAZEFACE}.tflite").write_bytes(_quantized(tf, blaze, images))


def make_tosa(work: Path, out: Path) -> None:
    """Convert ``work/*.tflite`` and put the TOSA files and their entries into ``out``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import make_real_models as real

    tools = real.Tools.find()
    manifest = json.loads((out / "manifest.json").read_text())
    models = [m for m in manifest["models"] if not m["file"].startswith(f"{GROUP}/")]
    (out / GROUP).mkdir(parents=True, exist_ok=True)
    for name, description in DESCRIPTIONS.items():
        tflite = work / f"{name}.tflite"
        tosa, commands = real.tflite_to_tosa(tools, tflite, work, ("doubleround",))
        dest = out / GROUP / tosa.name
        shutil.copyfile(tosa, dest)
        rel = dest.relative_to(out).as_posix()
        entry = {
            "file": rel,
            "kind": "tflite",
            "source": f"scripts/make_trained_models.py: {description}",
            "source_details": {
                "tensorflow": "2.21.0",
                "tflite_sha256": real.sha256(tflite),
                "commands": [f"make_trained_models.py tflite (seed {SEED})", *commands],
            },
            "size_bytes": dest.stat().st_size,
            "sha256": real.sha256(dest),
        }
        models.append(entry | real.describe(real.flatc_json(tools, dest), rel))
    manifest["models"] = models
    manifest["tools"]["tosa-converter-for-tflite"] = importlib.metadata.version(
        "tosa-converter-for-tflite"
    )
    (out / "manifest.json").write_text(real._dumps(manifest) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("tflite", "tosa"))
    parser.add_argument("work", type=Path, help="folder of the .tflite files and the steps' files")
    parser.add_argument("--out", type=Path, help="tests/data/real (default) or another copy")
    args = parser.parse_args(argv)
    if args.step == "tflite":
        make_tflite(args.work.resolve())
    else:
        out = args.out or Path(__file__).resolve().parent.parent / "tests" / "data" / "real"
        make_tosa(args.work.resolve(), out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
