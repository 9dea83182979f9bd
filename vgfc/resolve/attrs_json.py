"""The first, defensive step of reading ``implementation_attrs``: the payload comes from a file
vgfc did not write, so before anything else it is held to the limits of :mod:`vgfc.limits`: its
size, UTF-8 text, how deep its arrays and objects nest (scanned before Python's recursive parser
runs), how long its numbers, keys and strings are, and no lone surrogates. It gives the payload
as a JSON object for :mod:`vgfc.resolve.attrs`.
"""

from __future__ import annotations

import json

from vgfc.diagnostics import InputError, Location
from vgfc.limits import LIMITS, quote
from vgfc.resolve.attrs_schema import XYZ_KEYS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.ir import Operator

__all__ = ["check_lengths", "read_payload"]


def read_payload(op: Operator, where: Location) -> dict[str, Any]:
    """``op``'s ``implementation_attrs`` as a JSON object within the limits, its problems
    located at the key. Raises :class:`InputError`."""
    raw = op.attrs.get("implementation_attrs")
    try:
        payload = _payload(raw)
    except InputError as e:  # located here, once, rather than ahead of every check
        raise e.at(Location(key="implementation_attrs").merged(where)) from None
    # The text decoded as strict UTF-8, which refuses surrogates: only a ``\u`` escape can
    # spell one, so without one the walk has nothing to find.
    if isinstance(raw, bytes) and b"\\u" in raw:
        _check_unicode(payload, where, "")
    return payload


def _payload(raw: object) -> dict[str, Any]:
    """``implementation_attrs`` as a JSON object; raises :class:`InputError` (without a
    location) when it is not one, or is beyond vgfc's limits."""
    if not isinstance(raw, bytes) or not raw:
        raise InputError("missing: a Vulkan custom shader needs its JSON attributes")
    if len(raw) > LIMITS.attrs_bytes_max:
        raise InputError(f"{len(raw)} bytes, more than the {LIMITS.attrs_bytes_max} vgfc reads")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    depth = _nesting_depth(raw)
    if depth > LIMITS.json_depth_max:
        raise InputError(
            f"arrays and objects nest {depth} deep, more than the {LIMITS.json_depth_max} "
            "vgfc reads"
        )
    if text.startswith("\ufeff"):  # what json.loads says, which the shared decoder does not check
        raise InputError(
            "not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) at line 1 column 1"
        )
    try:
        payload = _DECODER.decode(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except (ValueError, RecursionError) as e:  # the checks above should leave none of these
        raise InputError(f"not JSON vgfc can read: {quote(str(e))}") from None
    if not isinstance(payload, dict):
        raise InputError(f"must be a JSON object, not {type(payload).__name__}")
    return payload


def _check_unicode(value: Any, where: Location, key: str) -> None:
    """JSON's ``\\ud800`` escapes can spell a lone surrogate: a Python string, but not text any
    tool downstream (glslang, the VGF encoder) can take. Refused here, at its key."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InputError(
                f"not valid Unicode text: a lone surrogate (\\u{ord(value[e.start]):04x}) at "
                f"character {e.start}",
                Location(key=key or None).merged(where),
            ) from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_unicode(k, where, key)
            _check_unicode(v, where, f"{key}.{k}" if key else k)
    elif isinstance(value, list):
        for v in value:
            _check_unicode(v, where, key)


def _nesting_depth(raw: bytes) -> int:
    """How deep JSON arrays and objects nest in ``raw``, brackets inside strings not counted.

    Vectorised, so megabytes of brackets cost milliseconds. A quote ends a string unless an odd
    number of backslashes precedes it; UTF-8 continuation bytes are never ASCII, so working on
    bytes is exact. For invalid JSON the number is an estimate: the parser reports the problem."""
    if raw.count(b"[") + raw.count(b"{") <= LIMITS.json_depth_max:
        return 0  # too few brackets to nest past the limit: no need to scan
    import numpy as np  # only for a payload with more brackets than the limit allows

    data = np.frombuffer(raw, np.uint8)
    index = np.arange(data.size)
    backslash = data == ord("\\")
    # At each position: the index of the last byte up to there that is not a backslash.
    last_plain = np.maximum.accumulate(np.where(backslash, -1, index))
    quotes = np.flatnonzero(data == ord('"'))
    before = np.where(quotes > 0, last_plain[quotes - 1], -1)
    escaped = (quotes - 1 - before) % 2 == 1
    toggles = np.zeros(data.size, np.int64)
    toggles[quotes[~escaped]] = 1
    in_string = np.cumsum(toggles) % 2 == 1
    opens = (data == ord("[")) | (data == ord("{"))
    closes = (data == ord("]")) | (data == ord("}"))
    steps = np.where(in_string, 0, opens.astype(np.int64) - closes.astype(np.int64))
    return int(np.cumsum(steps).max(initial=0))


def _parse_int(text: str) -> int:
    _check_number(text)
    return int(text)


def _parse_float(text: str) -> float:
    _check_number(text)
    return float(text)


def _check_number(text: str) -> None:
    if len(text) > LIMITS.json_number_length_max:
        raise InputError(
            f"a number of {len(text)} characters ({quote(text)}): vgfc reads numbers of up to "
            f"{LIMITS.json_number_length_max}"
        )


# One decoder for every payload (as json.loads shares one when given no options): making one
# per call costs about as much as parsing a small payload.
_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float)


# Keys whose string values vgfc reads (and may quote): each is a name.
_NAME_KEYS = ("entry_point", "shader_language", "push_constants")
_OPERAND_NAME_FIELDS = ("_vkdescriptortype", "_vkformat", "_type")


def check_lengths(payload: dict[str, Any], where: Location) -> None:
    """Every key, and each string value vgfc reads, is a name (``LIMITS.name_length_max``);
    ``shader_code`` may be longer; ``workgroup_sizes`` and ``global_size`` hold three values.
    Runs before anything quotes a key or a value, and before the schema walks an array."""
    names = LIMITS.name_length_max
    for key, value in payload.items():
        if len(key) > names:
            raise _too_long("a key", key, names, where)
        if key in XYZ_KEYS:
            if isinstance(value, list) and len(value) > 3:
                raise InputError(
                    f"{quote(value)} is too long: it holds x, y and z",
                    Location(key=key).merged(where),
                )
        elif not isinstance(value, str):
            if key.startswith("input_") and key.endswith("_sampler") and isinstance(value, dict):
                for field, text in value.items():
                    if len(field) > names:
                        raise _too_long("a key", field, names, where, key)
                    if isinstance(text, str) and len(text) > names:
                        raise _too_long("the value", text, names, where, f"{key}.{field}")
        elif key == "shader_code":
            if len(value) > LIMITS.shader_code_length_max:
                raise _too_long("the code", value, LIMITS.shader_code_length_max, where, key)
        elif len(value) > names and (
            key in _NAME_KEYS
            or (key.startswith(("input_", "output_")) and key.endswith(_OPERAND_NAME_FIELDS))
        ):
            raise _too_long("the value", value, names, where, key)


def _too_long(
    what: str, value: str, limit: int, where: Location, key: str | None = None
) -> InputError:
    return InputError(
        f"{what} '{quote(value)}' is longer than the {limit} characters vgfc reads",
        Location(key=key).merged(where),
    )
