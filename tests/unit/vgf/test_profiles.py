"""Runtime profiles (``--target``) and unused declared bindings.

Each ExecuTorch rule has a model that breaks it (an error naming the op or segment, the rule and
the way out) and the fixed model that passes. Rules vgfc's layout always satisfies are shown to
catch a model broken by hand, so they cannot rot unnoticed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR
from shader_models import COPY, attrs, model

from vgfc.compiler import Options, compile_model
from vgfc.options import TARGET_NAMES
from vgfc.record import replace
from vgfc.vgf.model import Model, ModuleType
from vgfc.vgf.profiles import PROFILES, TARGETS, violations


def _compiled(path: Path) -> Model:
    result = compile_model(path)
    assert result.model is not None
    return result.model


def test_the_command_line_offers_every_target() -> None:
    assert TARGET_NAMES == TARGETS
    assert PROFILES["scenario-runner"] == ()


def test_spirv_rule_keep_source(cli, tmp_path: Path) -> None:
    sample = str(SAMPLES_DIR / "chain.tosa")
    out = tmp_path / "m.vgf"
    run = cli("compile", sample, "-o", str(out), "--keep-source", "--target", "executorch")
    assert run.code == 1 and not out.exists()
    assert "op #0 CUSTOM 'relu'" in run.err and "holds GLSL source; drop --keep-source" in run.err
    assert "executorch rule 'spirv'" in run.err
    assert cli("compile", sample, "-o", str(out), "--target", "executorch").code == 0
    assert cli("compile", sample, "-o", str(out), "--keep-source").code == 0  # other runtimes


def test_spirv_rule_placeholder(cli, tmp_path: Path) -> None:
    placeholder = model(tmp_path, attrs(shader_language=None, shader_code=None))
    run = cli("check", str(placeholder), "--target", "executorch")
    assert run.code == 1
    assert "the module has no code; give the op its shader" in run.err
    assert cli("check", str(placeholder)).code == 0  # a warning only, for the scenario runner


def test_one_descriptor_set_rule(cli, tmp_path: Path) -> None:
    two_sets = COPY.replace("set = 0, binding = 1", "set = 1, binding = 1")
    broken = model(tmp_path, attrs(two_sets, output_0_descriptorset=1))
    run = cli("check", str(broken), "--target", "executorch")
    assert run.code == 1, run.err
    assert "op #1 CUSTOM 'k0'" in run.err and "uses descriptor sets 0, 1" in run.err
    assert "put all of the shader's bindings in one descriptor set" in run.err
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    assert cli("check", str(model(fixed, attrs())), "--target", "executorch").code == 0
    assert cli("check", str(SAMPLES_DIR / "sets.tosa"), "--target", "executorch").code == 1


def test_set_zero_and_push_constant_rules(cli, tmp_path: Path) -> None:
    in_set_1 = COPY.replace("set = 0", "set = 1")
    path = model(tmp_path, attrs(in_set_1, input_0_descriptorset=1, output_0_descriptorset=1))
    run = cli("check", str(path), "--target", "executorch")
    assert run.code == 1 and "the runtime binds set 0 only" in run.err
    run = cli("check", str(SAMPLES_DIR / "push.tosa"), "--target", "executorch")
    assert run.code == 1 and "8 bytes of push constants, which the runtime never pushes" in run.err


def test_every_check_of_a_target_also_runs_in_compile(cli, tmp_path: Path) -> None:
    sets = str(SAMPLES_DIR / "sets.tosa")
    checked = cli("check", sets, "--target", "executorch")
    compiled = cli("compile", sets, "-o", str(tmp_path / "m.vgf"), "--target", "executorch")
    assert checked.err == compiled.err and compiled.code == 1


def _broken(m: Model, rule: str) -> Model:
    """``m`` changed by hand so that it breaks ``rule``, which vgfc's layout never does."""
    if rule == "no-compute-constants":
        i = next(i for i, s in enumerate(m.segments) if s.type is ModuleType.COMPUTE)
        segments = list(m.segments)
        segments[i] = replace(segments[i], constant_bindings=((0, 0),))
        return replace(m, segments=tuple(segments))
    if rule == "formats":
        resources = [
            replace(r, format="VK_FORMAT_R8_SFLOAT_FPENCODING_FLOAT8E4M3_ARM") for r in m.resources
        ]
        return replace(m, resources=tuple(resources))
    if rule == "graph-tensors":
        i = next(i for i, s in enumerate(m.segments) if s.type is ModuleType.GRAPH)
        slot = m.segments[i].descriptor_sets[0].slots[0]
        resources = list(m.resources)
        resources[slot.resource] = replace(
            resources[slot.resource], descriptor_type="VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
        )
        return replace(m, resources=tuple(resources))
    if rule == "sampler":
        resources = [replace(r, sampler=None) if r.sampler is not None else r for r in m.resources]
        return replace(m, resources=tuple(resources))
    assert rule == "input-bindings"
    inputs = [replace(x, binding=x.binding + 5) for x in m.inputs]
    return replace(m, inputs=tuple(inputs))


@pytest.mark.parametrize(
    ("rule", "sample"),
    [
        ("no-compute-constants", "mixed"),
        ("graph-tensors", "mixed"),
        ("sampler", "image"),
        ("input-bindings", "mixed"),
        ("formats", "mixed"),
    ],
)
def test_rules_the_layout_always_keeps_still_catch_a_broken_file(rule: str, sample: str) -> None:
    good = _compiled(SAMPLES_DIR / f"{sample}.tosa")
    assert [v for v in violations(good, "executorch") if v.rule == rule] == []
    found = [v for v in violations(_broken(good, rule), "executorch") if v.rule == rule]
    assert found and all(f"executorch rule '{rule}'" in v.message for v in found)


@pytest.mark.parametrize("sample", sorted(p.stem for p in SAMPLES_DIR.glob("*.tosa")))
def test_samples_meet_the_executorch_rules_but_two(sample: str) -> None:
    """Every sample is a file ExecuTorch's runtime loads, except the one made to spread its
    bindings over several descriptor sets and the one whose shader takes push constants."""
    path = SAMPLES_DIR / f"{sample}.tosa"
    result = compile_model(path, Options(target="executorch"), keep_going=True)
    rules = {d.message.rsplit("rule '", 1)[-1].rstrip("')") for d in result.errors}
    expected = {"sets": {"one-descriptor-set"}, "push": {"no-push-constants"}}
    assert rules == expected.get(sample, set())


# -- unused declared bindings ------------------------------------------------------------------

UNUSED_INPUT = COPY.replace("y[i] = x[i] * 2.0;", "y[i] = 2.0;")


def test_a_binding_the_shader_declares_but_never_uses_is_a_warning(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(UNUSED_INPUT))
    run = cli("check", str(path))
    assert run.code == 0, run.err
    assert "warning:" in run.err and "input_0_binding" in run.err
    assert "the shader declares set 0 binding 0 (storage_buffer 'In') for input_0" in run.err
    assert "never uses it" in run.err
    out = tmp_path / "m.vgf"
    assert cli("compile", str(path), "-o", str(out)).code == 0
    # The declared binding stays in the layout: the runtime binds the value, the shader ignores it.
    f = _compiled(path)
    compute = next(s for s in f.segments if s.type is ModuleType.COMPUTE)
    assert [x.binding for x in compute.descriptor_sets[0].slots] == [0, 1]


def test_a_binding_the_shader_does_not_declare_stays_an_error(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(UNUSED_INPUT, input_0_binding=5))
    run = cli("check", str(path))
    assert run.code == 1
    assert "input_0_binding: declared at set 0 binding 5, but the shader has nothing there" in (
        run.err
    )


# -- tables at 80 and 200 columns --------------------------------------------------------------


@pytest.mark.parametrize("width", [80, 200])
def test_tables_never_break_a_name(tmp_path: Path, width: int) -> None:
    import os
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "vgfc"
    env = {**os.environ, "COLUMNS": str(width), "NO_COLOR": "1"}
    out = tmp_path / "m.vgf"

    def run(*args: str) -> list[str]:
        done = subprocess.run(
            [str(exe), *args], capture_output=True, text=True, env=env, timeout=120, check=True
        )
        return done.stdout.splitlines()

    compiled = run("compile", str(SAMPLES_DIR / "mixed.tosa"), "-o", str(out))
    inspected = run("inspect", str(out))
    planned = run("partition", str(SAMPLES_DIR / "mixed.tosa"))
    model_ = _compiled(SAMPLES_DIR / "mixed.tosa")
    names = [m.name for m in model_.modules] + [s.name for s in model_.segments]
    # Off a terminal (a pipe, as here: every CI log) every name is whole, whatever the width
    # COLUMNS says; --json has it whole too. (A narrow terminal may shorten a name in the middle:
    # tests/unit/cli/test_whole_logs.py runs one.)
    for name in names:
        assert any(name in line for line in inspected), name
    as_json = "\n".join(run("inspect", str(out), "--json"))
    for name in names:
        assert f'"{name}"' in as_json, name
    for m in model_.modules:
        assert any(m.name in line for line in compiled), m.name
    assert any("'channel_reverse'" in line for line in planned)
