"""The fuzzer's regression corpus, and the pieces of the fuzzer itself.

Every file in ``tests/data/fuzz/`` is a minimised input that once broke the invariant of
``tests/fuzz/invariant.py`` (``vgfc check`` and ``vgfc compile`` succeed with a VGF that decodes
and validates, or fail with short messages that name the file and agree; the fuzzer also holds
them to a deadline, which the test leaves out: it asserts behaviour, never time). Each
is named after what it tests. Findings not fixed yet are listed in ``KNOWN`` and xfail strictly,
so the suite stays green and says so when a fix lands: then delete the entry.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest
from paths import FUZZ, ROOT

sys.path.insert(0, str(FUZZ))  # the fuzzer's modules import each other as plain modules

import invariant
import mutator
import tosa_tree

from vgfc.compiler import Options, compile_model
from vgfc.diagnostics import VgfcError
from vgfc.read.reader import loads
from vgfc.shader.glslang import CompileOptions

CORPUS = ROOT / "tests" / "data" / "fuzz"
SAMPLES = sorted((ROOT / "samples").glob("*.tosa"))

KNOWN: dict[str, tuple[type[BaseException], str]] = {}
"""Corpus files vgfc does not handle yet: file name -> (what it raises now, what is wrong)."""
SLOW = {"glsl-macro-expansion-exceeds-timeout.tosa"}
"""Files that take the shader timeout to fail, twice (check, then compile)."""
SLOW_SHADER_TIMEOUT = 1.0
"""The shader timeout (seconds) those files run under here."""


def _corpus() -> list[object]:
    params = []
    for path in sorted(CORPUS.glob("*.tosa")):
        marks: list[pytest.MarkDecorator] = []
        if path.name in KNOWN:
            raises, reason = KNOWN[path.name]
            marks.append(pytest.mark.xfail(strict=True, raises=raises, reason=reason))
        if path.name in SLOW:
            marks.append(pytest.mark.slow)
        params.append(pytest.param(path, id=path.stem, marks=marks))
    return params


@pytest.mark.parametrize("path", _corpus())
def test_corpus_file_keeps_the_invariant(path: Path, tmp_path: Path) -> None:
    # A copy with a plain name: the messages must name the file as it was given.
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    # No deadline here: the fuzzer's (invariant.DEADLINE_S) finds what is slow on a quiet
    # machine; a test holds the behaviour, which a loaded one must not fail. A shader bomb meets
    # a shorter shader timeout than the default 5 s: the behaviour is the same, twice as fast.
    options = None
    if path.name in SLOW:
        options = Options(shader=CompileOptions(timeout=SLOW_SHADER_TIMEOUT))
    invariant.run(copy, deadline_s=math.inf, options=options)


def test_known_findings_are_in_the_corpus() -> None:
    assert sorted((set(KNOWN) | SLOW) - {p.name for p in CORPUS.glob("*.tosa")}) == []


def test_corpus_is_what_corpus_cases_builds() -> None:
    """The files are checked in; tests/fuzz/corpus_cases.py says how each was made."""
    import corpus_cases

    built = {f"{stem}.tosa": make() for stem, make in corpus_cases.CASES.items()}
    assert {p.name: p.read_bytes() for p in CORPUS.glob("*.tosa")} == built


def test_corpus_files_are_small() -> None:
    sizes = {p.name: p.stat().st_size for p in CORPUS.glob("*.tosa")}
    assert sizes, "the regression corpus is empty"
    assert {name: size for name, size in sizes.items() if size > 64 * 1024} == {}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_tree_round_trip_compiles_to_the_same_vgf(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    tree = tosa_tree.decode(data)
    again = tosa_tree.encode(tree)
    assert tosa_tree.decode(again) == tree
    copy = tmp_path / path.name
    copy.write_bytes(again)
    assert compile_model(copy).vgf == compile_model(path).vgf


def test_tree_keeps_absent_fields_absent() -> None:
    tree = tosa_tree.decode(SAMPLES[0].read_bytes())
    tensor = tree["regions"][0]["blocks"][0]["tensors"][0]
    assert "variable_name" not in tensor
    assert "scale_data" not in tensor


def test_tree_refuses_other_identifiers() -> None:
    data = bytearray(SAMPLES[0].read_bytes())
    data[4:8] = b"ONNX"
    with pytest.raises(ValueError, match="not a TOSA flatbuffer"):
        tosa_tree.decode(bytes(data))


def test_mutator_is_deterministic_per_seed() -> None:
    data = (ROOT / "samples" / "mixed.tosa").read_bytes()
    assert mutator.mutate(data, 1 << 20, 1234) == mutator.mutate(data, 1 << 20, 1234)


def test_mutants_mostly_get_past_the_reader() -> None:
    """Structure-aware mutants keep the identifier and decode; that is the point of the mutator."""
    rng = random.Random(7)
    seeds = [p.read_bytes() for p in SAMPLES]
    read = identified = 0
    n = 300
    for _ in range(n):
        data = mutator.mutate(rng.choice(seeds), 1 << 20, rng.randrange(2**32))
        identified += data[4:8] == b"TOSA"
        try:
            loads(data, "mutant.tosa")
        except VgfcError:
            continue
        read += 1
    assert identified > 0.9 * n
    assert read > 0.5 * n


def test_each_mutation_changes_the_model() -> None:
    data = (ROOT / "samples" / "mixed.tosa").read_bytes()
    tree = tosa_tree.decode(data)
    for weight, fn in mutator.MUTATIONS:
        assert weight > 0
        changed = 0
        for seed in range(20):
            candidate = tosa_tree.decode(data)
            if fn(candidate, random.Random(seed)) and candidate != tree:
                changed += 1
        assert changed >= 10, fn.__name__


def test_crossover_takes_an_operator_from_the_second_model() -> None:
    a = (ROOT / "samples" / "simple.tosa").read_bytes()
    b = (ROOT / "samples" / "int8.tosa").read_bytes()
    ops = len(tosa_tree.decode(a)["regions"][0]["blocks"][0]["operators"])
    grew = 0
    for seed in range(10):
        out = tosa_tree.decode(mutator.crossover(a, b, 1 << 20, seed))
        grew += len(out["regions"][0]["blocks"][0]["operators"]) == ops + 1
    assert grew > 0


def test_invariant_names_what_broke(tmp_path: Path) -> None:
    path = str(tmp_path / "m.tosa")
    try:
        invariant._message("x" * (invariant.MAX_MESSAGE + 1), path, "check error")
    except invariant.Violation as e:
        assert e.kind == "long-message"
    else:
        pytest.fail("a long message passed")
    with pytest.raises(invariant.Violation, match="message-without-file"):
        invariant._message("error without a file", path, "check error")
    invariant._message(f"{path}: op #1 ABS: bad", path, "check error")
