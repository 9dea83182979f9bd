"""The short-dispatch warning names the key the payload gave and stays quiet when the
invocations cover the output: a grid that is the output's pixel grid (``global_size: [8, 8, 1]``
over ``[1, 8, 8, 4]``, each invocation writing its pixel's 4 channels) covers it; the same count
laid out as a line, or too few workgroups, does not. ``tests/e2e/test_write_coverage.py`` runs
the pixel-grid model and finds every element written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from shader_models import pixel_model

import vgfc


@pytest.mark.parametrize(
    ("local", "over"),
    [
        ((8, 8), {"workgroup_sizes": None, "global_size": [8, 8, 1]}),
        ((4, 4), {"workgroup_sizes": None, "global_size": [8, 8, 1]}),
        ((16, 16), {"workgroup_sizes": None, "global_size": [8, 8, 1]}),  # rounded up
        ((8, 8), {"workgroup_sizes": [1, 1, 1]}),
        ((4, 4), {"workgroup_sizes": [2, 2, 1]}),
    ],
)
def test_a_pixel_grid_covers_the_output(tmp_path: Path, local: tuple[int, int], over: Any) -> None:
    assert vgfc.compile(pixel_model(tmp_path, local, **over)).warnings == ()


@pytest.mark.parametrize(
    ("local", "over", "key"),
    [
        ((64, 1), {"workgroup_sizes": None, "global_size": [64, 1, 1]}, "global_size"),
        ((4, 4), {"workgroup_sizes": None, "global_size": [4, 8, 1]}, "global_size"),
        ((4, 4), {"workgroup_sizes": [1, 1, 1]}, "workgroup_sizes"),
        ((64, 1), {"workgroup_sizes": [1, 1, 1]}, "workgroup_sizes"),
    ],
)
def test_other_short_grids_warn_naming_the_key_given(
    tmp_path: Path, local: tuple[int, int], over: Any, key: str
) -> None:
    (warning,) = vgfc.compile(pixel_model(tmp_path, local, **over)).warnings
    assert warning.name == "short-dispatch"
    assert warning.location.key == key
    text = warning.render()
    assert f"): {key}: the dispatch runs" in text
    if key == "global_size":
        assert "workgroup_sizes" not in text and "global_size holds the invocations wanted" in text
