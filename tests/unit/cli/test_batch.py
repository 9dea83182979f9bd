"""`vgfc compile A.tosa B.tosa ... -d OUTDIR [-j N]`: batch mode.

Many models in one run, each written atomically to OUTDIR/<stem>.vgf; failures reported with the
lines single-model compile prints and no file, the others still compiled; a summary (or a JSON
list) in the order of the models; the same bytes as single-model compile, in parallel too."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from paths import DATA
from samples_module import SAMPLES_DIR
from shader_models import attrs as shader_attrs
from tosa_factory import T, build, custom

from vgfc.schema import load_schema

SAMPLES = sorted(SAMPLES_DIR.glob("*.tosa"))
FACE = DATA / "real" / "tflite" / "face_detection_short_range.tosa"
STATEFUL = DATA / "real" / "tflite" / "hey_jarvis.tosa"
"""A real network vgfc refuses: it keeps state in variable tensors."""


@pytest.fixture
def bad(tmp_path: Path) -> dict[str, Path]:
    """Models that fail in different stages: a truncated flatbuffer (read) and a shader with a
    syntax error (lower)."""
    folder = tmp_path / "bad"
    folder.mkdir()
    truncated = folder / "truncated.tosa"
    truncated.write_bytes((SAMPLES_DIR / "mixed.tosa").read_bytes()[:300])
    shader = folder / "shader.tosa"
    attrs = shader_attrs("#version 450\nvoid main() { oops }\n")
    shader.write_bytes(build([T("x"), T("y")], [custom(["x"], ["y"], attrs=attrs)], ["x"], ["y"]))
    return {"truncated": truncated, "shader": shader}


def single_error(cli, model: Path, tmp_path: Path) -> str:
    """What single-model compile prints on stderr for ``model``."""
    run = cli("compile", str(model), "-o", str(tmp_path / "single.vgf"), "-q")
    assert run.code == 1, run.err
    assert not (tmp_path / "single.vgf").exists()
    return run.err


def test_many_models_each_to_its_stem(cli, tmp_path: Path) -> None:
    out = tmp_path / "out"  # created by the command
    models = [*SAMPLES, SAMPLES_DIR / "kernels" / "model.tosa", FACE]
    run = cli(
        "compile",
        *map(str, models),
        "-d",
        str(out),
        "--kernels",
        str(SAMPLES_DIR / "kernels" / "example_ops.yaml"),
    )
    assert run.code == 0, run.err
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{m.stem}.vgf" for m in models)
    assert run.err == ""  # not a terminal: no progress lines
    assert f"{len(models)} models: {len(models)} compiled;" in run.out


def test_failures_do_not_stop_the_others(cli, tmp_path: Path, bad: dict[str, Path]) -> None:
    out = tmp_path / "out"
    models = [bad["truncated"], SAMPLES_DIR / "chain.tosa", STATEFUL, bad["shader"], FACE]
    run = cli("compile", *map(str, models), "-d", str(out))
    assert run.code == 1
    assert sorted(p.name for p in out.iterdir()) == ["chain.vgf", "face_detection_short_range.vgf"]
    # Each failure prints what single-model compile prints, in the order of the models, and
    # each line names the model.
    failed = (bad["truncated"], STATEFUL, bad["shader"])
    expected = "".join(single_error(cli, m, tmp_path) for m in failed)
    expected_lines = [line for line in expected.splitlines() if ": error: " in line]
    assert [line for line in run.err.splitlines() if ": error: " in line] == expected_lines
    assert len(expected_lines) == 3
    for line, model in zip(
        expected_lines, (bad["truncated"], STATEFUL, bad["shader"]), strict=True
    ):
        assert line.startswith(f"{model}: error: ")
    assert "GLSL compilation failed" in run.err
    assert "5 models: 2 compiled, 3 failed;" in run.out


def test_a_failed_model_keeps_the_file_it_would_replace(
    cli, tmp_path: Path, bad: dict[str, Path]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "shader.vgf").write_bytes(b"previous")
    run = cli("compile", str(bad["shader"]), str(SAMPLES_DIR / "dup.tosa"), "-d", str(out))
    assert run.code == 1
    assert (out / "shader.vgf").read_bytes() == b"previous"
    assert sorted(p.name for p in out.iterdir()) == ["dup.vgf", "shader.vgf"]  # no temp files


def test_same_stem_is_a_usage_error_before_compiling(cli, tmp_path: Path) -> None:
    first, second = sorted((DATA / "real" / "conformance").glob("*/test.tosa"))[:2]
    out = tmp_path / "out"
    run = cli("compile", str(SAMPLES_DIR / "chain.tosa"), str(first), str(second), "-d", str(out))
    assert run.code == 2
    assert f"{first} and {second} would both be written to {out / 'test.vgf'}" in run.err
    assert not out.exists()  # nothing compiled, nothing written

    run = cli("compile", str(first), str(first), "-d", str(out))
    assert run.code == 2 and "the model is given twice" in run.err


def test_output_file_with_many_models_is_a_usage_error(cli, tmp_path: Path) -> None:
    out = tmp_path / "x.vgf"
    run = cli(
        "compile", str(SAMPLES_DIR / "chain.tosa"), str(SAMPLES_DIR / "dup.tosa"), "-o", str(out)
    )
    assert run.code == 2
    assert "-o/--output names one file, and 2 models were given" in run.err
    assert "use -d/--output-dir OUTDIR" in run.err
    assert not out.exists()

    run = cli("compile", str(SAMPLES_DIR / "chain.tosa"), "-o", str(out), "-d", str(tmp_path))
    assert run.code == 2 and "exclusive" in run.err


def test_one_model_with_an_output_dir(cli, tmp_path: Path) -> None:
    run = cli("compile", str(SAMPLES_DIR / "chain.tosa"), "-d", str(tmp_path / "out"))
    assert run.code == 0, run.err
    assert (tmp_path / "out" / "chain.vgf").exists()
    assert "1 model: 1 compiled;" in run.out


def compile_single(cli, model: Path, output: Path, *extra: str) -> bytes:
    run = cli("compile", str(model), "-o", str(output), "-q", *extra)
    assert run.code == 0, run.err
    return output.read_bytes()


@pytest.mark.parametrize("jobs", ["2", "0"])
def test_parallel_outputs_are_the_bytes_of_single_compiles(
    vgfc_exe, cli, tmp_path: Path, jobs: str
) -> None:
    kernels = ("--kernels", str(SAMPLES_DIR / "kernels" / "example_ops.yaml"))
    models = [*SAMPLES, SAMPLES_DIR / "kernels" / "model.tosa", FACE]
    out = tmp_path / "out"
    run = vgfc_exe("compile", *map(str, models), "-d", str(out), "-j", jobs, *kernels)
    assert run.code == 0, run.err
    for model in models:
        single = compile_single(cli, model, tmp_path / "single.vgf", *kernels)
        assert (out / f"{model.stem}.vgf").read_bytes() == single, model


def test_parallel_run_reports_in_input_order(
    vgfc_exe, tmp_path: Path, bad: dict[str, Path]
) -> None:
    models = [STATEFUL, *SAMPLES, bad["truncated"], FACE, bad["shader"]]
    out = tmp_path / "out"
    run = vgfc_exe("compile", *map(str, models), "-d", str(out), "-j", "3", "--json")
    assert run.code == 1
    doc = json.loads(run.out)
    assert [entry["model"] for entry in doc] == [str(m) for m in models]
    failed = [str(m) for m in (STATEFUL, bad["truncated"], bad["shader"])]
    assert [e["model"] for e in doc if not e["ok"]] == failed
    errors = [line for line in run.err.splitlines() if ": error: " in line]
    assert [line.split(": ")[0] for line in errors] == failed
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{m.stem}.vgf" for m in models if str(m) not in failed
    )


def test_summary_lists_every_model_in_order(
    cli, tmp_path: Path, bad: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # off a terminal, no path is shortened however narrow
    models = [SAMPLES_DIR / "mixed.tosa", bad["truncated"], SAMPLES_DIR / "chain.tosa"]
    out = tmp_path / "out"
    run = cli("compile", *map(str, models), "-d", str(out))
    assert run.code == 1
    for column in ("model", "result", "ops", "time", "output", "bytes"):
        assert column in run.out
    rows = [line.split() for line in run.out.splitlines() if ".tosa" in line]
    rows = [[cell for cell in row if cell not in "│┃"] for row in rows]
    assert [row[0] for row in rows] == [str(m) for m in models]
    mixed, truncated, chain = rows
    size = (out / "mixed.vgf").stat().st_size
    # 15 operators in the file, one a duplicate constant that the passes merge.
    assert mixed[1:3] == ["ok", "14"] and mixed[-2:] == [str(out / "mixed.vgf"), str(size)]
    assert truncated[1] == "failed" and str(out / "truncated.vgf") not in " ".join(truncated)
    assert chain[1:3] == ["ok", "2"]
    assert re.search(r"3 models: 2 compiled, 1 failed; [0-9.]+ m?s, in one process", run.out)


def test_json_lists_every_model(cli, tmp_path: Path, bad: dict[str, Path]) -> None:
    models = [SAMPLES_DIR / "mixed.tosa", bad["shader"], FACE]
    out = tmp_path / "out"
    run = cli("compile", *map(str, models), "-d", str(out), "--json", "--report")
    assert run.code == 1
    doc = json.loads(run.out)
    jsonschema.validate(doc, load_schema("compile.schema.json"))
    mixed, shader, face = doc
    assert mixed["ok"] and mixed["result"] == "ok" and mixed["errors"] == 0
    assert mixed["output"] == str(out / "mixed.vgf")
    assert mixed["report"] == str(out / "mixed.report.json")
    assert mixed["bytes"] == (out / "mixed.vgf").stat().st_size
    assert (mixed["operators"], mixed["segments"]) == (14, 6)  # a duplicate constant merged
    assert face["ok"] and face["segments"] == 1
    assert not shader["ok"] and shader["result"] == "failed"
    assert shader["output"] is None and shader["report"] is None
    assert shader["bytes"] is None and shader["operators"] is None
    assert shader["errors"] == 1
    (diagnostic,) = shader["diagnostics"]
    single = single_error(cli, bad["shader"], tmp_path)
    assert single.startswith(f"{diagnostic['location']['file']}: error: ")
    assert diagnostic["message"] in single
    assert diagnostic["location"]["file"] == str(bad["shader"])
    assert sorted(p.name for p in out.iterdir()) == [
        "face_detection_short_range.report.json",
        "face_detection_short_range.vgf",
        "mixed.report.json",
        "mixed.vgf",
    ]


def test_json_with_one_model_and_no_output_dir(cli, tmp_path: Path) -> None:
    model = tmp_path / "chain.tosa"
    model.write_bytes((SAMPLES_DIR / "chain.tosa").read_bytes())
    run = cli("compile", str(model), "--json")
    assert run.code == 0, run.err
    (entry,) = json.loads(run.out)
    assert entry["output"] == str(tmp_path / "chain.vgf") and (tmp_path / "chain.vgf").exists()


def test_reports_go_next_to_each_vgf(cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    models = [SAMPLES_DIR / "push.tosa", SAMPLES_DIR / "sets.tosa"]
    run = cli("compile", *map(str, models), "-d", str(out), "--report", "-q")
    assert run.code == 0, run.err
    assert run.out == ""  # -q: no summary
    for model in models:
        doc = json.loads((out / f"{model.stem}.report.json").read_text())
        jsonschema.validate(doc, load_schema("report.schema.json"))
        assert doc["output"] == str(out / f"{model.stem}.vgf")
        assert doc["vgf_bytes"] == (out / f"{model.stem}.vgf").stat().st_size


def test_report_file_with_many_models_is_a_usage_error(cli, tmp_path: Path) -> None:
    chain, dup = SAMPLES_DIR / "chain.tosa", SAMPLES_DIR / "dup.tosa"
    run = cli("compile", str(chain), str(dup), "-d", str(tmp_path), "--report", "r.json")
    assert run.code == 2
    assert "give --report without a FILE" in run.err
    # --report takes the next word as its FILE: a model there is named in the message.
    run = cli("compile", "--report", str(chain), str(dup), str(chain), "-d", str(tmp_path))
    assert run.code == 2 and "taken from the word after --report" in run.err


def test_report_flag_with_one_model(cli, tmp_path: Path) -> None:
    model = tmp_path / "chain.tosa"
    model.write_bytes((SAMPLES_DIR / "chain.tosa").read_bytes())
    run = cli("compile", str(model), "--report")
    assert run.code == 0, run.err
    assert json.loads((tmp_path / "chain.report.json").read_text())["output"] == str(
        tmp_path / "chain.vgf"
    )


def test_output_that_is_a_folder_is_a_usage_error(cli, tmp_path: Path) -> None:
    (tmp_path / "chain.vgf").mkdir()
    run = cli(
        "compile",
        str(SAMPLES_DIR / "chain.tosa"),
        str(SAMPLES_DIR / "dup.tosa"),
        "-d",
        str(tmp_path),
    )
    assert run.code == 2 and "it is a directory" in run.err
    assert not (tmp_path / "dup.vgf").exists()


def test_progress_only_on_a_terminal(tmp_path: Path, bad: dict[str, Path]) -> None:
    """With stderr a terminal each finished model gets a line; the summary still goes to
    stdout (a pipe here)."""
    exe = Path(sys.executable).parent / "vgfc"
    models = [SAMPLES_DIR / "chain.tosa", bad["truncated"]]
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}
    with subprocess.Popen(
        [str(exe), "compile", *map(str, models), "-d", str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
    ) as p:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        out = p.stdout.read().decode() if p.stdout else ""
    os.close(leader)
    err = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", b"".join(chunks).decode()).replace("\r", "")
    assert p.returncode == 1
    progress = sorted(line for line in err.splitlines() if line.startswith("["))
    assert sorted(re.sub(r"^\[\d/2\] ", "", line) for line in progress) == sorted(
        [f"{models[0]} ok", f"{models[1]} failed"]
    )
    assert {line[:5] for line in progress} == {"[1/2]", "[2/2]"}
    assert "2 models: 1 compiled, 1 failed" in out and "[1/2]" not in out


def test_internal_error_names_the_model(cli, tmp_path: Path, monkeypatch) -> None:
    """A bug while compiling one model fails that model with exit code 3; the others compile."""
    import vgfc.compiler

    real = vgfc.compiler.compile_to

    def buggy(model: Path, *args, **kwargs):
        if model.name == "dup.tosa":
            raise ZeroDivisionError("a bug")
        return real(model, *args, **kwargs)

    monkeypatch.setattr(vgfc.compiler, "compile_to", buggy)
    out = tmp_path / "out"
    run = cli(
        "compile", str(SAMPLES_DIR / "dup.tosa"), str(SAMPLES_DIR / "chain.tosa"), "-d", str(out)
    )
    assert run.code == 3
    assert f"{SAMPLES_DIR / 'dup.tosa'}: internal error: ZeroDivisionError: a bug" in run.err
    assert sorted(p.name for p in out.iterdir()) == ["chain.vgf"]
    assert "1 failed (1 internal errors)" in run.out


def test_a_crashed_worker_fails_only_its_model(tmp_path: Path, monkeypatch) -> None:
    """A worker that dies (here by ``os._exit``, as the kernel's OOM killer would end it) fails
    only the model it was compiling; the next model starts a fresh worker."""
    import vgfc.batch as batch
    import vgfc.compiler
    from vgfc.compiler import Options
    from vgfc.jobs import Job

    real = vgfc.compiler.compile_to

    def crashing(model: Path, *args, **kwargs):
        if model.name == "dup.tosa":
            os._exit(9)
        return real(model, *args, **kwargs)

    monkeypatch.setattr(vgfc.compiler, "compile_to", crashing)
    names = ["chain", "dup", "mixed", "push", "sets", "image"]
    jobs = [Job(SAMPLES_DIR / f"{n}.tosa", tmp_path / f"{n}.vgf") for n in names]
    seen: list[int] = []
    outcomes = batch.run_jobs(jobs, Options(), 2, lambda i, _: seen.append(i))
    assert sorted(seen) == list(range(len(names)))
    assert [o.job for o in outcomes] == jobs
    assert [o.ok for o in outcomes] == [n != "dup" for n in names]
    dup = outcomes[1]
    assert dup.internal and "crashed (exit status 9)" in dup.diagnostics[0].message
    assert sorted(p.stem for p in tmp_path.glob("*.vgf")) == sorted(set(names) - {"dup"})


def test_lines_about_another_file_are_prefixed_with_the_model(tmp_path: Path) -> None:
    from rich.console import Console

    from vgfc.batch import Outcome
    from vgfc.cli.batch import print_outcome
    from vgfc.diagnostics import Diagnostic, Location, Severity
    from vgfc.jobs import Job

    buffer = io.StringIO()
    console = Console(file=buffer, width=200, no_color=True)
    job = Job(Path("m.tosa"), Path("out/m.vgf"))
    diagnostics = (
        Diagnostic(
            Severity.WARNING,
            "small dispatch",
            Location(file="m.tosa", op_index=1),
            name="short-dispatch",
        ),
        Diagnostic(
            Severity.ERROR,
            "cannot write output file: Permission denied",
            Location(file="out/m.vgf"),
        ),
    )
    print_outcome(console, Outcome(job, ok=False, seconds=0.0, diagnostics=diagnostics))
    assert buffer.getvalue().splitlines() == [
        "m.tosa: warning: op #1: small dispatch [-Wshort-dispatch]",
        "m.tosa: error: out/m.vgf: cannot write output file: Permission denied",
    ]


def test_help_documents_batch_mode(cli) -> None:
    run = cli("compile", "--help")
    assert run.code == 0
    for words in (
        "-d, --output-dir",
        "-j, --jobs",
        "--report [FILE]",
        "<stem>.report.json",
        "--json",
    ):
        assert words in run.out


def test_no_output_ever_replaces_a_model(cli, tmp_path: Path) -> None:
    """`--report` before the models takes the first as its FILE; -o or --report naming a model,
    or the report and the VGF naming one file: usage errors, and every file stays as it was."""
    a, b = tmp_path / "a.tosa", tmp_path / "b.tosa"
    for path, name in ((a, "simple"), (b, "mixed")):
        path.write_bytes((SAMPLES_DIR / f"{name}.tosa").read_bytes())
    renamed = tmp_path / "a.bin"  # a model under another suffix: known by its identifier
    renamed.write_bytes(a.read_bytes())
    before = {p: p.read_bytes() for p in (a, b, renamed)}
    out = tmp_path / "out"
    for args, words in (
        (["--report", str(a), str(b), "-d", str(out)], "--report took"),
        (["--report", str(renamed), str(b)], "that is a TOSA model"),
        ([str(a), "-o", str(a)], "would replace the model"),
        ([str(a), "-d", str(tmp_path), "--report", str(b)], "that is a TOSA model"),
        ([str(a), "-o", str(tmp_path / "m.vgf"), "--report", str(tmp_path / "m.vgf")], "both"),
    ):
        run = cli("compile", *args)
        assert run.code == 2, (args, run.err)
        assert words in run.err, (args, run.err)
    assert {p: p.read_bytes() for p in (a, b, renamed)} == before
    assert not out.exists() and not (tmp_path / "m.vgf").exists()
