"""Hostile input: every limit of ``vgfc.limits`` holds, and every failure is one short line.

Regressions for what fuzzing found (issue 14): integers out of the VGF's range reaching the
encoder, JSON that Python's parser refuses (deep nesting, huge numbers), structural edits (a CONST
removed, an op with too many inputs), a huge ``operator_name`` that made compile crawl, and
megabyte attribute values echoed whole into the error. For each, ``vgfc check`` and ``vgfc
compile`` exit 1 with one line on stderr, no "internal error", and a message that stays short.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import ROOT
from shader_models import COPY, attrs, model
from tosa_factory import Op, T, build, custom

from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError
from vgfc.record import fields, replace

HUGE = 5 << 20  # 5 MiB
SHORT = 1000  # characters of stderr a failure may take, whatever the input holds


def fails_cleanly(cli, path: Path, *needles: str) -> str:
    """Run check and compile on ``path``: both exit 1 with the same short line on stderr,
    containing every needle; returns that line."""
    lines = []
    for args in (("check",), ("compile", "-q", "-o", str(path.with_suffix(".vgf")))):
        run = cli(args[0], str(path), *args[1:])
        assert run.code == 1, run.err[:SHORT]
        assert "internal error" not in run.err, run.err[:SHORT]
        assert len(run.err) < SHORT, run.err[:SHORT]
        assert run.err.count("\n") == 1 and f"{path}: error: " in run.err, run.err
        for needle in needles:
            assert needle in run.err
        lines.append(run.err)
    assert not path.with_suffix(".vgf").exists()
    assert lines[0] == lines[1]
    return lines[0]


def placeholder(**over: Any) -> dict[str, Any]:
    """Attributes of a shader op without code: nothing checks them against a shader."""
    return attrs(shader_language=None, shader_code=None, **over)


def payload(extra: bytes) -> bytes:
    """The clean attributes with one more raw JSON member, ``"x": <extra>``."""
    return json.dumps(attrs()).encode()[:-1] + b', "x": ' + extra + b"}"


# -- integers out of range: the VGF holds uint32 ------------------------------------------------


@pytest.mark.parametrize(
    ("payload_", "needles"),
    [
        (attrs(workgroup_sizes=[2**63, 1, 1]), ["workgroup_sizes: x = 9223372036854775808"]),
        (placeholder(workgroup_sizes=[1, 2**63, 1]), ["workgroup_sizes: y = 9223372036854775808"]),
        (placeholder(workgroup_sizes=[1e300, 1, 1]), ["workgroup_sizes: x = 1e+300"]),
        (
            attrs(workgroup_sizes=None, global_size=[2**40, 1, 1]),
            ["global_size: x = 1099511627776"],
        ),
        (placeholder(input_0_binding=2**40), ["input_0_binding: 1099511627776 is more than"]),
        (placeholder(output_0_descriptorset=2**32), ["output_0_descriptorset: 4294967296"]),
        (placeholder(input_0_binding=-1), ["input_0_binding: -1 is less than the minimum of 0"]),
        (
            placeholder(workgroup_sizes=[-1.5, 1, 1]),
            ["workgroup_sizes.0: -1.5 is less than the minimum of 1"],
        ),
        (placeholder(workgroup_sizes=[-2.0, 1, 1]), ["workgroup_sizes.0: -2.0 is less than"]),
        (attrs(push_constants="a: 8192"), ["push_constants: 'a' of 8192 bytes at offset 0"]),
        (attrs(push_constants="a: 2048, b: 4096"), ["'b' of 4096 bytes at offset 2048 ends past"]),
        (attrs(push_constants="a: " + "9" * 900), ["push_constants: 'a' of 999999"]),
    ],
)
def test_numbers_outside_the_vgf_range(
    cli, tmp_path: Path, payload_: dict[str, Any], needles: list[str]
) -> None:
    fails_cleanly(cli, model(tmp_path, payload_), *needles)


def test_integral_floats_are_integers(cli, tmp_path: Path) -> None:
    """JSON ``-0.0`` and ``2.0`` are integers to the schema: they reach the VGF as ints."""
    from vgfc.vgf.decode import decode

    path = model(tmp_path, placeholder(input_0_binding=-0.0, workgroup_sizes=[2.0, 1.0, 1.0]))
    out = tmp_path / "m.vgf"
    run = cli("compile", "-q", str(path), "-o", str(out))
    assert run.code == 0, run.err
    segment = decode(out.read_bytes()).segments[1]
    assert segment.dispatch == (2, 1, 1)
    assert [s.binding for d in segment.descriptor_sets for s in d.slots] == [0, 1]


def test_counts_above_the_portable_limit_warn(cli, tmp_path: Path) -> None:
    path = model(tmp_path, attrs(workgroup_sizes=[70000, 1, 1]))
    run = cli("check", str(path))
    assert run.code == 0, run.err
    assert (
        "workgroup_sizes: workgroup counts [70000, 1, 1] (x = 70000) go past 65535, the "
        "maxComputeWorkGroupCount every Vulkan device supports" in run.err
    )
    derived = model(tmp_path, attrs(workgroup_sizes=None, global_size=[1, 1, 70000]))
    run = cli("check", str(derived))
    assert run.code == 0, run.err
    assert "global_size: workgroup counts [1, 1, 70000] (z = 70000) go past 65535" in run.err
    clean = model(tmp_path, attrs(workgroup_sizes=[65535, 1, 1]))
    assert "65535" not in cli("check", str(clean)).err


# -- JSON Python's parser refuses ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (b"[" * 5000 + b"]" * 5000, "implementation_attrs: arrays and objects nest 5001 deep"),
        (b"[" * 100_000 + b"]" * 100_000, "nest 100001 deep, more than the 64 vgfc reads"),
        (b'{"a": ' * 5000 + b"1" + b"}" * 5000, "nest 5001 deep"),
        (b"[" * 100_000, "nest 100001 deep"),  # unclosed too
        (b"[" * 64 + b"]" * 64, "nest 65 deep, more than the 64"),  # one past the limit
        (b'["\\\\", ' + b"[" * 64 + b"]" * 65, "nest 66 deep"),  # a string ending in \\
        (b"1" * 5000, "a number of 5000 characters (1111"),
        (b"-" + b"1" * 5000 + b".5e3", "a number of 5005 characters"),
        (b"0." + b"5" * 100, "a number of 102 characters"),
    ],
)
def test_json_the_parser_refuses(cli, tmp_path: Path, extra: bytes, needle: str) -> None:
    fails_cleanly(cli, model(tmp_path, payload(extra)), needle)


@pytest.mark.parametrize(
    "extra",
    [
        json.dumps("[" * 100_000 + "{" * 1000).encode(),  # brackets inside a string
        json.dumps('\\"' + "[" * 1000).encode(),  # after an escaped quote, still in the string
        b"[" * 63 + b"]" * 63,  # in the top-level object: exactly the limit
        b"1" * 64,
    ],
    ids=["in-string", "escaped-quote", "depth-limit", "64-digits"],
)
def test_json_within_the_limits_is_read(cli, tmp_path: Path, extra: bytes) -> None:
    run = cli("check", str(model(tmp_path, payload(extra))))
    assert run.code == 0, run.err[:SHORT]


# -- structural edits ---------------------------------------------------------------------------


def _const_model(*, with_const: bool, as_output: bool = False) -> bytes:
    c = T("c", (1, 4), data=np.arange(4, dtype=np.float32))
    ops = [Op("CONST", [], ["c"], "ConstAttribute")] if with_const else []
    ops.append(Op("ADD", ["x", "c"], ["y"]))
    outputs = ["y", "c"] if as_output else ["y"]
    return build([T("x"), c, T("y")], ops, ["x"], outputs)


def test_a_removed_const_is_an_input_error(cli, tmp_path: Path) -> None:
    path = tmp_path / "m.tosa"
    path.write_bytes(_const_model(with_const=True))
    assert cli("check", str(path)).code == 0
    path.write_bytes(_const_model(with_const=False))
    fails_cleanly(
        cli,
        path,
        "op #0 ADD: tensor 'c': reads constant data that no CONST or CONST_SHAPE operator produces",
    )


def test_a_removed_const_read_only_as_a_graph_output(cli, tmp_path: Path) -> None:
    path = tmp_path / "m.tosa"
    ops = [Op("ABS", ["x"], ["y"])]
    c = T("c", (1, 4), data=np.arange(4, dtype=np.float32))
    path.write_bytes(build([T("x"), c, T("y")], ops, ["x"], ["y", "c"]))
    fails_cleanly(cli, path, "tensor 'c': graph output is constant data that no CONST")


def _rescale(extra_inputs: int) -> bytes:
    consts = {
        "multiplier": T("multiplier", (1,), "INT32", np.array([1 << 14], np.int32)),
        "shift": T("shift", (1,), "INT8", np.array([14], np.int8)),
        "input_zp": T("input_zp", (1,), "INT8", np.zeros(1, np.int8)),
        "output_zp": T("output_zp", (1,), "INT8", np.zeros(1, np.int8)),
    }
    ops = [Op("CONST", [], [name], "ConstAttribute") for name in consts]
    fields = dict(
        scale32=True,
        rounding_mode=1,
        per_channel=False,
        input_unsigned=False,
        output_unsigned=False,
    )
    inputs = ["x", *consts, *["x"] * extra_inputs]
    ops.append(Op("RESCALE", inputs, ["y"], "RescaleAttribute", fields))
    tensors = [T("x", (1, 4), "INT8"), *consts.values(), T("y", (1, 4), "INT8")]
    return build(tensors, ops, ["x"], ["y"])


def test_an_op_with_too_many_inputs_is_an_input_error(cli, tmp_path: Path) -> None:
    path = tmp_path / "m.tosa"
    path.write_bytes(_rescale(0))
    assert cli("check", str(path)).code == 0
    path.write_bytes(_rescale(1))
    fails_cleanly(
        cli,
        path,
        "op #4 RESCALE: has 6 inputs, more than RESCALE takes "
        "(5: input, multiplier, shift, input_zp, output_zp)",
    )


def test_operand_counts_are_checked_before_anything_is_emitted() -> None:
    """The count is an error of the op itself, found in lowering's first pass."""
    import vgfc
    from vgfc.read.reader import loads
    from vgfc.spirv.tosa_ops import check_operand_counts

    graph = loads(_rescale(1))
    with pytest.raises(vgfc.VgfcError, match=r"op #4 RESCALE: has 6 inputs"):
        check_operand_counts(graph.operators[4])
    short = replace(graph.operators[4], inputs=("x", "multiplier"))
    with pytest.raises(vgfc.VgfcError, match=r"op #4 RESCALE: input 'shift' is missing"):
        check_operand_counts(short)


# -- huge names and values ----------------------------------------------------------------------


def test_a_huge_operator_name_fails_fast(cli, tmp_path: Path) -> None:
    name = "n" * HUGE
    path = tmp_path / "m.tosa"
    ops = [Op("ABS", ["x"], ["a"]), custom(["a"], ["s"], name, attrs=attrs())]
    path.write_bytes(build([T(n, (1, 64)) for n in ("x", "a", "s")], ops, ["x"], ["s"]))
    fails_cleanly(
        cli,
        path,
        "op #1 CUSTOM: operator_name: 'nnnnn",
        f"... ({HUGE} characters)' is longer than the 1024 characters vgfc reads",
    )
    # It once took minutes: later stages worked on the whole name. Now the reader refuses it,
    # and no stage after it starts.
    stages: list[str] = []
    with pytest.raises(VgfcError, match="operator_name"):
        compile_model(path, on_stage=stages.append)
    assert stages == ["read"]


def test_a_huge_tensor_name_fails_fast(cli, tmp_path: Path) -> None:
    name = "t" * HUGE
    path = tmp_path / "m.tosa"
    path.write_bytes(build([T("x"), T(name)], [Op("ABS", ["x"], [name])], ["x"], [name]))
    fails_cleanly(cli, path, "tensor name 'ttt", f"({HUGE} characters)")


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"entry_point": "m" * HUGE}, "entry_point: the value 'mmm"),
        ({"input_0_vkformat": "VK_FORMAT_" + "A" * HUGE}, "input_0_vkformat: the value"),
        ({"input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_" + "A" * HUGE}, "the value"),
        ({"shader_language": "G" * HUGE}, "shader_language: the value 'GGG"),
        ({"push_constants": "a" * HUGE}, "push_constants: the value 'aaa"),
        ({"input_0_type": "t" * HUGE}, "input_0_type: the value"),
        ({"input_0_" + "x" * HUGE: 1}, "a key 'input_0_xxx"),
        ({"y" * HUGE: 1}, "a key 'yyy"),
        ({"shader_code": "c" * (5 << 20)}, "shader_code: the code 'ccc"),
    ],
)
def test_huge_values_are_quoted_not_echoed(
    cli, tmp_path: Path, over: dict[str, Any], needle: str
) -> None:
    fails_cleanly(cli, model(tmp_path, attrs(**over)), needle, "characters)")


def test_long_values_below_the_limits_are_cut_in_messages(cli, tmp_path: Path) -> None:
    """Values under the length limits still reach messages only through ``quote``."""
    fmt = "VK_FORMAT_" + "Q" * 1000
    line = fails_cleanly(cli, model(tmp_path, attrs(input_0_vkformat=fmt)), "unknown format")
    assert f"'{fmt[:60]}... ({len(fmt)} characters)'" in line
    line = fails_cleanly(
        cli, model(tmp_path, attrs(workgroup_sizes=[1] * 100_000)), "workgroup_sizes:"
    )
    assert "characters)" in line
    line = fails_cleanly(cli, model(tmp_path, attrs(**{"input_0_bind\ning": 0})), "unknown key")
    assert "input_0_bind\\ning" in line


def test_huge_shapes_and_ranks(cli, tmp_path: Path) -> None:
    path = tmp_path / "m.tosa"
    big = (2**31 - 1,) * 4
    path.write_bytes(build([T("x", big), T("y", big)], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]))
    fails_cleanly(cli, path, "tensor 'x': shape [2147483647,", "more than the 4294967296")
    deep = (1,) * 33
    path.write_bytes(build([T("x", deep), T("y", deep)], [Op("ABS", ["x"], ["y"])], ["x"], ["y"]))
    fails_cleanly(cli, path, "tensor 'x': rank 33 is more than the 32 vgfc reads")


# -- the table and its helpers ------------------------------------------------------------------


def test_quote_cuts_and_escapes() -> None:
    from vgfc.limits import clip, quote

    assert quote("main") == "main"
    assert quote("x" * HUGE) == "x" * 60 + f"... ({HUGE} characters)"
    assert quote("a\nb\x00") == "a\\nb\\x00"
    assert quote([1, 2]) == "[1, 2]"
    assert quote("abcdef", limit=3) == "abc... (6 characters)"
    assert clip("x" * 5000, 100) == clip(clip("x" * 5000, 100), 100)
    assert len(clip("x" * 5000, 100)) == 100


def test_diagnostics_stay_short_whatever_they_are_given() -> None:
    from vgfc.diagnostics import Diagnostic, InputError, Location, Severity

    error = InputError("m" * HUGE, Location(file="f", name="n" * HUGE, tensor="t\n", key="k"))
    text = error.render()
    assert len(text) < 1500 and "\n" not in text
    assert "'t\\n'" in text and f"({HUGE} characters)" in text
    warning = Diagnostic(Severity.WARNING, "w" * HUGE, name="short-dispatch")
    assert (
        len(warning.render()) == 1000 + len(" [-Wshort-dispatch]")
        and len(warning.as_dict()["message"]) == 1000
    )


def test_docs_list_every_limit() -> None:
    from vgfc.limits import Limits

    page = (ROOT / "docs" / "limits.md").read_text()
    section = page.split("\n## Limits", 1)[1].split("\n## ", 1)[0]
    for name in fields(Limits):
        assert f"`{name}`" in section, name


def test_a_lone_surrogate_is_an_input_error(cli, tmp_path: Path) -> None:
    """JSON may escape a lone surrogate (\\ud800): a Python string no encoder takes."""
    payload = attrs(COPY.replace("void main", "/* \ud800 */ void main"))
    path = model(tmp_path, payload)
    run = cli("check", str(path))
    assert run.code == 1 and "internal error" not in run.err
    assert "shader_code: not valid Unicode text: a lone surrogate (\\ud800)" in run.err
