#!/usr/bin/env python3
"""The worked example of docs/pytorch.md: a PyTorch model with two custom operators from one
kernel library (my_ops.yaml), exported through ExecuTorch's Arm VGF backend.

Run it with the Python of an environment that has ``pip install 'vgfc[executorch]'``::

    python samples/pytorch/export.py OUT

It writes, into OUT:

* ``model.pte``: the ExecuTorch program, one VGF delegate holding every operator;
* ``model.tosa``: the TOSA the delegate was compiled from (its two custom ops are complete
  ``com.arm.VulkanCustomShader`` ops: any converter compiles it);
* ``executorch.vgf``: the VGF ExecuTorch's converter made of it (``MODEL_CONVERTER_PATH``,
  ``vgfc-model-converter`` unless set);
* ``input.npy`` and ``eager.npy``: a seeded input and eager PyTorch's output for it.

``samples/pytorch/compare.py OUT`` then compiles ``model.tosa`` with vgfc and with the reference
converter, runs both files with ``vgfc run`` and compares them with ``eager.npy``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

import vgfc.executorch

HERE = Path(__file__).resolve().parent


class Model(torch.nn.Module):
    """conv -> my_ops.swish (beta 1.5) -> my_ops.upsample2x -> my_ops.swish -> conv."""

    def __init__(self) -> None:
        super().__init__()
        self.head = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.tail = torch.nn.Conv2d(4, 2, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.ops.my_ops.swish(self.head(x), beta=1.5)
        y = torch.ops.my_ops.upsample2x(y)
        y = torch.ops.my_ops.swish(y)
        return self.tail(y)


def export(out: Path) -> None:
    from executorch.backends.arm.vgf import VgfCompileSpec, VgfPartitioner
    from executorch.exir import to_edge_transform_and_lower

    # 1. The library's entries that name a PyTorch schema become torch.ops.my_ops.*.
    ops = vgfc.executorch.load(HERE / "my_ops.yaml")

    torch.manual_seed(0)
    model = Model().eval()
    x = torch.rand(1, 3, 12, 10) * 4 - 2
    with torch.no_grad():
        eager = model(x)  # eager PyTorch runs the entries' numpy references

    # 2. The ops stay in the VGF delegate and become tosa.CUSTOM shader ops when it is lowered.
    with tempfile.TemporaryDirectory() as artifacts:
        spec = VgfCompileSpec()
        spec.dump_intermediate_artifacts_to(artifacts)
        partitioner = ops.attach(VgfPartitioner(spec))
        program = torch.export.export(model, (x,))
        edge = to_edge_transform_and_lower(program, partitioner=[partitioner])
        (out / "model.pte").write_bytes(edge.to_executorch().buffer)
        (tosa,) = Path(artifacts).glob("output_*TOSA*.tosa")
        (vgf,) = Path(artifacts).glob("output_*.tosa.vgf")
        shutil.copyfile(tosa, out / "model.tosa")
        shutil.copyfile(vgf, out / "executorch.vgf")
    np.save(out / "input.npy", x.numpy())
    np.save(out / "eager.npy", eager.numpy())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the files (created)")
    args = parser.parse_args()
    if not os.environ.get("MODEL_CONVERTER_PATH"):
        # ExecuTorch runs this converter on the TOSA it writes; vgfc's stands in for Arm's.
        found = shutil.which("vgfc-model-converter", path=str(Path(sys.executable).parent))
        found = found or shutil.which("vgfc-model-converter")
        if found is None:
            sys.exit("error: vgfc-model-converter is not installed: pip install 'vgfc[executorch]'")
        os.environ["MODEL_CONVERTER_PATH"] = found
    args.out.mkdir(parents=True, exist_ok=True)
    export(args.out)
    for name in ("model.pte", "model.tosa", "executorch.vgf", "input.npy", "eager.npy"):
        print(f"{args.out / name}: {(args.out / name).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
