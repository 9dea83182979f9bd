"""``--validate``: the Khronos validation layer under the emulation layers judges vgfc's files.

Every sample, the real network and a spread of conformance tests compiled by vgfc run without
a validation message on lavapipe; the reference converter's ``custom(x, x)`` file, which drops a
binding its shader uses, is caught. Each message is put in the segment it comes from: files
broken on purpose (a binding dropped from chosen compute segments of a six-segment file) check
that the right segments are named. ``make test`` installs the layer (Debian
vulkan-validationlayers), so nothing here is skipped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from paths import ROOT
from reference_tools import reference_convert
from samples_module import SAMPLES_DIR

from vgfc.compiler import compile_model
from vgfc.ir import Array
from vgfc.record import replace
from vgfc.runner import read_vgf, run_vgf
from vgfc.runner.formats import element_format
from vgfc.runner.validation import (
    ValidationError,
    emulation_layer_own,
    find_layer,
    read_messages,
)
from vgfc.vgf.encode import encode
from vgfc.vgf.model import COMPUTE_STAGE, DescriptorSet, Model, PushConstantRange, Segment

CONFORMANCE = sorted((ROOT / "tests" / "data" / "conformance").glob("*/test.tosa"))
MODELS = [
    *sorted(SAMPLES_DIR.glob("*.tosa")),
    ROOT / "tests" / "data" / "real" / "tflite" / "face_detection_short_range.tosa",
    *CONFORMANCE[::40],
]


def _inputs(model: Model) -> list[Array]:
    rng = np.random.default_rng(0)
    arrays = []
    for x in model.inputs:
        resource = model.resource_of(x)
        dtype = element_format(resource.format).dtype
        if dtype.kind == "f":
            arrays.append(rng.uniform(-1, 1, resource.shape).astype(dtype))
        else:
            arrays.append(rng.integers(-3, 3, resource.shape).astype(dtype))
    return arrays


def _run(vgf: Path, workdir: Path | None = None) -> None:
    model = read_vgf(vgf)
    pushes = {
        i: b"\0" * s.push_constant_size
        for i, s in enumerate(model.segments)
        if s.push_constant_size
    }
    run_vgf(vgf, _inputs(model), pushes, workdir, validate=True)


def _compiled(sample: str, tmp_path: Path) -> Model:
    result = compile_model(SAMPLES_DIR / f"{sample}.tosa")
    assert result.vgf is not None
    path = tmp_path / f"{sample}.vgf"
    path.write_bytes(result.vgf)
    return read_vgf(path)


def _write(model: Model, segments: Sequence[Segment], path: Path) -> Path:
    path.write_bytes(encode(replace(model, segments=tuple(segments))))
    return path


def _drop_first_binding(segment: Segment) -> Segment:
    """The reference converter's bug, on purpose: the layout lacks a binding the shader uses."""
    (first, *rest) = segment.descriptor_sets
    return replace(segment, descriptor_sets=(DescriptorSet(first.set, first.slots[1:]), *rest))


def test_the_layer_is_installed() -> None:
    assert find_layer().is_file()


@pytest.mark.parametrize("path", MODELS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_vgfc_files_are_validation_clean(path: Path, tmp_path: Path) -> None:
    vgf = tmp_path / "m.vgf"
    result = compile_model(path)
    assert result.vgf is not None
    vgf.write_bytes(result.vgf)
    _run(vgf)


def test_the_reference_converters_duplicated_binding_is_caught(tmp_path: Path) -> None:
    ref = reference_convert(SAMPLES_DIR / "dup.tosa", tmp_path / "ref.vgf")
    with pytest.raises(ValidationError) as err:
        _run(ref)
    assert "VUID-VkComputePipelineCreateInfo-layout-00703" in str(err.value)
    assert len(str(err.value)) < 1000  # one bounded line, however many messages
    # A graph segment, then the broken compute segment: every message is the shader's.
    assert "reported 2 message(s) in segment 1 'compute_segment_0' (compute, module " in str(
        err.value
    )
    assert {f.segment for f in err.value.findings} == {1}
    lines = err.value.excerpt
    assert len(lines) == 2
    assert all(line.startswith("segment 1 'compute_segment_0' (compute, ") for line in lines)


def test_each_message_is_put_in_its_segment(tmp_path: Path) -> None:
    """mixed: graph, leaky_relu, graph, square, channel_reverse, graph. Break segments 1 and 3
    the same way: the same message comes twice, and each copy goes to its own segment."""
    model = _compiled("mixed", tmp_path)
    kinds = [s.type.value for s in model.segments]
    assert kinds == ["graph", "compute", "graph", "compute", "compute", "graph"]
    segments = list(model.segments)
    for i in (1, 3):
        segments[i] = _drop_first_binding(segments[i])
    broken = _write(model, segments, tmp_path / "broken.vgf")
    with pytest.raises(ValidationError) as err:
        _run(broken, tmp_path / "work")
    findings = err.value.findings
    layout = "VUID-VkComputePipelineCreateInfo-layout-00703"
    assert [f.segment for f in findings if f.message.id == layout] == [1, 3]
    assert {f.segment for f in findings} == {1, 3}
    assert f"reported 3 message(s) in segments 1, 3: {layout} (x2), VUID-" in str(err.value)
    lines = err.value.excerpt
    assert lines[0].startswith(
        f"segment 1 'compute_segment_0' (compute, module 'leaky_relu'): {layout}: "
    )
    assert lines[1].startswith(
        f"segment 3 'compute_segment_1' (compute, module 'square'): {layout}: "
    )
    # One line per message and segment, each with the rule and its words. (The layer reports
    # -02699 for the first broken dispatch only.)
    assert len(lines) == len(findings) == 3
    assert all(" in shader " in line for line in lines if layout in line)
    # The prefixes it ran are kept in the work folder, each with its own log.
    prefixes = sorted((tmp_path / "work" / "segments").glob("prefix_*/model.vgf"))
    assert prefixes
    # A bisection: fewer runs than segments.
    assert len(prefixes) < len(model.segments)


def test_a_later_segment_alone_is_named(tmp_path: Path) -> None:
    model = _compiled("mixed", tmp_path)
    segments = list(model.segments)
    segments[4] = _drop_first_binding(segments[4])
    with pytest.raises(ValidationError) as err:
        _run(_write(model, segments, tmp_path / "broken.vgf"))
    assert {f.segment for f in err.value.findings} == {4}
    where = "segment 4 'compute_segment_2' (compute, module 'channel_reverse')"
    assert {f.where for f in err.value.findings} == {where}
    assert f"message(s) in {where}: " in str(err.value)


def test_the_cli_prints_each_message_with_its_segment(cli, tmp_path: Path) -> None:
    model = _compiled("mixed", tmp_path)
    segments = list(model.segments)
    segments[3] = _drop_first_binding(segments[3])
    broken = _write(model, segments, tmp_path / "broken.vgf")
    args = []
    for i, array in enumerate(_inputs(model)):
        np.save(tmp_path / f"x{i}.npy", array)
        args += ["-i", str(tmp_path / f"x{i}.npy")]
    run = cli("run", str(broken), *args, "--validate")
    assert run.code != 0
    err = " ".join(run.err.split())  # rich may wrap long lines
    assert "message(s) in segment 3 'compute_segment_1' (compute, module 'square'): " in err
    assert "segment 3 'compute_segment_1' (compute, module 'square'): VUID-vkCmdDispatch-" in err
    # --json: the same findings on stdout, each message whole, and the error on stderr.
    run = cli("run", str(broken), *args, "--validate", "--json")
    assert run.code == 1 and "message(s) in segment 3" in " ".join(run.err.split())
    doc = json.loads(run.out)
    assert doc["ok"] is False and doc["validated"] is True
    found = [f for f in doc["validation"] if f["segment"] == 3]
    assert any(f["id"].startswith("VUID-vkCmdDispatch-") for f in found)
    assert all(f["message"] and not f["message"].endswith("...") for f in found)


def test_emulation_layer_messages_in_graph_segments_are_set_aside(tmp_path: Path) -> None:
    """sets: transposes around a shader. The graph layer's TRANSPOSE pipelines raise -00703
    "Push constant buffer"; once the shader declares push constants only the segment tells
    the layer's messages from the file's, and they are in the graph segments."""
    model = _compiled("sets", tmp_path)
    segments = list(model.segments)
    assert [s.type.value for s in segments] == ["graph", "compute", "graph"]
    segments[1] = replace(
        segments[1], push_constant_ranges=(PushConstantRange(COMPUTE_STAGE, 0, 8),)
    )
    path = _write(model, segments, tmp_path / "push.vgf")
    _run(path, tmp_path / "work")
    emulation = [
        m
        for m in read_messages(tmp_path / "work" / "validation.log")
        if emulation_layer_own(m, False)
    ]
    assert emulation  # the layer's messages are there, and were set aside by their segment


def test_cli_says_where_it_ran_and_that_it_validated(cli, tmp_path: Path) -> None:
    vgf = tmp_path / "m.vgf"
    assert cli("compile", str(SAMPLES_DIR / "simple.tosa"), "-o", str(vgf), "-q").code == 0
    x = tmp_path / "x.npy"
    np.save(x, _inputs(read_vgf(vgf))[0])
    run = cli("run", str(vgf), "-i", str(x), "--validate", "--device", "cpu")
    assert run.code == 0, run.err
    assert "ran on lavapipe (CPU)" in run.out and "validation-clean" in run.out
    run = cli("run", str(vgf), "-i", str(x), "--validate", "--json")
    doc = json.loads(run.out)
    assert doc["validated"] is True and doc["device"] == "cpu"
