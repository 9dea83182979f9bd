"""The pass stage: each pass on small graphs (what it removes, composes, merges and keeps), the
stage in the spine (``--stop-after passes``, ``-O0``, the report's ``passes``), and the outputs of
a real network the same, bit for bit, with and without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from pass_graphs import pass_graph

import vgfc
from vgfc.compiler import compile_model
from vgfc.ir import CUSTOM_SHADER_DOMAIN, DType, Graph
from vgfc.limits import LIMITS
from vgfc.passes import PASSES, run_passes
from vgfc.passes.evaluate import FOLDABLE, SAME_BYTES, evaluators
from vgfc.passes.fold import fold
from vgfc.record import replace
from vgfc.report import load_schema
from vgfc.verify import verify

REAL = Path(__file__).resolve().parents[2] / "data" / "real"
SAMPLES = Path(__file__).resolve().parents[3] / "samples"


F = DType.FP32
SHADER = {"operator_name": "blur", "domain_name": CUSTOM_SHADER_DOMAIN}


def _ops(graph: Graph) -> list[tuple[str, tuple[str, ...]]]:
    return [(op.op, op.inputs) for op in graph.operators]


def test_the_evaluator_table_is_the_foldable_set() -> None:
    assert set(evaluators()) | SAME_BYTES == FOLDABLE
    assert not set(evaluators()) & SAME_BYTES


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (DType.FP32, [0.5, -0.0, float("inf"), 3.0e38, 1.0, -2.0]),
        (DType.FP16, [0.5, -0.0, float("inf"), 65504.0, 1.0, -2.0]),
        (DType.BF16, [1.5, -2.0, 0.0, 3.0, 4.0, -0.5]),  # numpy has no arithmetic for it
        (DType.INT16, [-(2**15), 2**15 - 1, 0, -1, 5, 6]),
        (DType.BOOL, [1, 0, 0, 1, 1, 0]),
    ],
)
@pytest.mark.parametrize("op", sorted(SAME_BYTES))
def test_a_reshape_of_a_constant_folds_on_its_bytes(
    op: str, dtype: DType, values: list[float]
) -> None:
    # y = CONCAT(RESHAPE or IDENTITY of a constant, x): the folded constant holds the bytes of
    # the one it was made from under the output's shape. (The fold alone: the pass stage's
    # simplify step would remove the IDENTITY first.)
    shape = (3, 2) if op == "RESHAPE" else (2, 3)
    graph = pass_graph(
        [
            (op, ["k", "s"] if op == "RESHAPE" else ["k"], ["a"], {}),
            ("CONCAT", ["a", "x"], ["y"], {"axis": 0}),
        ],
        {
            "k": ((2, 3), dtype, values),
            "s": ((2,), DType.SHAPE, list(shape)),
            "a": (shape, dtype, None),
            "x": (shape, dtype, None),
            "y": ((shape[0] * 2, shape[1]), dtype, None),
        },
        ["x"],
        ["y"],
    )
    done = fold(graph)
    assert [(r.pass_name, r.kind, r.action) for r in done.rewrites] == [("fold", op, "folded")]
    folded, source = done.graph.tensors["a"].data, graph.tensors["k"].data
    assert folded is not None and source is not None and folded.shape == shape
    assert bytes(folded.raw) == bytes(source.raw)
    assert folded.numbers() == source.numbers()


def test_identities_and_inverse_transposes_go_and_outputs_keep_their_names() -> None:
    graph = pass_graph(
        [
            ("IDENTITY", ["x"], ["a"], {}),
            ("TRANSPOSE", ["a"], ["b"], {"perms": (1, 0)}),
            ("TRANSPOSE", ["b"], ["c"], {"perms": (1, 0)}),
            ("ABS", ["c"], ["d"], {}),
            ("IDENTITY", ["d"], ["y"], {}),
        ],
        {n: ((2, 3) if n != "b" else (3, 2), F, None) for n in "xabcdy"},
        ["x"],
        ["y"],
    )
    done = run_passes(graph)
    assert _ops(done.graph) == [("ABS", ("x",)), ("IDENTITY", ("d",))]  # y is still y
    verify(done.graph)
    removed = {(r.pass_name, r.op, r.kind) for r in done.rewrites if r.action == "removed"}
    assert ("simplify", 0, "IDENTITY") in removed and ("dead-code", 1, "TRANSPOSE") in removed


def test_transposes_compose_and_reshapes_chain_into_one() -> None:
    graph = pass_graph(
        [
            ("TRANSPOSE", ["x"], ["a"], {"perms": (1, 2, 0)}),
            ("TRANSPOSE", ["a"], ["b"], {"perms": (1, 0, 2)}),
            ("RESHAPE", ["b", "s1"], ["c"], {}),
            ("RESHAPE", ["c", "s2"], ["y"], {}),
        ],
        {
            "x": ((2, 3, 4), F, None),
            "a": ((3, 4, 2), F, None),
            "b": ((4, 3, 2), F, None),
            "s1": ((2,), DType.SHAPE, [12, 2]),
            "c": ((12, 2), F, None),
            "s2": ((1,), DType.SHAPE, [24]),
            "y": ((24,), F, None),
        },
        ["x"],
        ["y"],
    )
    done = run_passes(graph)
    ops = done.graph.operators
    assert [op.op for op in ops if not op.is_constant] == ["TRANSPOSE", "RESHAPE"]
    transpose, reshape = (op for op in ops if not op.is_constant)
    x = np.arange(24).reshape(2, 3, 4)
    assert transpose.inputs == ("x",)
    perms = transpose.attrs["perms"]
    assert np.transpose(x, perms).shape == (4, 3, 2)
    assert (np.transpose(x, perms) == np.transpose(np.transpose(x, (1, 2, 0)), (1, 0, 2))).all()
    assert reshape.inputs[0] == transpose.outputs[0] and reshape.outputs == ("y",)


@pytest.mark.parametrize(
    ("op", "operands", "values"),
    [
        ("PAD", ["p", "v"], {"p": ((4,), DType.SHAPE, [0, 0, 0, 0]), "v": ((1,), F, [0])}),
        ("SLICE", ["s", "n"], {"s": ((2,), DType.SHAPE, [0, 0]), "n": ((2,), DType.SHAPE, [2, 3])}),
        ("TILE", ["m"], {"m": ((2,), DType.SHAPE, [1, 1])}),
        ("RESHAPE", ["r"], {"r": ((2,), DType.SHAPE, [2, 3])}),
    ],
)
def test_a_no_op_layout_change_is_removed(
    op: str, operands: list[str], values: dict[str, Any]
) -> None:
    graph = pass_graph(
        [(op, ["x", *operands], ["a"], {}), ("ABS", ["a"], ["y"], {})],
        {"x": ((2, 3), F, None), "a": ((2, 3), F, None), "y": ((2, 3), F, None), **values},
        ["x"],
        ["y"],
    )
    assert _ops(run_passes(graph).graph) == [("ABS", ("x",))]


def test_shader_ops_are_never_removed_merged_or_rewired() -> None:
    graph = pass_graph(
        [
            ("IDENTITY", ["x"], ["a"], {}),
            ("CUSTOM", ["a"], ["b"], SHADER),
            ("CUSTOM", ["a"], ["c"], SHADER),  # the same op twice: both stay
            ("CUSTOM", ["x"], ["unread"], SHADER),
            ("ADD", ["b", "c"], ["y"], {}),
        ],
        {n: ((1, 4), F, None) for n in ("x", "a", "b", "c", "unread", "y")},
        ["x"],
        ["y"],
    )
    done = run_passes(graph)
    assert done.rewrites == () and done.graph is graph


def test_duplicates_are_merged_and_the_unread_removed() -> None:
    graph = pass_graph(
        [
            ("CONST", [], ["k1"], {}),
            ("CONST", [], ["k2"], {}),
            ("ADD", ["x", "k1"], ["a"], {}),
            ("ADD", ["x", "k2"], ["b"], {}),
            ("SUB", ["a", "b"], ["y"], {}),
            ("ABS", ["x"], ["unread"], {}),
        ],
        {
            "k1": ((1, 4), F, [1.0, 2.0, 3.0, 4.0]),
            "k2": ((1, 4), F, [1.0, 2.0, 3.0, 4.0]),
            **{n: ((1, 4), F, None) for n in ("x", "a", "b", "y", "unread")},
        },
        ["x"],
        ["y"],
    )
    done = run_passes(graph)
    assert _ops(done.graph) == [("CONST", ()), ("ADD", ("x", "k1")), ("SUB", ("a", "a"))]
    assert {(r.pass_name, r.op) for r in done.rewrites} == {
        ("dedupe", 1),
        ("dedupe", 3),
        ("dead-code", 1),
        ("dead-code", 3),
        ("dead-code", 5),
    }
    assert [op.file_index for op in done.graph.operators] == [0, 2, 4]  # diagnostics' numbers


def _int_chain(size: int) -> Graph:
    return pass_graph(
        [
            ("CONST", [], ["k"], {}),
            ("CONST", [], ["one"], {}),
            ("ADD", ["k", "one"], ["a"], {}),
            ("ADD", ["a", "x"], ["y"], {}),
        ],
        {
            "k": ((size,), DType.INT32, np.arange(size)),
            "one": ((1,), DType.INT32, [1]),
            **{n: ((size,), DType.INT32, None) for n in "axy"},
        },
        ["x"],
        ["y"],
    )


def test_folding_makes_a_constant_and_stops_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_passes(_int_chain(4))
    (const, add) = done.graph.operators
    assert const.op == "CONST" and const.outputs == ("a",) and add.inputs == ("a", "x")
    assert done.graph.tensors["a"].data is not None
    assert done.graph.tensors["a"].data.tolist() == [1, 2, 3, 4]
    # A result of more bytes than the limit is left for the GPU.
    import vgfc.passes.fold as fold

    monkeypatch.setattr(fold, "LIMITS", replace(LIMITS, folded_constant_bytes_max=15))
    assert [op.op for op in run_passes(_int_chain(4)).graph.operators] == [
        "CONST",
        "CONST",
        "ADD",
        "ADD",
    ]


def test_an_overflowing_add_or_a_graph_output_is_not_folded() -> None:
    graph = pass_graph(
        [("CONST", [], ["k"], {}), ("ADD", ["k", "k"], ["a"], {}), ("ADD", ["k", "k"], ["y"], {})],
        {"k": ((1,), DType.INT32, [2**30]), "a": ((1,), DType.INT32, None)}
        | {"y": ((1,), DType.INT32, None), "x": ((1,), DType.INT32, None)},
        ["x"],
        ["y", "a"],
    )
    assert run_passes(graph).rewrites == ()  # 2**31 leaves INT32; y and a are outputs


def test_o0_runs_only_the_required_passes() -> None:
    assert [p.name for p in PASSES if p.required] == ["control-flow", "type-narrowing"]
    assert run_passes(_int_chain(4), optimize=False).rewrites == ()


def test_the_stage_is_in_the_spine_and_the_report(cli: Any, tmp_path: Path) -> None:
    model = SAMPLES / "mixed.tosa"  # a constant written twice
    stopped = cli("check", str(model), "--stop-after", "passes")
    assert stopped.code == 0, stopped.err
    out, report = tmp_path / "m.vgf", tmp_path / "m.json"
    run = cli("compile", str(model), "-o", str(out), "--report", str(report))
    assert run.code == 0, run.err
    doc = json.loads(report.read_text())
    jsonschema.validate(doc, load_schema("report.schema.json"))
    assert "passes" in doc["timings"]
    assert [(r["pass"], r["op"], r["kind"], r["action"]) for r in doc["passes"]] == [
        ("dedupe", 7, "CONST", "replaced"),
        ("dead-code", 7, "CONST", "removed"),
    ]
    plain = cli("compile", "-O0", str(model), "-o", str(out), "--report", str(report))
    assert plain.code == 0, plain.err
    assert json.loads(report.read_text())["passes"] == []
    refused = cli("compile", "-O1", str(model), "-o", str(out))
    assert refused.code == 2 and "No such option" in refused.err  # -O0 is the only level
    with pytest.raises(ValueError, match="optimize must be True or False"):
        vgfc.compile(model, optimize="0")


def test_a_real_network_computes_the_same_bits_folded(stack: object, tmp_path: Path) -> None:
    from vgfc.runner import run_vgf

    model = REAL / "tflite" / "face_detection_short_range.tosa"
    folded, plain = tmp_path / "folded.vgf", tmp_path / "plain.vgf"
    vgfc.compile(model, folded)
    vgfc.compile(model, plain, optimize=False)
    graph = compile_model(model, stop_after="read").graph
    assert graph is not None
    rng = np.random.default_rng(7)
    inputs = [rng.uniform(-1, 1, graph.tensors[n].shape).astype(np.float32) for n in graph.inputs]
    have, want = run_vgf(folded, inputs), run_vgf(plain, inputs)
    for a, b in zip(have.values(), want.values(), strict=True):
        assert a.tobytes() == b.tobytes()
