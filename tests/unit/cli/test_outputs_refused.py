"""Outputs: only a regular file is ever replaced, never a file the command reads, never a
folder that does not exist; every refusal is exit 1 and one line naming the path, before any
work is done."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from paths import SAMPLES_DIR

KERNELS = SAMPLES_DIR / "kernels"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "m.tosa"
    shutil.copy(SAMPLES_DIR / "simple.tosa", path)
    return path


def one_line_error(run: object, *needles: str) -> None:
    assert run.code == 1, run.err  # type: ignore[attr-defined]
    err = run.err  # type: ignore[attr-defined]
    assert err.count("\n") == 1 and re.match(r"(.+?: )?error: ", err), err
    for needle in needles:
        assert needle in err, err


def test_partition_never_writes_over_its_model(cli, model: Path) -> None:
    before = model.read_bytes()
    run = cli("partition", str(model), "--json", "-o", str(model))
    one_line_error(run, f"{model}: error: cannot write output file: it is {model}, an input")
    os.link(model, model.with_name("link.tosa"))
    run = cli("partition", str(model), "--dot", "-o", str(model.with_name("link.tosa")))
    one_line_error(run, "an input of this command")
    assert model.read_bytes() == before


@pytest.mark.parametrize("flag", ["-o", "--report"])
def test_a_device_is_refused_and_stays_a_device(cli, model: Path, flag: str) -> None:
    args = ["compile", "-q", str(model), "-o", str(model.with_suffix(".vgf"))]
    args += [flag, "/dev/null"] if flag == "--report" else []
    if flag == "-o":
        args[-1] = "/dev/null"
    run = cli(*args)
    one_line_error(run, "/dev/null: error: cannot write output file: it is a character device")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not model.with_suffix(".vgf").exists()


def test_a_fifo_a_folder_and_a_missing_folder_are_refused(cli, model: Path) -> None:
    fifo = model.with_name("out.vgf")
    os.mkfifo(fifo)
    one_line_error(cli("compile", "-q", str(model), "-o", str(fifo)), "a FIFO (named pipe)")
    one_line_error(
        cli("partition", str(model), "--json", "-o", str(model.parent)), "it is a folder"
    )
    missing = model.parent / "nodir" / "out.vgf"
    one_line_error(
        cli("compile", "-q", str(model), "-o", str(missing)),
        f"the folder {missing.parent} does not exist",
    )
    assert not missing.parent.exists() and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_kernel_library_and_its_shader_are_inputs(cli, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    shutil.copytree(KERNELS, lib)
    before = (lib / "example_ops.yaml").read_bytes()
    for target in ("example_ops.yaml", "channel_scale.comp"):
        run = cli(
            "compile",
            "-q",
            str(lib / "model.tosa"),
            "--kernels",
            str(lib / "example_ops.yaml"),
            "-o",
            str(lib / target),
        )
        one_line_error(run, "an input of this command")
    assert (lib / "example_ops.yaml").read_bytes() == before


def test_a_failed_compile_leaves_neither_output(cli, model: Path) -> None:
    vgf, report = model.with_suffix(".vgf"), model.with_suffix(".json")
    vgf.write_bytes(b"old vgf")
    run = cli("compile", "-q", str(model), "-o", str(vgf), "--report", "/dev/null")
    assert run.code == 1 and vgf.read_bytes() == b"old vgf" and not report.exists()
    assert sorted(p.name for p in model.parent.iterdir()) == ["m.tosa", "m.vgf"]


def _unprivileged(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``vgfc ARGS`` as a real process that folder permissions apply to: as root (the tests run
    as root), without the capabilities that let root past them."""
    exe = str(Path(sys.executable).parent / "vgfc")
    prefix: list[str] = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
    return subprocess.run(
        [*prefix, exe, *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "nosearch/x.vgf"],
        ["-o", "x.vgf", "--report", "nosearch/r.json"],
        ["-o", "nosearch/deeper/x.vgf"],
        ["-d", "nosearch/out"],
        ["-d", "nosearch/out", "-j", "2"],
        ["-d", "nosearch"],
    ],
)
def test_a_folder_that_cannot_be_searched_is_one_line(model: Path, args: list[str]) -> None:
    folder = model.parent / "nosearch"
    folder.mkdir()
    folder.chmod(0)
    try:
        done = _unprivileged(["compile", "-q", str(model), *args], model.parent)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and ": error: " in done.stderr, done.stderr
    assert f"the folder {folder} cannot be searched" in done.stderr
    assert sorted(p.name for p in model.parent.iterdir()) == ["m.tosa", "nosearch"]
    assert list(folder.iterdir()) == []
