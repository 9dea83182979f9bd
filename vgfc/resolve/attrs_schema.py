"""``implementation_attrs.schema.json`` on the path of every compile: :func:`conforms` gives the
schema's verdict in plain code (its key and value patterns read from the schema file once), and
jsonschema runs only to word the error when the verdict is no (:func:`check_schema`).
"""

from __future__ import annotations

import functools
import re

from vgfc.diagnostics import InputError, Location, did_you_mean
from vgfc.limits import LIMITS, quote
from vgfc.schema import load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["XYZ_KEYS", "check_schema", "conforms"]


# The schema's rules as plain code, for :func:`conforms`. Key patterns and the push-constant
# pattern are the schema's own text (read from the file once, as the module loads).
_SCHEMA_NAME = "implementation_attrs.schema.json"
XYZ_KEYS = ("workgroup_sizes", "global_size")
"""The keys that hold x, y and z."""
_SAMPLER_KEYS = frozenset(
    {"min_filter", "mag_filter", "address_mode_u", "address_mode_v", "border_color"}
)


def _compiled_patterns() -> tuple[
    re.Pattern[str],
    list[tuple[re.Pattern[str], str, re.Pattern[str] | None]],
    re.Pattern[str],
]:
    """The push-constant pattern, per operand key pattern its value's type and pattern, and the
    shader language pattern."""
    schema = load_schema(_SCHEMA_NAME)
    push = re.compile(schema["properties"]["push_constants"]["pattern"])
    kinds = []
    for pattern, rule in schema["patternProperties"].items():
        kind = "sampler" if "$ref" in rule else rule["type"]
        value = re.compile(rule["pattern"]) if "pattern" in rule else None
        kinds.append((re.compile(pattern), kind, value))
    return push, kinds, re.compile(schema["properties"]["shader_language"]["pattern"])


_PUSH_PATTERN, _KEY_PATTERNS, _LANGUAGE_PATTERN = _compiled_patterns()


@functools.lru_cache(maxsize=256)
def _key_rules(key: str) -> tuple[tuple[str, re.Pattern[str] | None], ...]:
    """(value type, value pattern) of each schema key pattern ``key`` matches. The same few keys
    (``input_0_binding``) come back in op after op, so each distinct key is matched once."""
    return tuple((kind, value) for pattern, kind, value in _KEY_PATTERNS if pattern.search(key))


def _is_int(value: Any) -> bool:
    """JSON Schema 2020-12's "integer": a number with no fraction, so 1.0 is one; a bool is not."""
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, int) and not isinstance(value, bool)


def conforms(payload: dict[str, Any]) -> bool:
    """Whether ``payload`` satisfies ``implementation_attrs.schema.json``, decided by plain code.

    jsonschema takes 60 ms to import and builds a validator per call: too slow for the path of
    every compile. This function gives the same verdict at a fraction of the cost (the schema
    test holds it to jsonschema's verdict on generated payloads); jsonschema runs only to word
    the error when the verdict is no.
    """
    if not isinstance(payload.get("entry_point"), str) or not payload["entry_point"]:
        return False
    if not any(key in payload for key in XYZ_KEYS):
        return False
    for key in XYZ_KEYS:
        if key in payload:
            xyz = payload[key]
            if not isinstance(xyz, list) or len(xyz) != 3:
                return False
            if not all(_is_int(v) and v >= 1 for v in xyz):
                return False
    language = payload.get("shader_language", "")
    if not isinstance(language, str) or _LANGUAGE_PATTERN.search(language) is None:
        return False
    if not isinstance(payload.get("shader_code", ""), str):
        return False
    if "push_constants" in payload:
        push = payload["push_constants"]
        if not isinstance(push, str) or _PUSH_PATTERN.search(push) is None:
            return False
    for key, value in payload.items():
        if not key.startswith(("input_", "output_")):
            continue
        for kind, value_pattern in _key_rules(key):
            if kind == "integer":
                ok = _is_int(value) and value >= 0
            elif kind == "string":
                ok = isinstance(value, str) and (
                    value_pattern is None or value_pattern.search(value) is not None
                )
            else:
                ok = (
                    isinstance(value, dict)
                    and value.keys() == _SAMPLER_KEYS
                    and all(isinstance(v, str) for v in value.values())
                )
            if not ok:
                return False
    return True


def check_schema(payload: dict[str, Any], where: Location) -> None:
    if conforms(payload):
        return
    import jsonschema  # only to word the error

    validator = jsonschema.Draft202012Validator(load_schema(_SCHEMA_NAME))
    errors = sorted(
        validator.iter_errors(payload), key=lambda e: (list(e.absolute_path), e.message)
    )
    if not errors:
        return
    error = errors[0]
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        missing = re.search(r"'([^']+)' is a required property", error.message)
        path.append(missing.group(1) if missing else "?")
        message = "missing (required)"
    elif error.validator == "anyOf" and not path:
        path = ["workgroup_sizes"]
        message = "missing: give workgroup_sizes (workgroup counts) or global_size"
    elif error.validator == "pattern" and path == ["push_constants"]:
        message = f"expected 'name: size, name: size', got '{quote(error.instance)}'"
    elif error.validator == "pattern" and path == ["shader_language"]:
        choices = ["GLSL", "HLSL", "SPIR-V"]
        message = (
            f"unknown language '{quote(error.instance)}' (GLSL, HLSL or SPIR-V, in any letter "
            f"case){did_you_mean(str(error.instance).upper(), choices)}"
        )
    else:
        message = _schema_message(error)
    raise InputError(message, Location(key=".".join(path)).merged(where))


def _schema_message(error: Any) -> str:
    """jsonschema's message, the offending value quoted instead of shown whole."""
    message, shown = str(error.message), repr(error.instance)
    if len(shown) <= LIMITS.quoted_length:
        return message
    return message.replace(shown, quote(shown))
