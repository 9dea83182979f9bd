#!/usr/bin/env python3
"""Build the regression corpus of the library and VGF fuzz targets: tests/data/fuzz/library/
and tests/data/fuzz/vgf/, one small file per class of finding (issue 22), each named after what
it once did. ``tests/fuzz/test_surface_corpus.py`` replays them through the invariants of
:mod:`surfaces`; ``make fuzz`` seeds its campaigns with them.

    python tests/fuzz/surface_cases.py     # rewrite the files

A library here names its shader ``channel_scale.comp`` (the sample's), which the replay copies
beside it.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = ROOT / "tests" / "data" / "fuzz"
SAMPLE = (ROOT / "samples" / "kernels" / "example_ops.yaml").read_text()
EXTRA = """  - domain: com.example
    name: Extra
    inputs: [x]
    outputs: [y]
    kernels:
      - name: k
        shader: SHADER
        resources: {x: {binding: 0}, y: {binding: 1}}
        dispatch: {global: [GLOBAL]}
"""


def _changed(old: str, new: str) -> str:
    assert old in SAMPLE, old
    return SAMPLE.replace(old, new, 1)


def _extra(shader: str = "{file: channel_scale.comp}", size: str = "1") -> str:
    return SAMPLE + EXTRA.replace("SHADER", shader).replace("GLOBAL", size)


def _chain(count: int) -> str:
    ops = "\n".join(
        f"        - {{op: ABS, inputs: [{f't{i - 1}' if i else 'x'}], "
        f"outputs: [{f't{i}' if i < count - 1 else 'y'}]}}"
        for i in reversed(range(count))
    )
    tensors = ", ".join(f"t{i}: {{same_as: x}}" for i in range(count - 1))
    return SAMPLE + (
        "  - domain: com.example\n    name: Chain\n    inputs: [x]\n    outputs: [y]\n"
        f"    compose:\n      tensors: {{{tensors}}}\n      ops:\n{ops}\n"
    )


LIBRARIES: dict[str, Callable[[], str]] = {
    "alias-bomb-exhausts-memory": lambda: (
        "vgfc_kernels: 1\n"
        + "".join(
            f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" if i else "a0: &a0 [x, x]\n"
            for i in range(12)
        )
    ),
    "recursive-alias": lambda: "vgfc_kernels: 1\noperators: &a [*a]\n",
    "lists-nested-5000-deep-recursion": lambda: SAMPLE + "x: " + "[" * 5000 + "]" * 5000 + "\n",
    "integer-5000-digits-valueerror": lambda: _changed(
        "x: {binding: 0}", "x: {binding: " + "9" * 5000 + "}"
    ),
    "compose-chain-1500-ops-recursion": lambda: _chain(1500),
    "attribute-nested-600-deep-recursion": lambda: _changed(
        "min_val: 0.0", "min_val: " + "[" * 600 + "0" + "]" * 600
    ),
    "round-huge-digits-in-define-hangs": lambda: _changed(
        "CHANNELS: C", 'CHANNELS: "round(C, -100000000)"'
    ),
    "round-huge-digits-in-dispatch-hangs": lambda: _changed(
        '{global: ["N * H * W * C"]}', '{global: ["round(N, -100000000)"]}'
    ),
    "ceil-1e308-dispatch-typeerror": lambda: _extra(size='"ceil(1e308)"'),
    "constant-shape-1e30-overflowerror": lambda: _changed(
        "shape: [1, 1, 1, 1], value: 3.0", 'shape: [1, "10**30", 1, 1], value: 3.0'
    ),
    "constant-shape-uint32-max-memoryerror": lambda: _changed(
        "shape: [1, 1, 1, 1], value: 3.0", "shape: [1, 4294967295, 1, 1], value: 3.0"
    ),
    "nan-into-int8-compiles": lambda: _changed(
        "shift: {dtype: INT8, shape: [1], value: 0}",
        "shift: {dtype: INT8, shape: [1], value: .nan}",
    ),
    "compose-op-x-fails-at-lowering": lambda: _changed(
        "{op: ADD, inputs: [x, three]", "{op: x, inputs: [x, three]"
    ),
    "mul-without-shift-fails-at-lowering": lambda: _changed(
        "inputs: [x, clamped, shift]", "inputs: [x, clamped]"
    ),
    "shader-file-etc-passwd-is-read": lambda: _extra("{file: /etc/passwd, language: GLSL}"),
    "include-dirs-root-is-searched": lambda: _extra(
        "{file: channel_scale.comp, include_dirs: [/]}"
    ),
    "nul-byte-in-shader-path-valueerror": lambda: _extra('{file: "a\\0b.comp"}'),
    "mapping-key-that-is-a-list": lambda: SAMPLE + "? [a, b]\n: 1\n",
}
"""File stem -> the library text."""


def _vgf() -> bytes:
    from vgfc.compiler import compile_model

    result = compile_model(ROOT / "samples" / "simple.tosa")
    assert result.vgf is not None
    return result.vgf


def _patched(offset: int, value: int) -> Callable[[bytes], bytes]:
    def patch(data: bytes) -> bytes:
        out = bytearray(data)
        out[offset : offset + 8] = struct.pack("<Q", value)
        return bytes(out)

    return patch


VGFS: dict[str, Callable[[bytes], bytes]] = {
    "module-table-beyond-the-end": _patched(0x18, 2**40),
    "constants-offset-beyond-the-end": _patched(0x40, 2**63),
    "sections-overlapping-the-header": _patched(0x10, 0),
    "header-only": lambda data: data[:128],
    "truncated-by-one-byte": lambda data: data[:-1],
    "empty": lambda data: b"",
}
"""File stem -> how the VGF of samples/simple.tosa is broken."""


def main() -> None:
    sys.path.insert(0, str(ROOT))
    (CORPUS / "library").mkdir(parents=True, exist_ok=True)
    (CORPUS / "vgf").mkdir(parents=True, exist_ok=True)
    for stem, make in LIBRARIES.items():
        text = make()
        (CORPUS / "library" / f"{stem}.yaml").write_text(text)
        print(f"library/{stem}.yaml: {len(text)} characters")
    vgf = _vgf()
    for stem, broken in VGFS.items():
        data = broken(vgf)
        (CORPUS / "vgf" / f"{stem}.vgf").write_bytes(data)
        print(f"vgf/{stem}.vgf: {len(data)} bytes")


if __name__ == "__main__":
    main()
