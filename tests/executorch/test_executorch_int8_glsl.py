"""ExecuTorch's int8 grid-sampler payloads with the GLSL ExecuTorch ships in place of its SPIR-V.

The payloads are the ones ExecuTorch's own rewrite built (``tests/data/executorch_shader_payloads``,
checked by ``tests/e2e/test_executorch_shader_payloads.py`` as SPIR-V): the int8 grid's scale and
zero point are CONST tensors the shader reads through storage buffers, and the grid a TENSOR_ARM.
Here ``shader_code`` is the wheel's ``GL_ARM_tensors`` GLSL of the same kernel (read there, never
copied), so vgfc compiles it through the ML SDK's glslc and hands the constants on through a
graph segment. The VGF must give the same bytes as the SPIR-V payload's, and the numpy oracle's
values.

Needs ExecuTorch: ``make test-executorch`` runs this folder in its environment.
"""

from __future__ import annotations

import copy
import importlib.util
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
import pytest

_SPEC = importlib.util.spec_from_file_location(
    "executorch_shader_payloads",
    Path(__file__).resolve().parents[1] / "e2e" / "test_executorch_shader_payloads.py",
)
assert _SPEC is not None and _SPEC.loader is not None
payloads = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(payloads)

GLSL = {
    "grid_sampler_int8": "grid_sampler_sampler_int8.glsl",
    "grid_sampler_int8_align_corners": "grid_sampler_sampler_int8_align_corners.glsl",
}
"""The wheel's GLSL of each kernel whose SPIR-V the payload carries."""
CASES = [c for c in payloads.CASES if c["name"] in GLSL]


def test_every_int8_sampler_has_its_glsl() -> None:
    assert sorted(c["name"] for c in CASES) == sorted(GLSL)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_shipped_glsl_gives_the_spirv_payloads_bytes(
    case: dict[str, Any], tmp_path: Path, vgfc_exe: Any
) -> None:
    source = files("executorch.backends.arm.vgf.shaders").joinpath(GLSL[case["name"]])
    glsl = copy.deepcopy(case)
    glsl["payload"]["shader_code"] = source.read_text()
    glsl["payload"]["shader_language"] = "GLSL"
    arrays = payloads._inputs(case, np.random.default_rng(5))
    results = []
    for tag, chosen in (("spirv", case), ("glsl", glsl)):
        model = tmp_path / f"{tag}.tosa"
        payloads._model(chosen, model)
        vgf = tmp_path / f"{tag}.vgf"
        run = vgfc_exe("compile", str(model), "-o", str(vgf), "-q")
        assert run.code == 0, run.err
        (tmp_path / tag).mkdir()
        results.append(payloads._run(vgfc_exe, vgf, arrays, tmp_path / tag / "out"))
    spirv, from_glsl = results
    assert from_glsl.tobytes() == spirv.tobytes()
    oracle = payloads._oracle(case, arrays).astype(int)
    assert np.abs(from_glsl.astype(int) - oracle).max() <= 1  # lavapipe's filter weights
