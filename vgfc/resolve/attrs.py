"""``implementation_attrs`` of a Vulkan custom shader op -> a typed :class:`ShaderSpec`.

The payload is UTF-8 JSON (``schemas/implementation_attrs.schema.json`` documents it). Parsing
goes from coarse to fine so each problem gets the most specific message: the bytes must be JSON,
then every ``input_N_*`` / ``output_N_*`` key must be well formed and name an operand the op has,
then the schema checks types, then each Vulkan enum name is looked up (with a did-you-mean), then
the keys are checked against each other. Every error names the op and the key.

The payload comes from a file vgfc did not write, so before anything else it is held to the
limits of :mod:`vgfc.limits`: its size, how deep its arrays and objects nest (scanned before
Python's recursive parser runs), how long its numbers, keys and strings are. Every number that
reaches the VGF is checked against its Vulkan range, and values are quoted, never echoed whole.
"""

from __future__ import annotations

import binascii
import functools
import json
import re

from vgfc.diagnostics import InputError, Location, did_you_mean
from vgfc.ir import (
    IMAGE_DESCRIPTORS,
    Graph,
    Operator,
    PushConstant,
    Sampler,
    ShaderResource,
    ShaderSpec,
)
from vgfc.limits import LIMITS, quote
from vgfc.schema import load_schema
from vgfc.vulkan_names import (
    border_colors,
    descriptor_types,
    filters,
    formats,
    sampler_address_modes,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["parse_shader_spec"]

OPERAND_FIELDS = ("binding", "descriptorset", "vkdescriptortype", "vkformat", "type", "sampler")
REQUIRED_FIELDS = ("binding", "descriptorset", "vkdescriptortype", "vkformat")
_OPERAND_KEY = re.compile(r"^(input|output)_(\d+)_(\w+)$")

READ_ONLY_DESCRIPTORS = frozenset(
    {
        "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
        "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE",
        "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER",
        "VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER",
    }
)
# Descriptor types a logical kind (``input_N_type``) may use.
KIND_DESCRIPTORS = {
    "tensor": frozenset({"VK_DESCRIPTOR_TYPE_TENSOR_ARM", "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"}),
    "buffer": frozenset({"VK_DESCRIPTOR_TYPE_STORAGE_BUFFER", "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER"}),
    "image": IMAGE_DESCRIPTORS,
}
SUPPORTED_DESCRIPTORS = frozenset().union(*KIND_DESCRIPTORS.values())


def parse_shader_spec(op: Operator, graph: Graph) -> ShaderSpec:
    """Parse and check ``op``'s implementation attributes. Raises :class:`InputError`."""
    where = op.where(graph.source)
    payload = _json(op, where)
    _check_lengths(payload, where)
    _check_operand_keys(payload, op, where)
    _check_schema(payload, where)
    for key, value in payload.items():
        if key.endswith("_vkformat"):
            _known(value, formats(), "format", where, key)
        elif key.endswith("_vkdescriptortype"):
            _known(value, descriptor_types(), "descriptor type", where, key)
    inputs = tuple(_resource(payload, "input", i, t, where) for i, t in enumerate(op.inputs))
    outputs = tuple(_resource(payload, "output", i, t, where) for i, t in enumerate(op.outputs))
    _check_bindings_unique(inputs + outputs, where)
    language, code, spirv = _code(payload, where)
    return ShaderSpec(
        name=op.custom_name or "",
        entry_point=payload["entry_point"],
        workgroup_counts=_xyz(payload, "workgroup_sizes", LIMITS.workgroup_count_max, where),
        global_size=_xyz(payload, "global_size", LIMITS.global_size_max, where),
        language=language,
        code=code,
        spirv=spirv,
        push_constants=_push_constants(payload.get("push_constants", ""), where),
        inputs=inputs,
        outputs=outputs,
    )


def _at(where: Location, key: str) -> Location:
    """``where`` narrowed to one key."""
    return Location(key=key).merged(where)


def _json(op: Operator, where: Location) -> dict[str, Any]:
    raw = op.attrs.get("implementation_attrs")
    try:
        payload = _payload(raw)
    except InputError as e:  # located here, once, rather than ahead of every check
        raise e.at(_at(where, "implementation_attrs")) from None
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


def _check_lengths(payload: dict[str, Any], where: Location) -> None:
    """Every key, and each string value vgfc reads, is a name (``LIMITS.name_length_max``);
    ``shader_code`` may be longer; ``workgroup_sizes`` and ``global_size`` hold three values.
    Runs before anything quotes a key or a value, and before the schema walks an array."""
    names = LIMITS.name_length_max
    for key, value in payload.items():
        if len(key) > names:
            raise _too_long("a key", key, names, where)
        if key in _XYZ_KEYS:
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


@functools.lru_cache(maxsize=256)
def _operand_key(key: str) -> tuple[str, str, str] | None:
    """(role, index digits, field) of an ``input_N_*`` / ``output_N_*`` key; each distinct key
    is matched once, as the same few come back in op after op."""
    match = _OPERAND_KEY.match(key)
    return None if match is None else (match.group(1), match.group(2), match.group(3))


def _check_operand_keys(payload: dict[str, Any], op: Operator, where: Location) -> None:
    counts = {"input": len(op.inputs), "output": len(op.outputs)}
    for key in payload:
        if not key.startswith(("input", "output")):
            continue
        parts = _operand_key(key)
        if parts is None or parts[2] not in OPERAND_FIELDS:
            valid = [
                f"{r}_{i}_{f}" for r, n in counts.items() for i in range(n) for f in OPERAND_FIELDS
            ]
            raise InputError(f"unknown key{did_you_mean(key, valid)}", _at(where, key))
        role, index, field = parts
        number = int(index)
        if index != str(number):
            fixed = f"{role}_{number}_{field}"
            raise InputError(
                f"operand index '{quote(index)}' has a leading zero (write {quote(fixed)})",
                _at(where, key),
            )
        if number >= counts[role]:
            have = counts[role]
            span = {0: "", 1: f" ({role}_0)"}.get(have, f" ({role}_0 .. {role}_{have - 1})")
            raise InputError(
                f"the op has {have} {role}{'s' if have != 1 else ''}{span}", _at(where, key)
            )
        if role == "output" and field == "sampler":
            raise InputError("a sampler only applies to sampled image inputs", _at(where, key))


# The schema's rules as plain code, for :func:`conforms`. Key patterns and the push-constant
# pattern are the schema's own text (read from the file once, as the module loads).
_SCHEMA_NAME = "implementation_attrs.schema.json"
_XYZ_KEYS = ("workgroup_sizes", "global_size")
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
_LANGUAGE_NAMES = ("GLSL", "HLSL", "SPIR-V")


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
    if not any(key in payload for key in _XYZ_KEYS):
        return False
    for key in _XYZ_KEYS:
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


def _check_schema(payload: dict[str, Any], where: Location) -> None:
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


def _known(name: object, table: dict[str, int], what: str, where: Location, key: str) -> None:
    if not isinstance(name, str):  # a key the schema leaves open (not an operand's) may hold any
        raise InputError(
            f"expected a {what} name (a string), got {quote(json.dumps(name))}",
            Location(key=key).merged(where),
        )
    if name not in table:
        hint = did_you_mean(name, table)
        raise InputError(f"unknown {what} '{quote(name)}'{hint}", Location(key=key).merged(where))


def _resource(
    payload: dict[str, Any], role: str, index: int, tensor: str, where: Location
) -> ShaderResource:
    prefix = f"{role}_{index}"
    for field in REQUIRED_FIELDS:
        if f"{prefix}_{field}" not in payload:
            raise InputError(
                f"missing: {role} {index} (tensor '{tensor}') needs it",
                Location(key=f"{prefix}_{field}").merged(where),
            )
    descriptor = payload[f"{prefix}_vkdescriptortype"]
    if descriptor not in SUPPORTED_DESCRIPTORS:
        supported = ", ".join(sorted(SUPPORTED_DESCRIPTORS))
        raise InputError(
            f"{descriptor} is not supported for shader operands ({supported})",
            _at(where, f"{prefix}_vkdescriptortype"),
        )
    if role == "output" and descriptor in READ_ONLY_DESCRIPTORS:
        raise InputError(
            f"{descriptor} is read-only and cannot hold a result",
            _at(where, f"{prefix}_vkdescriptortype"),
        )
    kind = payload.get(f"{prefix}_type")
    kind = kind.lower() if isinstance(kind, str) else None
    if kind is not None and descriptor not in KIND_DESCRIPTORS[kind]:
        allowed = ", ".join(sorted(KIND_DESCRIPTORS[kind]))
        raise InputError(
            f"{descriptor} does not fit {prefix}_type '{payload[f'{prefix}_type']}' "
            f"(a {kind} uses {allowed})",
            _at(where, f"{prefix}_vkdescriptortype"),
        )
    sampler = _sampler(payload, prefix, where)
    needs_sampler = descriptor == "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER"
    if needs_sampler and sampler is None:
        raise InputError(
            "missing: a combined image sampler needs its sampler "
            "(min_filter, mag_filter, address_mode_u, address_mode_v, border_color)",
            Location(key=f"{prefix}_sampler").merged(where),
        )
    if sampler is not None and not needs_sampler:
        raise InputError(
            f"a sampler only applies to a combined image sampler, not {descriptor}",
            Location(key=f"{prefix}_sampler").merged(where),
        )
    return ShaderResource(
        role=role,
        index=index,
        tensor=tensor,
        binding=_integer(payload, f"{prefix}_binding", LIMITS.binding_max, where),
        set=_integer(payload, f"{prefix}_descriptorset", LIMITS.descriptor_set_max, where),
        descriptor_type=descriptor,
        format=payload[f"{prefix}_vkformat"],
        kind=kind,
        sampler=sampler,
    )


def _sampler(payload: dict[str, Any], prefix: str, where: Location) -> Sampler | None:
    raw = payload.get(f"{prefix}_sampler")
    if raw is None:
        return None
    tables = {
        "min_filter": (filters(), "filter"),
        "mag_filter": (filters(), "filter"),
        "address_mode_u": (sampler_address_modes(), "address mode"),
        "address_mode_v": (sampler_address_modes(), "address mode"),
        "border_color": (border_colors(), "border color"),
    }
    for field, (table, what) in tables.items():
        _known(raw[field], table, what, where, f"{prefix}_sampler.{field}")
    return Sampler(**{field: raw[field] for field in tables})


def _check_bindings_unique(resources: tuple[ShaderResource, ...], where: Location) -> None:
    seen: dict[tuple[int, int], ShaderResource] = {}
    for r in resources:
        other = seen.setdefault((r.set, r.binding), r)
        if other is not r:
            raise InputError(
                f"set {r.set} binding {r.binding} is already used by {other.key}",
                Location(key=f"{r.key}_binding").merged(where),
            )


def _language(text: str) -> str | None:
    """The language ``shader_language`` names in any letter case (as the schema matches it:
    ``glsl`` is GLSL); ``None`` for an empty one."""
    return next((n for n in _LANGUAGE_NAMES if re.fullmatch(f"(?i:{re.escape(n)})", text)), None)


def _code(payload: dict[str, Any], where: Location) -> tuple[str | None, str | None, bytes | None]:
    language = _language(payload.get("shader_language") or "")
    code = payload.get("shader_code")
    if code is not None and language is None:
        raise InputError(
            "missing: shader_code is given, so say which language it is (GLSL, HLSL, SPIR-V)",
            Location(key="shader_language").merged(where),
        )
    if language is not None and code is None:
        raise InputError(
            f"missing: shader_language is {language}, but there is no code",
            Location(key="shader_code").merged(where),
        )
    if language != "SPIR-V":
        return language, code, None
    at = Location(key="shader_code").merged(where)
    try:
        import base64  # only SPIR-V given as base64 needs it

        binary = base64.b64decode(code or "", validate=True)
    except (binascii.Error, ValueError) as e:
        raise InputError(f"not valid base64 for a SPIR-V binary: {e}", at) from None
    if len(binary) % 4:
        raise InputError(
            f"the decoded SPIR-V binary has {len(binary)} bytes, not a multiple of 4", at
        )
    return language, None, binary


def _push_constants(text: str, where: Location) -> tuple[PushConstant, ...]:
    entries: list[PushConstant] = []
    offset = 0
    cap = LIMITS.push_constant_bytes_max
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, size_text = (s.strip() for s in part.split(":"))
        # Digits (the schema's pattern): their count is compared first, so no huge int is made.
        if len(size_text) > len(str(cap)) or offset + int(size_text) > cap:
            raise InputError(
                f"'{quote(name)}' of {quote(size_text)} bytes at offset {offset} ends past "
                f"{cap} bytes, the most push constants vgfc accepts (Vulkan guarantees 128)",
                _at(where, "push_constants"),
            )
        size = int(size_text)
        if size <= 0 or size % 4:
            raise InputError(
                f"'{quote(name)}' has size {size}: sizes must be positive multiples of 4",
                _at(where, "push_constants"),
            )
        if any(e.name == name for e in entries):
            raise InputError(f"'{quote(name)}' is listed twice", _at(where, "push_constants"))
        entries.append(PushConstant(name, offset, size))
        offset += size
    return tuple(entries)


def _integer(payload: dict[str, Any], key: str, maximum: int, where: Location) -> int:
    """A value the schema accepted as a non-negative integer (JSON ``2.0`` is one), as an int
    no larger than ``maximum``."""
    value = payload[key]
    if value > maximum:
        raise InputError(
            f"{quote(value)} is more than {maximum}, the largest value the VGF can hold",
            Location(key=key).merged(where),
        )
    return int(value)


def _xyz(
    payload: dict[str, Any], key: str, maximum: int, where: Location
) -> tuple[int, int, int] | None:
    """``workgroup_sizes`` or ``global_size`` (three integers >= 1, as the schema checked) as
    ints no larger than ``maximum``."""
    value = payload.get(key)
    if value is None:
        return None
    for axis, n in zip("xyz", value, strict=True):
        if n > maximum:
            raise InputError(
                f"{axis} = {quote(n)} is more than {maximum}, the largest a dispatch takes "
                "(uint32)",
                Location(key=key).merged(where),
            )
    return (int(value[0]), int(value[1]), int(value[2]))
