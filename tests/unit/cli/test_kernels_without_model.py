"""``vgfc kernels`` rejects, without a model, everything a compile would reject about a library
entry alone, naming the library file with its line, the entry and the key; a compile with the
same library fails with the same place."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from paths import SAMPLES_DIR

SAMPLE = SAMPLES_DIR / "kernels"
TEXT = (SAMPLE / "example_ops.yaml").read_text()


def library(tmp_path: Path, old: str, new: str) -> Path:
    assert old in TEXT
    shutil.copy(SAMPLE / "channel_scale.comp", tmp_path)
    path = tmp_path / "lib.yaml"
    path.write_text(TEXT.replace(old, new, 1))
    return path


CASES = [
    pytest.param(
        "CHANNELS: C",
        'CHANNELS: "round(C, -100000000)"',
        "com.example/ChannelScale: channel_scale_f32_nhwc",
        "defines.CHANNELS: 'round(C, -100000000)': round to -100000000 digits",
        id="define that blows up",
    ),
    pytest.param(
        '{global: ["N * H * W * C"]}',
        '{global: ["ceil(N * 1e300) * 1e10"]}',
        "com.example/ChannelScale: channel_scale_f32_nhwc",
        "dispatch: ",
        id="dispatch beyond the limits",
    ),
    pytest.param(
        "sixth: {dtype: x, shape: [1, 1, 1, 1], value: 0.16666667}",
        'sixth: {dtype: x, shape: [1, 1, 1, 1], value: "x[3] * 1e308 * 10"}',
        "com.example/HardSwish: compose: constants.sixth",
        "inf is not a finite number",
        id="composed constant goes infinite",
    ),
    pytest.param(
        "shift: {dtype: INT8, shape: [1], value: 0}",
        'shift: {dtype: INT8, shape: [1], value: "x[3] * 1000"}',
        "com.example/HardSwish: compose: constants.shift",
        "1000 does not fit in INT8",
        id="composed constant out of its type",
    ),
]


@pytest.mark.parametrize(("old", "new", "key", "message"), CASES)
def test_kernels_rejects_what_needs_no_model(
    cli, tmp_path: Path, old: str, new: str, key: str, message: str
) -> None:
    path = library(tmp_path, old, new)
    run = cli("kernels", str(path))
    assert run.code == 1
    errors = [line for line in run.err.splitlines() if ": error: " in line]
    assert len(errors) == 1, run.err
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: error: {re.escape(key)}", errors[0]), errors
    assert message in errors[0]


def test_compile_fails_at_the_same_library_line(cli, tmp_path: Path) -> None:
    path = library(tmp_path, "inputs: [x, clamped, shift]", "inputs: [x, clamped]")
    run = cli("kernels", str(path))
    assert run.code == 1
    line = run.err.strip()
    assert re.fullmatch(
        rf"{re.escape(str(path))}:\d+:\d+: error: com\.example/HardSwish: "
        r"compose\.ops\[2\]\.inputs: MUL takes 3 input\(s\) \(input1, input2, shift\), "
        r"the op gives 2: 'shift' is missing",
        line,
    ), line
    compiled = cli(
        "compile", str(SAMPLE / "model.tosa"), "--kernels", str(path), "-o", str(tmp_path / "o")
    )
    assert compiled.code == 1 and compiled.err.strip() == line
    assert not (tmp_path / "o").exists()
