"""Write coverage without a run (vgfc/runner/coverage.py): which values are watched, what the
canary is, and how suspects become unwritten elements only when the second canary agrees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from paths import SAMPLES_DIR

from vgfc.record import replace
from vgfc.runner.coverage import CANARIES, canary_array, unwritten, watch
from vgfc.vgf.decode import read_vgf
from vgfc.vgf.model import Category, Model


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Model:
    out = tmp_path_factory.mktemp("mixed") / "mixed.vgf"
    vgfc = Path(sys.executable).parent / "vgfc"
    done = subprocess.run(
        [str(vgfc), "compile", str(SAMPLES_DIR / "mixed.tosa"), "-o", str(out), "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return read_vgf(out)


def test_watch_exposes_each_value_a_segment_writes_once(mixed: Model) -> None:
    exposed, watched = watch(mixed)
    outputs = [w for w in watched if w.output]
    between = [w for w in watched if not w.output]
    assert [w.name for w in outputs] == [o.name for o in mixed.outputs]
    written = {s.binding for seg in mixed.segments for s in seg.outputs}
    model_outputs = {o.binding for o in mixed.outputs}
    assert {w.binding for w in between} == written - model_outputs
    for w in between:
        assert exposed.resources[w.resource].category is Category.OUTPUT
        assert w.writer is not None
        assert w.binding in {s.binding for s in mixed.segments[w.writer].outputs}
    # Nothing else changed: same segments, modules, constants, inputs.
    assert exposed.segments == mixed.segments and exposed.modules == mixed.modules
    assert exposed.inputs == mixed.inputs
    assert exposed.outputs[: len(mixed.outputs)] == mixed.outputs


def test_canaries_are_quiet_nans_and_differ(mixed: Model) -> None:
    first, second = (canary_array(mixed, mixed.outputs[0], run) for run in (0, 1))
    assert first.dtype == np.float32 and first.shape == mixed.resource_of(mixed.outputs[0]).shape
    assert np.isnan(first).all() and np.isnan(second).all()
    with np.errstate(invalid="raise"):
        first.astype(np.float64)  # a signalling NaN would raise here
    assert first.view(np.uint32)[0, 0] != second.view(np.uint32)[0, 0]
    for widths in CANARIES:
        assert set(widths) == {1, 2, 4, 8}
    assert CANARIES[0][1] not in (0, 1)  # never a boolean's value


def test_suspects_are_confirmed_by_the_second_canary(mixed: Model) -> None:
    _, watched = watch(mixed)
    value = watched[0]
    shape = mixed.resource_of(mixed.outputs[0]).shape
    first = canary_array(mixed, mixed.outputs[0], 0).copy()
    second = canary_array(mixed, mixed.outputs[0], 1).copy()
    first.reshape(-1)[:10] = 1.0
    second.reshape(-1)[:10] = 1.0
    # Element 20 holds the first canary's bits in the first run, a real value in the second:
    # the shader wrote that value; it is not reported.
    second.reshape(-1)[20] = 5.0
    found = unwritten(mixed, [value], {value.name: first}, {value.name: second})
    (u,) = found
    total = int(np.prod(shape))
    assert (u.count, u.total, u.first) == (total - 11, total, 10)
    assert "should have written them" in u.describe() and value.name in u.describe()
    assert unwritten(mixed, [value], {value.name: np.ones(shape, np.float32)}) == []


def test_a_value_without_a_writer_names_no_segment(mixed: Model) -> None:
    _, watched = watch(mixed)
    orphan = replace(watched[0], writer=None)
    array = canary_array(mixed, mixed.outputs[0], 0)
    (u,) = unwritten(mixed, [orphan], {orphan.name: array})
    assert u.segment is None and "should have" not in u.describe()
