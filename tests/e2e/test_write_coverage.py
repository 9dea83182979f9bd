"""Write coverage on lavapipe: every output and every value passed between segments starts as a
canary; elements no segment wrote are a warning in ``run`` and an error in ``verify``, naming the
segment that should have written them. The oracle for "which elements": the dispatch itself (a
shader run on the first N invocations writes exactly elements 0..N-1)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tosa_factory import Op, T, build, custom

from vgfc.compiler import compile_to
from vgfc.runner import run_checked

COPY = textwrap.dedent(
    """\
    #version 450
    layout(local_size_x = 1) in;
    layout(set = 0, binding = 0) readonly buffer In { float x[]; };
    layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };
    void main() { uint i = gl_GlobalInvocationID.x; y[i] = x[i] + 1.0; }
    """
)


def shader(name: str, inp: str, out: str, counts: int) -> Op:
    attrs: dict[str, Any] = {
        "entry_point": "main",
        "workgroup_sizes": [counts, 1, 1],
        "shader_language": "GLSL",
        "shader_code": COPY,
    }
    for i, role in enumerate(("input_0", "output_0")):
        attrs |= {
            f"{role}_binding": i,
            f"{role}_descriptorset": 0,
            f"{role}_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
            f"{role}_vkformat": "VK_FORMAT_R32_SFLOAT",
        }
    return custom([inp], [out], name, attrs=attrs)


def two_shaders(d: Path, first: int, second: int) -> tuple[Path, Path]:
    """x -> first (writes `first` elements of t) -> ABS -> u -> second -> y: t and u pass
    between segments."""
    tensors = [T(n, (1, 16)) for n in ("x", "t", "u", "y")]
    ops = [shader("one", "x", "t", first), Op("ABS", ["t"], ["u"]), shader("two", "u", "y", second)]
    model = d / "m.tosa"
    model.write_bytes(build(tensors, ops, ["x"], ["y"]))
    vgf = d / "m.vgf"
    compile_to(model, vgf)
    return model, vgf


X = np.arange(16, dtype=np.float32).reshape(1, 16)


def test_full_coverage_reports_nothing_and_keeps_the_numbers(tmp_path: Path) -> None:
    _, vgf = two_shaders(tmp_path, 16, 16)
    result = run_checked(vgf, [X])
    assert result.unwritten == ()
    np.testing.assert_array_equal(result.outputs["y"], np.abs(X + 1) + 1)


def test_a_value_between_segments_names_its_writer(tmp_path: Path) -> None:
    _, vgf = two_shaders(tmp_path, 10, 16)
    result = run_checked(vgf, [X])
    (root,) = [u for u in result.unwritten if u.carried_from is None]
    assert not root.value.output and root.value.binding == 1
    assert (root.count, root.total, root.first) == (6, 16, 10)
    assert root.segment is not None and "module 'one'" in root.segment
    # The NaN canary flowed on through ABS and 'two' into y: carried, not blamed on them.
    carried = [u for u in result.unwritten if u.carried_from is not None]
    assert carried and all(u.carried_from == root.what for u in carried)
    assert any(u.value.name == "y" for u in carried)


def test_an_output_names_its_writer(tmp_path: Path) -> None:
    _, vgf = two_shaders(tmp_path, 16, 4)
    (u,) = run_checked(vgf, [X]).unwritten
    assert u.value.output and u.value.name == "y"
    assert (u.count, u.first) == (12, 4) and u.segment is not None and "'two'" in u.segment
    np.testing.assert_array_equal(
        run_checked(vgf, [X]).outputs["y"][0, :4], np.abs(X + 1)[0, :4] + 1
    )


def test_run_warns_and_verify_fails(cli: Any, tmp_path: Path) -> None:
    model, vgf = two_shaders(tmp_path, 10, 16)
    np.save(tmp_path / "x.npy", X)
    run = cli("run", str(vgf), "-i", str(tmp_path / "x.npy"), "--json")
    assert run.code == 0
    assert "warning:" in run.err and "10" in run.err and "module 'one'" in run.err
    (entry,) = [u for u in json.loads(run.out)["unwritten"] if u["carried_from"] is None]
    assert entry["count"] == 6 and entry["first_index"] == 10 and entry["output"] is False
    np.save(tmp_path / "y.npy", np.abs(X + 1) + 1)
    checked = cli(
        "verify", str(model), "-i", f"x={tmp_path / 'x.npy'}", "-e", f"y={tmp_path / 'y.npy'}"
    )
    assert checked.code == 1
    assert "error:" in checked.err and "6 of 16 elements were never written" in checked.err


def test_run_governs_the_warning_as_compile_does(cli: Any, tmp_path: Path) -> None:
    """-Werror=unwritten-output (or -Werror) fails the run and writes no output; -Wno-... and
    -w silence it; an unknown name is a usage error with did-you-mean."""
    _, vgf = two_shaders(tmp_path, 10, 16)
    np.save(tmp_path / "x.npy", X)
    args = ("run", str(vgf), "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / "out"))
    for werror in ("-Werror=unwritten-output", "-Werror"):
        failed = cli(*args, werror)
        assert failed.code == 1, failed.err
        assert "error:" in failed.err and "[-Werror=unwritten-output]" in failed.err
        assert not (tmp_path / "out").exists()
    as_json = cli(*args, "-Werror", "--json")
    assert as_json.code == 1 and json.loads(as_json.out)["ok"] is False
    assert not (tmp_path / "out").exists()
    for quiet in ("-Wno-unwritten-output", "-w", "-Werror -w"):
        silent = cli(*args, *quiet.split())
        assert silent.code == 0 and "unwritten" not in silent.err, silent.err
        assert (tmp_path / "out" / "y.npy").exists()
    kept = cli(*args, "-Werror", "-Wno-error=unwritten-output")
    assert kept.code == 0 and "[-Wunwritten-output]" in kept.err
    wrong = cli(*args, "-Wunwriten-output")
    assert wrong.code == 2 and "unwritten-output" in wrong.err


def test_a_dispatch_beyond_the_limit_is_refused_before_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    from vgfc.diagnostics import InputError
    from vgfc.record import replace
    from vgfc.vgf.decode import read_vgf
    from vgfc.vgf.encode import encode_to

    _, vgf = two_shaders(tmp_path, 16, 16)
    model = read_vgf(vgf)
    segments = tuple(
        replace(s, dispatch=(65535, 65535, 64)) if s.dispatch != (0, 0, 0) else s
        for s in model.segments
    )
    big = tmp_path / "big.vgf"
    with big.open("wb") as out:
        encode_to(replace(model, segments=segments), out)

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the scenario runner was started")

    # Refused, not run: neither the CPU stack is looked for nor the scenario started.
    monkeypatch.setattr("vgfc.runner.run.find_stack", never)
    monkeypatch.setattr("vgfc.runner.run._run", never)
    with pytest.raises(InputError, match="more than the 4194304 vgfc runs"):
        run_checked(big, [X])


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "ten"])
def test_timeout_takes_positive_seconds(cli: Any, tmp_path: Path, value: str) -> None:
    _, vgf = two_shaders(tmp_path, 16, 16)
    np.save(tmp_path / "x.npy", X)
    run = cli("run", str(vgf), "-i", str(tmp_path / "x.npy"), "--timeout", value)
    assert run.code == 2 and "--timeout" in run.err


def test_a_pixel_grid_dispatch_writes_every_element(tmp_path: Path) -> None:
    """The model vgfc does not warn about (``global_size: [8, 8, 1]`` over [1, 8, 8, 4], each
    invocation writing its pixel's 4 channels) writes every element when run."""
    from shader_models import pixel_model

    model = pixel_model(tmp_path, workgroup_sizes=None, global_size=[8, 8, 1])
    vgf = tmp_path / "m.vgf"
    assert compile_to(model, vgf).warnings == ()
    x = np.linspace(-4, 4, 256, dtype=np.float32).reshape(1, 8, 8, 4)
    result = run_checked(vgf, [x])
    assert result.unwritten == ()
    np.testing.assert_array_equal(result.outputs["y"], np.abs(x) * 2)
