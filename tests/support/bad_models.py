"""Broken TOSA files, one per structural error the reader and verify refuse: (description, model
bytes, a fragment of the one-line message). The reader tests check each message; the pipeline
test checks that ``vgfc check`` and ``vgfc compile`` give the same first error on each."""

from __future__ import annotations

from tosa_factory import Op, T, build, chain


def _bad_models() -> list[tuple[str, bytes, str]]:
    good = chain(2)
    return [
        ("empty", b"", "file is empty"),
        ("tiny", b"TO\0", "too short"),
        (
            "identifier",
            good[:4] + b"ONNX" + good[8:],
            "file identifier is b'ONNX', expected b'TOSA'",
        ),
        ("truncated", good[: len(good) // 2], "malformed TOSA flatbuffer"),
        (
            "unknown op",
            build([T("x"), T("y")], [Op(250, ["x"], ["y"])], ["x"], ["y"]),
            "op #0: unknown op code 250",
        ),
        (
            "dangling",
            build(
                [T("x"), T("y")],
                [Op("ABS", ["x"], ["y"]), Op("ABS", ["nope"], ["y2"])],
                ["x"],
                ["y"],
            ),
            "op #1 ABS: tensor 'nope': refers to a tensor the model does not define",
        ),
        (
            "cycle",
            build(
                [T("x"), T("a"), T("b"), T("y")],
                [Op("ADD", ["x", "b"], ["a"]), Op("ABS", ["a"], ["b"]), Op("ABS", ["a"], ["y"])],
                ["x"],
                ["y"],
            ),
            "op #0 ADD: tensor 'b': is part of a cycle",
        ),
        (
            "two writers",
            build(
                [T("x"), T("y")],
                [Op("ABS", ["x"], ["y"]), Op("NEGATE", ["x"], ["y"])],
                ["x"],
                ["y"],
            ),
            "op #1 NEGATE: tensor 'y': writes a tensor already written by op #0 ABS",
        ),
        (
            "never written",
            build([T("x"), T("u"), T("y")], [Op("ADD", ["x", "u"], ["y"])], ["x"], ["y"]),
            "op #0 ADD: tensor 'u': reads a tensor that is never written",
        ),
        (
            "missing output",
            build([T("x"), T("y")], [Op("ABS", ["x"], ["y"])], ["x"], ["zzz"]),
            "tensor 'zzz': graph output is not a tensor of the model",
        ),
        (
            "duplicate tensor",
            build([T("x"), T("x"), T("y")], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]),
            "tensor 'x': tensor is defined more than once",
        ),
        (
            "short constant",
            build(
                [T("c", (4,), "FP32", b"\0" * 8), T("y", (4,))],
                [Op("CONST", [], ["c"]), Op("ABS", ["c"], ["y"])],
                [],
                ["y"],
            ),
            "tensor 'c': constant data has 8 bytes, shape [4] of FP32 needs 16",
        ),
        (
            "unknown dtype",
            build([T("x", dtype="UNKNOWN"), T("y")], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]),
            "tensor 'x': tensor has no element type (UNKNOWN)",
        ),
        (
            "missing region",
            build(
                [T("c", (1,), "BOOL", b"\1"), T("x"), T("y")],
                [
                    Op("CONST", [], ["c"]),
                    Op(
                        "COND_IF",
                        ["c", "x"],
                        ["y"],
                        "CondIfAttribute",
                        {"then_graph": "then", "else_graph": "else"},
                    ),
                ],
                ["x"],
                ["y"],
                extra_regions=["then"],
            ),
            "op #1 COND_IF: else_graph: refers to region 'else', which the model lacks",
        ),
    ]


BAD = _bad_models()
