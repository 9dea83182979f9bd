"""`vgfc compile` and `vgfc inspect`: the VGF is read by the official tools, matches the reference
converter's structure except where vgfc is better by design, and is written deterministically and
atomically."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from reference_tools import reference_convert, vgf_dump
from samples_module import SAMPLES_DIR, load_samples_module
from test_check import attrs as shader_attrs

from vgfc.compiler import compile_model
from vgfc.schema import load_schema
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


@pytest.mark.parametrize("name", ["mixed", "image", "sets"])
def test_compiling_twice_gives_the_same_bytes(cli, tmp_path: Path, name: str) -> None:
    model = SAMPLES_DIR / SAMPLES[name].filename
    a, b = tmp_path / "a.vgf", tmp_path / "b.vgf"
    assert cli("compile", str(model), "-o", str(a), "-q").code == 0
    assert cli("compile", str(model), "-o", str(b), "-q").code == 0
    assert a.read_bytes() == b.read_bytes()


def test_failing_compile_writes_nothing_and_keeps_the_old_file(cli, tmp_path: Path) -> None:
    from tosa_factory import T, build, custom

    bad = tmp_path / "bad.tosa"
    # A storage-buffer copy shader, as in the check tests, with a syntax error.
    attrs = shader_attrs("#version 450\nvoid main() { oops }\n")
    bad.write_bytes(build([T("x"), T("y")], [custom(["x"], ["y"], attrs=attrs)], ["x"], ["y"]))
    out, report = tmp_path / "out.vgf", tmp_path / "r.json"
    run = cli("compile", str(bad), "-o", str(out), "--report", str(report))
    assert run.code == 1 and "GLSL compilation failed" in run.err
    assert not out.exists() and not report.exists()

    out.write_bytes(b"previous")
    assert cli("compile", str(bad), "-o", str(out)).code == 1
    assert out.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tosa", "out.vgf"]


def test_report_follows_its_schema(cli, tmp_path: Path) -> None:
    out, report = tmp_path / "m.vgf", tmp_path / "r.json"
    run = cli("compile", str(SAMPLES_DIR / "mixed.tosa"), "-o", str(out), "--report", str(report))
    assert run.code == 0, run.err
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, load_schema("report.schema.json"))
    jsonschema.validate(doc["vgf"], load_schema("vgf.schema.json"))
    assert doc["vgf_bytes"] == out.stat().st_size
    kinds = [s["type"] for s in doc["vgf"]["segments"]]
    assert kinds == ["GRAPH", "COMPUTE", "GRAPH", "COMPUTE", "COMPUTE", "GRAPH"]
    assert [s["partition"] for s in doc["vgf"]["segments"]] == list(range(6))
    assert all("tensor" in r for r in doc["vgf"]["resources"])
    assert set(doc["timings"]) == {
        "read",
        "verify",
        "resolve",
        "partition",
        "lower",
        "layout",
        "encode",
    }
    # The report's VGF section is `vgfc inspect --json` of the file, plus provenance.
    inspected = json.loads(cli("inspect", str(out), "--json").out)
    jsonschema.validate(inspected, load_schema("vgf.schema.json"))
    for s in doc["vgf"]["segments"]:
        del s["partition"]
    for r in doc["vgf"]["resources"]:
        del r["tensor"]
    assert doc["vgf"] == inspected
    assert doc["bindings"]["input-0"] == 0
    assert {s["name"] for s in doc["shaders"]} == {"leaky_relu", "square", "channel_reverse"}


def test_keep_source_stores_the_shader_text(cli, tmp_path: Path) -> None:
    out = tmp_path / "m.vgf"
    assert (
        cli("compile", str(SAMPLES_DIR / "chain.tosa"), "-o", str(out), "--keep-source", "-q").code
        == 0
    )
    f = read_vgf(out)
    assert [m.code for m in f.modules] == ["GLSL", "GLSL"]
    assert "#version 450" in str(f.modules[0].source)


def test_default_output_is_next_to_the_model(cli, tmp_path: Path) -> None:
    model = tmp_path / "chain.tosa"
    model.write_bytes((SAMPLES_DIR / "chain.tosa").read_bytes())
    run = cli("compile", str(model))
    assert run.code == 0, run.err
    assert (tmp_path / "chain.vgf").exists()
    assert "2 segments" in run.out


def test_inspect_reads_reference_files_too(cli, compiled) -> None:
    _, ref = compiled["simple"]
    run = cli("inspect", str(ref))
    assert run.code == 0, run.err
    assert "graph_partition_1" in run.out and "GLSL" in run.out
    doc = json.loads(cli("inspect", str(ref), "--json").out)
    assert [s["type"] for s in doc["segments"]] == ["GRAPH", "COMPUTE", "GRAPH"]


@pytest.mark.parametrize("name", ["chain", "image", "dup", "mixed"])
def test_inspect_golden(cli, compiled, name: str) -> None:
    import os

    mine, _ = compiled[name]
    text = cli("inspect", str(mine), "--json").out
    golden = Path(__file__).resolve().parent / "golden" / "inspect" / f"{name}.json"
    if os.environ.get("VGFC_UPDATE_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"{golden} is missing: run with VGFC_UPDATE_GOLDENS=1"
    assert text == golden.read_text()


def test_inspect_rejects_a_non_vgf_file(cli, tmp_path: Path) -> None:
    bad = tmp_path / "x.vgf"
    bad.write_bytes(b"not a vgf file at all" * 10)
    run = cli("inspect", str(bad))
    assert run.code == 1
    assert run.err.startswith(f"error: {bad}: ")


def test_inspect_diff(cli, compiled) -> None:
    mine, ref = compiled["dup"]
    run = cli("inspect", str(mine), "--diff", str(ref))
    assert run.code == 1
    assert "input names: ['input-0'] != ['input_0']" in run.out
    assert run.out.strip().endswith(f"4 difference(s) between {mine} and {ref}")
    same = cli("inspect", str(mine), "--diff", str(mine))
    assert same.code == 0 and "0 difference(s)" in same.out


def test_a_long_summary_is_cut_with_the_count_of_the_rest(cli, tmp_path: Path) -> None:
    """21 shader ops between 21 ML ops: 42 segments, of which the table shows the first 40."""
    from tosa_factory import Op, T, build, custom

    from vgfc.cli.compile import SUMMARY_ROWS

    names = [f"t{i}" for i in range(43)]
    ops = []
    for i in range(42):
        src, dst = [names[i]], [names[i + 1]]
        shader = custom(src, dst, "copy", attrs=shader_attrs())
        ops.append(shader if i % 2 == 0 else Op("ABS", src, dst))
    model = tmp_path / "long.tosa"
    tensors = [T(n, (1, 64)) for n in names]
    model.write_bytes(build(tensors, ops, [names[0]], [names[-1]]))
    out = tmp_path / "long.vgf"
    run = cli("compile", str(model), "-o", str(out))
    assert run.code == 0, run.err
    assert SUMMARY_ROWS == 40
    # Off a terminal the table is plain text: a line per row under the header.
    table_rows = [line for line in run.out.splitlines() if re.match(r"\d+ +(graph|compute) ", line)]
    assert len(table_rows) == 40
    assert f"... and 2 more segments: vgfc inspect {out} lists them all" in run.out
    assert "42 segments" in run.out
