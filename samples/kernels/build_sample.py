#!/usr/bin/env python3
"""Build ``samples/kernels/model.tosa``: custom operators that carry no shader.

The model is what a PyTorch export would give: fp16 data in NCHW order, and two custom ops of the
``com.example`` domain with JSON parameters. Neither runs without a kernel library; with
``example_ops.yaml`` beside it, ``ChannelScale`` runs as a GLSL kernel that only takes fp32 NHWC
data (vgfc inserts the CASTs and TRANSPOSEs) and ``HardSwish`` expands into TOSA built-ins::

    x [1,3,8,8] fp16 -> ChannelScale(scale 0.5, step 0.25) -> HardSwish -> ADD x -> y

Usage: ``python samples/kernels/build_sample.py [--check]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from build_samples import ModelBuilder, Op  # noqa: E402

SHAPE = (1, 3, 8, 8)
PARAMS = {"scale": 0.5, "step": 0.25}


def build() -> bytes:
    m = ModelBuilder()
    x = m.input(SHAPE, "float16")
    scaled = m.tensor(SHAPE, "float16")
    swished = m.tensor(SHAPE, "float16")
    y = m.output(SHAPE, "float16")
    m.custom("com.example", "ChannelScale", [x], [scaled], json.dumps(PARAMS).encode())
    m.custom("com.example", "HardSwish", [scaled], [swished])
    m.op(Op.ADD, [swished, x], [y])
    return m.finish().data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if model.tosa would change")
    args = parser.parse_args()
    data = build()
    target = HERE / "model.tosa"
    if args.check:
        if not target.is_file() or target.read_bytes() != data:
            print(f"{target.name} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    target.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
