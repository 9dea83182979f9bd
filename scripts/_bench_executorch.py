"""The bench rows of ExecuTorch's big model tests: the TOSA files their tests handed the converter,
as ``make test-executorch-suite SUITE_PART=models`` keeps them (``scripts/executorch_suite.py``).

Each model has an FP row (its ``vgf_no_quant`` test) and an INT row (its ``vgf_quant`` test); a
test that called the converter more than once (a partly delegated graph) gives its largest
input. Where the suite has not run, or a model's test did not import (conformer needs
torchaudio, NSS ng-model-gym), the row is missing, and the bench says so.
"""

from __future__ import annotations

from pathlib import Path

KEPT = ("executorch-suite-models", "executorch-suite")
"""Folders under build/ whose ``keep/`` the suite fills (the model part's first)."""
MODELS = {
    "inception_v3": "test_inception_v3_arm__test_ic3_vgf",
    "deit_tiny": "test_deit_tiny_arm__test_deit_tiny_vgf",
    "deeplab_v3": "test_dl3_arm__test_dl3_vgf",
    "conformer": "test_conformer__test_conformer_vgf",
    "nss": "test_nss__test_nss_vgf",
    "mobilenet_v2": "test_mobilenet_v2_arm__test_mv2_vgf",
    "resnet18": "test_resnet18__test_resnet_18_vgf",
}
"""Each big model and the start of its tests' folder names in ``keep/``."""
VARIANTS = {"FP": "_no_quant", "INT": "_quant"}
"""Each row's test: the folder name's next part."""
SOURCE = "make test-executorch-suite SUITE_PART=models"


def _largest(folder: Path) -> Path | None:
    files = sorted(folder.glob("call-*.tosa"), key=lambda p: (-p.stat().st_size, p.name))
    return files[0] if files else None


def kept_models(build: Path) -> tuple[dict[str, Path], list[str]]:
    """(row name -> kept TOSA file, the rows not found) under ``build``."""
    folders = [
        p for k in KEPT if (build / k / "keep").is_dir() for p in (build / k / "keep").iterdir()
    ]
    found: dict[str, Path] = {}
    missing: list[str] = []
    for model, prefix in MODELS.items():
        for label, variant in VARIANTS.items():
            name = f"executorch-suite/{model} ({label})"
            start = prefix + variant
            tests = sorted(
                f
                for f in folders
                if f.name == start or f.name.startswith((start + "[", start + "_"))
            )
            # the plain test first, then its parametrizations (fp32 first), then other variants
            tests.sort(
                key=lambda f: (
                    f.name != start,
                    not f.name.startswith(start + "["),
                    "[fp32]" not in f.name,
                    f.name,
                )
            )
            files = [t for t in map(_largest, tests) if t is not None]
            if files:
                found[name] = files[0]
            else:
                missing.append(name)
    return found, missing
