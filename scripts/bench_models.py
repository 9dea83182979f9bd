"""Generated models for measuring the reader, the constant path and the VGF writer.

    python scripts/bench_models.py chain OUT.tosa [--ops 100000] [--shape 1,64,64,16]
    python scripts/bench_models.py constants OUT.tosa [--count 10] [--elements 1000000] [--ops 50]
    python scripts/bench_models.py external OUT.tosa [--gib 4] [--count 4]

``chain`` is an elementwise chain (ABS and ADD of a small broadcast constant, alternating);
``constants`` is a chain that adds ten large FP32 constants (the issue's 40 MB model);
``external`` holds its constants after the flatbuffer, as TOSA writes models over 2 GB (the
tensors' ``offset``/``size`` fields), and is written in chunks, so it never sits in memory.
The models are not checked in: benchmarks and tests build them when they need them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from tosa_factory import Op, T, build

__all__ = ["chain_model", "constants_model", "external_constants_model"]

_ALIGN = 64
"""Alignment of each constant stored after the flatbuffer."""


def chain_model(n_ops: int, shape: Sequence[int] = (1, 64, 64, 16)) -> bytes:
    """x -> ABS -> ADD k -> ABS -> ... : ``n_ops`` operators plus the CONST of ``k``."""
    k_shape = (*([1] * (len(shape) - 1)), shape[-1])
    k = np.linspace(-1, 1, int(np.prod(k_shape)), dtype=np.float32).reshape(k_shape)
    tensors = [T("x", shape), T("k", k_shape, "FP32", k)]
    ops = [Op("CONST", [], ["k"])]
    prev = "x"
    for i in range(n_ops):
        out = f"t{i}"
        tensors.append(T(out, shape))
        ops.append(Op("ADD", [prev, "k"], [out]) if i % 2 else Op("ABS", [prev], [out]))
        prev = out
    return build(tensors, ops, ["x"], [prev])


def constants_model(count: int = 10, elements: int = 1_000_000, n_ops: int = 50) -> bytes:
    """``n_ops`` operators: ``count`` CONSTs of ``elements`` FP32 values each, added one by one
    into a chain of ABS/ADD on ``[1, elements]``."""
    shape = (1, elements)
    rng = np.random.default_rng(0)
    tensors = [T("x", shape)]
    ops: list[Op] = []
    for c in range(count):
        tensors.append(T(f"c{c}", shape, "FP32", rng.standard_normal(shape, np.float32)))
        ops.append(Op("CONST", [], [f"c{c}"]))
    prev = "x"
    for i in range(n_ops - count):
        out = f"t{i}"
        tensors.append(T(out, shape))
        c = i // 2
        if i % 2 and c < count:
            ops.append(Op("ADD", [prev, f"c{c}"], [out]))
        else:
            ops.append(Op("ABS", [prev], [out]))
        prev = out
    return build(tensors, ops, ["x"], [prev])


def _external_flatbuffer(count: int, elements: int, offsets: Sequence[int]) -> bytes:
    shape = (1, elements)
    tensors = [T("x", shape)]
    ops: list[Op] = []
    prev = "x"
    for c in range(count):
        tensors.append(T(f"c{c}", shape, "FP32", offset=offsets[c], size=elements * 4))
        tensors.append(T(f"t{c}", shape))
        ops.append(Op("CONST", [], [f"c{c}"]))
        ops.append(Op("ADD", [prev, f"c{c}"], [f"t{c}"]))
        prev = f"t{c}"
    return build(tensors, ops, ["x"], [prev])


def external_constants_model(
    path: Path, gib: float = 4.0, count: int = 4, chunk_elements: int = 1 << 24
) -> int:
    """Write a model with ``gib`` GiB of FP32 constants in ``count`` tensors stored after the
    flatbuffer; returns the file size. Constant ``c`` holds ``c + i * 1e-6`` at index ``i``
    (mod 2**20), so every constant differs and a check can recompute any slice."""
    elements = int(gib * (1 << 30)) // 4 // count
    size = elements * 4
    # The offsets are ulong fields, stored inline: any non-zero values give the same layout, so
    # build once to learn where the data starts and once more with the real offsets.
    probe = _external_flatbuffer(count, elements, [2] * count)
    start = -(-len(probe) // _ALIGN) * _ALIGN
    stride = -(-size // _ALIGN) * _ALIGN
    offsets = [start + c * stride for c in range(count)]
    head = _external_flatbuffer(count, elements, offsets)
    if len(head) != len(probe):
        raise RuntimeError("the flatbuffer changed size when its offsets were filled in")
    with open(path, "wb") as f:
        f.write(head)
        for c in range(count):
            f.seek(offsets[c])
            for first in range(0, elements, chunk_elements):
                f.write(external_values(c, first, min(chunk_elements, elements - first)))
        f.truncate(offsets[-1] + stride)
    return offsets[-1] + stride


def external_values(constant: int, first: int, count: int) -> bytes:
    """Elements ``first .. first + count`` of constant ``constant`` of
    :func:`external_constants_model`, as little-endian FP32 bytes."""
    i = np.arange(first, first + count, dtype=np.int64) & ((1 << 20) - 1)
    return (constant + i.astype(np.float32) * np.float32(1e-6)).astype("<f4").tobytes()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    p = sub.add_parser("chain")
    p.add_argument("output", type=Path)
    p.add_argument("--ops", type=int, default=100_000)
    p.add_argument("--shape", default="1,64,64,16")
    p = sub.add_parser("constants")
    p.add_argument("output", type=Path)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--elements", type=int, default=1_000_000)
    p.add_argument("--ops", type=int, default=50)
    p = sub.add_parser("external")
    p.add_argument("output", type=Path)
    p.add_argument("--gib", type=float, default=4.0)
    p.add_argument("--count", type=int, default=4)
    args = parser.parse_args()
    if args.kind == "chain":
        shape = tuple(int(d) for d in args.shape.split(","))
        args.output.write_bytes(chain_model(args.ops, shape))
    elif args.kind == "constants":
        args.output.write_bytes(constants_model(args.count, args.elements, args.ops))
    else:
        external_constants_model(args.output, args.gib, args.count)
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
