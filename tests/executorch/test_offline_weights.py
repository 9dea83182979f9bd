"""scripts/executorch_suite_offline.py, the pytest plugin that lets ExecuTorch's model tests build
offline, run as ``executorch_suite.py run`` loads it: a pytest of its own with ``-p``, on test
modules that download weights the ways ExecuTorch's model tests do (a torchvision weights enum at
import, timm ``pretrained=True``, a URL state dict, a Hugging Face weights file). Each builds the
same architecture with seeded random weights, the same numbers on every run, and each change is
recorded; what cannot be built offline fails and is recorded. Needs torch, torchvision and timm:
``make test-executorch`` runs this folder in the ExecuTorch venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
# Beside the kept files' name, a folder whose path has what the plugin takes for ExecuTorch's
# suite, so that an import-time replacement names its module.
SUITE = Path("executorch") / "backends" / "arm" / "test" / "models"

MODELS = """
import hashlib

import timm
import torch
from huggingface_hub import hf_hub_download
from torchvision.models import ResNet18_Weights, resnet18

AT_IMPORT = resnet18(weights=ResNet18_Weights.DEFAULT)


def digest(module):
    h = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        h.update(name.encode() + tensor.detach().float().numpy().tobytes())
    return h.hexdigest()


def test_torchvision_enum_vgf(tmp_path):
    again = resnet18(weights=ResNet18_Weights.DEFAULT)
    assert digest(again) == digest(AT_IMPORT)
    assert digest(again) != digest(resnet18())
    (tmp_path / "../torchvision.txt").write_text(digest(again))


def test_timm_pretrained_vgf(tmp_path):
    model = timm.models.deit.deit_tiny_patch16_224(pretrained=True)
    assert digest(model) == digest(timm.models.deit.deit_tiny_patch16_224(pretrained=True))
    assert model(torch.zeros(1, 3, 224, 224)).shape == (1, 1000)
    (tmp_path / "../timm.txt").write_text(digest(model))


def test_url_state_dict_vgf():
    model = torch.nn.Linear(4, 3)
    model.load_state_dict(torch.hub.load_state_dict_from_url("https://example.com/w.pth"))
    assert torch.count_nonzero(model.bias) == 3


def test_huggingface_weights_vgf():
    model = torch.nn.Conv2d(2, 2, 3)
    path = hf_hub_download(repo_id="Arm/some-model", filename="model.pt")
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))


def test_huggingface_config_vgf():
    hf_hub_download(repo_id="Arm/some-model", filename="config.json")


def test_hub_repository_vgf():
    torch.hub.load("pytorch/vision", "resnet18")
"""


def _run(tmp_path: Path, record: str | None) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / SUITE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_downloads.py").write_text(textwrap.dedent(MODELS))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = dict(os.environ, PYTHONPATH=str(SCRIPTS), HF_HUB_OFFLINE="1")
    env.pop("VGFC_SUITE_REPLACED", None)
    if record is not None:
        env["VGFC_SUITE_REPLACED"] = record
    flags = ["-q", "-p", "no:cacheprovider", "-c", "pytest.ini", "-p", "executorch_suite_offline"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *flags, "--basetemp", str(tmp_path / "t"), str(SUITE)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_downloads_become_seeded_weights_each_recorded(tmp_path: Path) -> None:
    done = _run(tmp_path / "a", str(tmp_path / "replaced.json"))
    # the two that cannot be built offline fail, with the plugin's message; the others pass
    assert "2 failed, 4 passed" in done.stdout, done.stdout + done.stderr
    assert "offline: huggingface Arm/some-model/config.json would be downloaded" in done.stdout
    assert (
        "offline: torch.hub.load('pytorch/vision', 'resnet18') would download code" in done.stdout
    )
    records = json.loads((tmp_path / "replaced.json").read_text())
    by_test = {(r["test"], r["replaced"].split(" (")[0].split(":")[0]) for r in records}
    assert ("test_downloads (import)", "torchvision ResNet18_Weights.IMAGENET1K_V1") in by_test
    assert (
        "test_downloads__test_torchvision_enum_vgf",
        "torchvision ResNet18_Weights.IMAGENET1K_V1",
    ) in by_test
    assert (
        "test_downloads__test_timm_pretrained_vgf",
        "timm deit_tiny_patch16_224 pretrained",
    ) in (by_test)
    assert (
        "test_downloads__test_url_state_dict_vgf",
        "state dict from https",
    ) in by_test
    assert (
        "test_downloads__test_huggingface_weights_vgf",
        "huggingface Arm/some-model/model.pt",
    ) in by_test
    refused = [r for r in records if r["seed"] is None]
    assert [r["test"] for r in refused] == [
        "test_downloads__test_huggingface_config_vgf",
        "test_downloads__test_hub_repository_vgf",
    ]
    # the same weights in another process: seeded by the weights' name, not the global RNG
    again = _run(tmp_path / "b", None)
    assert "2 failed, 4 passed" in again.stdout, again.stdout + again.stderr
    for name in ("torchvision.txt", "timm.txt"):
        first = (tmp_path / "a" / "t" / name).read_text()
        assert first == (tmp_path / "b" / "t" / name).read_text()


@pytest.mark.parametrize("kind", ["folder", "no parent"])
def test_a_record_path_that_cannot_be_written_is_a_usage_error(tmp_path: Path, kind: str) -> None:
    record = tmp_path if kind == "folder" else tmp_path / "absent" / "replaced.json"
    done = _run(tmp_path / "run", str(record))
    assert done.returncode == 4  # pytest's usage error: no test ran
    assert f"VGFC_SUITE_REPLACED={record}: not a file in an existing folder" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_empty_record_path_records_nothing_and_still_replaces(tmp_path: Path) -> None:
    done = _run(tmp_path, "")
    assert "2 failed, 4 passed" in done.stdout, done.stdout + done.stderr
    assert not list(tmp_path.glob("*.json"))
