"""The bundled samples: up to date with their build script, and partitioned as documented (the
`vgfc partition --json` output of each is a golden file: ``tests/golden/test_partition.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from partition_checks import brute_force_minimum
from paths import GOLDEN
from samples_module import SAMPLES_DIR, load_samples_module

import vgfc

SAMPLES = load_samples_module().SAMPLES
GOLDEN = GOLDEN / "partition"


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
    assert len(plan.partitions) == brute_force_minimum(graph)
    assert len(plan.partitions) <= len(sample.reference_segments)


def test_mixed_sample_beats_program_order() -> None:
    graph = vgfc.load(SAMPLES_DIR / "mixed.tosa")
    plan = vgfc.partition(graph)
    assert plan.program_order_count == 7
    assert len(plan.partitions) == 6
    clamp = next(op for op in graph.operators if op.op == "CLAMP")
    assert clamp.index in plan.partitions[0].operators
