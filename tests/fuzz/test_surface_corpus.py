"""The regression corpus of the library and VGF fuzz targets (tests/data/fuzz/library/ and
tests/data/fuzz/vgf/, built by tests/fuzz/surface_cases.py): each file once crashed, hung or
was quietly accepted (issue 22); each now holds the invariant of tests/fuzz/surfaces.py, and
each is refused."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from paths import DATA, FUZZ

sys.path.insert(0, str(FUZZ))  # the fuzzer's modules import each other as plain modules

import surfaces

CORPUS = DATA / "fuzz"


NOT_REFUSED = {
    "compose-chain-1500-ops-recursion": "loaded, 0 kernel errors, compiled",
    # An expression over the op's shapes: wrong for any model, found by `vgfc kernels` (with
    # the entry's example shapes) and by a compile.
    "round-huge-digits-in-define-hangs": "loaded, 1 kernel errors, compile failed",
    "round-huge-digits-in-dispatch-hangs": "loaded, 1 kernel errors, compile failed",
}
"""Corpus libraries that load: what becomes of them instead."""


@pytest.mark.parametrize("path", sorted((CORPUS / "library").glob("*.yaml")), ids=lambda p: p.stem)
def test_library_corpus_file_fails_cleanly(path: Path, tmp_path: Path) -> None:
    folder = surfaces.library_folder(tmp_path / "lib")
    copy = folder / path.name
    shutil.copyfile(path, copy)
    assert surfaces.run_library(copy) == NOT_REFUSED.get(path.stem, "refused")


@pytest.mark.parametrize("path", sorted((CORPUS / "vgf").glob("*.vgf")), ids=lambda p: p.stem)
def test_vgf_corpus_file_is_refused_cleanly(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    assert surfaces.run_vgf(copy) == "refused"


def test_the_corpus_is_what_the_builder_writes() -> None:
    import surface_cases

    assert sorted(p.stem for p in (CORPUS / "library").glob("*.yaml")) == sorted(
        surface_cases.LIBRARIES
    )
    assert sorted(p.stem for p in (CORPUS / "vgf").glob("*.vgf")) == sorted(surface_cases.VGFS)
    for stem, make in surface_cases.LIBRARIES.items():
        assert (CORPUS / "library" / f"{stem}.yaml").read_text() == make(), stem


def test_the_mutators_make_files_of_their_kind() -> None:
    import random

    rng = random.Random(7)
    seed = surfaces.LIBRARY_SEEDS[0].read_bytes()
    mutants = {surfaces.mutate_library(seed, 1 << 20, rng.randrange(1 << 30)) for _ in range(50)}
    assert len(mutants) > 40 and all(len(m) <= 1 << 20 for m in mutants)
    vgf = (CORPUS / "vgf" / "truncated-by-one-byte.vgf").read_bytes()
    mutants = {surfaces.mutate_vgf(vgf, 1 << 20, rng.randrange(1 << 30)) for _ in range(50)}
    assert len(mutants) > 40
