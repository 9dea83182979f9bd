"""``vgfc partition --json`` of every bundled sample, kept as golden files
(``tests/golden/partition/``; ``pytest --update-goldens`` rewrites them)."""

from __future__ import annotations

import json

import pytest
from paths import GOLDEN
from samples_module import SAMPLES_DIR, load_samples_module

import vgfc
from vgfc.report import partition_json

SAMPLES = load_samples_module().SAMPLES


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_partition_json_golden(golden, name: str) -> None:
    sample = SAMPLES[name]
    path = SAMPLES_DIR / sample.filename
    graph = vgfc.load(path)
    doc = partition_json(graph, vgfc.partition(graph))
    doc["model"] = f"samples/{sample.filename}"
    text = json.dumps(doc, indent=2) + "\n"
    golden.check(GOLDEN / "partition" / f"{name}.json", text)
