"""vgfc against the reference converter on the bundled samples: compile time, run time on the
CPU emulation stack, and the largest error against each sample's numpy reference.

    python benchmarks/bench_samples.py [--seed 0]

The reference converter's VGF keeps HLSL as text, which the scenario runner cannot compile;
that HLSL is compiled here with vgfc's glslang binding, as `vgfc verify` does.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from reference_tools import tool  # noqa: E402
from samples_module import SAMPLES_DIR, load_samples_module  # noqa: E402

from vgfc.compiler import compile_model  # noqa: E402
from vgfc.runner import run_vgf  # noqa: E402
from vgfc.shader.glslang import Language, compile_shader  # noqa: E402
from vgfc.vgf.decode import decode  # noqa: E402


def max_error(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> float:
    values = list(got.values())
    return max(
        float(np.max(np.abs(values[i].astype(np.float64) - w.astype(np.float64))))
        for i, w in enumerate(want.values())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    samples = load_samples_module()
    converter = tool("model-converter", "ai-ml-sdk-model-converter")
    head = ("sample", "compile", "run", "max err", "compile", "run", "max err", "segments")
    print(f"{'':<10}{'---- vgfc ----':^30}{'-- reference converter --':^30}")
    print(f"{head[0]:<10}" + "".join(f"{h:>10}" for h in head[1:]))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, sample in sorted(samples.SAMPLES.items()):
            model = SAMPLES_DIR / sample.filename
            inputs = samples.random_inputs(sample.build().inputs, args.seed)
            want = sample.reference(inputs)
            compile_model(model)  # warm-up: glslang and SPIRV-Tools load once per process
            start = time.perf_counter()
            result = compile_model(model)
            t_compile = time.perf_counter() - start
            ordered = [inputs[n] for n in result.graph.inputs]
            mine = work / f"{name}.vgf"
            mine.write_bytes(result.vgf)
            push, ref_push = None, None
            if sample.push_constants:
                data = samples.push_constant_bytes(sample)
                (seg,) = [i for i, s in enumerate(result.model.segments) if s.push_constant_ranges]
                push = {seg: data}
            start = time.perf_counter()
            got = run_vgf(mine, ordered, push)
            t_run = time.perf_counter() - start

            ref = work / f"{name}.ref.vgf"
            start = time.perf_counter()
            subprocess.run(
                [str(converter), "--input", str(model), "--output", str(ref)],
                capture_output=True,
                check=True,
            )
            t_ref_compile = time.perf_counter() - start
            data_ref = ref.read_bytes()
            f = decode(data_ref)
            shaders = {}
            for m in f.modules:
                if m.code == "HLSL" and m.source is not None:
                    shaders[m.name] = compile_shader(m.source, Language.HLSL, m.entry_point)
            if sample.push_constants:
                (seg,) = [i for i, s in enumerate(f.segments) if s.type.name == "COMPUTE"]
                ref_push = {seg: samples.push_constant_bytes(sample)}
            start = time.perf_counter()
            got_ref = run_vgf(ref, ordered, ref_push, shaders=shaders or None)
            t_ref_run = time.perf_counter() - start
            print(
                f"{name:<10}{t_compile * 1000:>8.1f}ms{t_run:>9.2f}s{max_error(got, want):>10.2g}"
                f"{t_ref_compile * 1000:>8.0f}ms{t_ref_run:>9.2f}s{max_error(got_ref, want):>10.2g}"
                f"{len(result.model.segments):>5} /{len(f.segments):>2}"
            )


if __name__ == "__main__":
    main()
