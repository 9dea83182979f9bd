"""The fuzzer's other surfaces: kernel libraries and VGF files, each with its invariant and its
mutator (the model's are :mod:`invariant` and :mod:`mutator`).

**Kernel libraries** (``library``). A mutant is a library YAML file in a folder that holds every
seed library's shaders. The invariant: loading it (what ``--kernels`` does), checking it without
a model (``vgfc kernels``) and compiling the kernel sample model with it either succeed or fail
with :class:`vgfc.VgfcError`s that name the library (or the model) and stay short, none of them
internal; each within the deadline. Mutations work on the parsed document (a value replaced by a
hostile one: huge or non-finite numbers, expressions that blow up, paths that leave the folder,
misspelt op names, deep lists; a key dropped or added; an item repeated) or on the text (an
alias bomb, deep nesting, a byte flip).

**VGF files** (``vgf``). A mutant is a VGF file. The invariant: reading it (``vgfc inspect``),
its JSON and a diff with itself (``inspect --diff``) either succeed or fail with
:class:`vgfc.VgfcError`s that name the file and stay short, within the deadline. Mutations are
edits of the header's offsets and sizes, 32-bit fields set to edge values, truncation, and byte
flips.

Nothing here imports atheris: the regression tests replay the corpus with it.
"""

from __future__ import annotations

import copy
import os
import random
import re
import shutil
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from invariant import DEADLINE_S, MAX_MESSAGE, Violation

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

LIBRARY_SEEDS = (
    ROOT / "samples" / "kernels" / "example_ops.yaml",
    ROOT / "tests" / "data" / "kernels" / "ops.yaml",
    ROOT / "vgfc" / "kernels" / "mediapipe" / "mediapipe.yaml",
)
KERNEL_MODEL = ROOT / "samples" / "kernels" / "model.tosa"
SHADER_SUFFIXES = (".comp", ".glsl", ".hlsl", ".spv")

ByteMutate = Callable[[bytes, int], bytes]


def _check_message(text: str, names: tuple[str, ...], where: str) -> None:
    if len(text) > MAX_MESSAGE:
        raise Violation("long-message", f"{where}: {len(text)} characters: {text[:300]!r}", text)
    if not any(name in text for name in names):
        raise Violation("message-without-file", f"{where}: {text[:MAX_MESSAGE]!r}", text)


def _cpu() -> float:
    """CPU seconds of this process and the workers it has waited for: what a hang or a
    blow-up spends, and what a loaded machine does not stretch (wall time would)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _deadline(start: float, what: str, deadline_s: float) -> None:
    seconds = _cpu() - start
    if seconds > deadline_s:
        raise Violation("slow", f"{what} took {seconds:.1f} s of CPU, deadline {deadline_s} s")


# --- kernel libraries ---------------------------------------------------------------------------


def library_folder(folder: Path) -> Path:
    """``folder`` with every seed library's shaders in it (mutants are written beside them)."""
    folder.mkdir(parents=True, exist_ok=True)
    for seed in LIBRARY_SEEDS:
        for shader in seed.parent.iterdir():
            if shader.suffix in SHADER_SUFFIXES and not (folder / shader.name).exists():
                shutil.copy(shader, folder / shader.name)
    return folder


def run_library(path: str | os.PathLike[str], deadline_s: float = DEADLINE_S) -> str:
    """Load, check and use the library ``path``; raise :class:`Violation` (or whatever vgfc
    raised) on a bug. Returns what became of it."""
    from vgfc.cli.kernels_check import check_library
    from vgfc.compiler import Options, compile_model
    from vgfc.diagnostics import ErrorKind, VgfcError
    from vgfc.resolve.library.load import load_library
    from vgfc.shader.options import CompileOptions

    name = os.fspath(path)
    names = (name, os.fspath(KERNEL_MODEL))
    start = _cpu()
    try:
        library = load_library(name)
    except VgfcError as e:
        _check_message(e.render(), names, "load")
        if e.kind is ErrorKind.INTERNAL:
            raise Violation("internal-error", e.render()[:MAX_MESSAGE], e.render()) from e
        _deadline(start, "load", deadline_s)
        return "refused"
    _deadline(start, "load", deadline_s)
    start = _cpu()
    errors = 0
    shader = CompileOptions(timeout=5.0)
    for verdict in check_library(library, shader):
        if verdict.error is not None:
            errors += 1
            _check_message(verdict.error.render(), names, "kernels")
    _deadline(start, "kernels", deadline_s * 3)
    start = _cpu()
    try:
        compile_model(KERNEL_MODEL, Options(shader=shader, kernels=(str(library.path),)))
    except VgfcError as e:
        _check_message(e.render(), names, "compile")
        if e.kind is ErrorKind.INTERNAL:
            raise Violation("internal-error", e.render()[:MAX_MESSAGE], e.render()) from e
        _deadline(start, "compile", deadline_s)
        return f"loaded, {errors} kernel errors, compile failed"
    _deadline(start, "compile", deadline_s)
    return f"loaded, {errors} kernel errors, compiled"


_HOSTILE_VALUES: tuple[Any, ...] = (
    0,
    -1,
    1,
    2**31,
    2**32,
    2**63,
    2**64 + 1,
    10**30,
    int("9" * 60),
    float("nan"),
    float("inf"),
    1e308,
    -0.0,
    1.5,
    True,
    None,
    "",
    "x",
    "N",
    "C / 0",
    "round(N, -100000000)",
    "round(1e308)",
    "ceil(1e308)",
    "floor(-1e308)",
    "2 ** 64",
    "2 ** 65",
    "(2 ** 64) ** 64",
    "1e308 * 10",
    "max()",
    "len(N)",
    "x[99]",
    "N" + " + N" * 100,
    "[1] + [2]",
    "'a' * 5",
    "__import__('os')",
    "/etc/passwd",
    "../outside.comp",
    "/dev/zero",
    "/proc/self/environ",
    "a\x00b.comp",
    "ADD",
    "ADDD",
    "MUL",
    "CONST",
    "MATMUL_T_BLOCK_SCALED",
    "CUSTOM",
    "PROPAGATE",
    "FP32",
    "INT8",
    "INT4",
    "SHAPE",
    "storage_buffer",
    "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
    [],
    [1, 10**30, 1, 1],
    [1, 4294967295, 1, 1],
    [[[[1]]]],
    {},
    {"same_as": "x"},
)


_WALK_MAX = 20_000
"""Values of a document the mutator looks at: a mutant may be an alias bomb, whose values
are shared lists that expand exponentially; each list or map is visited once."""


def _walk(root: Any) -> list[tuple[tuple[Any, ...], Any]]:
    """(path, value) of a parsed document's values, each container once, at most _WALK_MAX."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    seen: set[int] = set()
    stack: list[tuple[tuple[Any, ...], Any]] = [((), root)]
    while stack and len(out) < _WALK_MAX:
        path, node = stack.pop()
        out.append((path, node))
        if isinstance(node, dict | list):
            if id(node) in seen:
                continue
            seen.add(id(node))
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend(((*path, k), v) for k, v in items)
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return doc


def _deep(rng: random.Random) -> Any:
    value: Any = rng.choice((1, "N", "x"))
    for _ in range(rng.choice((10, 70, 300))):
        value = [value]
    return value


def mutate_library_doc(doc: Any, rng: random.Random) -> Any:
    """One change to a parsed library."""
    nodes = _walk(doc)
    path, value = rng.choice(nodes)
    roll = rng.random()
    if roll < 0.45:
        new: Any = rng.choice(_HOSTILE_VALUES)
    elif roll < 0.55 and isinstance(value, int | float) and not isinstance(value, bool):
        new = value * rng.choice((-1, 2, 2**16, 2**40)) + rng.choice((0, 1, -1))
    elif roll < 0.62:
        new = _deep(rng)
    elif roll < 0.72 and isinstance(value, dict) and value:
        new = dict(value)
        del new[rng.choice(list(new))]
    elif roll < 0.8 and isinstance(value, list) and value:
        new = list(value)
        new.insert(rng.randrange(len(new) + 1), copy.deepcopy(rng.choice(new)))
    elif roll < 0.88 and isinstance(value, dict):
        new = dict(value)
        new[rng.choice(("attrs", "shape", "value", "defines", "include_dirs", "bogus"))] = (
            rng.choice(_HOSTILE_VALUES)
        )
    elif roll < 0.94 and isinstance(value, str):
        new = value + rng.choice(("", "x", "[0]", " * 2", "/..", "\n"))
    else:
        # Another node's value here (crossover within the document).
        new = copy.deepcopy(rng.choice(nodes)[1])
    return _set(doc, path, copy.deepcopy(new))


def _text_mutation(text: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        depth = rng.choice((50, 500, 5000))
        return text + f"\nx{rng.randrange(99)}: " + "[" * depth + "]" * depth + "\n"
    if roll < 0.5:
        width = rng.choice((2, 5, 9))
        levels = rng.choice((3, 8, 14))
        bomb = "".join(
            f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * width)}]\n" if i else "b0: &b0 [x]\n"
            for i in range(levels)
        )
        return bomb + text
    if roll < 0.65:
        lines = text.splitlines(keepends=True)
        if lines:
            i = rng.randrange(len(lines))
            lines[i] = rng.choice(("  &a ", "*a\n", "- *a\n", "? [x]\n", "\t", "")) + lines[i]
        return "".join(lines)
    if roll < 0.8:
        i = rng.randrange(len(text) + 1)
        return (
            text[:i]
            + rng.choice(("9" * rng.choice((30, 400, 5000)), "\x00", "\xff", "{", "]"))
            + text[i:]
        )
    data = bytearray(text.encode("utf-8", errors="surrogatepass"))
    for _ in range(rng.randint(1, 4)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return data.decode("utf-8", errors="replace")


def mutate_library(
    data: bytes, max_size: int, seed: int, byte_mutate: ByteMutate | None = None
) -> bytes:
    """atheris' custom mutator for libraries."""
    import yaml

    rng = random.Random(seed)
    text = data.decode("utf-8", errors="replace")
    if rng.random() < 0.7:
        try:
            doc = yaml.safe_load(text) if len(text) < (1 << 20) else None
        except Exception:  # the mutant before was broken YAML: start from a seed
            doc = yaml.safe_load(rng.choice(LIBRARY_SEEDS).read_text())
        if isinstance(doc, dict | list) and len(text) < (1 << 20):
            for _ in range(rng.choice((1, 1, 1, 2, 3))):
                doc = mutate_library_doc(doc, rng)
            try:
                dumped = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=200)
            except (yaml.YAMLError, RecursionError, ValueError):
                dumped = None
            if dumped is not None and len(dumped) <= max_size:
                text = dumped
    elif byte_mutate is not None and rng.random() < 0.3:
        return byte_mutate(data, max_size)
    else:
        text = _text_mutation(text, rng)
    out = text.encode("utf-8", errors="replace")
    return out[:max_size]


# --- VGF files ----------------------------------------------------------------------------------


def vgf_seeds(folder: Path) -> list[Path]:
    """VGF files compiled from the samples into ``folder`` (made once)."""
    from vgfc.compiler import compile_to

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for model in sorted((ROOT / "samples").glob("*.tosa")):
        target = folder / f"{model.stem}.vgf"
        if not target.exists():
            compile_to(model, target)
        out.append(target)
    target = folder / "kernels.vgf"
    if not target.exists():
        from vgfc.compilation import make_options

        compile_to(KERNEL_MODEL, target, options=make_options(kernels=[ROOT / LIBRARY_SEEDS[0]]))
    out.append(target)
    return out


def run_vgf(path: str | os.PathLike[str], deadline_s: float = DEADLINE_S) -> str:
    """Read ``path`` as ``vgfc inspect`` does, its JSON and a diff with itself."""
    import json

    from vgfc.diagnostics import ErrorKind, VgfcError
    from vgfc.vgf.decode import read_vgf
    from vgfc.vgf.diff import diff_models
    from vgfc.vgf.model import model_json

    name = os.fspath(path)
    start = _cpu()
    try:
        model = read_vgf(name)
    except VgfcError as e:
        _check_message(e.render(), (name,), "inspect")
        if e.kind is ErrorKind.INTERNAL:
            raise Violation("internal-error", e.render()[:MAX_MESSAGE], e.render()) from e
        _deadline(start, "inspect", deadline_s)
        return "refused"
    json.dumps(model_json(model))
    if diff_models(model, model):
        raise Violation("diff-with-itself", f"{name} differs from itself")
    _deadline(start, "inspect", deadline_s)
    return f"{len(model.modules)} modules, {len(model.segments)} segments"


_HEADER_FIELDS = tuple(range(0x10, 0x50, 8))
"""Offsets of the header's section offsets and sizes (64-bit each)."""
_EDGES32 = (0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)
_EDGES64 = (0, 1, 2**31, 2**32, 2**40, 2**63 - 1, 2**64 - 1)


def mutate_vgf(
    data: bytes, max_size: int, seed: int, byte_mutate: ByteMutate | None = None
) -> bytes:
    """atheris' custom mutator for VGF files."""
    rng = random.Random(seed)
    out = bytearray(data)
    roll = rng.random()
    if roll < 0.25 and len(out) >= 0x50:
        at = rng.choice(_HEADER_FIELDS)
        value = (
            rng.choice(_EDGES64)
            if rng.random() < 0.5
            else int.from_bytes(out[at : at + 8], "little")
            + rng.choice((-8, -1, 1, 8, 4096, len(out)))
        )
        out[at : at + 8] = struct.pack("<Q", value % 2**64)
    elif roll < 0.6 and len(out) >= 4:
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(0, len(out) - 3) & ~3
            out[at : at + 4] = struct.pack("<I", rng.choice(_EDGES32))
    elif roll < 0.7 and out:
        del out[rng.randrange(len(out)) :]
    elif roll < 0.85 and byte_mutate is not None:
        return byte_mutate(bytes(out), max_size)
    else:
        for _ in range(rng.randint(1, 8)):
            if out:
                out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out[:max_size])


def skeleton_name(text: str) -> str:
    """A file name from a finding's text."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]
