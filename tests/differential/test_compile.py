"""vgfc's VGF of every bundled sample against independent tools: the VGF library's ``vgf_dump``
reads it, every module passes ``spirv-val``, and its structure matches the reference converter's
(model-converter 0.11) except where vgfc is better by design; ``vgfc inspect`` reads the reference
converter's files too and ``--diff`` names each difference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from reference_tools import reference_convert, vgf_dump
from samples_module import SAMPLES_DIR, load_samples_module

from vgfc.compiler import compile_model
from vgfc.spirv.spirv_tools import validate
from vgfc.vgf.decode import decode, read_vgf
from vgfc.vgf.model import Model

SAMPLES = load_samples_module().SAMPLES
NAMES = sorted(SAMPLES)


def structure(f: Model) -> dict[str, Any]:
    """What must agree with the reference: segment kinds and order, resources (category,
    descriptor type, format, shape, alias group), descriptor sets and segment I/O slots."""
    return {
        "segments": [
            {
                "type": s.type.name,
                "sets": [
                    (d.set, [(b.binding, b.resource) for b in d.slots]) for d in s.descriptor_sets
                ],
                "inputs": [(b.binding, b.resource) for b in s.inputs],
                "outputs": [(b.binding, b.resource) for b in s.outputs],
                "dispatch": s.dispatch,
            }
            for s in f.segments
        ],
        "resources": [
            (r.category, r.descriptor_type, r.format, r.shape, r.alias_group, r.sampler)
            for r in f.resources
        ],
        "inputs": [(s.binding, s.resource) for s in f.inputs],
        "outputs": [(s.binding, s.resource) for s in f.outputs],
    }


class Compiled:
    """Samples compiled by vgfc and by the reference converter, on first use."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.cache: dict[str, tuple[Path, Path]] = {}

    def __getitem__(self, name: str) -> tuple[Path, Path]:
        if name not in self.cache:
            model = SAMPLES_DIR / SAMPLES[name].filename
            mine = self.out / f"{name}.vgfc.vgf"
            mine.write_bytes(compile_model(model).vgf)
            self.cache[name] = (mine, reference_convert(model, self.out / f"{name}.ref.vgf"))
        return self.cache[name]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Compiled:
    return Compiled(tmp_path_factory.mktemp("vgf"))


@pytest.mark.parametrize("name", NAMES)
def test_vgf_dump_reads_every_output(compiled, name: str, tmp_path: Path) -> None:
    mine, _ = compiled[name]
    dumped = json.loads(vgf_dump(mine, tmp_path / "d.json").read_text())
    assert len(dumped["modules"]) == len(read_vgf(mine).modules)
    assert all(m["shader_code_available"] for m in dumped["modules"])


@pytest.mark.parametrize("name", NAMES)
def test_every_module_validates(compiled, name: str) -> None:
    mine, _ = compiled[name]
    data = mine.read_bytes()
    f = decode(data)
    for m in f.modules:
        assert m.code == "SPIR-V" and m.spirv is not None
        validate(m.spirv, "vulkan1.3")


@pytest.mark.parametrize("name", NAMES)
def test_structure_matches_the_reference_converter(compiled, name: str) -> None:
    """Equal except where vgfc is better by design: fewer segments (mixed), SPIR-V instead of
    source, push-constant ranges, operator names and complete bindings for duplicated inputs."""
    mine, ref = (read_vgf(p) for p in compiled[name])
    if name == "mixed":
        assert len(mine.segments) == 6 and len(ref.segments) == 7
        return
    a, b = structure(mine), structure(ref)
    if name == "dup":
        # The reference drops one of the two bindings of custom(t, t); vgfc keeps both.
        (ref_set,) = b["segments"][1]["sets"]
        (my_set,) = a["segments"][1]["sets"]
        assert [x[0] for x in ref_set[1]] == [0, 2] and [x[0] for x in my_set[1]] == [0, 1, 2]
        a["segments"][1]["sets"] = b["segments"][1]["sets"]
    assert a == b
    assert [m.type for m in mine.modules] == [m.type for m in ref.modules]
    shaders = [m for m in mine.modules if m.type.name == "COMPUTE"]
    assert all(not m.name.startswith("graph_partition_") for m in shaders)  # operator names kept


def test_push_constant_ranges_are_written(compiled) -> None:
    mine, ref = (read_vgf(p) for p in compiled["push"])
    compute = [s for s in mine.segments if s.type.name == "COMPUTE"]
    assert [(r.stage_flags, r.offset, r.size) for r in compute[0].push_constant_ranges] == [
        (0x20, 0, 8)
    ]
    assert all(not s.push_constant_ranges for s in ref.segments)  # the reference writes none


def test_output_names_are_the_graph_tensor_names(compiled) -> None:
    mine = read_vgf(compiled["image"][0])
    assert [x.name for x in mine.inputs] == ["input-0"]
    assert [x.name for x in mine.outputs] == ["result-0", "result-1"]


def test_inspect_reads_reference_files_too(cli, compiled) -> None:
    _, ref = compiled["simple"]
    run = cli("inspect", str(ref))
    assert run.code == 0, run.err
    assert "graph_partition_1" in run.out and "GLSL" in run.out
    doc = json.loads(cli("inspect", str(ref), "--json").out)
    assert [s["type"] for s in doc["segments"]] == ["GRAPH", "COMPUTE", "GRAPH"]


def test_inspect_diff(cli, compiled) -> None:
    mine, ref = compiled["dup"]
    run = cli("inspect", str(mine), "--diff", str(ref))
    assert run.code == 1
    assert "input names: input-0 != input_0" in run.out
    assert "['" not in run.out and "None" not in run.out  # no Python reprs
    assert run.out.strip().endswith(f"4 difference(s) between {mine} and {ref}")
    same = cli("inspect", str(mine), "--diff", str(mine))
    assert same.code == 0 and "0 difference(s)" in same.out
