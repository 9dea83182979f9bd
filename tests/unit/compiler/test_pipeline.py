"""`vgfc check` is `vgfc compile` without the write: one pipeline, the same verdict, the same first
error, on every model the tests hold (samples, real networks, conformance, and the bad inputs of
the reader, attribute and lowering tests) plus models made to break in each stage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bad_models import BAD as READER_CASES
from paths import ROOT
from samples_module import SAMPLES_DIR
from shader_models import CHECK_CASES as SHADER_CASES
from shader_models import attrs
from shader_models import model as shader_model
from tosa_factory import Op, T, build, custom

from vgfc.compiler import STAGES, compile_model
from vgfc.diagnostics import VgfcError
from vgfc.lower.shader import ShaderModule

# The fuzz corpus (tests/data/fuzz) has its own test, with the findings not fixed yet.
MODELS = sorted(
    [
        *SAMPLES_DIR.glob("*.tosa"),
        *(p for p in (ROOT / "tests" / "data").rglob("*.tosa") if "fuzz" not in p.parts),
    ],
    key=lambda p: str(p),
)


def _verdicts(path: Path) -> tuple[str | None, str | None]:
    """(compile's error or None, check's first error or None)."""
    try:
        compile_model(path)
    except VgfcError as e:
        compiled: str | None = e.render()
    else:
        compiled = None
    checked = compile_model(path, stop_after="layout", keep_going=True)
    return compiled, (checked.errors[0].render() if checked.errors else None)


def test_every_model_of_the_tests_is_collected() -> None:
    assert len([p for p in MODELS if "conformance" in p.parts]) >= 328
    assert len([p for p in MODELS if p.parent == SAMPLES_DIR]) >= 10


def test_check_and_compile_agree_on_every_model() -> None:
    # One test over all of them: each takes milliseconds, 350 test ids would only add noise.
    disagreements = []
    for path in MODELS:
        compiled, checked = _verdicts(path)
        if compiled != checked:
            disagreements.append(
                f"{path.relative_to(ROOT)}: compile {compiled!r}, check {checked!r}"
            )
    assert not disagreements, "\n".join(disagreements)


def _bad_models(tmp_path: Path) -> list[tuple[str, Path]]:
    cases: list[tuple[str, Path]] = []
    for what, data, _ in READER_CASES:
        path = tmp_path / f"reader-{len(cases)}.tosa"
        path.write_bytes(data)
        cases.append((f"reader: {what}", path))
    for what, payload, _ in SHADER_CASES:
        folder = tmp_path / f"shader-{len(cases)}"
        folder.mkdir()
        cases.append((f"shader: {what}", shader_model(folder, payload)))
    for name, data in _stage_breakers().items():
        path = tmp_path / f"{name}.tosa"
        path.write_bytes(data)
        cases.append((name, path))
    return cases


def _stage_breakers() -> dict[str, bytes]:
    """One model per kind of failure that used to be found only by compile."""
    broken = attrs("#version 450\nvoid main() { oops }\n")
    return {
        "input listed twice": build([T("x"), T("y")], [Op("ABS", ["x"], ["y"])], ["x", "x"], ["y"]),
        "dynamic shape": build(
            [T("x", (-1, 4)), T("y", (-1, 4))], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]
        ),
        "shader reads a constant of another type": build(
            [T("c", (1, 64), "INT32", data=np.ones((1, 64), np.int32)), T("y", (1, 64))],
            [Op("CONST", [], ["c"]), custom(["c"], ["y"], "k", attrs=attrs())],
            [],
            ["y"],
        ),
        "unknown domain": build(
            [T("x"), T("y")], [custom(["x"], ["y"], "k", domain="TFL")], ["x"], ["y"]
        ),
        "two broken shaders and a dynamic graph": build(
            [T("x", (1, 64)), T("a", (1, 64)), T("b", (1, 64)), T("d", (-1, 4)), T("e", (-1, 4))],
            [
                custom(["x"], ["a"], "first", attrs=broken),
                custom(["a"], ["b"], "second", attrs=attrs(input_0_vkformat="VK_FORMAT_R32_FLOAT")),
                Op("ABS", ["d"], ["e"]),
            ],
            ["x", "d"],
            ["b", "e"],
        ),
    }


def test_check_and_compile_agree_on_bad_inputs(tmp_path: Path) -> None:
    cases = _bad_models(tmp_path)
    assert len(cases) >= 30
    for what, path in cases:
        compiled, checked = _verdicts(path)
        assert compiled is not None, f"{what}: compile accepted it"
        assert checked == compiled, what


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("dynamic shape", "op #0 ABS: tensor 'x': dynamic shape [-1, 4]"),
        (
            "shader reads a constant of another type",
            "tensor 'c': input_0_vkformat: VK_FORMAT_R32_SFLOAT does not hold INT32 elements",
        ),
    ],
)
def test_what_only_compile_found_is_now_found_by_check(
    cli, tmp_path: Path, name: str, message: str
) -> None:
    path = tmp_path / "m.tosa"
    path.write_bytes(_stage_breakers()[name])
    checked = cli("check", str(path))
    compiled = cli("compile", str(path), "-o", str(tmp_path / "m.vgf"))
    assert (checked.code, compiled.code) == (1, 1)
    assert message in checked.err
    assert checked.err == compiled.err  # the same one line
    assert len(checked.err.strip().splitlines()) == 1
    assert not (tmp_path / "m.vgf").exists()


def test_check_reports_every_broken_op_and_partition(cli, tmp_path: Path) -> None:
    path = tmp_path / "m.tosa"
    path.write_bytes(_stage_breakers()["two broken shaders and a dynamic graph"])
    run = cli("check", str(path))
    # Diagnostics, without the source excerpt printed under a shader error.
    lines = [line for line in run.err.strip().splitlines() if not line.startswith("    ")]
    assert run.code == 1
    assert len(lines) == 3, run.err
    # Pipeline order: resolve (attributes) for every op, then lowering partition by partition.
    assert "op #1 CUSTOM 'second'" in lines[0] and "unknown format" in lines[0]
    assert "op #0 CUSTOM 'first'" in lines[1] and "GLSL compilation failed" in lines[1]
    assert "op #2 ABS: tensor 'd': dynamic shape [-1, 4]" in lines[2]
    compiled = cli("compile", str(path), "-o", str(tmp_path / "m.vgf"))
    assert compiled.err.strip() == lines[0]


def test_stop_after_runs_the_stages_up_to_it(tmp_path: Path) -> None:
    path = SAMPLES_DIR / "mixed.tosa"
    for i, stage in enumerate(STAGES):
        result = compile_model(path, stop_after=stage)
        assert [name for name, _ in result.timings] == list(STAGES[: i + 1])
    full = compile_model(path)
    assert full.vgf is not None and full.model is not None and full.plan is not None
    # Module i runs partition i and is segment i.
    assert len(full.modules) == len(full.plan.partitions) == len(full.model.segments)
    parts = zip(full.plan.partitions, full.modules, full.model.segments, strict=True)
    for p, module, segment in parts:
        assert segment.partition == p.id
        assert isinstance(module, ShaderModule) == (p.kind.value == "shader")
    with pytest.raises(ValueError, match="stop_after"):
        compile_model(path, stop_after="emit")


def test_resolve_binds_every_shader_op_before_partitioning() -> None:
    result = compile_model(SAMPLES_DIR / "mixed.tosa", stop_after="resolve")
    assert result.graph is not None and result.plan is None
    custom_ops = [op for op in result.graph.operators if op.op == "CUSTOM"]
    assert custom_ops and all(op.shader is not None for op in custom_ops)
    assert all(op.shader is None for op in result.graph.operators if op.op != "CUSTOM")


def test_user_text_is_never_read_as_markup(cli, tmp_path: Path) -> None:
    """Tensor names and paths with square brackets reach the terminal as they are."""
    folder = tmp_path / "run[bold]"
    folder.mkdir()
    path = folder / "m[red].tosa"
    path.write_bytes(
        build([T("x[1]", (-1, 4)), T("y[red]", (-1, 4))], [Op("ABS", ["x[1]"], ["y[red]"])],
              ["x[1]"], ["y[red]"])
    )  # fmt: skip
    run = cli("check", str(path))
    assert f"{path}: error: op #0 ABS: tensor 'x[1]': dynamic shape [-1, 4]" in run.err
    run = cli("compile", str(path))
    assert f"{path}: error: op #0 ABS: tensor 'x[1]'" in run.err
    good = folder / "ok[bold].tosa"
    good.write_bytes((SAMPLES_DIR / "simple.tosa").read_bytes())
    run = cli("check", str(good))
    assert run.code == 0 and f"{good}: ok" in run.out
    run = cli("compile", str(good), "-o", str(folder / "o[i].vgf"))
    assert run.code == 0 and "o[i].vgf" in run.out


def test_outputs_get_the_mode_a_plain_write_would(cli, tmp_path: Path) -> None:
    import os
    import stat

    out = tmp_path / "m.vgf"
    assert cli("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(out), "-q").code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    out.chmod(0o640)
    assert cli("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(out), "-q").code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_a_closed_pipe_is_not_an_internal_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    vgf = tmp_path / "m.vgf"
    exe = Path(sys.executable).parent / "vgfc"
    subprocess.run([str(exe), "compile", str(SAMPLES_DIR / "mixed.tosa"), "-o", str(vgf), "-q"],
                   check=True)  # fmt: skip
    done = subprocess.run(
        f"'{exe}' inspect --json '{vgf}' | head -c 10", shell=True, capture_output=True, text=True
    )
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
