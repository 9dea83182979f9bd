"""scripts/count_ops.py: the TOSA operations it counts in both converters' VGFs are the ones the
model holds, its table and JSON carry each VGF's size, and a network one converter refuses is
shown as ``-`` and left out of the totals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from paths import ROOT
from reference_tools import reference_convert
from residual import RESIDUAL_OPS, residual_block
from tosa_factory import chain

sys.path.insert(0, str(ROOT / "scripts"))
import count_ops


@pytest.fixture
def residual(tmp_path: Path) -> Path:
    model = tmp_path / "residual.tosa"
    model.write_bytes(residual_block())
    return model


def test_counts_are_the_operators_of_the_model_in_both_converters(
    residual: Path, tmp_path: Path
) -> None:
    for optimize in (True, False):
        vgf = count_ops.vgfc_vgf(residual, optimize)
        assert vgf is not None
        assert count_ops.tosa_ops(vgf) == RESIDUAL_OPS
    reference = reference_convert(residual, tmp_path / "r.vgf").read_bytes()
    assert count_ops.tosa_ops(reference) == RESIDUAL_OPS
    chained = tmp_path / "chain.tosa"
    chained.write_bytes(chain(3, "ABS"))
    vgf = count_ops.vgfc_vgf(chained, False)
    assert vgf is not None and count_ops.tosa_ops(vgf) == {"ABS": 3}


def test_table_and_json_carry_counts_and_sizes(
    residual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.tosa"
    broken.write_bytes(b"not a flatbuffer")
    out = tmp_path / "rows.json"
    argv = [str(residual), str(broken), "--baseline", "--histogram", "--json", str(out)]
    assert count_ops.main(argv) == 0
    rows = json.loads(out.read_text())
    good, bad = rows
    reference = reference_convert(residual, tmp_path / "r.vgf").read_bytes()
    for column in ("vgfc -O0", "vgfc", "reference"):
        assert good[f"{column} ops"] == sum(RESIDUAL_OPS.values())
        assert good[f"{column} histogram"] == RESIDUAL_OPS
    assert good["reference bytes"] == len(reference)
    assert good["vgfc bytes"] <= good["reference bytes"]
    assert all(bad[f"{c} ops"] is None for c in ("vgfc -O0", "vgfc", "reference"))
    printed = capsys.readouterr()
    total = printed.out.strip().splitlines()[-1]
    assert total.startswith("| total (1 networks) | 5 |")
    assert f"| {broken} | - | - | - | - | - | - |" in printed.out
    assert f"{broken}: vgfc:" in printed.err and f"{broken}: reference:" in printed.err


def test_malformed_spirv_is_refused(residual: Path) -> None:
    from vgfc.record import replace
    from vgfc.vgf.decode import decode
    from vgfc.vgf.encode import encode

    vgf = count_ops.vgfc_vgf(residual, True)
    assert vgf is not None
    model = decode(vgf)
    spirv = bytearray(model.modules[0].spirv or b"")
    spirv[20:24] = b"\0\0\0\0"  # the first instruction after the header: 0 words
    broken = replace(model, modules=(replace(model.modules[0], spirv=bytes(spirv)),))
    with pytest.raises(ValueError, match="0 words"):
        count_ops.tosa_ops(encode(broken))


@pytest.mark.parametrize("converter", ["", "absent", "folder", "not-executable"])
def test_a_converter_that_cannot_run_is_a_usage_error(
    converter: str, residual: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = {"absent": tmp_path / "nope", "folder": tmp_path, "not-executable": residual}
    name = str(paths.get(converter, ""))
    with pytest.raises(SystemExit) as exit_:
        count_ops.main([str(residual), "--converter", name])
    assert exit_.value.code == 2
    assert "not an executable file" in capsys.readouterr().err
