"""Kernel-library parameters: ``implementation_attrs`` decoded as JSON, FlexBuffers or a C struct
(types, keys, defaults, enums, alignment, explicit offsets), every way decoding fails, and how the
values reach the op (an error at the op, shader defines)."""

from __future__ import annotations

import json
import struct
import textwrap
from pathlib import Path
from typing import Any

import pytest
from flatbuffers import flexbuffers
from kernel_models import (
    OPS,
    compiled,
    library_of,
    single,
)

from vgfc.diagnostics import InputError
from vgfc.resolve.library.records import Library
from vgfc.resolve.params import ParamError, Params, decode_params


def _params(tmp_path: Path, encoding: str, fields: str) -> Params:
    library = library_of(
        tmp_path,
        f"""
        - domain: test
          name: P
          inputs: [x]
          outputs: [y]
          params:
            encoding: {encoding}
            fields:
{textwrap.indent(textwrap.dedent(fields).strip(), " " * 14)}
          compose:
            ops: [{{op: ABS, inputs: [x], outputs: [y]}}]
        """,
    )
    return library.entries[("test", "P")].params


MAP_FIELDS = """
- {name: f, type: f32}
- {name: d, type: f64, default: 0.25}
- {name: i, type: i8}
- {name: u, type: u16, key: unsigned}
- {name: big, type: i64}
- {name: flag, type: bool}
- {name: text, type: str, default: none}
- {name: sizes, type: i32, count: 3}
- {name: padding, type: i32, values: {1: SAME, 2: VALID}}
"""
MAP_VALUES = {
    "f": 1.5,
    "i": -128,
    "unsigned": 65535,
    "big": 2**40,
    "flag": True,
    "sizes": [1, 2, 3],
    "padding": 2,
}
MAP_DECODED = {
    "f": 1.5,
    "d": 0.25,
    "i": -128,
    "u": 65535,
    "big": 2**40,
    "flag": True,
    "text": "none",
    "sizes": (1, 2, 3),
    "padding": "VALID",
}


def _encode(encoding: str, value: Any) -> bytes:
    if encoding == "json":
        return json.dumps(value).encode()
    return bytes(flexbuffers.Dumps(value))


@pytest.mark.parametrize("encoding", ["json", "flexbuffers"])
def test_map_parameters_decode_with_types_keys_defaults_and_enums(
    tmp_path: Path, encoding: str
) -> None:
    params = _params(tmp_path, encoding, MAP_FIELDS)
    assert decode_params(params, _encode(encoding, MAP_VALUES)) == MAP_DECODED
    # A string, the other enum code, an int where a float is wanted.
    again = {**MAP_VALUES, "text": "hello", "padding": 1, "f": 2}
    decoded = decode_params(params, _encode(encoding, again))
    assert decoded["text"] == "hello" and decoded["padding"] == "SAME"
    assert decoded["f"] == 2.0 and isinstance(decoded["f"], float)


@pytest.mark.parametrize("encoding", ["json", "flexbuffers", "struct"])
def test_an_enum_default_by_name_or_by_code(tmp_path: Path, encoding: str) -> None:
    params = _params(
        tmp_path,
        encoding,
        """
        - {name: a, type: i32, values: {1: SAME, 2: VALID}, default: VALID}
        - {name: b, type: i32, values: {1: SAME, 2: VALID}, default: 1}
        """,
    )
    assert decode_params(params, b"") == {"a": "VALID", "b": "SAME"}


@pytest.mark.parametrize("encoding", ["json", "flexbuffers"])
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"f": None}, "parameter 'f' is missing and has no default"),
        ({"unsigned": None}, "parameter 'unsigned' is missing and has no default"),
        ({"i": 128}, "parameter 'i' = 128 does not fit in i8"),
        ({"unsigned": -1}, "parameter 'u' = -1 does not fit in u16"),
        ({"sizes": [1, 2]}, "parameter 'sizes' must be a list of 3 i32"),
        ({"f": "fast"}, "parameter 'f' must be a number"),
        ({"i": 1.5}, "parameter 'i' must be an integer"),
        ({"padding": 3}, "parameter 'padding' = 3 is none of 1 (SAME), 2 (VALID)"),
        ({"text": 7}, "parameter 'text' must be a string"),
    ],
    ids=[
        "missing",
        "missing by key",
        "i8 range",
        "u16 range",
        "count",
        "float type",
        "int type",
        "enum",
        "str type",
    ],
)
def test_map_parameter_errors(
    tmp_path: Path, encoding: str, change: dict[str, Any], message: str
) -> None:
    params = _params(tmp_path, encoding, MAP_FIELDS)
    value = {k: v for k, v in {**MAP_VALUES, **change}.items() if v is not None}
    with pytest.raises(ParamError) as caught:
        decode_params(params, _encode(encoding, value))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("encoding", "raw", "message"),
    [
        ("json", b"{not json", "the parameters are not JSON"),
        ("json", b"[1, 2]", "must be a JSON object, not list"),
        ("json", b"\xff\xfe", "the parameters are not JSON"),
        ("flexbuffers", bytes(flexbuffers.Dumps([1, 2])), "must be a FlexBuffers map, not list"),
        ("flexbuffers", b"\x01\x02\x03\x04\x05\x06\x07", "not a FlexBuffers"),
    ],
    ids=["json syntax", "json list", "json bytes", "flex list", "flex garbage"],
)
def test_undecodable_parameters(tmp_path: Path, encoding: str, raw: bytes, message: str) -> None:
    params = _params(tmp_path, encoding, "- {name: a, type: i32, default: 0}")
    with pytest.raises(ParamError) as caught:
        decode_params(params, raw)
    assert message in str(caught.value)


@pytest.mark.parametrize("encoding", ["json", "flexbuffers", "struct"])
def test_no_bytes_at_all_gives_the_defaults(tmp_path: Path, encoding: str) -> None:
    params = _params(
        tmp_path,
        encoding,
        "- {name: a, type: i32, default: 7}\n- {name: b, type: f32, default: 0.5}",
    )
    assert decode_params(params, None) == {"a": 7, "b": 0.5}
    assert decode_params(params, b"") == {"a": 7, "b": 0.5}


STRUCT_FIELDS = """
- {name: a, type: i8}
- {name: b, type: i32}
- {name: c, type: i16}
- {name: d, type: f64}
- {name: e, type: u8, count: 3}
- {name: padding, type: i32, values: {1: SAME, 2: VALID}}
- {name: tail, type: f32, default: -1.0}
"""


def test_struct_fields_lie_at_their_natural_alignment(tmp_path: Path) -> None:
    """struct {int8 a; int32 b; int16 c; double d; uint8 e[3]; int32 padding; float tail;}: a at
    0, b at 4, c at 8, d at 16, e at 24..26, padding at 28, tail at 32."""
    params = _params(tmp_path, "struct", STRUCT_FIELDS)
    raw = struct.pack("<b3xih6xd3Bxif", -5, 70000, -300, 2.5, 1, 2, 255, 1, 0.75)
    assert len(raw) == 36
    assert decode_params(params, raw) == {
        "a": -5,
        "b": 70000,
        "c": -300,
        "d": 2.5,
        "e": (1, 2, 255),
        "padding": "SAME",
        "tail": 0.75,
    }
    # Trailing fields with a default may be absent (an older, shorter struct).
    assert decode_params(params, raw[:32])["tail"] == -1.0


def test_struct_fields_at_explicit_offsets(tmp_path: Path) -> None:
    params = _params(
        tmp_path,
        "struct",
        """
        - {name: first, type: u16, offset: 6}
        - {name: next, type: u16}
        - {name: early, type: f32, offset: 0}
        """,
    )
    raw = struct.pack("<f2xHH", 3.25, 513, 1027)
    assert decode_params(params, raw) == {"first": 513, "next": 1027, "early": 3.25}


@pytest.mark.parametrize(
    ("length", "message"),
    [
        (0, "parameter 'a' (i8 at byte 0) lies past the end of the 0 bytes given"),
        (10, "parameter 'd' (f64 at byte 16) lies past the end of the 10 bytes given"),
        (26, "parameter 'e' (u8[3] at byte 24) lies past the end of the 26 bytes given"),
    ],
)
def test_a_short_struct_names_the_missing_field(tmp_path: Path, length: int, message: str) -> None:
    params = _params(tmp_path, "struct", STRUCT_FIELDS)
    raw = struct.pack("<b3xih6xd3Bxif", 1, 2, 3, 4.0, 5, 6, 7, 2, 0.0)
    with pytest.raises(ParamError) as caught:
        decode_params(params, raw[:length])
    assert message in str(caught.value)


def test_an_unknown_enum_code_in_a_struct(tmp_path: Path) -> None:
    params = _params(
        tmp_path, "struct", "- {name: padding, type: i32, values: {1: SAME, 2: VALID}}"
    )
    with pytest.raises(ParamError) as caught:
        decode_params(params, struct.pack("<i", 0))
    assert "parameter 'padding' = 0 is none of 1 (SAME), 2 (VALID)" in str(caught.value)


def test_encoding_none_ignores_the_bytes(tmp_path: Path) -> None:
    params = _params(tmp_path, "none", "[]")
    assert decode_params(params, b"anything at all") == {}


def test_a_missing_parameter_stops_the_compile_at_the_op(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "Affine", {"bias": 1.0})
    with pytest.raises(InputError) as caught:
        compiled(path, lib, stop_after="resolve")
    error = caught.value
    assert error.location.op_index == 0 and error.location.name == "Affine"
    assert error.location.key == "implementation_attrs"
    assert "parameter 'scale' is missing and has no default" in error.message
    assert f"{OPS}:" in error.message and "test/Affine" in error.message


def test_parameters_reach_the_shader_as_defines(tmp_path: Path, lib: Library) -> None:
    path = single(tmp_path, "Affine", {"scale": 2.5})
    result = compiled(path, lib, stop_after="resolve")
    assert result.graph is not None
    spec = next(o.shader for o in result.graph.operators if o.shader is not None)
    assert spec is not None
    assert dict(spec.defines) == {"SCALE": "2.5", "BIAS": "0.0", "COUNT": "30"}
    assert spec.global_size == (30, 1, 1)


def test_a_define_over_dims_the_operand_lacks(tmp_path: Path, lib: Library) -> None:
    """N, H, W, C name the dims of a rank-4 (or H, W, C of a rank-3) first output; a rank-2
    model makes 'N * H * W * C' an error that names the expression and the library entry."""
    path = single(tmp_path, "Affine", {"scale": 1.0}, shape=(3, 5))
    with pytest.raises(InputError) as caught:
        compiled(path, lib, stop_after="resolve")
    text = str(caught.value)
    assert "op #0 CUSTOM 'Affine' (test)" in text
    assert "'N * H * W * C': unknown name 'N'" in text
    assert f"{OPS}:" in text and "test/Affine" in text
