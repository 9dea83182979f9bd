"""A shader's ``#include`` reads only inside the include folders (``-I``).

Models come from anyone: before this rule ``#include "/etc/passwd"`` compiled without ``-I`` and
the error quoted the file's first line. Each refusal here names the include and quotes nothing
of the file it would have read.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import vgfc.limits
from vgfc.diagnostics import ShaderError
from vgfc.shader.glslang import CompileOptions, Language, compile_shader

SECRET = "SECRET_TOKEN_31"
SHADER = """#version 450
#include "{name}"
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer B {{ float v[]; }};
void main() {{ v[0] = VALUE; }}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """inc/ (the -I folder) with a good header and hostile entries; outside/ with a secret."""
    inc, outside = tmp_path / "inc", tmp_path / "outside"
    (inc / "sub").mkdir(parents=True)
    outside.mkdir()
    (inc / "value.h").write_text("#define VALUE 2.0\n")
    (inc / "sub" / "nested.h").write_text('#include "../value.h"\n')
    (inc / "sub" / "escape.h").write_text('#include "../../outside/secret.h"\n')
    (outside / "secret.h").write_text(f"{SECRET} {SECRET}\n")
    os.symlink(outside / "secret.h", inc / "link.h")
    os.symlink("/dev/zero", inc / "zero.h")
    os.symlink("loop.h", inc / "loop.h")
    os.mkfifo(inc / "fifo.h")
    return tmp_path


def compile_including(name: str, *include_dirs: Path) -> bytes:
    options = CompileOptions(include_dirs=tuple(str(d) for d in include_dirs), timeout=0)
    return compile_shader(SHADER.format(name=name), Language.GLSL, "main", options)


def refusal(name: str, *include_dirs: Path) -> str:
    with pytest.raises(ShaderError) as caught:
        compile_including(name, *include_dirs)
    text = caught.value.render()
    assert SECRET not in text and "root:" not in text
    return text


def test_includes_inside_the_folder_resolve(tree: Path) -> None:
    inc = tree / "inc"
    assert compile_including("value.h", inc)
    assert compile_including("sub/nested.h", inc)  # relative to the including file
    assert compile_including("sub/../value.h", inc)  # .. that stays inside


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("/etc/passwd", "/etc/passwd: an absolute path; an #include resolves only inside"),
        ("/proc/self/environ", "/proc/self/environ: an absolute path"),
        ("../outside/secret.h", "../outside/secret.h: resolves outside the include folders (-I)"),
        ("link.h", "link.h: resolves outside the include folders (-I), so it is not read"),
        ("zero.h", "zero.h: resolves outside the include folders"),
        ("sub/escape.h", "../../outside/secret.h: resolves outside the include folders"),
        ("fifo.h", "fifo.h: a FIFO (named pipe), not a regular file"),
        ("loop.h", "loop.h: a symbolic link loop"),
    ],
)
def test_includes_that_leave_the_folder_or_are_not_files_are_refused(
    tree: Path, name: str, message: str
) -> None:
    assert message in refusal(name, tree / "inc")


def test_without_include_folders_nothing_is_included(tree: Path) -> None:
    text = refusal(str(tree / "outside" / "secret.h"))
    assert "an absolute path" in text
    assert "value.h: not found (searched: no include directories given)" in refusal("value.h")


def test_a_folder_given_twice_or_with_a_trailing_slash_is_still_one_root(tree: Path) -> None:
    assert compile_including("value.h", Path(str(tree / "inc") + "/"), tree / "inc")
    # A sibling whose name starts with the folder's is outside it.
    (tree / "inc2").mkdir()
    (tree / "inc2" / "v.h").write_text("#define VALUE 3.0\n")
    os.symlink(tree / "inc2" / "v.h", tree / "inc" / "sibling.h")
    assert "resolves outside" in refusal("sibling.h", tree / "inc")


def test_include_sizes_are_bounded(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limits = vgfc.limits.Limits(include_file_bytes_max=64, include_bytes_max=100)
    monkeypatch.setattr(vgfc.limits, "LIMITS", limits)
    (tree / "inc" / "big.h").write_text("// " + "x" * 100 + "\n#define VALUE 1.0\n")
    assert "more than the 64 an include may have (include_file_bytes_max)" in refusal(
        "big.h", tree / "inc"
    )
    # 57 bytes, then 19 for each of the three includes of value.h: 114 in all.
    (tree / "inc" / "twice.h").write_text('#include "value.h"\n' * 3)
    assert "would read more than 100 bytes together (include_bytes_max)" in refusal(
        "twice.h", tree / "inc"
    )
