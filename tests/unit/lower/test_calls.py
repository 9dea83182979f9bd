"""``--custom-op-domain-to-opcode DOMAIN:N`` and ``--enable-bespoke``: a CUSTOM op of the domain
becomes the reference converter's Arm.ExperimentalMLOperations.1 CALL inside its graph
partition, compared with the reference's module instruction by instruction (read as words:
SPIRV-Tools cannot disassemble that set)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from commands import run_text
from kernel_models import OPS, single
from reference_tools import tool
from spirv_words import CALL_SET, calls, described, instructions
from tosa_factory import Op, T, build, custom

import vgfc

BIN = Path(sys.executable).parent


def _module(vgf: Path, index: int = 0) -> bytes:
    out = vgf.with_suffix(f".{index}.spv")
    dump = run_text(
        tool("vgf_dump", "ai-ml-sdk-vgf-library"), "-i", vgf, "-o", out, "--dump-spirv", str(index)
    )
    assert dump.returncode == 0, dump.stderr
    return out.read_bytes()


def _reference(model: Path, *flags: str) -> bytes:
    out = model.with_suffix(".ref.vgf")
    run = run_text(
        tool("model-converter", "ai-ml-sdk-model-converter"), *flags, "-i", model, "-o", out
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return _module(out)


def _vgfc(model: Path, *flags: str) -> bytes:
    out = model.with_suffix(".vgfc.vgf")
    run = run_text(BIN / "vgfc", "compile", "-q", model, "-o", out, *flags)
    assert run.returncode == 0, run.stderr
    return _module(out)


def _body(spirv: bytes) -> list[object]:
    """The graph, from OpGraphARM to its end, as :func:`described` gives it."""
    shown = described(spirv)
    start = next(i for i, d in enumerate(shown) if d[0] == "OpGraphARM")
    return shown[start:]


def _header(spirv: bytes) -> tuple[set[object], ...]:
    insts = instructions(spirv)
    return tuple(
        {tuple(ops[1:] if name == "OpExtInstImport" else ops) for n, ops in insts if n == name}
        for name in ("OpCapability", "OpExtension", "OpExtInstImport")
    )


def _unpool(tmp_path: Path, domain: str = "TFL") -> Path:
    """x, w -> ABS -> CUSTOM (2 inputs, an FP32 and an INT32 output) -> ABS: the call inside a
    graph, typed by a struct of its two results."""
    shape = (1, 2, 2, 4)
    tensors = [
        T("x", shape),
        T("w", shape),
        T("a", shape),
        T("y", shape),
        T("z", (1, 3), "INT32"),
        T("o", shape),
    ]
    ops = [
        Op("ABS", ["x"], ["a"]),
        custom(["a", "w"], ["y", "z"], name="MaxUnpool", domain=domain, attrs=b"\x01\x02\x03"),
        Op("ABS", ["y"], ["o"]),
    ]
    model = tmp_path / "unpool.tosa"
    model.write_bytes(build(tensors, ops, ["x", "w"], ["o", "z"]))
    return model


def test_the_call_is_the_reference_converters(tmp_path: Path) -> None:
    model = _unpool(tmp_path)
    ours, theirs = (
        _vgfc(model, "--custom-op-domain-to-opcode", "TFL:3"),
        _reference(model, "--custom-op-domain-to-opcode", "TFL:3"),
    )
    assert _body(ours) == _body(theirs)
    assert _header(ours) == _header(theirs)
    (call,) = calls(ours)
    assert call[3:5] == (("literal", 0), ("literal", 3))  # instruction 0 (CALL), opcode 3
    assert call[1][0] == "OpTypeStruct"  # two results


def test_one_partition_holds_the_call(tmp_path: Path) -> None:
    model = _unpool(tmp_path)
    run = run_text(
        BIN / "vgfc", "partition", "--json", "--custom-op-domain-to-opcode", "TFL:3", model
    )
    assert run.returncode == 0, run.stderr
    (partition,) = json.loads(run.stdout)["partitions"]
    assert partition["kind"] == "ml"
    refused = run_text(BIN / "vgfc", "compile", "-q", model, "-o", tmp_path / "no.vgf")
    assert refused.returncode == 1
    assert "op #1 CUSTOM 'MaxUnpool' (TFL): no kernel for custom operator" in refused.stderr


def test_enable_bespoke_is_opcode_0_of_com_arm_bespoke(tmp_path: Path) -> None:
    model = _unpool(tmp_path, "com.arm.bespoke")
    ours = _vgfc(model, "--enable-bespoke")
    assert _body(ours) == _body(_reference(model, "--enable-bespoke"))
    assert calls(ours)[0][4] == ("literal", 0)
    # An explicit opcode for the domain wins over --enable-bespoke's 0.
    assert calls(
        _vgfc(model, "--enable-bespoke", "--custom-op-domain-to-opcode", "com.arm.bespoke:5")
    )[0][4] == ("literal", 5)


def test_an_empty_name_and_payload_are_one_zero_byte_as_the_reference_passes_them(
    tmp_path: Path,
) -> None:
    model = tmp_path / "empty.tosa"
    model.write_bytes(
        build(
            [T("x"), T("y")], [custom(["x"], ["y"], name="", domain="D", attrs=b"")], ["x"], ["y"]
        )
    )
    ours = _vgfc(model, "--custom-op-domain-to-opcode", "D:7")
    assert _body(ours) == _body(_reference(model, "--custom-op-domain-to-opcode", "D:7"))


def test_model_converter_writes_what_compile_writes(tmp_path: Path) -> None:
    model = _unpool(tmp_path)
    out = tmp_path / "mc.vgf"
    run = run_text(
        BIN / "vgfc-model-converter",
        "--custom-op-domain-to-opcode",
        "TFL:3",
        "-i",
        model,
        "-o",
        out,
    )
    assert (run.returncode, run.stderr) == (0, "")
    compiled = tmp_path / "c.vgf"
    assert (
        run_text(
            BIN / "vgfc",
            "compile",
            "-q",
            model,
            "-o",
            compiled,
            "--custom-op-domain-to-opcode",
            "TFL:3",
        ).returncode
        == 0
    )
    assert out.read_bytes() == compiled.read_bytes()
    assert vgfc.compile(model, tmp_path / "api.vgf", custom_opcodes=["TFL:3"]) is not None
    assert (tmp_path / "api.vgf").read_bytes() == compiled.read_bytes()


def test_the_option_wins_over_a_kernel_library_that_binds_the_domain(tmp_path: Path) -> None:
    model = single(tmp_path, "Affine", attrs={"scale": 2.0})
    bound = run_text(BIN / "vgfc", "partition", "--json", "--kernels", OPS, model)
    assert [p["kind"] for p in json.loads(bound.stdout)["partitions"]] == ["shader"]
    called = run_text(
        BIN / "vgfc",
        "partition",
        "--json",
        "--kernels",
        OPS,
        "--custom-op-domain-to-opcode",
        "test:9",
        model,
    )
    assert [p["kind"] for p in json.loads(called.stdout)["partitions"]] == ["ml"]
    ours = _vgfc(model, "--kernels", str(OPS), "--custom-op-domain-to-opcode", "test:9")
    assert _body(ours) == _body(_reference(model, "--custom-op-domain-to-opcode", "test:9"))


def test_analysis_names_the_call(tmp_path: Path) -> None:
    run = run_text(
        BIN / "vgfc",
        "check",
        "--analysis",
        "--custom-op-domain-to-opcode",
        "TFL:3",
        _unpool(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    assert f"(op #1 'MaxUnpool' (TFL), graph partition 0 as {CALL_SET} CALL 3)" in run.stdout


BROKEN = [
    ("nocolon", "is not DOMAIN:N (no ':')"),
    ("D:-1", "the opcode of 'D' must be a whole number from 0 to 4294967295, not '-1'"),
    ("D:abc", "not 'abc'"),
    ("D:", "not ''"),
    ("D:4294967296", "not '4294967296'"),
    ("D:99999999999999999999999", "must be a whole number"),
    ("", "is not DOMAIN:N (no ':')"),
    (":3", "names no domain"),
    ("com.arm.VulkanCustomShader:1", "carry their own shader and run as shaders, not CALLs"),
]


@pytest.mark.parametrize(("value", "message"), BROKEN, ids=[v or "empty" for v, _ in BROKEN])
@pytest.mark.parametrize("command", ["compile", "model-converter"])
def test_broken_values_are_usage_errors(
    tmp_path: Path, command: str, value: str, message: str
) -> None:
    model = _unpool(tmp_path)
    out = tmp_path / "out.vgf"
    if command == "compile":
        run = run_text(
            BIN / "vgfc", "compile", model, "-o", out, "--custom-op-domain-to-opcode", value
        )
    else:
        run = run_text(
            BIN / "vgfc-model-converter",
            "--custom-op-domain-to-opcode",
            value,
            "-i",
            model,
            "-o",
            out,
        )
    assert run.returncode == 2, run.stderr
    assert message in run.stderr
    assert "Traceback" not in run.stderr
    assert not out.exists()
    with pytest.raises(ValueError, match="custom_opcodes"):
        vgfc.compile(model, out, custom_opcodes=[value])


def test_a_domain_given_two_opcodes_is_refused(tmp_path: Path) -> None:
    model = _unpool(tmp_path)
    flags = ["--custom-op-domain-to-opcode", "TFL:1", "--custom-op-domain-to-opcode", "TFL:2"]
    run = run_text(BIN / "vgfc", "compile", model, "-o", tmp_path / "o.vgf", *flags)
    assert run.returncode == 2
    assert "'TFL' is given two opcodes, 1 and 2" in run.stderr
    same = run_text(
        BIN / "vgfc", "compile", "-q", model, "-o", tmp_path / "o.vgf", *flags[:2], *flags[:2]
    )
    assert same.returncode == 0, same.stderr


@pytest.mark.parametrize("value", [[("TFL", True)], [("TFL", -1)], [3], "TFL"])
def test_the_api_refuses_what_is_no_opcode(tmp_path: Path, value: object) -> None:
    with pytest.raises(ValueError, match="custom_opcodes"):
        vgfc.compile(_unpool(tmp_path), tmp_path / "o.vgf", custom_opcodes=value)
