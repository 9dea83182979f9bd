"""docs/pytorch.md shows the sample's library, reference and shader: what it shows is what
samples/pytorch/ holds, so a reader who copies the guide gets the files the tests run."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
GUIDE = (ROOT / "docs" / "pytorch.md").read_text()
SAMPLE = ROOT / "samples" / "pytorch"
TENSOR_EXAMPLE = ROOT / "tests" / "data" / "pytorch_tensor"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE, re.S)


def test_the_yaml_in_the_guide_is_the_samples_library() -> None:
    library = yaml.safe_load((SAMPLE / "my_ops.yaml").read_text())
    entries = {op["name"]: op for op in library["operators"]}
    first, second = _blocks("yaml")[:2]
    shown = yaml.safe_load(first)
    assert {k: v for k, v in shown.items() if k != "operators"} == {
        k: v for k, v in library.items() if k != "operators"
    }
    (swish,) = shown["operators"]
    (upsample,) = yaml.safe_load(second)
    for entry in (swish, upsample):
        expected = dict(entries[entry["name"]])
        expected.pop("example", None)  # the guide leaves out what only `vgfc kernels` uses
        assert entry == expected


def test_the_reference_in_the_guide_computes_what_the_samples_does() -> None:
    import importlib.util

    import numpy as np

    (code,) = [b for b in _blocks("python") if "def swish" in b]
    shown: dict[str, object] = {}
    exec(compile(code, "docs/pytorch.md", "exec"), shown)
    spec = importlib.util.spec_from_file_location("my_ops_ref", SAMPLE / "my_ops_ref.py")
    assert spec is not None and spec.loader is not None
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    x = np.random.default_rng(0).normal(size=(1, 4, 5, 6)).astype(np.float32)
    for beta in (1.0, 1.5, -0.5):
        assert np.array_equal(shown["swish"](x, beta=beta), sample.swish(x, beta=beta))  # type: ignore[operator]


def _same_statements(shown: str, file: Path) -> None:
    text = re.sub(r"//[^\n]*", "", file.read_text())  # comments aside
    code = " ".join(text.split())
    for statement in re.split(r"(?<=[;{}])", shown):
        if statement.strip():
            assert " ".join(statement.split()) in code, statement


def test_the_shader_in_the_guide_is_the_samples() -> None:
    shader, tensors = _blocks("glsl")
    _same_statements(shader, SAMPLE / "swish.comp")
    _same_statements(tensors, TENSOR_EXAMPLE / "affine.comp")


def test_the_tensor_kernel_in_the_guide_is_the_one_make_test_executorch_runs() -> None:
    """tests/executorch exports and runs tests/data/pytorch_tensor/ with ExecuTorch."""
    (shown,) = yaml.safe_load(_blocks("yaml")[2])
    library = yaml.safe_load((TENSOR_EXAMPLE / "tensor_ops.yaml").read_text())
    (kernel,) = library["operators"][0]["kernels"]
    assert shown == kernel


def test_without_the_extra_the_import_says_what_to_install() -> None:
    import subprocess
    import sys

    code = "import sys; sys.modules['torch'] = None; import vgfc.executorch"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ImportError: vgfc.executorch needs torch and ExecuTorch: pip install 'vgfc[executorch]'"
    )
