"""A kernel library runs Python only from files it ships: ``reference: module:function`` names a
``.py`` file in the library's own folder (confined as its shaders are), or any importable module
only behind ``--allow-reference-imports``. A YAML file is data: ``reference: os:system`` with a
shell command in the model's attributes ran the command and printed ``ok``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tosa_factory import Op, T, build, custom

from vgfc.diagnostics import InputError
from vgfc.resolve.library.load import load_library
from vgfc.resolve.reference import load_reference

LIBRARY = """vgfc_kernels: 1
name: evil
operators:
  - domain: evil
    name: Run
    inputs: []
    outputs: [y]
    reference: {reference}
    params:
      encoding: json
      fields:
        - {{name: command, type: str}}
    infer:
      y: {{dtype: FP32, shape: [1]}}
    compose:
      constants:
        c: {{dtype: FP32, shape: [1], value: 0.0}}
      ops:
        - {{op: ABS, inputs: [c], outputs: [y]}}
"""
REFERENCE = """import numpy as np

def run(command):
    return np.zeros([1], np.float32)
"""


def _entry(folder: Path, reference: str) -> Any:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lib.yaml"
    path.write_text(LIBRARY.format(reference=reference))
    return load_library(path).entries[("evil", "Run")]


def _refusal(entry: Any, imports: bool = False) -> str:
    with pytest.raises(InputError) as err:
        load_reference(entry, imports=imports)
    return err.value.diagnostic.render()


def test_a_module_that_is_not_shipped_is_refused_without_the_opt_in(tmp_path: Path) -> None:
    entry = _entry(tmp_path, "os:system")
    assert _refusal(entry) == (
        f"{tmp_path / 'lib.yaml'}:4: evil/Run: reference: os:system: no os.py in the "
        "library's folder, and a kernel library runs only Python files it ships; to import os "
        "from the Python path (its code runs), give --allow-reference-imports"
    )
    assert load_reference(entry, imports=True) is os.system


def test_a_file_shipped_in_the_librarys_folder_runs(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "evil_ref.py").write_text(REFERENCE)
    (tmp_path / "evil_ref.py").write_text(REFERENCE)
    for name in ("evil_ref:run", "pkg.evil_ref:run"):
        function = load_reference(_entry(tmp_path, name))
        assert function(command="not run").tolist() == [0.0]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links and FIFOs")
def test_what_is_not_a_shipped_regular_file_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "linked_ref.py").write_text(REFERENCE)
    library = tmp_path / "lib"
    library.mkdir()
    (library / "linked_ref.py").symlink_to(outside / "linked_ref.py")  # out of the folder
    os.mkfifo(library / "fifo_ref.py")  # never opened: no hang
    (library / "folder_ref.py").mkdir()
    (library / "loop_ref.py").symlink_to(library / "loop_ref.py")
    for module in ("linked_ref", "fifo_ref", "folder_ref", "loop_ref", "absent_ref"):
        message = _refusal(_entry(library, f"{module}:run"))
        assert f"no {module}.py in the library's folder" in message
        assert "--allow-reference-imports" in message


def test_a_reference_of_no_python_names_is_refused(tmp_path: Path) -> None:
    message = _refusal(_entry(tmp_path, "a..b:run"), imports=True)
    assert message.endswith("evil/Run: reference: a..b:run is not module:function (Python names)")


def _evil_model(folder: Path, marker: Path) -> Path:
    ops = [
        custom([], ["y"], "Run", domain="evil", attrs={"command": f"touch {marker}"}),
        Op("ABS", ["y"], ["z"]),
    ]
    path = folder / "model.tosa"
    path.write_bytes(build([T("y", (1,)), T("z", (1,))], ops, [], ["z"]))
    return path


def test_verify_runs_no_command_from_a_library(cli: Any, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    _entry(tmp_path, "os:system")
    model = _evil_model(tmp_path, marker)
    args = ("verify", "--kernels", str(tmp_path / "lib.yaml"), str(model))
    run = cli(*args)
    assert run.code == 1
    assert run.err.splitlines() == [
        f"{tmp_path / 'lib.yaml'}:4: error: evil/Run: reference: os:system: no os.py in the "
        "library's folder, and a kernel library runs only Python files it ships; to import os "
        "from the Python path (its code runs), give --allow-reference-imports"
    ]
    assert not marker.exists()
    # The opt-in is what it says: the library's code runs.
    assert cli(*args, "--allow-reference-imports").code == 0
    assert marker.exists()
