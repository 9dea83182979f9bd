"""Models for kernel-library binding tests, built around the test library
``tests/data/kernels/ops.yaml`` (``OPS``; the session fixture ``lib`` in conftest.py reads it).

``single`` and ``chain`` write a model of custom ops of domain ``test``; ``compiled`` runs the
pipeline with a library; ``execute`` runs the VGF on the CPU stack; ``inserted`` and ``kinds`` read
what binding added. ``graph_to_tosa`` writes an expanded IR graph back to a ``.tosa`` file so that
the TOSA reference model can be the oracle of composed ops (``reference_outputs``), and
``channel_add`` is numpy's ChannelAdd, written from its definition.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from paths import DATA
from tosa_factory import Op, T, build, custom

from vgfc.compiler import Compilation, Options, compile_model
from vgfc.dtypes import numpy_dtype
from vgfc.ir import Graph, Operator
from vgfc.partition import PartitionKind
from vgfc.resolve.library.load import load_library
from vgfc.resolve.library.records import Library

KERNELS = DATA / "kernels"
OPS = KERNELS / "ops.yaml"
SHAPE = (1, 3, 2, 5)
rng = np.random.default_rng(20240611)

ML, SH = PartitionKind.ML, PartitionKind.SHADER


def one_kernel_library(folder: Path, shader: str, *, binding: int = 1, extra: str = "") -> Path:
    """``folder/lib.yaml``: entry test/Op (x -> y, its item on line 3) with one kernel ``k``
    (line 8) on ``folder/k.comp`` (written from ``shader``), x at binding 0 and y at ``binding``,
    16 invocations; ``extra``: more lines of the kernel, indented 8 spaces."""
    (folder / "k.comp").write_text(shader)
    path = folder / "lib.yaml"
    path.write_text(
        "vgfc_kernels: 1\n"
        "operators:\n"
        "  - domain: test\n"
        "    name: Op\n"
        "    inputs: [x]\n"
        "    outputs: [y]\n"
        "    kernels:\n"
        "      - name: k\n"
        "        shader: {file: k.comp}\n"
        f"        resources: {{x: {{binding: 0}}, y: {{binding: {binding}}}}}\n"
        "        dispatch: {global: [16]}\n" + extra
    )
    return path


def write(
    path: Path, tensors: Sequence[T], ops: Sequence[Op], ins: Sequence[str], outs: Sequence[str]
) -> Path:
    path.write_bytes(build(tensors, ops, ins, outs))
    return path


def op(
    name: str, ins: Sequence[str], outs: Sequence[str], attrs: dict[str, Any] | bytes | None = None
) -> Op:
    """A custom op of the test library (domain ``test``)."""
    return custom(ins, outs, name=name, domain="test", attrs=attrs)


def single(
    tmp_path: Path,
    name: str,
    attrs: Any = None,
    shape: Sequence[int] = SHAPE,
    dtype: str = "FP32",
    out_dtype: str | None = None,
    out_shape: Sequence[int] | None = None,
) -> Path:
    """x -> name -> y."""
    return write(
        tmp_path / "model.tosa",
        [T("x", shape, dtype), T("y", out_shape or shape, out_dtype or dtype)],
        [op(name, ["x"], ["y"], attrs)],
        ["x"],
        ["y"],
    )


def chain(
    tmp_path: Path,
    calls: Sequence[tuple[str, Any]],
    shape: Sequence[int] = SHAPE,
    dtype: str = "FP32",
) -> Path:
    """x -> calls[0] -> t1 -> calls[1] -> ... -> y, every tensor alike."""
    names = ["x", *[f"t{i}" for i in range(1, len(calls))], "y"]
    ops = [op(n, [names[i]], [names[i + 1]], a) for i, (n, a) in enumerate(calls)]
    return write(tmp_path / "model.tosa", [T(n, shape, dtype) for n in names], ops, ["x"], ["y"])


def compiled(
    path: Path, *libraries: Library, auto_convert: bool = True, stop_after: str = "encode"
) -> Compilation:
    libs = libraries or (load_library(OPS),)
    return compile_model(
        path,
        Options(kernels=tuple(str(lib.path) for lib in libs), auto_convert=auto_convert),
        stop_after=stop_after,
    )


def execute(
    result: Compilation, tmp_path: Path, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    from vgfc.runner import run_vgf

    assert result.vgf is not None
    vgf = tmp_path / "model.vgf"
    vgf.write_bytes(result.vgf)
    return run_vgf(vgf, dict(inputs))


def inserted(result: Compilation) -> list[tuple[str, str]]:
    assert result.graph is not None
    return [(o.op, o.inserted) for o in result.graph.operators if o.inserted]


def kinds(result: Compilation) -> list[PartitionKind]:
    assert result.plan is not None
    return [p.kind for p in result.plan.partitions]


def uniform(shape: Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, tuple(shape)).astype(dtype)


# -- the expanded graph, written back for the TOSA reference model --------------------------------


def _attribute_tables() -> dict[str, str]:
    import tosa.Attribute

    return {k.lower(): k for k in vars(tosa.Attribute.Attribute) if k.endswith("Attribute")}


def _enum_fields() -> dict[str, Any]:
    import tosa.DType
    import tosa.NanPropagationMode
    import tosa.ResizeMode
    import tosa.RoundingMode

    return {
        "acc_type": tosa.DType.DType,
        "nan_mode": tosa.NanPropagationMode.NanPropagationMode,
        "mode": tosa.ResizeMode.ResizeMode,
        "rounding_mode": tosa.RoundingMode.RoundingMode,
    }


def _fields(o: Operator, graph: Graph) -> dict[str, Any]:
    """``o.attrs`` as tosa_factory writes them: enum names as codes, CLAMP bounds as raw bytes
    of the input's element type, tuples as lists."""
    enums = _enum_fields()
    out: dict[str, Any] = {}
    for key, value in o.attrs.items():
        if value is None:
            continue
        if key in enums and isinstance(value, str):
            value = getattr(enums[key], value)
        elif o.op == "CLAMP" and key in ("min_val", "max_val") and not isinstance(value, bytes):
            np_type = numpy_dtype(graph.tensors[o.inputs[0]].dtype)
            value = np.asarray([value]).astype(np_type).tobytes()
        elif isinstance(value, np.ndarray):
            value = value.tobytes()
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return out


def graph_to_tosa(graph: Graph) -> bytes:
    """A ``.tosa`` flatbuffer of an IR graph of built-in ops (each op with its attribute table,
    constants with their data, shape values in the shapes table)."""
    tables = _attribute_tables()
    tensors, shapes = [], []
    for t in graph.tensors.values():
        if t.is_shape:
            assert t.data is not None
            values = [int(v) for v in np.asarray(t.data).ravel()]
            shapes.append((t.name, len(values), values))
        else:
            data = None if t.data is None else np.ascontiguousarray(t.data)
            tensors.append(T(t.name, t.shape or (), t.dtype.value, data))
    ops = []
    for o in graph.operators:
        assert o.op != "CUSTOM", "the reference model runs built-ins only"
        table = tables[o.op.replace("_", "").lower() + "attribute"]
        ops.append(Op(o.op, o.inputs, o.outputs, table, _fields(o, graph)))
    return build(tensors, ops, graph.inputs, graph.outputs, shapes=shapes)


def reference_outputs(
    graph: Graph, tmp_path: Path, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    from vgfc.read.reader import load
    from vgfc.runner.numeric import tosa_reference_outputs

    path = tmp_path / "expanded.tosa"
    path.write_bytes(graph_to_tosa(graph))
    return tosa_reference_outputs(path, load(path), inputs)


def library_of(tmp_path: Path, entries: str, head: str = "") -> Library:
    """A library of ``entries`` (YAML list items) in ``tmp_path``, with copies of the test
    shaders beside it, named by absolute path."""
    text = "vgfc_kernels: 1\n" + textwrap.dedent(head) + "operators:\n"
    text += textwrap.indent(textwrap.dedent(entries).strip("\n"), "  ") + "\n"
    # A library reads only files in its own folder: the shaders go beside it.
    for shader in KERNELS.glob("*.comp"):
        shutil.copy(shader, tmp_path / shader.name)
    text = text.replace("@DATA@", str(tmp_path))
    path = tmp_path / "lib.yaml"
    path.write_text(text)
    return load_library(path)


def channel_add(x: np.ndarray, scale: float, step: float) -> np.ndarray:
    """ChannelAdd on NCHW data: the channel axis is 1."""
    c = np.arange(x.shape[1], dtype=np.float64).reshape(1, -1, 1, 1)
    return x.astype(np.float64) * scale + c * step
