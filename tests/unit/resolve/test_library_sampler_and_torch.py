"""The kernel-library keys vgfc.executorch needs: a combined image sampler's ``sampler`` and an
entry's ``torch`` schema, read and checked at load, refusals naming the file, line and key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from vgfc.diagnostics import InputError
from vgfc.resolve.library.load import load_library

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "samples" / "pytorch"
TEXT = (SAMPLE / "my_ops.yaml").read_text()
SAMPLER = "sampler: {filter: linear, address_mode: clamp_to_edge}"


def _library(folder: Path, old: str = "", new: str = "") -> Path:
    for name in ("swish.comp", "upsample2x.comp"):
        shutil.copy(SAMPLE / name, folder)
    assert old in TEXT
    path = folder / "lib.yaml"
    path.write_text(TEXT.replace(old, new, 1) if old else TEXT)
    return path


def _refused(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_library(path)
    return caught.value.render()


def _line(path: Path, text: str) -> int:
    return 1 + next(i for i, line in enumerate(path.read_text().splitlines()) if text in line)


def test_the_sampler_and_the_schema_are_read(tmp_path: Path) -> None:
    library = load_library(_library(tmp_path))
    swish = library.find("my_ops", "swish")
    upsample = library.find("my_ops", "upsample2x")
    assert swish is not None and upsample is not None
    assert swish.torch == "my_ops::swish(Tensor x, float beta=1.0) -> Tensor"
    assert swish.torch_line == _line(tmp_path / "lib.yaml", 'torch: "my_ops::swish')
    (kernel,) = upsample.kernels
    sampler = kernel.resources["x"].sampler
    assert sampler is not None
    assert (sampler.min_filter, sampler.mag_filter) == ("VK_FILTER_LINEAR", "VK_FILTER_LINEAR")
    assert (
        sampler.address_mode_u == sampler.address_mode_v == "VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE"
    )
    assert sampler.border_color == "VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK"
    assert kernel.resources["y"].sampler is None


def test_each_field_may_be_given_on_its_own_in_vulkans_names(tmp_path: Path) -> None:
    path = _library(
        tmp_path,
        SAMPLER,
        "sampler: {min_filter: VK_FILTER_NEAREST, mag_filter: linear, address_mode_u: repeat, "
        "address_mode_v: mirrored_repeat, border_color: int_opaque_white}",
    )
    upsample = load_library(path).find("my_ops", "upsample2x")
    assert upsample is not None
    sampler = upsample.kernels[0].resources["x"].sampler
    assert sampler is not None
    assert (sampler.min_filter, sampler.mag_filter) == ("VK_FILTER_NEAREST", "VK_FILTER_LINEAR")
    assert sampler.address_mode_u == "VK_SAMPLER_ADDRESS_MODE_REPEAT"
    assert sampler.address_mode_v == "VK_SAMPLER_ADDRESS_MODE_MIRRORED_REPEAT"
    assert sampler.border_color == "VK_BORDER_COLOR_INT_OPAQUE_WHITE"


def test_a_combined_image_sampler_without_its_sampler_is_refused(tmp_path: Path) -> None:
    path = _library(tmp_path, f"            {SAMPLER}\n", "")
    text = _refused(path)
    line = 1 + path.read_text().splitlines().index("          x:")  # upsample2x's image input
    assert f"lib.yaml:{line}" in text
    assert "a combined image sampler needs its sampler" in text
    assert "my_ops/upsample2x" in text


def test_a_sampler_on_another_descriptor_is_refused(tmp_path: Path) -> None:
    path = _library(
        tmp_path,
        "y: {binding: 1, descriptor: storage_image,",
        f"y: {{binding: 1, {SAMPLER}, descriptor: storage_image,",
    )
    text = _refused(path)
    assert "a sampler only applies to a combined_image_sampler" in text
    assert f"lib.yaml:{_line(path, 'y: {binding: 1, sampler')}" in text


def test_an_unknown_filter_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    path = _library(tmp_path, "filter: linear", "filter: cubic_ish")
    text = _refused(path)
    assert f"lib.yaml:{_line(path, 'filter: cubic_ish')}" in text
    assert "unknown filter 'cubic_ish'" in text and "linear" in text and "nearest" in text
