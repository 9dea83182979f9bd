"""``vgfc verify`` says what it checked, per operator, and never says "ok" for an operator no
independent oracle looked at (exit code 4). Runs on lavapipe; the oracles are the TOSA reference
model and Python references written here with numpy, apart from the shaders."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tosa_factory import Op, T, build, custom

from vgfc.cli.verify import EXIT_UNVERIFIED

SCALE = textwrap.dedent(
    """\
    #version 450
    layout(local_size_x = 16) in;
    layout(set = 0, binding = 0) readonly buffer In { float x[]; };
    layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
    void main() { uint i = gl_GlobalInvocationID.x; y[i] = x[i] * SCALE + 0.5; }
    """
)
REFERENCE = textwrap.dedent(
    """\
    import numpy as np

    def scale(x, scale):
        return x.astype(np.float64) * scale + 0.5

    def wrong(x, scale):
        return x * (scale + 1.0)
    """
)


def library(d: Path, reference: str | None) -> Path:
    (d / "scale.comp").write_text(SCALE)
    (d / "ops_ref.py").write_text(REFERENCE)
    line = f"    reference: ops_ref:{reference}\n" if reference else ""
    text = textwrap.dedent(
        """\
        vgfc_kernels: 1
        operators:
          - domain: test
            name: Scale
            inputs: [x]
            outputs: [y]
        {line}    params:
              encoding: json
              fields: [{{name: scale, type: f32}}]
            kernels:
              - name: scale_f32
                arg_meta: {{x: [FP32], y: [FP32]}}
                shader:
                  file: scale.comp
                  defines: {{SCALE: scale}}
                resources: {{x: {{binding: 0}}, y: {{binding: 1}}}}
                dispatch: {{global: [16]}}
        """
    ).format(line=line)
    path = d / "lib.yaml"
    path.write_text(text)
    return path


def sandwich(d: Path) -> Path:
    """x -> ABS -> Scale (library) -> ADD const -> y: built-ins on both sides of a custom op."""
    c = np.full((1, 16), 0.25, np.float32)
    tensors = [T("x", (1, 16)), T("a", (1, 16)), T("b", (1, 16)), T("c", (1, 16), data=c)]
    tensors.append(T("y", (1, 16)))
    ops = [
        Op("ABS", ["x"], ["a"]),
        custom(["a"], ["b"], "Scale", domain="test", attrs={"scale": 3.0}),
        Op("CONST", [], ["c"]),
        Op("ADD", ["b", "c"], ["y"]),
    ]
    path = d / "m.tosa"
    path.write_bytes(build(tensors, ops, ["x"], ["y"]))
    return path


def verify(cli: Any, *args: str) -> tuple[int, dict[str, Any], str]:
    run = cli("verify", *args, "--json")
    return run.code, json.loads(run.out), run.err


def test_a_library_op_with_a_reference_is_checked_between_builtin_pieces(
    cli: Any, tmp_path: Path
) -> None:
    model = sandwich(tmp_path)
    code, doc, err = verify(cli, str(model), "--kernels", str(library(tmp_path, "scale")))
    assert code == 0, err
    assert [(o["label"], o["against"]) for o in doc["ops"]] == [
        ("#0 ABS", "tosa_reference_model"),
        ("#1 CUSTOM 'Scale'", "python reference ops_ref:scale"),
        ("#2 CONST", "tosa_reference_model"),
        ("#3 ADD", "tosa_reference_model"),
    ]
    assert doc["ok"] is True and doc["outputs"][0]["ok"] is True
    assert doc["outputs"][0]["max_abs_error"] < 1e-5


def test_a_wrong_kernel_fails_against_its_reference(cli: Any, tmp_path: Path) -> None:
    model = sandwich(tmp_path)
    code, doc, _ = verify(cli, str(model), "--kernels", str(library(tmp_path, "wrong")))
    assert code == 1 and doc["outputs"][0]["ok"] is False


def test_a_library_op_without_a_reference_is_unverified(cli: Any, tmp_path: Path) -> None:
    model = sandwich(tmp_path)
    code, doc, err = verify(cli, str(model), "--kernels", str(library(tmp_path, None)))
    assert code == EXIT_UNVERIFIED == 4
    statuses = [o["status"] for o in doc["ops"]]
    assert statuses == ["checked", "unverified", "checked", "checked"]
    assert "names no `reference: module:function`" in doc["ops"][1]["against"]
    # The ADD after it is checked on what vgfc computed for the unverified op.
    assert doc["ops"][3]["against"] == "tosa_reference_model, on vgfc's result of unverified op #1"
    assert doc["ok"] is False and doc["outputs"][0]["ok"] is True
    assert "unverified:" in err and "1 of 4 ops had no independent oracle" in err


def test_expected_arrays_check_every_op_they_depend_on(cli: Any, tmp_path: Path) -> None:
    model = sandwich(tmp_path)
    x = np.linspace(-2, 2, 16, dtype=np.float32).reshape(1, 16)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", (np.abs(x) * 3.0 + 0.5 + 0.25).astype(np.float32))
    code, doc, err = verify(
        cli,
        str(model),
        "--kernels",
        str(library(tmp_path, None)),
        "-i",
        f"x={tmp_path / 'x.npy'}",
        "-e",
        f"y={tmp_path / 'y.npy'}",
    )
    assert code == 0, err
    assert {o["against"] for o in doc["ops"]} == {"expected arrays"}


def test_a_model_of_builtins_only_prints_ok(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "m.tosa"
    path.write_bytes(build([T("x"), T("y")], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]))
    run = cli("verify", str(path))
    assert run.code == 0, run.err
    assert "#0 ABS: tosa_reference_model" in run.out
    assert run.out.rstrip().endswith("ok: every output agrees, all 1 ops checked")


def test_help_documents_the_exit_codes(cli: Any) -> None:
    run = cli("verify", "--help")
    assert "4 the numbers checked agree" in run.out


@pytest.mark.parametrize(
    ("inp", "out", "body", "dtype", "counts"),
    [
        ("uint x[]", "float y[]", "y[i] = uintBitsToFloat(x[i]) * 2.0;", "FP32", 16),
        ("uint x[]", "uint y[]", "y[i] = packHalf2x16(unpackHalf2x16(x[i]) * 2.0);", "FP16", 8),
    ],
    ids=["uintBitsToFloat", "unpackHalf2x16"],
)
def test_packing_idioms_compute_the_right_numbers(
    cli: Any, tmp_path: Path, inp: str, out: str, body: str, dtype: str, counts: int
) -> None:
    code = textwrap.dedent(
        f"""\
        #version 450
        layout(local_size_x = 1) in;
        layout(set = 0, binding = 0) readonly buffer In {{ {inp}; }};
        layout(set = 0, binding = 1) writeonly buffer Out {{ {out}; }};
        void main() {{ uint i = gl_GlobalInvocationID.x; {body} }}
        """
    )
    fmt = {"FP32": "VK_FORMAT_R32_SFLOAT", "FP16": "VK_FORMAT_R16_SFLOAT"}[dtype]
    attrs: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": [counts, 1, 1],
        "shader_language": "GLSL",
        "shader_code": code,
    }
    for i, role in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            f"{role}_vkformat": fmt,
        }
    path = tmp_path / "m.tosa"
    tensors = [T("x", (1, 16), dtype), T("y", (1, 16), dtype)]
    path.write_bytes(build(tensors, [custom(["x"], ["y"], "k", attrs=attrs)], ["x"], ["y"]))
    np_type = np.float32 if dtype == "FP32" else np.float16
    x = np.linspace(-3, 3, 16).astype(np_type).reshape(1, 16)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", (x * 2).astype(np_type))
    run = cli("verify", str(path), "-i", f"x={tmp_path / 'x.npy'}", "-e", f"y={tmp_path / 'y.npy'}")
    assert run.code == 0, run.err
