"""Write ``vgfc/read/tables.py``: the TOSA schema facts the reader needs, as plain data.

    python scripts/make_tosa_tables.py [--check]

The facts come from tosa-tools' generated ``tosa`` package (:func:`vgfc.read.spec.derive_tables`),
the specification; the reader reads the checked-in module instead of importing the package,
which pulls in the ``flatbuffers`` package and numpy (0.1 s of every command). Run this after
moving to a tosa-tools whose schema adds operators, types or attributes;
``tests/unit/read/test_tosa_tables.py`` fails until then. ``--check`` exits 1 when the file is out
of date instead of writing it.
"""

from __future__ import annotations

import pprint
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vgfc.read.spec import derive_tables  # noqa: E402

TARGET = ROOT / "vgfc" / "read" / "tables.py"

HEADER = '''"""The TOSA schema facts the reader needs: op, type and attribute codes, the vtable
offsets of the fields it reads, each attribute table's fields. Written by
``scripts/make_tosa_tables.py`` from tosa-tools' generated ``tosa`` package (the
specification; a test holds this file to it): do not edit by hand.

An attribute field is (vtable offset, name, kind, struct format, default); kinds are ``scalar``,
``string``, ``bytes`` (a ubyte vector) and ``ints`` (a vector of the format's elements).
"""

'''


def render() -> str:
    """The module's text: one entry per line."""
    lines = [HEADER]
    for key, value in derive_tables().items():
        if isinstance(value, dict):
            lines.append(f"{key.upper()} = {{")
            lines += [f"    {k!r}: {v!r}," for k, v in value.items()]
            lines.append("}\n")
        else:
            lines.append(f"{key.upper()} = {pprint.pformat(value, width=96)}\n")
    return "\n".join(lines)


def main() -> None:
    from _generated import write_or_check

    write_or_check(TARGET, render, __file__, __doc__)


if __name__ == "__main__":
    main()
