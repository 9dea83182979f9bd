"""Generate the models `make bench` measures (they are not checked in).

    python scripts/make_bench_models.py [--out build/bench] [--only NAME ...] [--list]

Writes one ``NAME.tosa`` per model into ``--out``, rebuilding only what this script or the
builders it uses changed since. The models:

chain2000   a 2000-op elementwise chain (ABS, ADD of a broadcast constant) on [1, 64, 64, 16] fp32:
            graph lowering of many small ops.
constants   50 ops, ten of them ADDs of a 1M-element fp32 constant (40 MB of constants):
            reading and writing constant bytes.
shaders100  100 GLSL custom ops, each with its own shader, alternating with 100 ADDs: shader
            compilation, validation and reflection (and the shader cache).
chain1k, chain10k, chain100k
            the elementwise chain with 1,000, 10,000 and 100,000 ops on [1, 16] fp32: how compile
            time grows with the size of the model.
hardswish1k, hardswish4k
            a chain of 1,000 and 4,000 ``com.example`` HardSwish custom ops on [1, 3, 8, 8] fp32,
            which ``samples/kernels/example_ops.yaml`` expands into TOSA built-ins: how the
            binding of library ops grows with their number.

The chain and constants models come from ``scripts/bench_models.py``; the builders are importable
(``from make_bench_models import MODELS``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_models import chain_model, constants_model  # noqa: E402
from tosa_factory import Op, T, build, custom  # noqa: E402

_SHADER = """#version 450
// Shader {index} of the benchmark: y = x * {scale} + {index}.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In {{ float x[]; }};
layout(set = 0, binding = 1) writeonly buffer Out {{ float y[]; }};
void main() {{
    uint i = gl_GlobalInvocationID.x;
    if (i < {elements}u) {{
        y[i] = x[i] * {scale} + {index}.0;
    }}
}}
"""


def shader_attrs(index: int, elements: int) -> dict[str, object]:
    """The implementation attributes of benchmark shader ``index`` (its own source text)."""
    code = _SHADER.format(index=index, scale=f"{1.0 + index / 1000:.3f}", elements=elements)
    binding: dict[str, object] = {}
    for role, number in (("input_0", 0), ("output_0", 1)):
        binding[f"{role}_binding"] = number
        binding[f"{role}_descriptorset"] = 0
        binding[f"{role}_vkdescriptortype"] = "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
        binding[f"{role}_vkformat"] = "VK_FORMAT_R32_SFLOAT"
    return {
        "entry_point": "main",
        "workgroup_sizes": [-(-elements // 64), 1, 1],  # local_size_x is 64
        "shader_language": "GLSL",
        "shader_code": code,
        **binding,
    }


def library_op_model(n_ops: int, shape: tuple[int, ...] = (1, 3, 8, 8)) -> bytes:
    """x -> HardSwish -> HardSwish ... -> y: ``n_ops`` custom ops with no shader of their own,
    bound by ``samples/kernels/example_ops.yaml``."""
    names = ["x", *(f"h{i}" for i in range(n_ops - 1)), "y"]
    ops = [
        custom([names[i]], [names[i + 1]], "HardSwish", domain="com.example", attrs=b"")
        for i in range(n_ops)
    ]
    return build([T(n, shape) for n in names], ops, ["x"], ["y"])


def shader_model(n_shaders: int = 100, elements: int = 1024) -> bytes:
    """x -> ADD(x) -> shader -> ADD(x) -> shader ...: ``n_shaders`` distinct GLSL shaders, each
    in its own partition, alternating with as many ADDs."""
    shape = (1, elements)
    tensors = [T("x", shape)]
    ops = []
    prev = "x"
    for i in range(n_shaders):
        added, shaded = f"a{i}", "y" if i == n_shaders - 1 else f"s{i}"
        tensors += [T(added, shape), T(shaded, shape)]
        ops.append(Op("ADD", [prev, "x"], [added]))
        ops.append(custom([added], [shaded], f"shader{i}", attrs=shader_attrs(i, elements)))
        prev = shaded
    return build(tensors, ops, ["x"], ["y"])


MODELS: dict[str, Callable[[], bytes]] = {
    "chain2000": lambda: chain_model(2000, (1, 64, 64, 16)),
    "constants": constants_model,
    "shaders100": shader_model,
    "chain1k": lambda: chain_model(1_000, (1, 16)),
    "chain10k": lambda: chain_model(10_000, (1, 16)),
    "chain100k": lambda: chain_model(100_000, (1, 16)),
    "hardswish1k": lambda: library_op_model(1_000),
    "hardswish4k": lambda: library_op_model(4_000),
}
"""Model name -> builder of its TOSA flatbuffer."""

SCALING = ("chain1k", "chain10k", "chain100k")
"""The models of the scaling table, smallest first."""


def _stamp() -> str:
    """What a generated model depends on: this script, the builders and the flatbuffer factory."""
    digest = hashlib.sha256()
    for path in (
        Path(__file__),
        ROOT / "scripts" / "bench_models.py",
        ROOT / "tests" / "support" / "tosa_factory.py",
    ):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def make(out: Path, names: list[str] | None = None, *, quiet: bool = False) -> dict[str, Path]:
    """Write the models named (default: all) into ``out``; returns name -> path. A model is
    rebuilt only when this script or the factory changed since it was written."""
    out.mkdir(parents=True, exist_ok=True)
    stamp_file = out / "stamp.json"
    try:
        stamps = json.loads(stamp_file.read_text())
    except (OSError, ValueError):
        stamps = {}
    stamp = _stamp()
    paths = {}
    for name in names or list(MODELS):
        path = out / f"{name}.tosa"
        if not (path.is_file() and stamps.get(name) == stamp):
            data = MODELS[name]()
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
            stamps[name] = stamp
            if not quiet:
                print(f"wrote {path} ({len(data) / 1e6:.1f} MB)", file=sys.stderr)
        paths[name] = path
    stamp_file.write_text(json.dumps(stamps, indent=1, sort_keys=True) + "\n")
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "bench")
    parser.add_argument("--only", nargs="+", choices=list(MODELS), help="models to write")
    parser.add_argument("--list", action="store_true", help="list the model names and stop")
    args = parser.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return
    make(args.out, args.only)


if __name__ == "__main__":
    main()
