"""The ``vgfc`` console script with and without its quick path: ``vgfc --debug compile ...`` always
goes through click (the quick path takes only lines that start with ``compile``), so the two
runs of one compile must write the same bytes and say the same things."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tosa_factory import chain


def _steady(text: str) -> str:
    """Output with the file names of one run and the stage timings taken out."""
    text = re.sub(r"\b[ab]\.(vgf|json)", "OUT.\\1", text)
    return re.sub(r"\d+\.\d ms", "T ms", text)


@pytest.mark.parametrize("quiet", [[], ["-q"]], ids=["summary", "quiet"])
def test_quick_and_click_write_the_same(vgfc_exe, chain_model: Path, tmp_path: Path, quiet) -> None:
    quick = vgfc_exe(
        "compile", str(chain_model), "-o", "a.vgf", "--report", "a.json", *quiet, cwd=tmp_path
    )
    slow = vgfc_exe(
        "--debug",
        "compile",
        str(chain_model),
        "-o",
        "b.vgf",
        "--report",
        "b.json",
        *quiet,
        cwd=tmp_path,
    )
    assert quick.code == slow.code == 0, quick.err + slow.err
    assert (tmp_path / "a.vgf").read_bytes() == (tmp_path / "b.vgf").read_bytes()
    reports = [json.loads((tmp_path / f"{n}.json").read_text()) for n in "ab"]
    for report in reports:
        del report["output"], report["timings"]
    assert reports[0] == reports[1]
    assert _steady(quick.out) == _steady(slow.out) and _steady(quick.err) == _steady(slow.err)


def test_an_input_error_reads_the_same(vgfc_exe, chain_model: Path, tmp_path: Path) -> None:
    args = ["compile", str(chain_model), "-o", "a.vgf", "--kernels", "missing.yaml"]
    quick = vgfc_exe(*args, cwd=tmp_path)
    slow = vgfc_exe("--debug", *args, cwd=tmp_path)  # --debug: a traceback would show
    assert quick.code == 1 and quick.err.startswith("missing.yaml: error: "), quick.err
    assert "Traceback" not in quick.err and not (tmp_path / "a.vgf").exists()
    assert slow.code != 0


def test_a_usage_error_found_late_is_clicks(vgfc_exe, chain_model: Path, tmp_path: Path) -> None:
    """``-o MODEL`` parses, and the plan refuses it: the line goes to click, which says so
    with its usage line and exit code 2."""
    run = vgfc_exe("compile", str(chain_model), "-o", str(chain_model), cwd=tmp_path)
    assert run.code == 2
    assert run.err.startswith("Usage: vgfc compile") and "would replace the model" in run.err
    assert chain_model.read_bytes() == chain(3)


def test_the_version_is_clicks(vgfc_exe, tmp_path: Path) -> None:
    quick = vgfc_exe("--version", cwd=tmp_path)
    slow = vgfc_exe("--debug", "--version", cwd=tmp_path)
    assert quick.code == slow.code == 0 and quick.out == slow.out and quick.err == slow.err == ""


def test_a_program_that_calls_main_gets_system_exit(chain_model: Path, tmp_path: Path) -> None:
    """Only the console script ends without the interpreter's teardown: ``vgfc.cli.main``
    raises ``SystemExit``, and the calling program goes on (its own files written)."""
    import subprocess
    import sys

    program = (
        "import sys\n"
        "from vgfc.cli import main\n"
        "log = open('log.txt', 'w')\n"
        "log.write('before ')\n"
        f"sys.argv = ['vgfc', 'compile', '-q', {str(chain_model)!r}, '-o', 'a.vgf']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as e:\n"
        "    log.write(f'caught {e.code}')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "log.txt").read_text() == "before caught 0"
    assert (tmp_path / "a.vgf").is_file()
