"""The bundled samples: up to date with their build script, partitioned as documented, and the
`vgfc partition --json` output of each kept as a golden file (VGFC_UPDATE_GOLDENS=1 rewrites)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR, load_samples_module
from test_partition import _brute_force_minimum

import vgfc
from vgfc.report import partition_json

SAMPLES = load_samples_module().SAMPLES
GOLDEN = Path(__file__).resolve().parent / "golden" / "partition"


def test_checked_in_samples_match_their_build_script() -> None:
    """Like a generated-code check in CI: the .tosa files are what the script builds today."""
    run = subprocess.run(
        [sys.executable, str(SAMPLES_DIR / "build_samples.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_partitions_as_documented(name: str) -> None:
    sample = SAMPLES[name]
    graph = vgfc.load(SAMPLES_DIR / sample.filename)
    plan = vgfc.partition(graph)
    assert tuple(p.kind.value for p in plan.partitions) == tuple(sample.partitions)
    assert len(plan.partitions) == _brute_force_minimum(graph)
    assert len(plan.partitions) <= len(sample.reference_segments)


def test_mixed_sample_beats_program_order() -> None:
    graph = vgfc.load(SAMPLES_DIR / "mixed.tosa")
    plan = vgfc.partition(graph)
    assert plan.program_order_count == 7
    assert len(plan.partitions) == 6
    clamp = next(op for op in graph.operators if op.op == "CLAMP")
    assert clamp.index in plan.partitions[0].operators


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_partition_json_golden(name: str) -> None:
    sample = SAMPLES[name]
    path = SAMPLES_DIR / sample.filename
    graph = vgfc.load(path)
    doc = partition_json(graph, vgfc.partition(graph))
    doc["model"] = f"samples/{sample.filename}"
    text = json.dumps(doc, indent=2) + "\n"
    golden = GOLDEN / f"{name}.json"
    if os.environ.get("VGFC_UPDATE_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"{golden} is missing: run with VGFC_UPDATE_GOLDENS=1"
    assert text == golden.read_text()
