"""Every class of diagnostic as a text golden: one small bad input per class, run through the
command line as a user runs it, its exit code, stdout and stderr compared with a checked-in file
under ``tests/golden/diagnostics/classes/`` (``pytest --update-goldens`` rewrites them).

Each command runs in the folder of its input, so the goldens name files as a user typing
``vgfc check model.tosa`` sees them, with no machine paths. The unit tests check each message's
parts (the op, the key, the value quoted); these files show the whole of what a user reads, so
that a change to the wording, the order, an excerpt or a caret shows up in review.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bad_models import BAD
from paths import DATA, GOLDEN, SAMPLES_DIR
from shader_models import COPY, attrs, model
from tosa_factory import Op, T, build, custom

FOLDER = GOLDEN / "diagnostics" / "classes"
READER = {what: data for what, data, _ in BAD}


@dataclass(frozen=True)
class Case:
    """``setup(folder)`` writes the inputs into ``folder`` (or leaves it empty) and returns the
    arguments of ``vgfc``; ``cwd`` is the folder to run in when it is not that one."""

    name: str
    setup: Callable[[Path], list[str]]
    cwd: Path | None = None


def _file(name: str, data: bytes) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        (folder / name).write_bytes(data)
        return ["check", name]

    return setup


def _shader(*payloads: dict[str, Any], command: str = "check", extra: tuple[str, ...] = ()):
    """x -> ABS -> shader ... (``shader_models.model``) written as m.tosa."""

    def setup(folder: Path) -> list[str]:
        model(folder, *payloads)
        return [command, "m.tosa", *extra]

    return setup


def _one_op(ops: list[Op], tensors: list[T], ins: list[str], outs: list[str]):
    def setup(folder: Path) -> list[str]:
        (folder / "m.tosa").write_bytes(build(tensors, ops, ins, outs))
        return ["check", "m.tosa"]

    return setup


def _raw_attrs(raw: bytes) -> Callable[[Path], list[str]]:
    """One custom shader op whose implementation_attrs are ``raw`` bytes."""
    return _one_op(
        [custom(["x"], ["y"], "k", attrs=raw)], [T("x", (1, 64)), T("y", (1, 64))], ["x"], ["y"]
    )


def _library(name: str) -> Case:
    """``vgfc kernels`` on a bad library of ``tests/data/kernels/bad``, run in that folder."""
    return Case(
        f"kernels-{name.replace('_', '-')}",
        lambda _: ["kernels", f"{name}.yaml"],
        cwd=DATA / "kernels" / "bad",
    )


# Compiles, but SPIR-V for Vulkan allows only Workgroup or Subgroup execution scope.
BARRIER = COPY.replace(
    "#version 450\n", "#version 450\n#extension GL_KHR_memory_scope_semantics : require\n"
).replace("if (i < 64u)", "controlBarrier(gl_ScopeDevice, gl_ScopeDevice, 0, 0);\n    if (i < 64u)")
HLSL = """[[vk::binding(0, 0)]] StructuredBuffer<float> x;
[[vk::binding(1, 0)]] RWStructuredBuffer<float> y;
[numthreads(16, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) {
    if (id.x < 64) y[id.x] = x[id.x] * factor;
}
"""


def _variable(folder: Path) -> list[str]:
    path = DATA / "real" / "tflite" / "hey_jarvis.tosa"
    (folder / "stateful.tosa").write_bytes(path.read_bytes())
    return ["check", "stateful.tosa"]


def _sample(name: str, *extra: str) -> Callable[[Path], list[str]]:
    def setup(folder: Path) -> list[str]:
        (folder / name).write_bytes((SAMPLES_DIR / name).read_bytes())
        return [extra[0], name, *extra[1:]]

    return setup


CASES = [
    # -- the reader and verify: the file is not a TOSA model it can take --------------------------
    Case("read-empty-file", _file("m.tosa", READER["empty"])),
    Case("read-not-tosa", _file("m.tosa", READER["identifier"])),
    Case("read-unknown-op", _file("m.tosa", READER["unknown op"])),
    Case("read-unknown-dtype", _file("m.tosa", READER["unknown dtype"])),
    Case("read-short-constant", _file("m.tosa", READER["short constant"])),
    Case("verify-dangling-tensor", _file("m.tosa", READER["dangling"])),
    Case("verify-cycle", _file("m.tosa", READER["cycle"])),
    Case("verify-two-writers", _file("m.tosa", READER["two writers"])),
    Case("verify-missing-region", _file("m.tosa", READER["missing region"])),
    # -- implementation_attrs: the payload ---------------------------------------------------------
    Case("attrs-missing", _raw_attrs(b"")),
    Case("attrs-not-json", _raw_attrs(b'{"entry_point": "main",}')),
    Case("attrs-unknown-operand-key", _shader(attrs(input_0_vkformt="VK_FORMAT_R32_SFLOAT"))),
    Case("attrs-unknown-format", _shader(attrs(input_0_vkformat="VK_FORMAT_R32_FLOAT"))),
    Case(
        "attrs-unknown-descriptor-type",
        _shader(attrs(output_0_vkdescriptortype="VK_DESCRIPTOR_TYPE_STORAGE_BUFER")),
    ),
    Case("attrs-missing-workgroups", _shader(attrs(workgroup_sizes=None))),
    Case("attrs-wrong-type", _shader(attrs(input_0_binding="zero"))),
    Case("attrs-push-constants-syntax", _shader(attrs(push_constants="scale 4"))),
    Case("attrs-huge-value", _shader(attrs(entry_point="m" * 5000))),
    # -- the resource contract: the payload against the graph --------------------------------------
    Case("contract-format-width", _shader(attrs(input_0_vkformat="VK_FORMAT_R16_SFLOAT"))),
    Case("contract-operand-index", _shader(attrs(input_1_binding=4))),
    Case("contract-binding-twice", _shader(attrs(output_0_binding=0))),
    # -- the shader: compile errors with an excerpt and a caret, validation, reflection ------------
    Case("shader-glsl-syntax", _shader(attrs(COPY.replace("x[i] * 2.0", "x[i] * 2.0 +")))),
    Case(
        "shader-glsl-undeclared",
        _shader(attrs(COPY.replace("x[i] * 2.0", "x[i] * undefined_thing"))),
    ),
    Case(
        "shader-hlsl-undeclared",
        _shader(attrs(HLSL, entry_point="CSMain", shader_language="HLSL")),
    ),
    Case("shader-spirv-not-base64", _shader(attrs("not base64!", shader_language="SPIR-V"))),
    Case(
        "shader-spirv-not-a-module",
        _shader(attrs(base64.b64encode(b"\x03\x02\x23\x07").decode(), shader_language="SPIR-V")),
    ),
    Case("shader-validation", _shader(attrs(BARRIER))),
    Case("shader-wrong-entry-point", _shader(attrs(entry_point="run"))),
    Case("reflect-binding-missing", _shader(attrs(input_0_binding=3))),
    Case(
        "reflect-descriptor-kind",
        _shader(
            attrs(
                COPY.replace(
                    "layout(set = 0, binding = 0) readonly buffer In { float x[]; };",
                    "layout(set = 0, binding = 0) uniform sampler2D img;",
                ).replace("x[i] * 2.0", "texelFetch(img, ivec2(i, 0), 0).x")
            )
        ),
    ),
    Case(
        "reflect-undeclared-binding",
        _shader(
            attrs(
                COPY.replace(
                    "void main() {",
                    "layout(set = 1, binding = 7) buffer Extra { float e[]; };\nvoid main() {",
                ).replace("y[i] = x[i] * 2.0;", "y[i] = x[i] * e[0];")
            )
        ),
    ),
    Case("reflect-push-constants", _shader(attrs(push_constants="scale: 4"))),
    Case(
        "reflect-writes-an-input",
        _shader(
            attrs(
                COPY.replace("readonly buffer In", "buffer In").replace(
                    "y[i] = x[i] * 2.0;", "x[i] = 0.0; y[i] = 1.0;"
                )
            )
        ),
    ),
    # -- warnings: the model compiles, and the user is told --------------------------------------
    Case("warning-dispatch-too-small", _shader(attrs(workgroup_sizes=[1, 1, 1]))),
    Case(
        "warning-unused-binding",
        _shader(attrs(COPY.replace("y[i] = x[i] * 2.0;", "y[i] = 2.0;"))),
    ),
    # -- several errors in one run, and the same model through compile and --json ---------------
    Case(
        "check-every-broken-op",
        _shader(attrs(input_0_vkformat="VK_FORMAT_R32_FLOAT"), attrs(), attrs(input_0_binding=9)),
    ),
    Case(
        "compile-first-error",
        _shader(
            attrs(input_0_vkformat="VK_FORMAT_R32_FLOAT"),
            attrs(input_0_binding=9),
            command="compile",
        ),
    ),
    Case("check-json", _shader(attrs(input_0_binding=3), attrs(), extra=("--json",))),
    # -- resolve: custom ops vgfc has no kernel for ------------------------------------------------
    Case(
        "resolve-unknown-domain",
        _one_op(
            [custom(["x"], ["y"], "k0", domain="com.arm.VulkanCustomShaders", attrs=attrs())],
            [T("x", (1, 64)), T("y", (1, 64))],
            ["x"],
            ["y"],
        ),
    ),
    # -- lowering: what the graph compiler cannot take ---------------------------------------------
    Case(
        "lower-dynamic-shape",
        _one_op([Op("ABS", ["x"], ["y"])], [T("x", (-1, 4)), T("y", (-1, 4))], ["x"], ["y"]),
    ),
    Case("lower-stateful-variables", _variable),
    # -- kernel libraries: file:line: entry: key ---------------------------------------------------
    *(
        _library(name)
        for name in (
            "schema",
            "unknown_key",
            "missing_shader",
            "unknown_dim",
            "cycle",
            "broken_shader",
            "resources_mismatch",
        )
    ),
    # -- target profiles -------------------------------------------------------------------------
    Case(
        "target-executorch-keep-source",
        _sample("chain.tosa", "compile", "--keep-source", "--target", "executorch", "-o", "m.vgf"),
    ),
    Case(
        "target-executorch-descriptor-sets",
        _sample("sets.tosa", "check", "--target", "executorch"),
    ),
    Case(
        "target-executorch-push-constants",
        _sample("push.tosa", "check", "--target", "executorch"),
    ),
    Case("target-unknown", _sample("simple.tosa", "check", "--target", "android")),
    # -- usage errors (exit 2) ---------------------------------------------------------------------
    Case("missing-model", lambda _: ["check", "absent.tosa"]),
    Case("usage-unknown-option", _sample("simple.tosa", "check", "--fast")),
    Case("usage-bad-timeout", _sample("simple.tosa", "check", "--shader-timeout", "-1")),
    Case("usage-exclusive-options", _sample("simple.tosa", "partition", "--json", "--dot")),
    Case("usage-unknown-command", lambda _: ["complie", "m.tosa"]),
]


def render(args: list[str], code: int, out: str, err: str) -> str:
    """What the user sees, as one text: the command, its exit code, then stderr; stdout, when
    there is any, comes first under ``--- stdout``, and stderr then under ``--- stderr``."""
    text = f"$ vgfc {' '.join(args)}\nexit {code}\n"
    if out:
        text += f"--- stdout\n{_ended(out)}--- stderr\n"
    return text + _ended(err)


def _ended(stream: str) -> str:
    return stream if not stream or stream.endswith("\n") else stream + "\n"


def test_every_golden_has_a_case() -> None:
    """A golden whose case was renamed or removed would never be compared again."""
    names = [c.name for c in CASES] + ["internal-error"]
    assert len(set(names)) == len(names)
    assert {p.stem for p in FOLDER.glob("*.txt")} <= set(names)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_diagnostic_golden(
    cli, golden, case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = case.setup(tmp_path)
    monkeypatch.chdir(case.cwd or tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    run = cli(*args)
    assert "Traceback" not in run.err
    assert run.code in (0, 1, 2)  # 3 is a bug: never a diagnostic
    if run.code:
        assert not (tmp_path / "m.vgf").exists()  # no partial output
    if args[-1] == "--json":
        json.loads(run.out)  # the JSON form is a document
    golden.check(FOLDER / f"{case.name}.txt", render(args, run.code, run.out, run.err))


def test_internal_error_golden(
    cli, golden, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug reads as one line and a hint, exit 3 (here a stage made to fail)."""
    import sys

    def broken(graph: object, order: object) -> None:
        raise RuntimeError("boom")

    args = _sample("simple.tosa", "partition")(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys.modules["vgfc.partition"], "partition", broken)
    run = cli(*args)
    assert run.code == 3
    golden.check(FOLDER / "internal-error.txt", render(args, run.code, run.out, run.err))
