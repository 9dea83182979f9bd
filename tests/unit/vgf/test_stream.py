"""The VGF writer streams constants: :func:`encode_to` writes the same bytes as the VGF library
holding every constant itself, for every model the tests carry (and for generated ones:
``tests/property/test_vgf.py``); constants
that are views of a memory-mapped input are written from the map, which keeps no more of them
resident than one chunk; and the writing is atomic."""

from __future__ import annotations

import hashlib
import io
import mmap
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paths import ROOT
from vgf_models import RICH

from vgfc.compiler import Options, compile_model
from vgfc.diagnostics import VgfcError
from vgfc.dtypes import DType
from vgfc.files.outputs import write_atomically
from vgfc.ir import Data
from vgfc.record import replace
from vgfc.spirv.tensors import constant_buffer, constant_bytes
from vgfc.vgf import encode as encoder
from vgfc.vgf.decode import decode
from vgfc.vgf.encode import FORMAT_VERSION, encode, encode_to, encode_with_vgfpy
from vgfc.vgf.model import Category, Constant, Model, Resource

MODELS = sorted(
    p
    for folder in (ROOT / "samples", ROOT / "tests" / "data")
    for p in folder.rglob("*.tosa")
    if "fuzz" not in p.parts
)

sys.path.insert(0, str(ROOT / "scripts"))  # bench_models: the generated models


REFUSED = {"hey_jarvis.tosa"}
"""Models vgfc refuses (stateful variables): test_refused_models_stay_refused keeps this honest."""
_CONSTANT_ZERO_POINTS = ("avg_pool2d", "conv2d", "conv3d", "depthwise_conv2d",
                         "transpose_conv2d", "matmul", "mul_", "negate", "rescale")  # fmt: skip


def _refused(path: Path) -> bool:
    """A model vgfc refuses: one of ``REFUSED``, or a conformance test (named by its folder) of
    a loop (the generator's count down a graph input), or of the dynamic extension whose zero
    points or MUL shift are graph inputs (test_conformance_extensions judges those against the
    reference converter). COND_IF compiles (vgfc/control_flow.py)."""
    if path.name in REFUSED:
        return True
    name = path.parent.name if path.name == "test.tosa" else ""
    dynamic = "_dyn" in name and name.startswith(_CONSTANT_ZERO_POINTS)
    return dynamic or name.startswith("while_loop_")


LIBRARIES = {
    "kernels": [str(ROOT / "samples" / "kernels" / "example_ops.yaml")],
    "mediapipe": ["mediapipe"],
    "mediapipe_ops": ["mediapipe"],
}
"""The kernel libraries the models of a folder need."""


def _options(path: Path) -> Options:
    return Options(kernels=tuple(LIBRARIES.get(path.parent.name, [])))


@pytest.mark.parametrize(
    "path", [p for p in MODELS if not _refused(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_model_streams_to_the_bytes_the_library_writes(path: Path) -> None:
    model = compile_model(path, _options(path), stop_after="layout").model
    assert model is not None
    out = io.BytesIO()
    digest = hashlib.sha256()
    size = encode_to(model, out, digest)
    expected = encode_with_vgfpy(model)
    assert out.getvalue() == expected
    assert size == len(expected) and digest.hexdigest() == hashlib.sha256(expected).hexdigest()


@pytest.mark.parametrize(
    "path", [p for p in MODELS if _refused(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_refused_models_stay_refused(path: Path) -> None:
    with pytest.raises(VgfcError):
        compile_model(path, _options(path), stop_after="layout")


def test_the_library_writes_the_constant_section_this_module_knows() -> None:
    """Else encode_to falls back to the library writing everything, in memory."""
    rich = encode_with_vgfpy(RICH)
    assert RICH.constants
    section = encoder._section_head([(c, len(c.data)) for c in RICH.constants])
    section += b"".join(bytes(c.data) + bytes(-len(c.data) % 8) for c in RICH.constants)
    assert rich.endswith(section)
    assert decode(rich).version == FORMAT_VERSION


def _mapped_model(tmp_path: Path, sizes: list[int]) -> tuple[Model, mmap.mmap, bytes]:
    """A model whose constants are read-only views of a memory-mapped file, as the reader and
    the lowering hand them to the encoder; and the file's bytes."""
    rng = np.random.default_rng(1)
    blob = rng.integers(0, 256, sum(sizes) + 5, dtype=np.uint8).tobytes()
    path = tmp_path / "constants.bin"
    path.write_bytes(blob)
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    whole = memoryview(mapped)
    constants, resources, at = [], [], 5
    for i, size in enumerate(sizes):
        resources.append(Resource(Category.CONSTANT, None, "VK_FORMAT_R8_UINT", (size,)))
        data = Data(whole[at : at + size], DType.INT8, (size,), (mapped, at))
        constants.append(Constant(i, constant_buffer(data), i - 1, origin=data.origin))
        at += size
    model = Model((), (), tuple(resources), tuple(constants), (), ())
    return model, mapped, blob


def test_mapped_constants_stream_to_the_bytes_the_library_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(encoder, "_CHUNK", 4096 * 3 + 8)  # many chunks, not page-aligned
    model, mapped, blob = _mapped_model(tmp_path, [1, 3, 8, 13, 70_001, 4096 * 10 + 7])
    assert all(isinstance(c.data, memoryview) for c in model.constants)
    out = tmp_path / "m.vgf"
    with open(out, "wb") as f:
        size = encode_to(model, f)
    data = out.read_bytes()
    assert size == len(data)
    assert data == encode_with_vgfpy(model)
    # Letting the written pages go lost nothing: the map still reads as the file.
    assert mapped[:] == blob
    assert [bytes(c.data) for c in decode(data).constants] == [
        bytes(c.data) for c in model.constants
    ]


def _resident_kib(mapped: mmap.mmap) -> int:
    """Resident KiB of the mapping of ``mapped`` (Linux ``/proc/self/smaps``)."""
    start = int(np.frombuffer(mapped, np.uint8).ctypes.data)
    smaps = Path("/proc/self/smaps").read_text()
    for block in re.split(r"\n(?=[0-9a-f]+-[0-9a-f]+ )", smaps):
        low, high = (int(x, 16) for x in block.split(" ", 1)[0].split("-"))
        if low <= start < high:
            return int(re.search(r"^Rss:\s+(\d+) kB", block, re.M).group(1))  # type: ignore[union-attr]
    raise AssertionError("mapping not found")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux /proc")
def test_a_mapped_constant_is_not_kept_resident(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunk = 1 << 20
    monkeypatch.setattr(encoder, "_CHUNK", chunk)
    model, mapped, _ = _mapped_model(tmp_path, [32 << 20])
    with open(tmp_path / "m.vgf", "wb") as f:
        encode_to(model, f)
    # Reading it all, as a copy would, leaves all 32 MiB resident; the writer lets each chunk go.
    assert _resident_kib(mapped) <= 2 * chunk // 1024


def test_constant_buffer_is_constant_bytes_and_a_view_where_it_can_be() -> None:
    rng = np.random.default_rng(2)
    values: dict[DType, Any] = {
        DType.FP32: rng.standard_normal((3, 5)).astype(np.float32),
        DType.FP16: rng.standard_normal(7).astype(np.float16),
        DType.INT8: rng.integers(-128, 128, 9).astype(np.int8),
        DType.INT32: rng.integers(-(2**31), 2**31, 4).astype(np.int32),
        DType.INT48: rng.integers(-(2**47), 2**47, 4).astype(np.int64),
        DType.BOOL: rng.integers(0, 2, 6).astype(bool),
        DType.SHAPE: np.array([3, 2], np.int64),
    }
    for dtype, array in values.items():
        data = Data.of(array, dtype)
        got = constant_buffer(data)
        assert bytes(got) == constant_bytes(data), dtype
        if dtype in (DType.FP32, DType.FP16, DType.INT8, DType.INT32):
            assert got is data.raw and got.readonly  # the constant's own bytes, not a copy
        else:  # converted: INT48 to 8 bytes, BOOL to 0xFF bytes, shape values to 32 bits
            assert isinstance(got, bytes)
    assert (
        constant_bytes(Data.of(values[DType.INT48], DType.INT48))
        == values[DType.INT48].astype("<i8").tobytes()
    )
    # A big-endian array's bytes are little-endian in the constant.
    big = np.arange(4, dtype=">f4")
    assert constant_buffer(Data.of(big, DType.FP32)) == big.astype("<f4").tobytes()


def test_constants_reach_the_encoder_as_views_of_the_input_file(tmp_path: Path) -> None:
    import vgfc.lower.graph

    assert "constant_buffer" in vars(vgfc.lower.graph)  # graph constants are not copied
    import bench_models

    path = tmp_path / "m.tosa"
    path.write_bytes(bench_models.constants_model(count=2, elements=5000, n_ops=10))
    model = compile_model(path, Options(), stop_after="layout").model
    assert model is not None and len(model.constants) == 2
    for c in model.constants:
        assert isinstance(c.data, memoryview) and c.origin is not None
        mapped, start = c.origin
        assert isinstance(c.data.obj, mmap.mmap) and c.data.obj is mapped
        assert encoder._lets_go(c.origin)
        assert mapped[start : start + len(c.data)] == bytes(c.data)


def test_write_atomically_streams_and_leaves_nothing_behind_on_error(tmp_path: Path) -> None:
    target = tmp_path / "out.vgf"
    write_atomically(target, lambda f: f.write(b"streamed"))
    assert target.read_bytes() == b"streamed"

    def fails(f: Any) -> None:
        f.write(b"partial")
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        write_atomically(target, fails)
    assert target.read_bytes() == b"streamed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.vgf"]


def test_model_with_views_equals_model_with_bytes(tmp_path: Path) -> None:
    model, _, _ = _mapped_model(tmp_path, [5, 9])
    copied = replace(
        model, constants=tuple(replace(c, data=bytes(c.data)) for c in model.constants)
    )
    assert model == copied
    assert decode(encode(model)) == model


def test_constants_stored_after_the_flatbuffer_stream_like_any_other(tmp_path: Path) -> None:
    """The layout of models over 2 GB (tensor offset/size), at a small size."""
    import bench_models

    path = tmp_path / "external.tosa"
    bench_models.external_constants_model(path, gib=1 / 1024, count=2, chunk_elements=1000)
    graph = compile_model(path, Options(), stop_after="read").graph
    assert graph is not None
    for c in (0, 1):
        data = graph.tensors[f"c{c}"].data
        assert data is not None
        assert data.tobytes() == bench_models.external_values(c, 0, data.size)
    model = compile_model(path, Options(), stop_after="layout").model
    assert model is not None and len(model.constants) == 2
    out = io.BytesIO()
    encode_to(model, out)
    assert out.getvalue() == encode_with_vgfpy(model)
