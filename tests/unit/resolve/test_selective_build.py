"""Selective build: a library's kernels are compiled only when a model binds them, once per set of
defines; a broken kernel no model uses is never compiled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kernel_models import (
    KERNELS,
    ML,
    SH,
    SHAPE,
    compiled,
    execute,
    kinds,
    op,
    single,
    uniform,
    write,
)
from tosa_factory import Op, T

from vgfc.diagnostics import VgfcError
from vgfc.resolve.library.load import load_library
from vgfc.resolve.library.records import Library


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The GLSL sources glslang compiles from now on (with an empty shader cache)."""
    from vgfc.shader import glslang

    monkeypatch.setenv("VGFC_CACHE_DIR", str(tmp_path / "shader-cache"))
    seen: list[str] = []
    name = "compile_recorded" if hasattr(glslang, "compile_recorded") else "compile_shader"
    original: Callable[..., Any] = getattr(glslang, name)

    def spy(source: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(source)
        return original(source, *args, **kwargs)

    monkeypatch.setattr(glslang, name, spy)
    return seen


def _two_affines(tmp_path: Path, first: dict[str, Any], second: dict[str, Any]) -> Path:
    return write(
        tmp_path / "model.tosa",
        [T(n, SHAPE) for n in ("x", "a", "b", "y")],
        [
            op("Affine", ["x"], ["a"], first),
            Op("ABS", ["a"], ["b"]),
            op("Affine", ["b"], ["y"], second),
        ],
        ["x"],
        ["y"],
    )


def test_one_kernel_with_the_same_defines_is_compiled_once(
    tmp_path: Path, lib: Library, compiles: list[str], stack: object
) -> None:
    """Two ops, one kernel, the same parameters (one given, one by default): one compile, and the
    library's other kernels none."""
    path = _two_affines(tmp_path, {"scale": 2.0}, {"scale": 2.0, "bias": 0.0})
    result = compiled(path, lib)
    assert len(compiles) == 1
    assert "y[i] = x[i] * SCALE + BIAS;" in compiles[0]
    assert kinds(result) == [SH, ML, SH]
    x = uniform(SHAPE)
    np.testing.assert_allclose(
        execute(result, tmp_path, {"x": x})["y"], np.abs(x * 2) * 2, rtol=1e-6
    )


def test_other_defines_compile_again(tmp_path: Path, lib: Library, compiles: list[str]) -> None:
    path = _two_affines(tmp_path, {"scale": 2.0}, {"scale": 3.0})
    compiled(path, lib)
    assert len(compiles) == 2


def test_a_broken_kernel_the_model_does_not_use_is_never_compiled(
    tmp_path: Path, compiles: list[str], cli
) -> None:
    library = load_library(KERNELS / "with_broken.yaml")
    path = single(tmp_path, "Scale", {"scale": 2.0})
    result = compiled(path, library)
    assert result.vgf is not None
    assert len(compiles) == 1 and "not_declared_anywhere" not in compiles[0]
    for command in ("check", "compile"):
        run = cli(
            command,
            str(path),
            "--kernels",
            str(KERNELS / "with_broken.yaml"),
            *(["-o", str(tmp_path / "m.vgf")] if command == "compile" else []),
        )
        assert run.code == 0, run.err
    # A model that does use it fails.
    path = single(tmp_path, "Broken")
    with pytest.raises(VgfcError) as caught:
        compiled(path, library)
    assert "not_declared_anywhere" in str(caught.value)


# -- the partition-count rule with expanded and inserted ops --------------------------------------
