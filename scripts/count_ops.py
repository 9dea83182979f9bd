#!/usr/bin/env python3
"""Count the TOSA operations left in the graph modules of VGFs: vgfc's and the reference's.

For each ``.tosa`` file given (or found under a folder given), compile it with vgfc (in this
process; ``-O0`` too with ``--baseline``) and with the reference converter (``model-converter``
beside this Python, or ``--converter``), then count the ``OpExtInst`` of the ``TOSA.001000.1``
set in every SPIR-V graph module of each VGF and print one row per network: the counts and the
VGF sizes. ``--histogram`` prints, per network, the operators whose counts differ::

    python scripts/count_ops.py tests/data/real --baseline --histogram
    python scripts/count_ops.py m.tosa --json counts.json

A network one converter refuses shows ``-`` in its column; the totals count the networks both
compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OP_EXT_INST_IMPORT, OP_EXT_INST = 11, 12
TOSA_SET = "TOSA.001000.1"


def tosa_ops(vgf_bytes: bytes) -> Counter[str]:
    """Operator name -> how many ``OpExtInst`` of the TOSA set the VGF's graph modules hold."""
    from vgfc.spirv.binary import words_of
    from vgfc.spirv.extinst import tosa_instructions
    from vgfc.spirv.grammar import literal_string
    from vgfc.vgf.decode import decode
    from vgfc.vgf.model import ModuleType

    names = {i.opcode: name for name, i in tosa_instructions().items()}
    counts: Counter[str] = Counter()
    for module in decode(vgf_bytes).modules:
        if module.type is not ModuleType.GRAPH or module.spirv is None:
            continue
        words = words_of(module.spirv)
        at, sets = 5, set()
        while at < len(words):
            size, opcode = words[at] >> 16, words[at] & 0xFFFF
            if size == 0:
                raise ValueError("malformed SPIR-V: an instruction of 0 words")
            if opcode == OP_EXT_INST_IMPORT and literal_string(words, at + 2)[0] == TOSA_SET:
                sets.add(words[at + 1])
            elif opcode == OP_EXT_INST and words[at + 3] in sets:
                counts[names.get(words[at + 4], f"#{words[at + 4]}")] += 1
            at += size
    return counts


def vgfc_vgf(model: Path, optimize: bool) -> bytes | None:
    from vgfc.compilation import make_options
    from vgfc.compiler import compile_model
    from vgfc.diagnostics import VgfcError

    try:
        done = compile_model(model, make_options(optimize=optimize))
    except VgfcError as error:
        print(f"{model}: vgfc: {error}", file=sys.stderr)
        return None
    return bytes(done.vgf) if done.vgf is not None else None


def reference_vgf(model: Path, converter: str) -> bytes | None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "m.vgf"
        run = subprocess.run(
            [converter, "-i", str(model), "-o", str(out)], capture_output=True, text=True
        )
        if run.returncode != 0 or not out.exists():
            last = (run.stderr.strip().splitlines() or ["failed"])[-1]
            print(f"{model}: reference: {last}", file=sys.stderr)
            return None
        return out.read_bytes()


def models_in(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found += sorted(path.rglob("*.tosa")) if path.is_dir() else [path]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help=".tosa files or folders of them")
    parser.add_argument("--converter", help="the reference converter (model-converter)")
    parser.add_argument("--baseline", action="store_true", help="also vgfc -O0 (no folding)")
    parser.add_argument("--histogram", action="store_true", help="per-operator differences")
    parser.add_argument("--json", type=Path, help="write the rows as JSON")
    args = parser.parse_args(argv)
    converter = args.converter
    if converter is None:
        converter = shutil.which("model-converter", path=str(Path(sys.executable).parent))
    if converter is None:
        parser.error("no model-converter beside this Python: name one with --converter")
    if not (Path(converter).is_file() and os.access(converter, os.X_OK)):
        parser.error(f"--converter {converter}: not an executable file")
    columns = (["vgfc -O0"] if args.baseline else []) + ["vgfc", "reference"]
    print("| network | " + " | ".join(f"{c} ops | {c} bytes" for c in columns) + " |")
    print("|---" * (1 + 2 * len(columns)) + "|")
    rows = []
    for model in models_in(args.paths):
        vgfs = ([vgfc_vgf(model, False)] if args.baseline else []) + [
            vgfc_vgf(model, True),
            reference_vgf(model, converter),
        ]
        counts = [tosa_ops(v) if v is not None else None for v in vgfs]
        row: dict[str, Any] = {"network": str(model)}
        cells = []
        for column, vgf, count in zip(columns, vgfs, counts, strict=True):
            ops = sum(count.values()) if count is not None else None
            row[f"{column} ops"] = ops
            row[f"{column} bytes"] = len(vgf) if vgf is not None else None
            row[f"{column} histogram"] = dict(sorted(count.items())) if count else None
            cells += ["-" if vgf is None else str(ops), "-" if vgf is None else str(len(vgf))]
        rows.append(row)
        print(f"| {model} | " + " | ".join(cells) + " |", flush=True)
        if args.histogram and counts[-2] is not None and counts[-1] is not None:
            for name in sorted(set(counts[-2]) | set(counts[-1])):
                if counts[-2][name] != counts[-1][name]:
                    print(f"    {name}: vgfc {counts[-2][name]}, reference {counts[-1][name]}")
    both = [r for r in rows if all(r[f"{c} ops"] is not None for c in columns)]
    totals = [sum(int(r[f"{c} {k}"]) for r in both) for c in columns for k in ("ops", "bytes")]
    print(f"| total ({len(both)} networks) | " + " | ".join(map(str, totals)) + " |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
