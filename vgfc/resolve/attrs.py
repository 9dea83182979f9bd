"""``implementation_attrs`` of a Vulkan custom shader op -> a typed :class:`ShaderSpec`.

The payload is UTF-8 JSON (``schemas/implementation_attrs.schema.json`` documents it). Parsing
goes from coarse to fine so each problem gets the most specific message: the bytes must be JSON
(:mod:`vgfc.resolve.attrs_json`), then every key in the operand grammar must be well formed and
name an operand the op has, and other keys not documented are kept as metadata
(:mod:`vgfc.resolve.attrs_keys`), then the schema checks types
(:mod:`vgfc.resolve.attrs_schema`), then each Vulkan enum name is looked up (with a
did-you-mean), then the keys are checked against each other. Every error names the op and the
key. This module owns the steps that build the spec: resources, samplers, the
code, push constants and the dispatch. Every number that reaches the VGF is checked against its
Vulkan range, and values are quoted, never echoed whole.
"""

from __future__ import annotations

import binascii
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
from vgfc.resolve.attrs_json import check_lengths, read_payload
from vgfc.resolve.attrs_keys import check_keys
from vgfc.resolve.attrs_schema import check_schema
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

REQUIRED_FIELDS = ("binding", "descriptorset", "vkdescriptortype", "vkformat")

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
_LANGUAGE_NAMES = ("GLSL", "HLSL", "SPIR-V")


def parse_shader_spec(op: Operator, graph: Graph) -> ShaderSpec:
    """Parse and check ``op``'s implementation attributes. Raises :class:`InputError`."""
    where = op.where(graph.source)
    payload = read_payload(op, where)
    check_lengths(payload, where)
    metadata = check_keys(payload, op, where)
    check_schema(payload, where)
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
        metadata=metadata,
    )


def _at(where: Location, key: str) -> Location:
    """``where`` narrowed to one key."""
    return Location(key=key).merged(where)


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
