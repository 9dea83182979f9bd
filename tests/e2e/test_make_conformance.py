"""scripts/make_conformance.py lists the same tests for a generator run whatever ran before it
in the process: tosa-tools' generator changes its class-level operator table as it runs
(convolution kernel sizes, special-data test types), so each run starts from the table as
shipped. Run in a fresh interpreter, so that nothing else has run the generator yet."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import ROOT

_SCRIPT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import make_conformance as mc
tools = mc.Tools.find()
config = json.loads(tools.cts_config.read_text())
scope = mc.Scope(("tosa-pro-fp",), ("tosa-ext-bf16",))
batches = mc.batches(tools, config, "depthwise_conv2d", Path(sys.argv[2]), scope)
last = batches[-1]
first = sorted(c.name for c in mc.list_candidates(last))
for other in batches[:-1]:
    mc.list_candidates(other)
again = sorted(c.name for c in mc.list_candidates(last))
print(json.dumps([last.key, len(first), first == again]))
"""


@pytest.mark.slow
def test_a_generator_run_does_not_depend_on_the_runs_before_it(tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(ROOT / "scripts"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    key, count, same = json.loads(done.stdout.strip().splitlines()[-1])
    assert key == "depthwise_conv2d/tosa-ext-bf16/0" and count > 100
    assert same, "the second listing differs: the generator kept state from the runs before"
