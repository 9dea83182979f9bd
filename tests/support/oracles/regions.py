"""An oracle for whole networks with custom ops: tosa_reference_model for the built-in parts,
numpy references (:mod:`oracles.mediapipe_ops`) for the custom ops.

It reads the model with the generic flatbuffer tree of ``tests/fuzz/tosa_tree.py`` (not with
vgfc), then alternates: every built-in op whose inputs are known forms a region, written back
as a TOSA file of the same operators, tensors and attributes (only the block's inputs and
outputs change) and run by the TOSA reference model; then every custom op whose inputs are known
runs in numpy. Nothing here shares code with vgfc's kernels or its compose expansion.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))

import tosa.Op as fb_op
import tosa_tree

__all__ = ["CustomOracle", "evaluate_network"]

CustomOracle = Callable[[str, bytes, Sequence[np.ndarray], Sequence[Sequence[int]]], list[Any]]
"""(operator_name, implementation_attrs, inputs, output shapes) -> outputs."""

_CUSTOM = fb_op.Op.CUSTOM
_CONSTS = (fb_op.Op.CONST, getattr(fb_op.Op, "CONST_SHAPE", -1))


def _exe() -> str:
    beside = Path(sysconfig.get_path("scripts")) / "tosa_reference_model"
    found = str(beside) if beside.is_file() else shutil.which("tosa_reference_model")
    assert found, "tosa_reference_model (tosa-tools) is not installed"
    return found


def evaluate_network(
    path: Path, inputs: Mapping[str, np.ndarray], custom: CustomOracle
) -> dict[str, np.ndarray]:
    """The graph outputs of ``path`` for ``inputs``, by name."""
    tree = tosa_tree.decode(path.read_bytes())
    block = tree["regions"][0]["blocks"][0]
    tensors = {t["name"].decode(): t for t in block["tensors"]}
    ops = block["operators"]
    names = [
        ([n.decode() for n in op.get("inputs", [])], [n.decode() for n in op["outputs"]])
        for op in ops
    ]
    known: dict[str, np.ndarray] = dict(inputs)
    consts = {
        o for op, (_, outs) in zip(ops, names, strict=True) if op["op"] in _CONSTS for o in outs
    }
    done: set[int] = set()
    graph_outputs = [n.decode() for n in block["outputs"]]

    def ready(i: int) -> bool:
        return all(n in known or n in consts for n in names[i][0])

    while len(done) < len(ops):
        # Every built-in op reachable from the known values, as one region.
        region: list[int] = []
        produced: set[str] = set()
        changed = True
        while changed:
            changed = False
            for i, op in enumerate(ops):
                if i in done or i in region or op["op"] == _CUSTOM:
                    continue
                if all(n in known or n in consts or n in produced for n in names[i][0]):
                    region.append(i)
                    produced.update(names[i][1])
                    changed = True
        if region:
            known.update(_run_region(tree, ops, names, region, known, consts, graph_outputs))
            done.update(region)
        progressed = bool(region)
        for i, op in enumerate(ops):
            if i in done or op["op"] != _CUSTOM or not ready(i):
                continue
            attr = op["attribute"].value
            shapes = [list(tensors[o]["shape"]) for o in names[i][1]]
            results = custom(
                attr["operator_name"].decode(),
                bytes(attr.get("implementation_attrs", b"")),
                [known[n] for n in names[i][0]],
                shapes,
            )
            for o, r in zip(names[i][1], results, strict=True):
                known[o] = np.asarray(r).astype(np.float32)
            done.add(i)
            progressed = True
        assert progressed, "the network has an op whose inputs never become known"
    return {n: known[n] for n in graph_outputs}


def _run_region(
    tree: dict[str, Any],
    ops: list[dict[str, Any]],
    names: list[tuple[list[str], list[str]]],
    region: list[int],
    known: Mapping[str, np.ndarray],
    consts: set[str],
    graph_outputs: Sequence[str],
) -> dict[str, np.ndarray]:
    chosen = set(region)
    # Constants the region reads come along; values known so far become its inputs.
    const_ops = [i for i, op in enumerate(ops) if op["op"] in _CONSTS]
    reads = {n for i in region for n in names[i][0]}
    takes = [i for i in const_ops if set(names[i][1]) & reads and i not in chosen]
    members = sorted(chosen | set(takes))
    produced = {o for i in members for o in names[i][1]}
    region_inputs = sorted(n for n in reads if n not in produced and n not in consts)
    later = {n for i, _ in enumerate(ops) if i not in chosen for n in names[i][0]}
    region_outputs = sorted(
        n for i in region for n in names[i][1] if n in later or n in graph_outputs
    )
    sub = dict(tree)
    region0 = dict(tree["regions"][0])
    block = dict(region0["blocks"][0])
    block["operators"] = [ops[i] for i in members]
    used = {n for i in members for n in (*names[i][0], *names[i][1])}
    block["tensors"] = [t for t in block["tensors"] if t["name"].decode() in used]
    if "shapes" in block:
        block["shapes"] = [s for s in block["shapes"] if s["name"].decode() in used]
    block["inputs"] = [n.encode() for n in region_inputs]
    block["outputs"] = [n.encode() for n in region_outputs]
    region0["blocks"] = [block]
    sub["regions"] = [region0]
    with tempfile.TemporaryDirectory(prefix="vgfc-oracle-") as tmp:
        work = Path(tmp)
        model = work / "region.tosa"
        model.write_bytes(tosa_tree.encode(sub))
        files = []
        for k, n in enumerate(region_inputs):
            np.save(work / f"in{k}.npy", known[n])
            files.append(f"in{k}.npy")
        outs = [f"out{k}.npy" for k in range(len(region_outputs))]
        run = subprocess.run(
            [
                _exe(),
                f"--tosa_file={model}",
                f"--flatbuffer_dir={work}",
                f"--output_dir={work}",
                f"--ifm_name={','.join(region_inputs)}",
                f"--ifm_file={','.join(files)}",
                f"--ofm_name={','.join(region_outputs)}",
                f"--ofm_file={','.join(outs)}",
            ],
            capture_output=True,
            text=True,
            cwd=work,
            timeout=900,
        )
        assert run.returncode == 0, (run.stdout + run.stderr)[-2000:]
        return {n: np.load(work / f) for n, f in zip(region_outputs, outs, strict=True)}
