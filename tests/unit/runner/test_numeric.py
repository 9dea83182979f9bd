"""How outputs are compared with an oracle."""

from __future__ import annotations

import numpy as np

from vgfc.runner.numeric import compare


def test_nan_matches_nan_but_not_a_number() -> None:
    want = np.array([np.nan, 1.0], np.float32)
    (row,) = compare({"y": np.array([np.nan, 1.0], np.float32)}, {"y": want})
    assert row.ok
    (row,) = compare({"y": np.array([0.0, 1.0], np.float32)}, {"y": want})
    assert not row.ok


def test_default_tolerance_follows_the_element_type() -> None:
    want16 = np.array([1.0], np.float16)
    close16 = np.array([1.0009765625], np.float16)  # one fp16 ulp away
    assert compare({"y": close16}, {"y": want16})[0].ok
    want32 = np.array([1.0], np.float32)
    assert not compare({"y": close16.astype(np.float32)}, {"y": want32})[0].ok
    assert compare({"y": close16.astype(np.float32)}, {"y": want32}, atol=1e-3)[0].ok


def test_integers_must_be_equal() -> None:
    (row,) = compare({"y": np.array([1, 2], np.int8)}, {"y": np.array([1, 3], np.int8)})
    assert not row.ok and row.max_abs == 1.0
