"""`vgfc partition`: table, JSON (checked against its schema) and DOT (rendered by Graphviz)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from attrs_graphs import payload
from tosa_factory import Op, T, build, custom

from vgfc.schema import load_schema


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """ML -> shader -> ML, with an independent ML op after the shader in program order."""
    data = build(
        [T("x"), T("a"), T("b"), T("c"), T("y")],
        [
            Op("ABS", ["x"], ["a"]),
            custom(["a"], ["b"], "double", attrs=payload()),
            Op("FLOOR", ["x"], ["c"]),
            Op("ADD", ["b", "c"], ["y"]),
        ],
        ["x"],
        ["y"],
    )
    path = tmp_path / "m.tosa"
    path.write_bytes(data)
    return path


def test_table_lists_partitions_and_reasons(cli, model: Path) -> None:
    run = cli("partition", str(model))
    assert run.code == 0, run.err
    assert "TOSA 1.0.0" in run.out
    assert "CUSTOM 'double'" in run.out
    assert "ABS, FLOOR" in run.out  # the independent op joined the first partition
    assert "partition 2: #3 ADD reads 'b' from shader partition 1" in run.out
    assert "3 partitions (2 ML, 1 shader)" in run.out


def test_json_follows_its_schema(cli, model: Path) -> None:
    run = cli("partition", str(model), "--json")
    assert run.code == 0, run.err
    doc = json.loads(run.out)
    jsonschema.validate(doc, load_schema("partition.schema.json"))
    assert [p["kind"] for p in doc["partitions"]] == ["ml", "shader", "ml"]
    assert [p["operators"] for p in doc["partitions"]] == [[0, 2], [1], [3]]
    assert doc["partitions"][1]["ops"] == [
        {"index": 1, "op": "CUSTOM", "name": "double", "domain": "com.arm.VulkanCustomShader"}
    ]
    assert doc["summary"] == {
        "partitions": 3,
        "ml": 2,
        "shader": 1,
        "operators": 4,
        "program_order_partitions": 3,
    }


def test_schema_rejects_what_it_should() -> None:
    """The schema is strict enough to document the format: missing keys are errors."""
    schema = load_schema("partition.schema.json")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"format": "vgfc.partition/1", "partitions": []}, schema)


def test_dot_renders_with_graphviz(cli, model: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.dot"
    run = cli("partition", str(model), "--dot", "-o", str(out))
    assert run.code == 0, run.err
    text = out.read_text()
    assert text.count("subgraph cluster_p") == 3
    assert 'label="partition 1: shader"' in text
    assert "op1 [label=\"#1 CUSTOM 'double'\", shape=box3d]" in text
    assert 'op1 -> op3 [label="b"]' in text  # crossing edges carry the tensor name
    assert "op0 -> op1" in text
    dot = shutil.which("dot")
    assert dot, "Graphviz 'dot' is missing: make test installs the graphviz package"
    svg = subprocess.run([dot, "-Tsvg", str(out)], capture_output=True, check=True).stdout
    assert b"<svg" in svg and b"partition 1: shader" in svg


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json", "--dot"], "--json and --dot are exclusive"),
        (["-o", "x.txt"], "-o/--output needs --json or --dot"),
    ],
)
def test_usage_errors_exit_2(cli, model: Path, args: list[str], message: str) -> None:
    run = cli("partition", str(model), *args)
    assert run.code == 2
    assert message in run.err


def test_missing_file_is_an_error_naming_it(cli, tmp_path: Path) -> None:
    run = cli("partition", str(tmp_path / "nope.tosa"))
    assert run.code == 1
    assert run.err == f"{tmp_path / 'nope.tosa'}: error: cannot read the model: no such file\n"


def test_help_explains_the_rule(cli) -> None:
    run = cli("partition", "--help")
    assert "earliest ML" in run.out and "--dot" in run.out


def test_unwritable_output_is_an_input_error(vgfc_exe, model: Path, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "p.json"
    run = vgfc_exe("partition", str(model), "--json", "-o", str(target))
    assert run.code == 1
    assert run.err.strip() == (
        f"{target}: error: cannot write output file: the folder {target.parent} does not exist "
        "(vgfc creates a folder only for -d OUTDIR)"
    )


def test_internal_errors_exit_3_without_traceback(cli, model: Path, monkeypatch) -> None:
    """An unexpected exception is reported as a bug, in one line and a hint, exit code 3."""
    import sys

    def broken(graph: object, order: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(sys.modules["vgfc.partition"], "partition", broken)
    run = cli("partition", str(model))
    assert run.code == 3
    assert run.err.startswith("internal error: RuntimeError: boom")
    assert "--debug" in run.err and "Traceback" not in run.err


def test_debug_shows_the_traceback(cli, model: Path, monkeypatch) -> None:
    import sys

    def broken(graph: object, order: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(sys.modules["vgfc.partition"], "partition", broken)
    with pytest.raises(RuntimeError, match="boom"):
        cli("--debug", "partition", str(model))


def test_package_functions_patch_and_restore_like_plain_attributes() -> None:
    """vgfc loads its API on first use; partition and verify (also submodule names) still
    behave as attributes: patched, restored, listed, and never the submodule."""
    from unittest import mock

    import vgfc
    import vgfc.partition
    import vgfc.verify

    original = vgfc.partition
    assert callable(original) and original.__module__ == "vgfc.partition"
    with mock.patch("vgfc.partition", lambda graph: "patched"):
        assert vgfc.partition(None) == "patched"
    assert vgfc.partition is original
    with mock.patch.object(vgfc, "verify", lambda graph: "v"):
        assert vgfc.verify(None) == "v"
    assert vgfc.verify.__module__ == "vgfc.verify"
    assert {"partition", "verify", "load", "loads", "Graph", "Plan"} <= set(dir(vgfc))
