"""How the validation layer's messages are read and reported, without running anything: the log
parsed into messages, a message's words and signature, each message put in its segment by the
prefixes of the file that report it, and the error that names them. The layer run on real files is
``tests/e2e/test_validation.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from samples_module import SAMPLES_DIR

from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError
from vgfc.runner import read_vgf
from vgfc.runner.validation import (
    SETUP,
    Message,
    attribute,
    emulation_layer_own,
    read_messages,
    validation_error,
)


def test_attribution_by_prefixes() -> None:
    a = Message("VUID-a", "ERROR", "x | MessageID = 0x1 | a at 0x10")
    b = Message("VUID-b", "ERROR", "y | MessageID = 0x2 | b")
    # Messages the prefix of k segments reports (k = 0..5); a's handle differs from run to run.
    runs = {
        0: [b],
        1: [b],
        2: [b, Message("VUID-a", "ERROR", "z | MessageID = 0x1 | a at 0x20")],
        3: [b, a],
        4: [b, a, a],
    }
    asked: list[int] = []

    def prefix(k: int) -> tuple[list[str], bool]:
        asked.append(k)
        return [m.signature for m in runs[k]], True

    full = [b, a, a, a]  # the run of all 5 segments
    assert attribute(full, 5, prefix) == [SETUP, 1, 3, 4]
    assert len(asked) == len(set(asked))  # each prefix ran at most once
    assert attribute([a], 5, lambda k: None) == [None]  # no prefix ran: unknown
    assert attribute([], 5, prefix) == []

    # Prefixes 3 and 4 crash before they report the copies of a that they would draw: what a
    # crashed run reports still counts, what it lacks proves nothing (unknown, not a later
    # segment).
    def crashing(k: int) -> tuple[list[str], bool]:
        signatures, _ = prefix(k)
        return (signatures[:2], False) if k >= 3 else (signatures, True)

    assert attribute(full, 5, crashing) == [SETUP, 1, None, None]


def test_message_words() -> None:
    message = Message(
        "VUID-VkComputePipelineCreateInfo-layout-00703",
        "ERROR",
        "-432263797 - Validation Error: [ VUID-VkComputePipelineCreateInfo-layout-00703 ] "
        "Object 0: handle = 0x320000000032, type = VK_OBJECT_TYPE_SHADER_MODULE; | MessageID = "
        "0xe63c2d8b | Set 0 Binding 1 in VkPipelineLayout 0x340000000034[] not declared The "
        "Vulkan spec states: layout must be consistent (https://www.khronos.org)",
    )
    assert message.detail == "Set 0 Binding 1 in VkPipelineLayout 0x340000000034[] not declared"
    assert message.signature == (
        "VUID-VkComputePipelineCreateInfo-layout-00703: Set 0 Binding 1 in VkPipelineLayout "
        "0x?[] not declared"
    )


def test_log_parsing(tmp_path: Path) -> None:
    log = tmp_path / "v.log"
    log.write_text(
        "VUID-VkComputePipelineCreateInfo-layout-00703(ERROR / SPEC): msgNum: 1 - Validation "
        "Error: [ VUID-VkComputePipelineCreateInfo-layout-00703 ] | Push constant buffer: "
        "member:0 out of range\n    Objects: 1\n        [0] 0x1, type: 15, name: NULL\n"
        "UNASSIGNED-Threading-MultipleThreads(WARN / SPEC): msgNum: 2 - second\n"
    )
    messages = read_messages(log)
    assert [m.id for m in messages] == [
        "VUID-VkComputePipelineCreateInfo-layout-00703",
        "UNASSIGNED-Threading-MultipleThreads",
    ]
    assert messages[0].level == "ERROR" and "Objects" not in messages[0].text
    assert read_messages(tmp_path / "none.log") == []
    # The emulation layer's own pipelines: cleared only when the file has no push constants.
    assert emulation_layer_own(messages[0], file_has_push_constants=False)
    assert not emulation_layer_own(messages[0], file_has_push_constants=True)
    other = Message("VUID-VkComputePipelineCreateInfo-layout-00703", "ERROR", "descriptor 2")
    assert not emulation_layer_own(other, file_has_push_constants=False)


def test_verify_names_the_model_not_its_temporary_vgf(monkeypatch: pytest.MonkeyPatch) -> None:
    import vgfc.runner
    from vgfc.runner.numeric import random_inputs
    from vgfc.runner.oracle import verify_numbers

    def fails(path: Path, *args: object, **kwargs: object) -> None:
        raise VgfcError("Vulkan validation reported 1 message(s)", file=str(path))

    monkeypatch.setattr(vgfc.runner, "run_checked", fails)
    model = SAMPLES_DIR / "mixed.tosa"
    result = compile_model(model)
    assert result.graph is not None
    inputs = random_inputs(result.graph)
    with pytest.raises(VgfcError) as err:
        verify_numbers(model, result, inputs, against="expected", expected={"x": inputs["input-0"]})
    assert str(err.value).startswith(f"{model}: Vulkan validation")


def test_error_lines(tmp_path: Path) -> None:
    path = tmp_path / "mixed.vgf"
    path.write_bytes(compile_model(SAMPLES_DIR / "mixed.tosa").vgf)
    model = read_vgf(path)
    a = Message("VUID-a", "ERROR", "x | MessageID = 0x1 | a at 0x10 The Vulkan spec states: ...")
    one = validation_error(model, [a, a], [3, 3])
    assert one.message == (
        "Vulkan validation reported 2 message(s): segment 3 'compute_segment_1' (compute, "
        "module 'square'): VUID-a: a at 0x10 (x2)"
    )
    assert one.excerpt == ()
    graph = validation_error(model, [a], [0])
    assert "segment 0 'graph_segment_0' (graph): VUID-a" in graph.message
    b = Message("VUID-b", "ERROR", "b")
    spread = validation_error(model, [b, a, a], [SETUP, 1, None])
    assert spread.message == "Vulkan validation reported 3 message(s) in segments set-up, 1, " + (
        "unknown: VUID-b, VUID-a (x2)"
    )
    assert spread.excerpt == (
        "no segment (resource set-up): VUID-b: b",
        "segment 1 'compute_segment_0' (compute, module 'leaky_relu'): VUID-a: a at 0x10",
        "segment unknown: VUID-a: a at 0x10",
    )
    many = [Message(f"VUID-{i}", "ERROR", "m") for i in range(25)]
    capped = validation_error(model, many, [1] * 25)
    assert len(capped.excerpt) == 10 and capped.excerpt[-1] == "... and 16 more"


def test_a_long_message_is_never_cut(tmp_path: Path) -> None:
    """The layer's words are whole in the error's lines and in the findings ``--json`` prints;
    a line too long for one message goes under a short one."""
    path = tmp_path / "mixed.vgf"
    path.write_bytes(compile_model(SAMPLES_DIR / "mixed.tosa").vgf)
    model = read_vgf(path)
    words = "Attempted write update to combined image sampler descriptor failed " + "x" * 1500
    long = Message("VUID-long", "ERROR", f"o | MessageID = 0x1 | {words} The Vulkan spec states: s")
    error = validation_error(model, [long], [3])
    assert error.message == (
        "Vulkan validation reported 1 message(s) in segment 3 'compute_segment_1' (compute, "
        "module 'square'): VUID-long"
    )
    assert error.excerpt == (
        f"segment 3 'compute_segment_1' (compute, module 'square'): VUID-long: {words}",
    )
    (finding,) = error.findings
    assert finding.to_json() == {
        "segment": 3,
        "where": "segment 3 'compute_segment_1' (compute, module 'square')",
        "id": "VUID-long",
        "level": "ERROR",
        "message": words,
    }
