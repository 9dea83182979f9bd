"""What a command loads before it does its work: start-up is most of a small compile's time.

Each check runs a fresh interpreter (the modules a test process has imported would hide what a
command imports) and reads ``sys.modules`` at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tosa_factory import chain

PROBE = """
import gc, json, sys
sys.argv = ["vgfc", *json.loads(sys.argv[1])]
from vgfc.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
print(json.dumps({"modules": sorted(sys.modules), "threshold": gc.get_threshold(), "code": code}))
"""


def _command(args: list[str], tmp_path: Path) -> dict[str, object]:
    env = {**os.environ, "VGFC_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    result: dict[str, object] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def plain_model(tmp_path: Path) -> Path:
    path = tmp_path / "plain.tosa"
    path.write_bytes(chain(3))
    return path


def test_a_quiet_compile_of_a_model_without_shaders_loads_no_shader_or_table_code(
    plain_model: Path, tmp_path: Path
) -> None:
    seen = _command(["compile", "-q", str(plain_model), "-o", "plain.vgf"], tmp_path)
    assert seen["code"] in (0, None)
    assert (tmp_path / "plain.vgf").is_file()
    modules = set(seen["modules"])  # type: ignore[call-overload]
    for unused in ("rich", "jsonschema", "vgfc.shader.glslang", "vgfc.spirv.spirv_tools", "yaml"):
        assert unused not in modules, unused


def test_a_command_collects_garbage_in_fewer_larger_passes(
    plain_model: Path, tmp_path: Path
) -> None:
    seen = _command(["compile", "-q", str(plain_model), "-o", "plain.vgf"], tmp_path)
    assert seen["threshold"][0] >= 10_000  # type: ignore[index]
    # ... and a library user's process keeps its own collector settings.
    run = subprocess.run(
        [sys.executable, "-c", "import gc, vgfc, vgfc.compiler; print(gc.get_threshold()[0])"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(run.stdout) == 700
