"""Write ``vgfc/data/warmup.tosa``: the model ``vgfc server`` compiles once when it starts.

A command the server runs is a fork of the server, so whatever the server did before forking
(tables read, modules imported, caches filled by a first compile) every command finds done.
Compiling one small model end to end is the surest way to do all of it: a graph of common
elementwise ops with a constant large enough to become a graph constant (so the constant path
and the streaming encoder run too). No custom ops: shader compilation starts worker processes,
which belong to the command that needs them, not to the server.

    python scripts/make_warmup_model.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from tosa_factory import Op, T, build  # noqa: E402

OUT = ROOT / "vgfc" / "data" / "warmup.tosa"


def model() -> bytes:
    shape = (1, 8, 8, 4)
    weights = np.linspace(-1.0, 1.0, num=int(np.prod(shape)), dtype=np.float32).reshape(shape)
    tensors = [T("x", shape), T("w", shape, data=weights)]
    tensors += [T(name, shape) for name in ("a", "b", "c", "d", "y")]
    ops = [
        Op("CONST", [], ["w"]),
        Op("ABS", ["x"], ["a"]),
        Op("ADD", ["a", "w"], ["b"]),
        Op("SIGMOID", ["b"], ["c"]),
        Op("TANH", ["c"], ["d"]),
        Op("EXP", ["d"], ["y"]),
    ]
    return build(tensors, ops, ["x"], ["y"])


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(model())
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
