"""The reader's schema tables (vgfc/read/tables.py) against tosa-tools' generated package, the
specification they are written from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vgfc.read import tables
from vgfc.read.spec import derive_tables


def test_the_tables_agree_with_the_installed_generated_package() -> None:
    """Every code, vtable offset and attribute field the installed package knows is the
    table's. An older tosa-tools (the lowest version vgfc supports) may know fewer ops, types
    and attributes than the table; a newer one that knows more fails here until
    scripts/make_tosa_tables.py is run."""
    spec = derive_tables()
    assert spec["structure"] == tables.STRUCTURE
    assert spec["version"] == tables.VERSION
    for key, table in (("ops", tables.OPS), ("dtypes", tables.DTYPES)):
        for code, name in spec[key].items():
            assert table.get(code) == name, (key, code, name)
    for code, name in spec["attributes"].items():
        assert tables.ATTRIBUTES.get(code) == name, (code, name)
        if code:
            assert tables.ATTRIBUTE_FIELDS[name] == spec["attribute_fields"][name], name
    for field, values in spec["enums"].items():
        for code, name in values.items():
            assert tables.ENUMS[field].get(code) == name, (field, code)


def test_reading_a_model_imports_neither_the_generated_package_nor_numpy(tmp_path: Path) -> None:
    from tosa_factory import chain

    model = tmp_path / "m.tosa"
    model.write_bytes(chain(3))
    probe = (
        "import sys, vgfc.read; g = vgfc.read.load(sys.argv[1]); "
        "print(len(g.operators), sorted({m.split('.')[0] for m in sys.modules}))"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe, str(model)], capture_output=True, text=True, check=True
    )
    count, modules = run.stdout.split(" ", 1)
    assert int(count) > 0
    for heavy in ("numpy", "flatbuffers", "tosa", "ml_dtypes"):
        assert f"'{heavy}'" not in modules, heavy
