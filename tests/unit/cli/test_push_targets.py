"""``--push-constants TARGET=FILE`` means the same in ``run`` and ``verify``: an operator_name
(the compute module's name), ``segment:N`` or ``op:N``; a bare number is a segment in ``run`` and
refused as ambiguous in ``verify``. ``run --help`` shows input names as they really are."""

from __future__ import annotations

import click
import pytest
from paths import SAMPLES_DIR

from vgfc.cli.run import push_target


@pytest.mark.parametrize(
    ("key", "numbers", "want"),
    [
        ("blur", "segment", ("name", "blur")),
        ("segment:2", "", ("segment", "2")),
        ("op:7", "", ("op", "7")),
        ("3", "segment", ("segment", "3")),
        ("with:colon", "", ("name", "with:colon")),
    ],
)
def test_targets(key: str, numbers: str, want: tuple[str, str]) -> None:
    assert push_target(key, numbers=numbers) == want


@pytest.mark.parametrize("key", ["3", "segment:x", "op:", "op:-1"])
def test_refused_targets(key: str) -> None:
    with pytest.raises(click.BadParameter):
        push_target(key, numbers="")


def test_run_help_shows_real_input_names(cli) -> None:  # type: ignore[no-untyped-def]
    text = cli("run", "--help").out
    assert "input_0=x.npy" not in text
    assert "vgfc inspect" in text and "--timeout" in text and "segment:N" in text


def test_run_accepts_a_module_name(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The push sample's compute module is named after its operator: push_affine."""
    import numpy as np

    vgf = tmp_path / "push.vgf"
    assert cli("compile", str(SAMPLES_DIR / "push.tosa"), "-o", str(vgf), "-q").code == 0
    np.save(tmp_path / "x.npy", np.zeros((1, 8, 8, 4), np.float32))
    (tmp_path / "pc.bin").write_bytes(np.array([2.0, 1.0], np.float32).tobytes())
    args = ["run", str(vgf), "-i", str(tmp_path / "x.npy"), "--push-constants"]
    run = cli(*args, f"push_affine={tmp_path / 'pc.bin'}")
    assert run.code == 0, run.err
    wrong = cli(*args, f"push_afine={tmp_path / 'pc.bin'}")
    assert wrong.code == 2 and "did you mean push_affine" in wrong.err
