"""Shrink a finding while it stays the same finding (same class and signature).

libFuzzer's ``-minimize_crash`` cuts bytes, which breaks a flatbuffer long before the model is
small; this works on the decoded tree instead: drop operators, tensors, graph inputs and
outputs, regions, optional tables, ``implementation_attrs`` keys and shader lines, and halve
long strings and vectors, keeping each change that keeps the finding, until none does.
"""

from __future__ import annotations

import copy
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import invariant
from tosa_tree import Union, decode, encode

__all__ = ["minimize", "signature_of"]

Tree = dict[str, Any]
BUDGET_S = 600.0


def signature_of(data: bytes) -> tuple[str, str] | None:
    """The finding ``data`` triggers, or ``None`` when the invariant holds."""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "input.tosa")
        Path(path).write_bytes(data)
        try:
            invariant.run(path)
        except Exception as e:
            return invariant.classify(e, path)
    return None


def _custom_json(op: Tree) -> tuple[Tree, Any] | None:
    a = op.get("attribute")
    if not isinstance(a, Union) or a.table != "CustomAttribute":
        return None
    try:
        return a.value, json.loads(bytes(a.value.get("implementation_attrs", b"")))
    except (ValueError, RecursionError):
        return None


def _shorter(value: Any) -> Any:
    return value[: len(value) // 2]


def _reductions(tree: Tree) -> Iterator[Tree]:
    """Candidates one step smaller than ``tree``, the biggest cuts first."""
    for key in ("software_version", "compatibility"):
        if key in tree:
            t = copy.deepcopy(tree)
            del t[key]
            yield t
    regions = tree.get("regions", [])
    for i in range(len(regions) - 1, 0, -1):
        t = copy.deepcopy(tree)
        del t["regions"][i]
        yield t
    for r, region in enumerate(regions):
        for b, block in enumerate(region.get("blocks", [])):
            for key in ("operators", "tensors", "inputs", "outputs", "shapes"):
                for i in range(len(block.get(key, [])) - 1, -1, -1):
                    t = copy.deepcopy(tree)
                    del t["regions"][r]["blocks"][b][key][i]
                    yield t
            for i, op in enumerate(block.get("operators", [])):
                if "location" in op:
                    t = copy.deepcopy(tree)
                    del t["regions"][r]["blocks"][b]["operators"][i]["location"]
                    yield t
                found = _custom_json(op)
                if found is None:
                    continue
                _, attrs = found
                for candidate in _smaller_json(attrs):
                    t = copy.deepcopy(tree)
                    table = t["regions"][r]["blocks"][b]["operators"][i]["attribute"].value
                    table["implementation_attrs"] = json.dumps(candidate).encode(
                        "utf-8", "surrogatepass"
                    )
                    yield t
            for i, tensor in enumerate(block.get("tensors", [])):
                for key in ("name", "data"):
                    if len(tensor.get(key, b"")) > 8:
                        t = copy.deepcopy(tree)
                        tt = t["regions"][r]["blocks"][b]["tensors"][i]
                        tt[key] = _shorter(tt[key])
                        yield t


def _smaller_json(attrs: Any) -> Iterator[Any]:
    if isinstance(attrs, dict):
        for key in list(attrs):
            smaller = dict(attrs)
            del smaller[key]
            yield smaller
        for key, value in attrs.items():
            if key == "shader_code" and isinstance(value, str) and "\n" in value:
                lines = value.split("\n")
                for i in range(len(lines) - 1, -1, -1):
                    yield {**attrs, key: "\n".join(lines[:i] + lines[i + 1 :])}
            elif isinstance(value, (str, list)) and len(value) > 4:
                yield {**attrs, key: _shorter(value)}
    elif isinstance(attrs, list) and attrs:
        yield _shorter(attrs)


def minimize(source: Path, output: Path, budget_s: float = BUDGET_S) -> int:
    data = source.read_bytes()
    target = signature_of(data)
    if target is None:
        print(f"{source}: the invariant holds, nothing to minimise")
        return 1
    print(f"{source}: {target[0]}: {target[1]}")
    try:
        tree = decode(data)
    except ValueError:
        print("not a decodable TOSA flatbuffer: kept as it is")
        output.write_bytes(data)
        return 0
    best = data
    stop = time.monotonic() + budget_s
    progress = True
    while progress and time.monotonic() < stop:
        progress = False
        for candidate in _reductions(tree):
            if time.monotonic() > stop:
                break
            try:
                encoded = encode(candidate)
            except (ValueError, OverflowError, TypeError):
                continue
            if len(encoded) < len(best) and signature_of(encoded) == target:
                tree, best, progress = candidate, encoded, True
                break
    output.write_bytes(best)
    print(f"{len(data)} -> {len(best)} bytes: {output}")
    return 0
