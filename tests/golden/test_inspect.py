"""``vgfc inspect --json`` of vgfc's VGF of four bundled samples, kept as golden files
(``tests/golden/inspect/``; ``pytest --update-goldens`` rewrites them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import GOLDEN
from samples_module import SAMPLES_DIR, load_samples_module

from vgfc.compiler import compile_model

SAMPLES = load_samples_module().SAMPLES


@pytest.mark.parametrize("name", ["chain", "image", "dup", "mixed"])
def test_inspect_golden(cli, golden, name: str, tmp_path: Path) -> None:
    mine = tmp_path / f"{name}.vgf"
    mine.write_bytes(compile_model(SAMPLES_DIR / SAMPLES[name].filename).vgf)
    text = cli("inspect", str(mine), "--json").out
    golden.check(GOLDEN / "inspect" / f"{name}.json", text)
