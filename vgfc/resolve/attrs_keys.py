"""Which keys of a shader payload vgfc reads, which it checks, and which it keeps as metadata.

The key table has one home, ``implementation_attrs.schema.json``: its ``properties`` are the
shader's own keys and its ``patternProperties`` the operand keys (``input_N_FIELD``,
``output_N_FIELD``); both are read from the file here. The rule for everything else:

* a key in the **operand grammar** (``input`` or ``output``, an optional ``_``, then a digit:
  ``input_0_bindng``, ``input_01_binding``, ``output0_type``) is an operand key and is checked
  strictly: a field the schema lists, an operand the op has, no leading zero;
* any other key is **metadata** (ExecuTorch writes ``operator_name``, ``input_scale``,
  ``input_zero_point``, ``output_scale``, ``output_zero_point``, ``flow_*``, ``is_vkshader``):
  vgfc does not interpret it and keeps it in the report, unless it is a near miss of a key
  vgfc reads (``push_constant``, ``workgroup_size``, ``input_O_binding``), which is an error with
  the name it resembles.
"""

from __future__ import annotations

import functools
import json
import re

from vgfc.diagnostics import InputError, Location, did_you_mean
from vgfc.limits import quote
from vgfc.schema import load_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from vgfc.ir import Operator

__all__ = ["DOCUMENTED_KEYS", "OPERAND_FIELDS", "check_keys"]

_OPERAND_GRAMMAR = re.compile(r"^(input|output)_?[0-9]")
_OPERAND_KEY = re.compile(r"^(input|output)_([0-9]+)_(\w+)$")
_NEAR_MISS = 0.85
"""How close (difflib's ratio) a metadata key may come to a key vgfc reads before it is taken
for a misspelling of it: ``push_constant`` (0.96) and ``shader_lang`` (0.85) are; ExecuTorch's
``input_zero_point`` against ``entry_point`` (0.59) is not."""


def _schema_keys() -> tuple[frozenset[str], tuple[str, ...]]:
    """The shader's own keys and the operand fields, as the schema lists them."""
    schema = load_schema("implementation_attrs.schema.json")
    fields = []
    for pattern in schema["patternProperties"]:
        found = re.search(r"_([a-z]+)\$$", pattern)
        if found is None:  # the schema's own test holds every pattern to this form
            raise ValueError(f"operand key pattern without a field name: {pattern}")
        fields.append(found.group(1))
    return frozenset(schema["properties"]), tuple(fields)


DOCUMENTED_KEYS, OPERAND_FIELDS = _schema_keys()


@functools.lru_cache(maxsize=256)
def _operand_key(key: str) -> tuple[str, str, str] | None:
    """(role, index digits, field) of an ``input_N_*`` / ``output_N_*`` key; each distinct key
    is matched once, as the same few come back in op after op."""
    match = _OPERAND_KEY.match(key)
    return None if match is None else (match.group(1), match.group(2), match.group(3))


def _at(where: Location, key: str) -> Location:
    return Location(key=key).merged(where)


def check_keys(
    payload: dict[str, Any], op: Operator, where: Location
) -> tuple[tuple[str, str], ...]:
    """Check every operand key of ``payload`` against ``op``; return the metadata keys with
    their values as JSON text, in payload order. Raises :class:`InputError` naming the key."""
    counts = {"input": len(op.inputs), "output": len(op.outputs)}
    metadata: list[tuple[str, str]] = []
    for key in payload:
        if key in DOCUMENTED_KEYS:
            continue
        parts = _operand_key(key)
        if parts is None or parts[2] not in OPERAND_FIELDS:
            valid = [
                f"{r}_{i}_{f}" for r, n in counts.items() for i in range(n) for f in OPERAND_FIELDS
            ]
            if _OPERAND_GRAMMAR.match(key):
                raise InputError(f"unknown key{did_you_mean(key, valid)}", _at(where, key))
            near = did_you_mean(key, [*DOCUMENTED_KEYS, *valid], cutoff=_NEAR_MISS)
            if near:
                raise InputError(f"unknown key{near}", _at(where, key))
            metadata.append((key, json.dumps(payload[key], sort_keys=True)))
            continue
        _check_operand(key, parts, counts, where)
    return tuple(metadata)


def _check_operand(
    key: str, parts: tuple[str, str, str], counts: dict[str, int], where: Location
) -> None:
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
