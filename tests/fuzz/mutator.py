"""A structure-aware mutator for TOSA flatbuffers (atheris' ``custom_mutator``).

Byte flips rarely get a flatbuffer past the reader, so most mutants here are made by decoding
the model (:mod:`tosa_tree`), changing exactly one thing, and encoding it again with the file
identifier ``TOSA``. What can change is a table of (weight, mutation) below: a tensor's shape,
element type, name or constant data; an operator's code, operand lists, attribute fields or
attribute type; a CUSTOM op's ``implementation_attrs`` JSON (values of other types, huge
integers, deep nesting, long strings, near-miss keys, invalid UTF-8) or its shader code (GLSL/HLSL
text edits, SPIR-V word edits); the graph's inputs, outputs, regions and version; or any field of
any table, found by walking the schema. Some mutants are plain byte mutations (libFuzzer's own,
through ``byte_mutate``) so the reader's handling of corrupt buffers is fuzzed too.

Nothing here imports vgfc or atheris: the regression test uses it without either instrumented.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
from collections.abc import Callable
from typing import Any

from flatbuffers import number_types as nt
from tosa_tree import IDENTIFIER, Field, Union, decode, encode, schema

__all__ = ["MUTATIONS", "crossover", "mutate", "mutate_tree"]

ByteMutate = Callable[[bytes, int], bytes]
Tree = dict[str, Any]

BYTE_MUTATION_RATE = 0.15
SHADER_DOMAIN = b"com.arm.VulkanCustomShader"

_INTERESTING_INTS = (0, 1, -1, 2, 3, 4, 7, 8, 16, 64, 127, 128, 255, 256, 1023, 4096, 65535, 65536)
_EDGE_INTS = (2**15 - 1, 2**16, 2**24, 2**30, 2**31 - 1, -(2**31), 2**32 - 1, 2**63 - 1, -(2**63))
_JSON_INTS = (0, -1, 1, 3, 2**31, 2**32, 2**53 + 1, 2**63, 2**64, -(2**63) - 1, 10**30, 10**400)
_LONG = (1_000, 100_000)
_NASTY_TEXT = (
    "",
    " ",
    "\x00",
    "\n\nerror: injected",
    "\x1b[31mred\x1b[0m",
    "é漢字🙂",
    "\u202e",
    "%s%n{0}",
    "../../etc/passwd",
)
_VK_FORMATS = (
    "VK_FORMAT_R32_SFLOAT",
    "VK_FORMAT_R16_SFLOAT",
    "VK_FORMAT_R8_SINT",
    "VK_FORMAT_R32_SINT",
    "VK_FORMAT_R8_UINT",
    "VK_FORMAT_R64_SINT",
    "VK_FORMAT_R32G32_SFLOAT",
    "VK_FORMAT_R32G32B32_SFLOAT",
    "VK_FORMAT_R32G32B32A32_SFLOAT",
    "VK_FORMAT_R8G8B8A8_UNORM",
    "VK_FORMAT_UNDEFINED",
    "VK_FORMAT_R32_FLOAT",
    "VK_FORMAT_MAX_ENUM",
    "R32_SFLOAT",
)
_DESCRIPTOR_TYPES = (
    "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
    "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
    "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
    "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
    "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER",
    "VK_DESCRIPTOR_TYPE_SAMPLER",
    "VK_DESCRIPTOR_TYPE_STORAGE_BUFER",
)
_VOCABULARY = (
    *_VK_FORMATS,
    *_DESCRIPTOR_TYPES,
    "Tensor",
    "Image",
    "Buffer",
    "GLSL",
    "HLSL",
    "SPIR-V",
    "SPIRV",
    "main",
    "VK_FILTER_LINEAR",
    "VK_FILTER_CUBIC_IMG",
    "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE",
    "VK_BORDER_COLOR_FLOAT_OPAQUE_BLACK",
    "a: 4, b: 8",
    "x: 0",
    "x: -4",
    "x: 99999999999999999999",
    ":",
    "a:4,,b",
)
_KEY_SUFFIXES = ("binding", "descriptorset", "vkdescriptortype", "vkformat", "type", "sampler")
_TOP_KEYS = (
    "entry_point",
    "workgroup_sizes",
    "global_size",
    "shader_language",
    "shader_code",
    "push_constants",
    "is_vkshader",
)
_SAMPLER_KEYS = ("min_filter", "mag_filter", "address_mode_u", "address_mode_v", "border_color")


# --- the model ---------------------------------------------------------------------------------


def _block(tree: Tree) -> Tree | None:
    regions = tree.get("regions") or []
    blocks = (regions[0].get("blocks") or []) if regions else []
    return blocks[0] if blocks else None


def _tensors(tree: Tree) -> list[Tree]:
    block = _block(tree)
    return block.setdefault("tensors", []) if block is not None else []


def _operators(tree: Tree) -> list[Tree]:
    block = _block(tree)
    return block.setdefault("operators", []) if block is not None else []


def _names(tree: Tree) -> list[bytes]:
    return [t.get("name", b"") for t in _tensors(tree)]


def _customs(tree: Tree) -> list[Tree]:
    """The attribute tables of CUSTOM ops (any domain)."""
    out = []
    for op in _operators(tree):
        a = op.get("attribute")
        if isinstance(a, Union) and a.table == "CustomAttribute":
            out.append(a.value)
    return out


# --- values ----------------------------------------------------------------------------------


def _int(rng: random.Random, lo: int | None = None, hi: int | None = None) -> int:
    roll = rng.random()
    if roll < 0.5:
        v = rng.choice(_INTERESTING_INTS)
    elif roll < 0.8:
        v = rng.choice(_EDGE_INTS)
    else:
        v = rng.randint(-100, 100)
    if lo is not None and hi is not None and not lo <= v <= hi:
        v = lo + v % (hi - lo + 1)  # wrap into range: keeps the edges' bit patterns
    return v


def _text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(_NASTY_TEXT)
    if roll < 0.5:
        return rng.choice("ab\"'\\{}[]%\n") * rng.choice(_LONG)
    if roll < 0.8:
        return rng.choice(_VOCABULARY)
    return "".join(chr(rng.randint(1, 0x2FF)) for _ in range(rng.randint(1, 12)))


def _bytes_text(rng: random.Random) -> bytes:
    if rng.random() < 0.15:
        return rng.choice((b"\xff\xfe", b"a\xc3(", b"\xed\xa0\x80", b"\x80" * 8))
    return _text(rng).encode("utf-8", "surrogatepass")


def _scalar(field_type: str, current: Any, rng: random.Random) -> Any:
    s = schema()
    flags = s.flags(field_type)
    if flags is nt.BoolFlags:
        return not current if rng.random() < 0.7 else bool(rng.getrandbits(1))
    if flags.py_type is float:
        return rng.choice((0.0, -0.0, 1.0, -1.0, 1e-45, 3.4e38, float("inf"), float("nan")))
    if field_type in s.enums and rng.random() < 0.7:
        return rng.choice(list(s.enums[field_type][1].values()))
    return _int(rng, flags.min_val, flags.max_val)


def _mutate_list(items: list[Any], make: Callable[[], Any], rng: random.Random) -> list[Any]:
    items = list(items)
    roll = rng.random()
    if not items or roll < 0.2:
        items.insert(rng.randint(0, len(items)), make())
    elif roll < 0.4:
        del items[rng.randrange(len(items))]
    elif roll < 0.6:
        items[rng.randrange(len(items))] = make()
    elif roll < 0.7:
        items.append(items[rng.randrange(len(items))])
    elif roll < 0.8:
        rng.shuffle(items)
    elif roll < 0.9:
        items = []
    else:
        items = items * rng.choice((2, 16, 1000))
    return items


def _mutate_field(table: Tree, f: Field, rng: random.Random) -> None:
    """Change one field of a table (present or not) to a value of its declared type."""
    s = schema()
    kind = s.kind(f.type)
    current = table.get(f.name)
    if current is not None and rng.random() < 0.1:
        del table[f.name]
        return
    if f.vector:
        if kind == "scalar" and s.flags(f.type) is nt.Uint8Flags:
            table[f.name] = _mutate_bytes(bytes(current or b""), rng)
        elif kind == "scalar":
            table[f.name] = _mutate_list(current or [], lambda: _scalar(f.type, 0, rng), rng)
        elif kind == "string":
            table[f.name] = _mutate_list(current or [], lambda: _bytes_text(rng), rng)
        elif kind == "table" and current:
            table[f.name] = _mutate_list(current, lambda: copy.deepcopy(rng.choice(current)), rng)
        return
    if kind == "scalar":
        table[f.name] = _scalar(f.type, current, rng)
    elif kind == "string":
        table[f.name] = _bytes_text(rng)
    elif kind == "table":
        table[f.name] = current if current is not None else {}
        _mutate_random_field(table[f.name], f.type, rng)
    elif kind == "union":
        _mutate_union(table, f, rng)


def _mutate_random_field(table: Tree, table_name: str, rng: random.Random) -> bool:
    fields = schema().tables[table_name]
    if not fields:
        return False
    _mutate_field(table, rng.choice(fields), rng)
    return True


def _mutate_union(table: Tree, f: Field, rng: random.Random) -> None:
    s = schema()
    members = s.unions[f.type]
    u = table.get(f.name)
    roll = rng.random()
    if u is None or roll < 0.3:
        # A well-formed table of another attribute type: the op reads the wrong attributes.
        code = rng.choice(list(members))
        table[f.name] = Union(code, members[code], {})
        _mutate_random_field(table[f.name].value, members[code], rng)
    elif roll < 0.5:
        # The type code alone changes: the table is read as another layout.
        u.code = rng.choice([*members, 0, len(members) + 1, 255])
    else:
        _mutate_random_field(u.value, u.table, rng)


def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    roll = rng.random()
    if not b or roll < 0.2:
        b += bytes(rng.getrandbits(8) for _ in range(rng.choice((1, 3, 4, 8, 64))))
    elif roll < 0.4:
        del b[rng.randrange(len(b)) :]
    elif roll < 0.7:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.getrandbits(8)
    elif roll < 0.85:
        i = rng.randrange(len(b))
        pattern = rng.choice(
            (b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x7f", b"\xff\xff\xff\x7f", b"\x80")
        )
        b[i : i + len(pattern)] = pattern
    else:
        b = b[: rng.randint(0, len(b))] * rng.choice((2, 3))
    return bytes(b)


# --- mutations of the graph --------------------------------------------------------------------


def _m_tensor_shape(tree: Tree, rng: random.Random) -> bool:
    tensors = _tensors(tree)
    if not tensors:
        return False
    t = rng.choice(tensors)
    shape = list(t.get("shape") or [])
    roll = rng.random()
    if shape and roll < 0.5:
        shape[rng.randrange(len(shape))] = _int(rng, -(2**31), 2**31 - 1)
    elif roll < 0.65:
        shape.insert(rng.randint(0, len(shape)), rng.choice((1, 2, 3, 4, 0, -1)))
    elif shape and roll < 0.8:
        del shape[rng.randrange(len(shape))]
    elif roll < 0.9:
        shape = [1] * rng.choice((0, 5, 6, 7, 8, 16, 64))
    else:
        t["is_unranked"] = True
    t["shape"] = shape
    return True


def _m_tensor_dtype(tree: Tree, rng: random.Random) -> bool:
    tensors = _tensors(tree)
    if not tensors:
        return False
    codes = list(schema().enums["DType"][1].values())
    rng.choice(tensors)["type"] = (
        rng.choice(codes) if rng.random() < 0.85 else _int(rng, 0, 2**32 - 1)
    )
    return True


def _m_tensor_data(tree: Tree, rng: random.Random) -> bool:
    tensors = _tensors(tree)
    if not tensors:
        return False
    t = rng.choice(tensors)
    roll = rng.random()
    if roll < 0.7:
        t["data"] = _mutate_bytes(t.get("data", b""), rng)
    elif roll < 0.8:
        t.pop("data", None)
    else:
        t["offset"] = _int(rng, 0, 2**64 - 1)
        t["size"] = _int(rng, 0, 2**64 - 1)
    return True


def _m_tensor_name(tree: Tree, rng: random.Random) -> bool:
    tensors = _tensors(tree)
    if not tensors:
        return False
    t = rng.choice(tensors)
    others = _names(tree)
    t["name"] = rng.choice(others) if rng.random() < 0.3 else _bytes_text(rng)
    return True


def _m_tensor_list(tree: Tree, rng: random.Random) -> bool:
    tensors = _tensors(tree)
    if not tensors:
        return False
    roll = rng.random()
    if roll < 0.4:
        del tensors[rng.randrange(len(tensors))]
    elif roll < 0.7:
        tensors.append(copy.deepcopy(rng.choice(tensors)))
    elif roll < 0.85:
        rng.choice(tensors)["variable"] = True
    else:
        rng.shuffle(tensors)
    return True


def _m_op_code(tree: Tree, rng: random.Random) -> bool:
    ops = _operators(tree)
    if not ops:
        return False
    codes = list(schema().enums["Op"][1].values())
    rng.choice(ops)["op"] = rng.choice(codes) if rng.random() < 0.9 else _int(rng, 0, 2**32 - 1)
    return True


def _m_op_operands(tree: Tree, rng: random.Random) -> bool:
    ops = _operators(tree)
    if not ops:
        return False
    op = rng.choice(ops)
    names = _names(tree) or [b"x"]
    if rng.random() < 0.1:
        op["inputs"], op["outputs"] = op.get("outputs", []), op.get("inputs", [])
        return True
    key = rng.choice(("inputs", "outputs"))

    def name() -> bytes:
        roll = rng.random()
        if roll < 0.7:
            return rng.choice(names)
        if roll < 0.85:
            return rng.choice(op.get("outputs") or names)  # a self-loop
        return _bytes_text(rng)

    op[key] = _mutate_list(op.get(key, []), name, rng)
    return True


def _m_op_list(tree: Tree, rng: random.Random) -> bool:
    ops = _operators(tree)
    if not ops:
        return False
    roll = rng.random()
    i = rng.randrange(len(ops))
    if roll < 0.3:
        del ops[i]
    elif roll < 0.6:
        ops.insert(rng.randint(0, len(ops)), copy.deepcopy(ops[i]))
    elif roll < 0.8:
        j = rng.randrange(len(ops))
        ops[i], ops[j] = ops[j], ops[i]
    else:
        ops.insert(0, ops.pop(i))
    return True


def _m_op_attribute(tree: Tree, rng: random.Random) -> bool:
    ops = _operators(tree)
    if not ops:
        return False
    op = rng.choice(ops)
    field = next(f for f in schema().tables["TosaOperator"] if f.name == "attribute")
    if rng.random() < 0.1:
        op.pop("attribute", None)
    else:
        _mutate_union(op, field, rng)
    return True


def _m_custom_names(tree: Tree, rng: random.Random) -> bool:
    customs = _customs(tree)
    if not customs:
        return False
    c = rng.choice(customs)
    key = rng.choice(("operator_name", "domain_name"))
    if key == "domain_name" and rng.random() < 0.5:
        c[key] = rng.choice((b"com.arm.vulkancustomshader", SHADER_DOMAIN + b" ", b"", b"other"))
    else:
        c[key] = _bytes_text(rng)
    return True


def _m_block_io(tree: Tree, rng: random.Random) -> bool:
    block = _block(tree)
    if block is None:
        return False
    names = _names(tree) or [b"x"]
    key = rng.choice(("inputs", "outputs"))
    block[key] = _mutate_list(
        block.get(key, []),
        lambda: rng.choice(names) if rng.random() < 0.8 else _bytes_text(rng),
        rng,
    )
    return True


def _m_regions(tree: Tree, rng: random.Random) -> bool:
    regions = tree.setdefault("regions", [])
    roll = rng.random()
    if not regions or roll < 0.2:
        regions.append({"name": rng.choice((b"main", b"then", b"")), "blocks": []})
    elif roll < 0.4:
        regions[0]["name"] = _bytes_text(rng)
    elif roll < 0.6:
        regions.insert(0, copy.deepcopy(regions[0]) if rng.random() < 0.5 else {"name": b"x"})
    elif roll < 0.8:
        blocks = regions[0].setdefault("blocks", [])
        blocks.insert(0, {"name": b"b"} if rng.random() < 0.5 else {})
    else:
        regions.pop(rng.randrange(len(regions)))
    return True


def _m_version(tree: Tree, rng: random.Random) -> bool:
    version = tree.setdefault("version", {})
    if rng.random() < 0.05:
        del tree["version"]
        return True
    return _mutate_random_field(version, "Version", rng)


def _m_anywhere(tree: Tree, rng: random.Random) -> bool:
    """Any field of any table in the model, found by walking the schema."""
    sites: list[tuple[Tree, str]] = []

    def walk(table: Tree, name: str) -> None:
        sites.append((table, name))
        for f in schema().tables[name]:
            v = table.get(f.name)
            kind = schema().kind(f.type)
            if kind == "table" and isinstance(v, dict):
                walk(v, f.type)
            elif kind == "table" and f.vector and isinstance(v, list):
                for item in v:
                    walk(item, f.type)
            elif isinstance(v, Union):
                walk(v.value, v.table)

    walk(tree, schema().root)
    table, name = rng.choice(sites)
    return _mutate_random_field(table, name, rng)


# --- implementation_attrs JSON -------------------------------------------------------------------

_RAW = "\x00raw\x00"  # a placeholder value, replaced by raw JSON text after dumping


def _json_value(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(_JSON_INTS) * rng.choice((1, 1, -1))
    if roll < 0.5:
        return _text(rng)
    if roll < 0.6:
        return rng.choice((True, False, None, 1.5, -0.0, 1e308))
    if roll < 0.75:
        return [rng.choice(_JSON_INTS[:5]) for _ in range(rng.choice((0, 1, 2, 3, 4, 1000)))]
    if roll < 0.85:
        return {rng.choice(_SAMPLER_KEYS): _text(rng) for _ in range(rng.randint(0, 6))}
    return _RAW


def _raw_json(rng: random.Random) -> str:
    """JSON text that ``json.dumps`` would not write: deep nesting, specials, huge numbers."""
    depth = rng.choice((64, 1_000, 100_000))
    return rng.choice(
        (
            "[" * depth + "]" * depth,
            '{"a":' * depth + "1" + "}" * depth,
            "NaN",
            "Infinity",
            "-Infinity",
            "1" + "0" * rng.choice((20, 400, 5_000)),
            "1e999999",
            "0.1e-999999",
            '"\\ud800"',
        )
    )


def _mutate_json_object(d: dict[str, Any], rng: random.Random) -> None:
    roll = rng.random()
    keys = list(d)
    if keys and roll < 0.35:
        d[rng.choice(keys)] = _json_value(rng)
    elif keys and roll < 0.45:
        del d[rng.choice(keys)]
    elif keys and roll < 0.55:
        k = rng.choice(keys)
        d[_near_miss(k, rng)] = d.pop(k)
    elif roll < 0.75:
        index = rng.choice((0, 0, 1, 2, 3, 7, 10**6, 10**30))
        key = rng.choice(
            (f"{rng.choice(('input', 'output'))}_{index}_{rng.choice(_KEY_SUFFIXES)}", *_TOP_KEYS)
        )
        d[key] = d[rng.choice(keys)] if keys and rng.random() < 0.5 else _json_value(rng)
    elif roll < 0.85:
        d["workgroup_sizes" if rng.random() < 0.7 else "global_size"] = [
            _int(rng) for _ in range(rng.choice((0, 1, 2, 3, 3, 3, 4)))
        ]
    elif keys:
        # The value of one key moves to another: the right type in the wrong place.
        a, b = rng.choice(keys), rng.choice(keys)
        d[a], d[b] = d[b], d[a]


def _near_miss(key: str, rng: random.Random) -> str:
    edits = (
        lambda k: k.upper(),
        lambda k: k.replace("_0_", "_00_"),
        lambda k: k.replace("_0_", "_-1_"),
        lambda k: k + " ",
        lambda k: k[:-1],
        lambda k: re.sub(r"\d+", "01", k, count=1),
    )
    return str(rng.choice(edits)(key))


def _m_custom_json(tree: Tree, rng: random.Random) -> bool:
    customs = _customs(tree)
    if not customs:
        return False
    c = rng.choice(customs)
    raw = bytes(c.get("implementation_attrs", b""))
    try:
        d = json.loads(raw)
    except (ValueError, RecursionError):
        c["implementation_attrs"] = _mutate_bytes(raw, rng)
        return True
    roll = rng.random()
    if roll < 0.08:
        # Not an object, or not UTF-8, or not JSON at all.
        c["implementation_attrs"] = rng.choice(
            (b"[]", b"null", b"1", b'"x"', b"", b"\xef\xbb\xbf{}", raw[: len(raw) // 2], raw + b"}")
        )
        return True
    if not isinstance(d, dict):
        d = {}
    if roll < 0.12 and d:
        # A key twice: the second value wins in Python's parser, the first in others.
        k = rng.choice(list(d))
        text = json.dumps(d)[:-1] + f", {json.dumps(k)}: {json.dumps(_json_value(rng))}}}"
        c["implementation_attrs"] = text.replace(json.dumps(_RAW), _raw_json(rng)).encode()
        return True
    _mutate_json_object(d, rng)
    text = json.dumps(d, ensure_ascii=rng.random() < 0.5)
    text = text.replace(json.dumps(_RAW), _raw_json(rng))
    c["implementation_attrs"] = text.encode("utf-8", "surrogatepass")
    return True


# --- shader code ---------------------------------------------------------------------------------


def _m_shader_code(tree: Tree, rng: random.Random) -> bool:
    customs = [
        (c, d)
        for c in _customs(tree)
        for d in [_json_object(c)]
        if d is not None and isinstance(d.get("shader_code"), str)
    ]
    if not customs:
        return False
    c, d = rng.choice(customs)
    code = d["shader_code"]
    if d.get("shader_language") == "SPIR-V" and rng.random() < 0.8:
        d["shader_code"] = _mutate_spirv_base64(code, rng)
    else:
        d["shader_code"] = _mutate_source(code, rng)
    c["implementation_attrs"] = json.dumps(d).encode("utf-8", "surrogatepass")
    return True


def _json_object(c: Tree) -> dict[str, Any] | None:
    try:
        d = json.loads(bytes(c.get("implementation_attrs", b"")))
    except (ValueError, RecursionError):
        return None
    return d if isinstance(d, dict) else None


def _mutate_source(code: str, rng: random.Random) -> str:
    lines = code.split("\n")
    roll = rng.random()
    if roll < 0.4:
        numbers = list(re.finditer(r"\b\d+\b", code))
        if numbers:
            m = rng.choice(numbers)
            value = rng.choice((0, 1, 2, 3, 7, 64, 1024, 65536, 2**31, 2**32 + 1))
            return code[: m.start()] + str(value) + code[m.end() :]
    if roll < 0.55 and lines:
        del lines[rng.randrange(len(lines))]
    elif roll < 0.7 and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif roll < 0.85:
        lines.insert(
            rng.randint(0, len(lines)),
            rng.choice(
                (
                    '#include "missing.h"',
                    "#error injected",
                    "#line 4294967295",
                    "#define X X X",
                    "#pragma once",
                    "#version 999",
                    "layout(local_size_x = 0) in;",
                    "layout(set = 0, binding = 9) buffer Extra { float e[]; };",
                    "layout(push_constant) uniform P { float p[64]; } pc;",
                    "{" * 500,
                    "void main() {}",
                    "x" * 100_000,
                )
            ),
        )
    elif roll < 0.93:
        # Statements repeated: a large source, to measure how compile time grows.
        i = rng.randrange(len(lines)) if lines else 0
        lines[i:i] = [lines[i] if lines else ";"] * rng.choice((100, 10_000))
    else:
        return code[: rng.randint(0, len(code))]
    return "\n".join(lines)


def _mutate_spirv_base64(code: str, rng: random.Random) -> str:
    try:
        data = bytearray(base64.b64decode(code, validate=True))
    except ValueError:
        return code + rng.choice(("=", "A", "!!", "===="))
    if rng.random() < 0.1:
        return code[: -rng.randint(1, 4)] if code else "AAAA"
    words = [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data) - 3, 4)]
    if len(words) <= 5:
        return base64.b64encode(bytes(data) + b"\0\0\0\0").decode()
    roll = rng.random()
    i = rng.randrange(5, len(words))
    if roll < 0.4:
        words[i] = rng.choice(
            (0, 1, 2, 3, 4, 0xFFFF, 0x10000, 0xFFFFFFFF, words[i] + 1, words[i] - 1)
        )
    elif roll < 0.55:
        words[i] = (words[i] & 0xFFFF) | (rng.choice((0, 1, 2, 100, 0xFFFF)) << 16)  # word count
    elif roll < 0.7:
        words[rng.randrange(1, 5)] = _int(rng, 0, 2**32 - 1)  # version, generator, bound, schema
    elif roll < 0.85:
        del words[i : i + rng.randint(1, 8)]
    else:
        words = words[: rng.randint(0, len(words))]
    return base64.b64encode(
        b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in words)
    ).decode()


# --- the table, and the entry points -------------------------------------------------------------

MUTATIONS: tuple[tuple[int, Callable[[Tree, random.Random], bool]], ...] = (
    (12, _m_custom_json),
    (10, _m_shader_code),
    (3, _m_custom_names),
    (8, _m_tensor_shape),
    (5, _m_tensor_dtype),
    (4, _m_tensor_data),
    (3, _m_tensor_name),
    (3, _m_tensor_list),
    (4, _m_op_code),
    (6, _m_op_operands),
    (3, _m_op_list),
    (6, _m_op_attribute),
    (3, _m_block_io),
    (1, _m_regions),
    (1, _m_version),
    (5, _m_anywhere),
)
"""(weight, mutation): each changes one thing in place and says whether it applied."""


def mutate_tree(tree: Tree, rng: random.Random) -> str:
    """Apply one applicable mutation to ``tree`` in place; returns its name."""
    weights = [w for w, _ in MUTATIONS]
    for _ in range(16):
        (fn,) = rng.choices([m for _, m in MUTATIONS], weights)
        if fn(tree, rng):
            return fn.__name__
    _m_anywhere(tree, rng)
    return _m_anywhere.__name__


def _fallback(
    data: bytes, max_size: int, rng: random.Random, byte_mutate: ByteMutate | None
) -> bytes:
    out = byte_mutate(data, max_size) if byte_mutate else _mutate_bytes(data, rng)[:max_size]
    if len(out) >= 8 and rng.random() < 0.8:
        out = out[:4] + IDENTIFIER + out[8:]  # most byte mutants should still reach the reader
    return out


def mutate(data: bytes, max_size: int, seed: int, byte_mutate: ByteMutate | None = None) -> bytes:
    """atheris' ``custom_mutator``: one structural change, or sometimes a byte mutation."""
    rng = random.Random(seed)
    if rng.random() < BYTE_MUTATION_RATE:
        return _fallback(data, max_size, rng, byte_mutate)
    try:
        tree = decode(data)
    except ValueError:
        return _fallback(data, max_size, rng, byte_mutate)
    for _ in range(4):
        candidate = copy.deepcopy(tree)
        mutate_tree(candidate, rng)
        try:
            out = encode(candidate)
        except (ValueError, OverflowError, TypeError):  # e.g. an int that does not fit its field
            continue
        if len(out) <= max_size:
            return out
    return _fallback(data, max_size, rng, byte_mutate)


def crossover(data1: bytes, data2: bytes, max_size: int, seed: int) -> bytes:
    """atheris' ``custom_crossover``: an operator (with its tensors) or a custom op's attributes
    from the second model put into the first."""
    rng = random.Random(seed)
    try:
        a, b = decode(data1), decode(data2)
    except ValueError:
        return data1
    ops_b = _operators(b)
    if not ops_b or _block(a) is None:
        return data1
    customs_a, customs_b = _customs(a), _customs(b)
    if customs_a and customs_b and rng.random() < 0.5:
        rng.choice(customs_a)["implementation_attrs"] = rng.choice(customs_b).get(
            "implementation_attrs", b""
        )
    else:
        op = copy.deepcopy(rng.choice(ops_b))
        have = set(_names(a))
        by_name = {t.get("name"): t for t in _tensors(b)}
        for name in [*op.get("inputs", []), *op.get("outputs", [])]:
            if name not in have and name in by_name:
                _tensors(a).append(copy.deepcopy(by_name[name]))
                have.add(name)
        ops_a = _operators(a)
        ops_a.insert(rng.randint(0, len(ops_a)), op)
    try:
        out = encode(a)
    except (ValueError, OverflowError, TypeError):
        return data1
    return out if len(out) <= max_size else data1
