"""Off a terminal (a CI log, a pipe) nothing vgfc prints is shortened: a batch's summary keeps
every model's and output's path whole however narrow COLUMNS says the screen is, so that models
whose names differ only in the middle can be told apart. A terminal still gets a table that fits.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from samples_module import SAMPLES_DIR

EXE = str(Path(sys.executable).parent / "vgfc")


def _models(folder: Path) -> list[Path]:
    models = []
    for i, sample in enumerate(("chain", "dup", "image")):
        model = folder / f"model_number_{i}_with_a_rather_long_and_telling_name.tosa"
        model.write_bytes((SAMPLES_DIR / f"{sample}.tosa").read_bytes())
        models.append(model)
    return models


def test_a_piped_batch_summary_holds_every_path_whole(tmp_path: Path) -> None:
    models = _models(tmp_path)
    out = tmp_path / "a_folder_for_the_outputs_with_a_long_name"
    env = {**os.environ, "COLUMNS": "40"}
    done = subprocess.run(
        [EXE, "compile", *map(str, models), "-d", str(out), "-j", "2"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout
    rows = [line.split() for line in done.stdout.splitlines()[1:-1]]
    assert [row[0] for row in rows] == [str(m) for m in models]
    assert [row[-2] for row in rows] == [str(out / f"{m.stem}.vgf") for m in models]


def test_a_terminal_still_gets_a_table_that_fits(tmp_path: Path) -> None:
    models = _models(tmp_path)
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "60", "NO_COLOR": "1", "TERM": "dumb"}
    with subprocess.Popen(
        [EXE, "compile", *map(str, models), "-d", str(tmp_path / "out")],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
    ) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
    assert proc.returncode == 0
    text = b"".join(chunks).decode()
    lines = text.splitlines()
    assert "…" in text and len(lines[1]) < 100, text  # each row of the table, shortened
