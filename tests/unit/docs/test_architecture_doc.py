"""docs/architecture.md is true: every path it names exists, each stage's paragraph names the
folder or module that holds the stage, and the spine's stages are the ones it describes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vgfc.compiler import STAGES
from vgfc.passes import PASSES

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PATHS = sorted(set(re.findall(r"`?((?:vgfc|tests|scripts|schemas|samples)/[\w./-]*\w/?)`?", DOC)))


def test_the_doc_names_paths() -> None:
    assert len(PATHS) > 20


@pytest.mark.parametrize("path", PATHS)
def test_every_path_it_names_exists(path: str) -> None:
    assert (ROOT / path).exists(), f"docs/architecture.md names {path}, which does not exist"


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_has_a_paragraph_naming_its_home(stage: str) -> None:
    paragraphs = [p for p in DOC.split("\n\n") if re.match(rf"\*\*(\w+ and )?{stage}\*\*", p)]
    if not paragraphs:  # "**layout** and **encode**"
        paragraphs = [p for p in DOC.split("\n\n") if f"**{stage}**" in p.split("\n")[0]]
    assert paragraphs, f"no paragraph starts with **{stage}**"
    assert re.search(r"`vgfc/[\w/]+(\.py|/)`", paragraphs[0]), paragraphs[0][:80]


def test_the_pipeline_in_the_doc_is_the_spines() -> None:
    drawn = re.findall(r"--(\w+)-->", DOC)
    assert tuple(drawn) == STAGES


def test_the_passes_in_the_doc_are_the_stages() -> None:
    """The pass stage's numbered list names every pass of ``PASSES``, in its order, and says
    which must run under -O0."""
    (paragraph,) = [p for p in DOC.split("\n## ") if "**passes**" in p]
    listed = re.findall(r"^\d+\. `([\w-]+)`( \(required)?", paragraph, re.MULTILINE)
    assert [(name, bool(required)) for name, required in listed] == [
        (p.name, p.required) for p in PASSES
    ]
