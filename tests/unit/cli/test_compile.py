"""`vgfc compile` and `vgfc inspect` as commands: the VGF is written deterministically and
atomically, with a report that follows its schema; inspect refuses what is not a VGF. The VGF
against the official tools and the reference converter is in ``tests/differential/test_compile.py``,
the inspect goldens in ``tests/golden/test_inspect.py``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from samples_module import SAMPLES_DIR, load_samples_module
from shader_models import attrs as shader_attrs

from vgfc.schema import load_schema
from vgfc.vgf.decode import read_vgf

SAMPLES = load_samples_module().SAMPLES
NAMES = sorted(SAMPLES)


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
        "passes",
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


def test_inspect_rejects_a_non_vgf_file(cli, tmp_path: Path) -> None:
    bad = tmp_path / "x.vgf"
    bad.write_bytes(b"not a vgf file at all" * 10)
    run = cli("inspect", str(bad))
    assert run.code == 1
    assert run.err.startswith(f"{bad}: error: ")


def test_a_long_summary_is_cut_with_the_count_of_the_rest(cli, tmp_path: Path) -> None:
    """21 shader ops between 21 ML ops: 42 segments, of which the table shows the first 40."""
    from tosa_factory import Op, T, build, custom

    from vgfc.cli.compiling import SUMMARY_ROWS

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
