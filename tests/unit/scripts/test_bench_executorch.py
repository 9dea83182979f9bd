"""scripts/_bench_executorch.py: which kept TOSA file of ExecuTorch's model tests each bench row
times, and which rows it names missing."""

from __future__ import annotations

import sys
from pathlib import Path

from paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import _bench_executorch as bench_et


def _keep(build: Path, test: str, sizes: list[int], part: str = "executorch-suite-models") -> None:
    folder = build / part / "keep" / test
    folder.mkdir(parents=True)
    for n, size in enumerate(sizes):
        (folder / f"call-{n}.tosa").write_bytes(b"x" * size)


def test_each_row_takes_its_tests_largest_call_and_the_rest_are_named_missing(
    tmp_path: Path,
) -> None:
    _keep(tmp_path, "test_inception_v3_arm__test_ic3_vgf_no_quant", [10, 30, 20])
    _keep(tmp_path, "test_deit_tiny_arm__test_deit_tiny_vgf_no_quant[fp16]", [5])
    _keep(tmp_path, "test_deit_tiny_arm__test_deit_tiny_vgf_no_quant[fp32]", [6])
    _keep(tmp_path, "test_mobilenet_v2_arm__test_mv2_vgf_quant_partial_quant", [9])
    _keep(tmp_path, "test_mobilenet_v2_arm__test_mv2_vgf_quant[per_channel_quantization=true]", [8])
    _keep(tmp_path, "test_dl3_arm__test_dl3_vgf_quant", [7], part="executorch-suite")
    _keep(tmp_path, "test_nss__test_nss_vgf_no_quant", [])  # a test that made no call
    found, missing = bench_et.kept_models(tmp_path)
    keep = tmp_path / "executorch-suite-models" / "keep"
    assert found == {
        "executorch-suite/inception_v3 (FP)": keep
        / "test_inception_v3_arm__test_ic3_vgf_no_quant"
        / "call-1.tosa",
        "executorch-suite/deit_tiny (FP)": keep
        / "test_deit_tiny_arm__test_deit_tiny_vgf_no_quant[fp32]"
        / "call-0.tosa",
        "executorch-suite/mobilenet_v2 (INT)": keep
        / "test_mobilenet_v2_arm__test_mv2_vgf_quant[per_channel_quantization=true]"
        / "call-0.tosa",
        "executorch-suite/deeplab_v3 (INT)": tmp_path
        / "executorch-suite"
        / "keep"
        / "test_dl3_arm__test_dl3_vgf_quant"
        / "call-0.tosa",
    }
    assert "executorch-suite/nss (FP)" in missing
    assert "executorch-suite/inception_v3 (INT)" in missing
    assert len(found) + len(missing) == len(bench_et.MODELS) * len(bench_et.VARIANTS)


def test_no_suite_run_or_a_keep_that_is_a_file_leaves_every_row_missing(tmp_path: Path) -> None:
    found, missing = bench_et.kept_models(tmp_path / "absent")
    assert not found and len(missing) == len(bench_et.MODELS) * len(bench_et.VARIANTS)
    (tmp_path / "executorch-suite-models").mkdir()
    (tmp_path / "executorch-suite-models" / "keep").write_text("not a folder")
    assert bench_et.kept_models(tmp_path)[0] == {}


def test_an_executorch_row_runs_vgfc_as_executorch_runs_its_converter(tmp_path: Path) -> None:
    import bench

    vgfc = tmp_path / "venv" / "bin" / "vgfc"
    tools = {"mc": tmp_path / "model-converter", "vgfc": vgfc}
    runs = bench.Bench(tools, tmp_path / "work")
    model = tmp_path / "m.tosa"
    case = bench.Case("executorch-suite/deit_tiny (FP)", model, converter=True)
    ours, theirs = runs.command(case, "vgfc")[0], runs.command(case, "mc")[0]
    assert ours[0] == str(vgfc.with_name("vgfc-model-converter"))
    assert ours[1:4] == theirs[1:4] == ["--input", str(model), "--output"]
    assert runs.command(bench.Case("chain2000", model), "vgfc")[0][:3] == [
        str(vgfc),
        "compile",
        str(model),
    ]
