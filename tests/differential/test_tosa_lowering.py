"""Graph lowering against the reference converter (model-converter 0.11): each one-op model of
the catalogue (every TOSA.001000.1 instruction, the base-profile element types, every attribute
enum value, ``tosa_catalogue``) and every real model is converted by both; both modules are
reduced to a structural form (ids replaced by what they define) that must be equal, and so must
the graph constants' bytes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import vgfpy
from needs import missing
from paths import DATA
from reference_tools import run_reference
from tosa_catalogue import CASE_IDS, CASES, Case, lower_model, structure

from vgfc.lower.graph import GraphModule
from vgfc.spirv.spirv_tools import validate

REAL = DATA / "real"


def _tool(name: str, distribution: str) -> str | None:
    """A command-line tool of a test dependency: next to Python, on PATH, or in its package."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    if found := shutil.which(name):
        return found
    try:
        files = metadata.distribution(distribution).files or ()
    except metadata.PackageNotFoundError:
        return None
    return next((str(f.locate()) for f in files if f.name == name and "bin" in f.parts), None)


@dataclass(frozen=True)
class Reference:
    """What the reference converter wrote: SPIR-V modules by name, constants by graph id."""

    modules: dict[str, bytes]
    constants: dict[int, bytes]


def read_vgf(path: Path) -> Reference:
    data = path.read_bytes()
    header = vgfpy.CreateHeaderDecoder(data, vgfpy.HeaderSize(), len(data))

    def section(offset: int, size: int) -> bytes:
        return data[offset : offset + size]

    raw = section(header.GetModuleTableOffset(), header.GetModuleTableSize())
    table = vgfpy.CreateModuleTableDecoder(raw, len(raw))
    modules = {
        table.getModuleName(i): bytes(table.getSPIRVModuleCode(i))
        for i in range(table.size())
        if table.hasSPIRVCode(i)
    }
    raw = section(header.GetConstantsOffset(), header.GetConstantsSize())
    decoder = vgfpy.CreateConstantDecoder(raw, len(raw))
    values = [bytes(decoder.getConstant(i)) for i in range(decoder.size())]
    raw = section(header.GetModelSequenceTableOffset(), header.GetModelSequenceTableSize())
    sequence = vgfpy.CreateModelSequenceTableDecoder(raw, len(raw))
    constants = {
        b.graphConstantId: values[b.constantIndex]
        for s in range(sequence.modelSequenceTableSize())
        for b in sequence.getSegmentConstantBindings(s)
    }
    return Reference(modules, constants)


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, bytes], Reference]:
    """``(name, model bytes) -> Reference``; the catalogue is converted up front, in parallel."""
    program = _tool("model-converter", "ai-ml-sdk-model-converter")
    if program is None:
        missing("the reference converter (model-converter) is not installed")
    folder = tmp_path_factory.mktemp("reference")

    def convert(name: str, model: bytes) -> Reference | str:
        source, out = folder / f"{name}.tosa", folder / f"{name}.vgf"
        source.write_bytes(model)
        code, output = run_reference(source, out)
        if code:
            return f"model-converter failed on {name}: {output[-1500:]}"
        return read_vgf(out)

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        models = [c.model() for c in CASES]
        done = dict(zip(CASE_IDS, pool.map(convert, CASE_IDS, models), strict=True))

    def get(name: str, model: bytes) -> Reference:
        result = done[name] if name in done else convert(name, model)
        if isinstance(result, str):
            pytest.fail(result)
        return result

    return get


def _by_content(value: Any, digests: dict[str, str]) -> Any:
    """``value`` (a :func:`structure` part) with each graph constant's id replaced by a digest
    of its data: the converters may number the same constants in another order (the reference
    lists the ones its folding made first)."""
    if isinstance(value, list):
        return [_by_content(v, digests) for v in value]
    if not isinstance(value, tuple):
        return value
    if value and value[0] == "OpGraphConstantARM":
        return (*(_by_content(v, digests) for v in value[:-1]), digests[value[-1]])
    return tuple(_by_content(v, digests) for v in value)


def assert_matches_reference(ours: GraphModule, theirs: Reference) -> None:
    assert ours.name in theirs.modules, f"the reference has no module {ours.name}"
    mine = {c.id: c.data for c in ours.constants}
    digest = {str(i): hashlib.sha256(d).hexdigest() for i, d in mine.items()}
    their_digest = {str(i): hashlib.sha256(d).hexdigest() for i, d in theirs.constants.items()}
    expected = structure(theirs.modules[ours.name])
    got = structure(ours.spirv)
    for key in expected:
        want = _by_content(expected[key], their_digest)
        assert _by_content(got[key], digest) == want, f"{key} differs from the reference's"
    assert sorted(digest.values()) == sorted(their_digest.values())


@pytest.mark.slow  # converting the catalogue takes the reference converter ~20 s on two cores
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_matches_reference_converter(
    case: Case, reference: Callable[[str, bytes], Reference]
) -> None:
    _, (module,) = lower_model(case.model())
    assert_matches_reference(module, reference(case.name, case.model()))


REAL_MODELS = sorted(
    p.relative_to(REAL).as_posix()
    for p in REAL.rglob("*.tosa")
    if p.name != "hey_jarvis.tosa"  # stateful: see test_stateful_model_is_refused
    # TFLite custom ops, which the reference converter cannot legalize: see
    # tests/e2e/test_mediapipe_networks.py.
    and p.parent.name != "mediapipe"
)


@pytest.mark.slow
@pytest.mark.parametrize("model", REAL_MODELS)
def test_real_model_matches_reference_converter(
    model: str, reference: Callable[[str, bytes], Reference]
) -> None:
    data = (REAL / model).read_bytes()
    _, modules = lower_model(data, passes=True)
    assert len(modules) == 1
    validate(modules[0].spirv, "vulkan1.3")
    assert_matches_reference(modules[0], reference(model.replace("/", "_"), data))
