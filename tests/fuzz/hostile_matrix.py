#!/usr/bin/env python3
"""Every surface of vgfc tried as an attacker and as a careless user would: the hostile matrix.

Each case runs the installed ``vgfc`` (a real process) in a fresh folder and is held to the rules
of docs/limits.md: exit code 1 (death by the signal, for a signalled one); a message that names
the file (and, where there is one, the entry or key); at most 20 lines and 4 KB of output; done
within 20 s; no file clobbered, replaced or left behind; nothing of a file outside the allowed
folders in any output.

    python tests/fuzz/hostile_matrix.py              # every case, a table by class
    python tests/fuzz/hostile_matrix.py --only vgf   # the classes whose name contains "vgf"
    python tests/fuzz/hostile_matrix.py --list

Some cases need root (a tmpfs for ENOSPC and a read-only file system); they are left out, and
said so, elsewhere.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))  # tosa_factory

VGFC = str(Path(sys.executable).parent / "vgfc")
SECRET = "SECRET-CONTENT-7f3a91"
"""Written into files outside every allowed folder: it must never show in any output."""
MAX_LINES, MAX_BYTES, MAX_SECONDS = 20, 4096, 20.0


@dataclass
class Case:
    surface: str
    name: str
    setup: Callable[[Path], list[str]]
    """Prepares the folder, returns the arguments after ``vgfc`` (or a whole command line
    starting with ``!``: a shell command)."""
    needles: tuple[str, ...] = ()
    """Text the error output must hold (``{work}`` stands for the folder)."""
    signal: int | None = None
    """Send this signal once a temporary file appears in the folder."""
    redirect: str | None = None
    """Standard output goes here (a shell redirection: ``>/dev/full``, ``>&-``)."""
    may_change: tuple[str, ...] = ()
    """Files (relative to the folder) the command may write (only for signals: old or new)."""
    root: bool = False
    """Needs root (mount)."""


@dataclass
class Outcome:
    case: Case
    ok: bool
    problems: list[str] = field(default_factory=list)
    code: int | None = None
    seconds: float = 0.0
    text: str = ""


# --- builders ---------------------------------------------------------------------------------


def _model(work: Path, name: str = "m.tosa") -> Path:
    path = work / name
    shutil.copy(ROOT / "samples" / "mixed.tosa", path)
    return path


def _kernel_model(work: Path) -> Path:
    path = work / "k.tosa"
    shutil.copy(ROOT / "samples" / "kernels" / "model.tosa", path)
    return path


LIBRARY = (ROOT / "samples" / "kernels" / "example_ops.yaml").read_text()


def _library(work: Path, text: str = LIBRARY, name: str = "lib.yaml") -> Path:
    folder = work / "lib"
    folder.mkdir(exist_ok=True)
    shutil.copy(ROOT / "samples" / "kernels" / "channel_scale.comp", folder)
    path = folder / name
    path.write_text(text)
    return path


def _secret(work: Path) -> Path:
    outside = work / "outside"
    outside.mkdir(exist_ok=True)
    path = outside / "secret.h"
    path.write_text(f"{SECRET}\n{SECRET} = 1;\n")
    return path


def _vgf(work: Path) -> Path:
    path = work / "m.vgf"
    subprocess.run([VGFC, "compile", "-q", str(_model(work)), "-o", str(path)], check=True)
    return path


def _fifo(work: Path, name: str) -> Path:
    path = work / name
    os.mkfifo(path)
    return path


def _loop(work: Path, name: str) -> Path:
    path = work / name
    os.symlink(name, path)
    return path


def _sparse(work: Path, name: str, size: int = 3 << 30) -> Path:
    path = work / name
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def _lib_with(work: Path, old: str, new: str) -> Path:
    assert old in LIBRARY, old
    return _library(work, LIBRARY.replace(old, new, 1))


_KERNEL_ENTRY = """  - domain: com.example
    name: Bad
    inputs: [x]
    outputs: [y]
    kernels:
      - name: k
        shader: {SHADER}
        resources: {x: {binding: 0}, y: {binding: 1}}
        dispatch: {global: [GLOBAL]}
"""


def _lib_kernel(
    work: Path, shader: str = "{file: channel_scale.comp}", glob: str = "1", secret: bool = False
) -> Path:
    if secret:
        _secret(work)
    entry = _KERNEL_ENTRY.replace("{SHADER}", shader).replace("GLOBAL", glob)
    return _library(work, LIBRARY + entry)


_COMPOSE_ENTRY = """  - domain: com.example
    name: Bad
    inputs: [x]
    outputs: [y]
    compose:
      constants: CONSTANTS
      ops:
OPS
"""


def _lib_compose(work: Path, ops: str, constants: str = "{}") -> Path:
    entry = _COMPOSE_ENTRY.replace("CONSTANTS", constants).replace("OPS", ops)
    return _library(work, LIBRARY + entry)


def _many_ops_without_kernel(work: Path, count: int = 2000) -> Path:
    from tosa_factory import T, build, custom

    names = ["x"] + [f"t{i}" for i in range(count)]
    ops = [custom([names[i]], [names[i + 1]], f"Op{i}", domain="TFL") for i in range(count)]
    path = work / "many.tosa"
    path.write_bytes(build([T(n, (1, 4)) for n in names], ops, ["x"], [names[-1]]))
    return path


def _big_model(work: Path, name: str = "big.tosa") -> Path:
    """A model with 400 MB of constants: its VGF takes long enough to write to be interrupted."""
    cache = ROOT / "build" / "hostile" / "big.tosa"
    if not cache.exists():
        sys.path.insert(0, str(ROOT / "scripts"))
        from bench_models import constants_model

        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(constants_model(count=4, elements=25_000_000, n_ops=10))
    path = work / name
    try:
        os.link(cache, path)
    except OSError:
        shutil.copy(cache, path)
    return path


def _medium_model(work: Path) -> Path:
    """A model whose VGF (400 KB of constants) does not fit a 64 KB file system."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from bench_models import constants_model

    path = work / "medium.tosa"
    path.write_bytes(constants_model(count=1, elements=100_000, n_ops=4))
    return path


def _lib_shader(work: Path, make: Callable[[Path, str], Path]) -> Path:
    """A library whose kernel's shader is ``bad.comp`` in its folder, made by ``make``; when
    ``make`` gives a path elsewhere (a device), ``bad.comp`` is a symlink to it."""
    library = _lib_kernel(work, "{file: bad.comp}")
    target = make(library.parent, "bad.comp")
    if target != library.parent / "bad.comp":
        os.symlink(target, library.parent / "bad.comp")
    return library


def _bytes_library(work: Path, data: bytes) -> Path:
    path = _library(work)
    path.write_bytes(data)
    return path


def _hard_link(path: Path) -> Path:
    link = path.with_name("link.tosa")
    os.link(path, link)
    return link


# --- the cases --------------------------------------------------------------------------------


def cases() -> list[Case]:
    c: list[Case] = []

    def add(surface: str, name: str, setup: Callable[[Path], list[str]], *needles: str, **kw):
        c.append(Case(surface, name, setup, needles, **kw))

    # -- files that are not regular files, as each input ---------------------------------------
    for what, make in (
        ("FIFO", lambda w, n: _fifo(w, n)),
        ("/dev/zero", lambda w, n: Path("/dev/zero")),
        ("folder", lambda w, n: (w / n).mkdir() or (w / n)),
        ("symlink loop", lambda w, n: _loop(w, n)),
        ("sparse 3 GB", lambda w, n: _sparse(w, n)),
        ("/proc file", lambda w, n: Path("/proc/self/environ")),
    ):
        add(
            "files",
            f"library is a {what}",
            lambda w, make=make: ["kernels", str(make(w, "lib.yaml"))],
            "cannot read the kernel library",
        )
        if what not in ("folder",):  # click refuses a folder argument (usage error, exit 2)
            add(
                "files",
                f"VGF is a {what}",
                lambda w, make=make: ["inspect", str(make(w, "m.vgf"))],
                "m.vgf" if what not in ("/dev/zero", "/proc file") else "",
            )
            add(
                "files",
                f"inspect --diff against a {what}",
                lambda w, make=make: [
                    "inspect",
                    str(_vgf(w)),
                    "--diff",
                    str(make(w, "other.vgf")),
                ],
            )
        if what not in ("folder",):
            # The model and run's arrays go through the same opener (a FIFO once blocked both).
            add(
                "files",
                f"model is a {what}",
                lambda w, make=make: ["compile", str(make(w, "m.tosa")), "-o", str(w / "o.vgf")],
                "m.tosa" if what not in ("/dev/zero", "/proc file") else "",
            )
            add(
                "files",
                f"run input is a {what}",
                lambda w, make=make: ["run", str(_vgf(w)), "-i", str(make(w, "x.npy"))],
                "x.npy" if what not in ("/dev/zero", "/proc file") else "",
            )
        add(
            "files",
            f"library shader file is a {what}",
            lambda w, make=make: ["kernels", str(_lib_shader(w, make))],
            "lib.yaml:",
            "shader.file",
        )
    add(
        "files",
        "NUL byte in a library's shader path",
        lambda w: ["kernels", str(_lib_kernel(w, '{file: "a\\0b.comp"}'))],
        "lib.yaml:",
        "shader.file",
        "NUL",
    )
    add(
        "files",
        "library missing",
        lambda w: ["compile", str(_model(w)), "--kernels", str(w / "nope.yaml")],
        "nope.yaml",
        "no such file",
    )
    add(
        "files",
        "library is not UTF-8",
        lambda w: ["kernels", str(_bytes_library(w, LIBRARY.encode() + b"# \xff\n"))],
        "lib.yaml",
        "UTF-8",
    )
    add(
        "files",
        "library of 5 MB",
        lambda w: ["kernels", str(_library(w, LIBRARY + "#" * (5 << 20) + "\n"))],
        "lib.yaml",
        "library_bytes_max",
    )

    # -- kernel libraries: unbounded work from a small file ------------------------------------
    bomb = "vgfc_kernels: 1\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" if i else "a0: &a0 [x, x, x]\n"
        for i in range(12)
    )
    lib_cases: list[tuple[str, Callable[[Path], Path], tuple[str, ...]]] = [
        ("alias bomb", lambda w: _library(w, bomb), ("lib.yaml", "aliases")),
        ("recursive alias", lambda w: _library(w, "a: &a [*a]\n"), ("lib.yaml",)),
        (
            "lists nested 5000 deep",
            lambda w: _library(w, LIBRARY + "x: " + "[" * 5000 + "]" * 5000 + "\n"),
            ("lib.yaml:", "nested"),
        ),
        (
            "integer of 5000 digits",
            lambda w: _lib_with(w, "binding: 0}", "binding: " + "9" * 5000 + "}"),
            ("lib.yaml:", "characters"),
        ),
        (
            "float of 400 digits",
            lambda w: _lib_with(w, "value: 3.0", "value: 1" + "0" * 400 + ".0"),
            ("lib.yaml:",),
        ),
        (
            "1500 chained compose ops",
            lambda w: _lib_compose(
                w,
                "\n".join(
                    f"        - {{op: ABS, inputs: [{f't{i - 1}' if i else 'x'}], "
                    f"outputs: [{f't{i}' if i < 1499 else 'y'}]}}"
                    for i in range(1500)
                ),
            ),
            ("lib.yaml:",),
        ),
        (
            "attribute nested 600 deep",
            lambda w: _lib_compose(
                w,
                "        - {op: REDUCE_SUM, inputs: [x], outputs: [y], attrs: {axis: "
                + "[" * 600
                + "1"
                + "]" * 600
                + "}}",
            ),
            ("lib.yaml:", "nested"),
        ),
        (
            "round(N, -100000000) in a define",
            lambda w: _lib_with(w, "CHANNELS: C", 'CHANNELS: "round(N, -100000000)"'),
            ("lib.yaml:", "round"),
        ),
        (
            "round(N, -100000000) in dispatch",
            lambda w: _lib_with(
                w, '{global: ["N * H * W * C"]}', '{global: ["round(N, -100000000)"]}'
            ),
            ("lib.yaml:", "round"),
        ),
        (
            "round(N, -100000000) in infer",
            lambda w: _lib_with(
                w, "y: {same_as: x}", 'y: {dtype: FP32, shape: ["round(N, -100000000)", 1, 1, 1]}'
            ),
            ("lib.yaml:", "round"),
        ),
        (
            "ceil(1e308) in dispatch",
            lambda w: _lib_kernel(w, glob='"ceil(1e308)"'),
            ("lib.yaml:", "dispatch"),
        ),
        (
            "dispatch of 2**40",
            lambda w: _lib_kernel(w, glob='"2**40"'),
            ("lib.yaml:", "dispatch"),
        ),
        (
            "dispatch of 0",
            lambda w: _lib_kernel(w, glob="0"),
            ("lib.yaml:", "dispatch"),
        ),
        (
            "constant shape [1, 10**30, 1, 1]",
            lambda w: _lib_with(
                w, "shape: [1, 1, 1, 1], value: 3.0", 'shape: [1, "10**30", 1, 1], value: 3.0'
            ),
            ("lib.yaml:", "three"),
        ),
        (
            "constant shape [1, 4294967295, 1, 1]",
            lambda w: _lib_with(
                w, "shape: [1, 1, 1, 1], value: 3.0", "shape: [1, 4294967295, 1, 1], value: 3.0"
            ),
            ("lib.yaml:", "three"),
        ),
        (
            "NaN into INT8",
            lambda w: _lib_with(
                w,
                "shift: {dtype: INT8, shape: [1], value: 0}",
                "shift: {dtype: INT8, shape: [1], value: .nan}",
            ),
            ("lib.yaml:", "shift"),
        ),
        (
            "inf into INT8 by expression",
            lambda w: _lib_with(
                w,
                "shift: {dtype: INT8, shape: [1], value: 0}",
                'shift: {dtype: INT8, shape: [1], value: "1e308 * 10"}',
            ),
            ("lib.yaml:", "shift"),
        ),
        (
            "300 into INT8",
            lambda w: _lib_with(
                w,
                "shift: {dtype: INT8, shape: [1], value: 0}",
                "shift: {dtype: INT8, shape: [1], value: 300}",
            ),
            ("lib.yaml:", "shift"),
        ),
        (
            "compose op: x",
            lambda w: _lib_with(w, "{op: ADD, inputs: [x, three]", "{op: x, inputs: [x, three]"),
            ("lib.yaml:", "HardSwish", "ops[0].op"),
        ),
        (
            "compose op misspelt",
            lambda w: _lib_with(w, "{op: ADD, inputs: [x, three]", "{op: ADDD, inputs: [x, three]"),
            ("lib.yaml:", "did you mean ADD"),
        ),
        (
            "MUL without its shift operand",
            lambda w: _lib_with(w, "inputs: [x, clamped, shift]", "inputs: [x, clamped]"),
            ("lib.yaml:", "HardSwish", "shift"),
        ),
        (
            "CLAMP with an unknown attribute",
            lambda w: _lib_with(w, "nan_mode: PROPAGATE", "nan_mode: PROPAGATE, bogus: 1"),
            ("lib.yaml:", "bogus"),
        ),
        (
            "CLAMP with a wrong enum",
            lambda w: _lib_with(w, "nan_mode: PROPAGATE", "nan_mode: SOMETIMES"),
            ("lib.yaml:", "nan_mode"),
        ),
        (
            "CLAMP without nan_mode",
            lambda w: _lib_with(w, ", nan_mode: PROPAGATE", ""),
            ("lib.yaml:", "nan_mode"),
        ),
        (
            "a TOSA 1.1 op composed",
            lambda w: _lib_with(
                w, "{op: ADD, inputs: [x, three]", "{op: MATMUL_T_BLOCK_SCALED, inputs: [x, three]"
            ),
            ("lib.yaml:",),
        ),
        (
            "composed ops in a cycle",
            lambda w: _lib_with(
                w, "{op: ADD, inputs: [x, three]", "{op: ADD, inputs: [gated, three]"
            ),
            ("lib.yaml:", "cycle"),
        ),
        (
            "mapping keys that are lists",
            lambda w: _library(w, LIBRARY + "? [a, b]\n: 1\n"),
            ("lib.yaml",),
        ),
        ("empty library", lambda w: _library(w, ""), ("lib.yaml", "empty")),
        ("a list, not a library", lambda w: _library(w, "[1, 2]\n"), ("lib.yaml",)),
    ]
    for name, make, needles in lib_cases:
        add("library (kernels)", name, lambda w, make=make: ["kernels", str(make(w))], *needles)
        add(
            "library (compile)",
            name,
            lambda w, make=make: [
                "compile",
                str(_kernel_model(w)),
                "--kernels",
                str(make(w)),
                "-o",
                str(w / "out.vgf"),
            ],
            *needles,
        )

    # -- includes and library paths: nothing outside the allowed folders is read ----------------
    for name, include in (
        ("absolute path", "/etc/passwd"),
        ("outside via ..", "../outside/secret.h"),
        ("symlink out of -I", "link.h"),
        ("/proc/self/environ", "/proc/self/environ"),
        ("FIFO in -I", "fifo.h"),
        ("/dev/zero via symlink", "zero.h"),
        ("symlink loop in -I", "loop.h"),
    ):

        def setup(w: Path, include: str = include) -> list[str]:
            secret = _secret(w)
            inc = w / "inc"
            inc.mkdir()
            os.symlink(secret, inc / "link.h")
            os.mkfifo(inc / "fifo.h")
            os.symlink("/dev/zero", inc / "zero.h")
            os.symlink("loop.h", inc / "loop.h")
            return ["check", str(_include_model(w, include)), "-I", str(inc)]

        add("include", name, setup, "m.tosa", "shader_code")
    add(
        "include",
        "absolute include without -I",
        lambda w: ["check", str(_include_model(w, str(_secret(w))))],
        "m.tosa",
    )
    add(
        "include",
        "library shader.file /etc/passwd",
        lambda w: ["kernels", str(_lib_kernel(w, "{file: /etc/passwd, language: GLSL}"))],
        "lib.yaml:",
        "shader.file",
    )
    add(
        "include",
        "library shader.file outside by ..",
        lambda w: [
            "kernels",
            str(_lib_kernel(w, "{file: ../outside/secret.h, language: GLSL}", secret=True)),
        ],
        "lib.yaml:",
        "shader.file",
    )
    add(
        "include",
        "library include_dirs [/]",
        lambda w: [
            "kernels",
            str(_lib_kernel(w, "{file: channel_scale.comp, include_dirs: [/]}")),
        ],
        "lib.yaml:",
        "include_dirs",
    )
    add(
        "include",
        "library shader via symlink out",
        lambda w: ["kernels", str(_lib_shader(w, lambda w, n: _secret(w)))],
        "lib.yaml:",
        "shader.file",
    )

    # -- VGF files --------------------------------------------------------------------------------
    def patched(w: Path, offset: int, value: bytes) -> list[str]:
        path = _vgf(w)
        data = bytearray(path.read_bytes())
        data[offset : offset + len(value)] = value
        path.write_bytes(bytes(data))
        return ["inspect", str(path)]

    add("vgf", "section size beyond the file", lambda w: patched(w, 0x20, b"\xff" * 8), "m.vgf")
    add("vgf", "header only", lambda w: ["inspect", str(_truncated(w, 128))], "m.vgf")
    add("vgf", "truncated by one byte", lambda w: ["inspect", str(_truncated(w, -1))], "m.vgf")
    add("vgf", "a TOSA model as VGF", lambda w: ["inspect", str(_model(w, "m.vgf"))], "m.vgf")
    add(
        "vgf",
        "sparse 3 GB with a VGF header",
        lambda w: ["inspect", str(_vgf_with_huge_section(w))],
        "m.vgf",
    )
    add("vgf", "empty file", lambda w: ["inspect", str(_sparse(w, "m.vgf", 0))], "m.vgf")

    # -- outputs ---------------------------------------------------------------------------
    add(
        "outputs",
        "compile -o /dev/null",
        lambda w: ["compile", "-q", str(_model(w)), "-o", "/dev/null"],
        "/dev/null",
    )
    add(
        "outputs",
        "compile --report /dev/null",
        lambda w: [
            "compile",
            "-q",
            str(_model(w)),
            "-o",
            str(w / "o.vgf"),
            "--report",
            "/dev/null",
        ],
        "/dev/null",
    )
    add(
        "outputs",
        "partition -o its own model",
        lambda w: ["partition", str(_model(w)), "--json", "-o", str(w / "m.tosa")],
        "m.tosa",
    )
    add(
        "outputs",
        "partition -o a hard link to its model",
        lambda w: ["partition", str(_model(w)), "--json", "-o", str(_hard_link(w / "m.tosa"))],
        "link.tosa",
    )
    add(
        "outputs",
        "compile -o the kernel library",
        lambda w: [
            "compile",
            "-q",
            str(_kernel_model(w)),
            "--kernels",
            str(_library(w)),
            "-o",
            str(w / "lib" / "lib.yaml"),
        ],
        "lib.yaml",
    )
    add(
        "outputs",
        "compile -o a library's shader",
        lambda w: [
            "compile",
            "-q",
            str(_kernel_model(w)),
            "--kernels",
            str(_library(w)),
            "-o",
            str(w / "lib" / "channel_scale.comp"),
        ],
        "channel_scale.comp",
    )
    add(
        "outputs",
        "compile -o a FIFO",
        lambda w: ["compile", "-q", str(_model(w)), "-o", str(_fifo(w, "o.vgf"))],
        "o.vgf",
    )
    add(
        "outputs",
        "compile -o into a missing folder",
        lambda w: ["compile", "-q", str(_model(w)), "-o", str(w / "nodir" / "o.vgf")],
        "o.vgf",
        "does not exist",
    )
    add(
        "outputs",
        "compile -o under a file",
        lambda w: ["compile", "-q", str(_model(w)), "-o", str(_model(w, "f")) + "/o.vgf"],
        "o.vgf",
    )
    add(
        "outputs",
        "compile -o under /proc",
        lambda w: ["compile", "-q", str(_model(w)), "-o", "/proc/self/o.vgf"],
        "/proc/self/o.vgf",
    )
    add(
        "outputs",
        "partition -o a folder",
        lambda w: ["partition", str(_model(w)), "--json", "-o", str(w)],
    )
    for command in (
        ["--version"],
        ["partition", "M"],
        ["inspect", "V"],
        ["kernels", "mediapipe"],
        ["check", "M"],
        ["compile", "M", "-o", "O"],
    ):
        for redirect in (">/dev/full", ">&-"):

            def printing(w: Path, command: list[str] = command) -> list[str]:
                places = {"M": lambda: _model(w), "V": lambda: _vgf(w), "O": lambda: w / "o.vgf"}
                return [str(places[a]()) if a in places else a for a in command]

            add(
                "stdout",
                f"{' '.join(command)} {redirect}",
                printing,
                "standard output",
                redirect=redirect,
            )
    add(
        "stdout",
        "compile -o - >/dev/full",
        lambda w: ["compile", str(_model(w)), "-o", "-"],
        "standard output",
        redirect=">/dev/full",
    )
    # -- standard input as the model (-) -------------------------------------------------------
    for redirect in ("</dev/zero", "</dev/null", "<&-", "<<<not-a-model", "</dev/urandom"):
        for command in (["compile", "-", "-o", "o.vgf"], ["check", "-"], ["inspect", "-"]):
            add(
                "stdin",
                f"{' '.join(command)} {redirect}",
                lambda w, command=command: list(command),
                "standard input",
                redirect=redirect,
            )
    add(
        "outputs",
        "ENOSPC on a 64 KB tmpfs",
        lambda w: ["compile", "-q", str(_medium_model(w)), "-o", str(_tiny_fs(w) / "o.vgf")],
        "o.vgf",
        "no space left",
        root=True,
    )
    add(
        "outputs",
        "read-only file system",
        lambda w: ["compile", "-q", str(_model(w)), "-o", str(_tiny_fs(w, "ro") / "o.vgf")],
        "o.vgf",
        "read-only",
        root=True,
    )

    # -- signals during a large write ---------------------------------------------------------
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGINT):
        add(
            "signals",
            f"{sig.name} during a 400 MB write",
            lambda w: ["compile", "-q", str(_big_model(w)), "-o", str(w / "out.vgf")],
            "interrupted",
            signal=sig,
        )
        add(
            "signals",
            f"{sig.name} during a batch of 3 with -j 2",
            lambda w: [
                "compile",
                "-q",
                *(str(_big_model(w, f"b{i}.tosa")) for i in range(3)),
                "-d",
                str(w / "out"),
                "-j",
                "2",
            ],
            "interrupted",
            signal=sig,
        )

    # -- reports --------------------------------------------------------------------------------
    add(
        "reports",
        "check of 2000 ops without a kernel",
        lambda w: ["check", str(_many_ops_without_kernel(w))],
        "many.tosa",
        "more",
    )
    return c


def _include_model(work: Path, include: str) -> Path:
    from tosa_factory import SHADER_DOMAIN, Op, T, build, custom

    code = (
        '#version 450\n#include "' + include + '"\nlayout(local_size_x = 16) in;\n'
        "layout(set = 0, binding = 0) readonly buffer In { float x[]; };\n"
        "layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };\n"
        "void main() { y[gl_GlobalInvocationID.x] = x[gl_GlobalInvocationID.x]; }\n"
    )
    attrs = {
        "entry_point": "main",
        "workgroup_sizes": [4, 1, 1],
        "shader_language": "GLSL",
        "shader_code": code,
    }
    for role, binding in (("input_0", 0), ("output_0", 1)):
        attrs[f"{role}_binding"] = binding
        attrs[f"{role}_descriptorset"] = 0
        attrs[f"{role}_vkdescriptortype"] = "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER"
        attrs[f"{role}_vkformat"] = "VK_FORMAT_R32_SFLOAT"
    ops = [Op("ABS", ["x"], ["a"]), custom(["a"], ["y"], "k", domain=SHADER_DOMAIN, attrs=attrs)]
    path = work / "m.tosa"
    path.write_bytes(build([T(n, (1, 64)) for n in ("x", "a", "y")], ops, ["x"], ["y"]))
    return path


def _truncated(work: Path, size: int) -> Path:
    path = _vgf(work)
    data = path.read_bytes()
    path.write_bytes(data[:size])
    return path


def _vgf_with_huge_section(work: Path) -> Path:
    """A real VGF header whose constants section claims nearly all of a sparse 3 GB file."""
    path = _vgf(work)
    header = bytearray(path.read_bytes()[:128])
    with open(path, "wb") as f:
        f.truncate(3 << 30)
        f.write(bytes(header))
    return path


_MOUNTS: list[Path] = []


def _tiny_fs(work: Path, how: str = "") -> Path:
    folder = work / f"tiny{how}"
    folder.mkdir()
    options = "size=64k" + (",ro" if how == "ro" else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], check=True)
    _MOUNTS.append(folder)
    return folder


# --- running ----------------------------------------------------------------------------------


def _snapshot(work: Path) -> dict[str, tuple[int, str]]:
    files: dict[str, tuple[int, str]] = {}
    for path in work.rglob("*"):
        try:
            info = path.lstat()
        except OSError:
            continue
        digest = ""
        if stat.S_ISREG(info.st_mode) and info.st_size < (64 << 20) and info.st_blocks:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        files[str(path.relative_to(work))] = (info.st_mode, digest or str(info.st_size))
    return files


def run_case(case: Case, base: Path) -> Outcome:
    work = Path(tempfile.mkdtemp(prefix="case-", dir=base))
    try:
        try:
            args = case.setup(work)
        except subprocess.CalledProcessError as e:
            return Outcome(case, False, [f"setup failed: {e}"])
        before = _snapshot(work)
        env = {
            **os.environ,
            "COLUMNS": "120",
            "NO_COLOR": "1",
            "VGFC_CACHE_DIR": str(base / "cache"),
        }
        start = time.monotonic()
        if case.redirect is not None:
            line = " ".join(shlex.quote(a) for a in [VGFC, *args]) + " " + case.redirect
            proc = subprocess.Popen(["bash", "-c", line], stderr=subprocess.PIPE, env=env, cwd=work)
        else:
            proc = subprocess.Popen(
                [VGFC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=work
            )
        children: list[int] = []
        if case.signal is not None:
            children = _signal_when_writing(proc, work, case.signal)
        try:
            out, err = proc.communicate(timeout=MAX_SECONDS * 3)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            return Outcome(case, False, ["hung"], None, time.monotonic() - start)
        seconds = time.monotonic() - start
        text = (out or b"").decode(errors="replace") + (err or b"").decode(errors="replace")
        problems = []
        # Exit code 1; a command a signal interrupted cleans up, then dies by that signal.
        expected = 1 if case.signal is None else -case.signal
        if proc.returncode != expected:
            problems.append(f"exit {proc.returncode}")
        if "Traceback" in text or "internal error" in text:
            problems.append("traceback or internal error")
        if text.count("\n") > MAX_LINES:
            problems.append(f"{text.count(chr(10))} lines")
        if len(text.encode()) > MAX_BYTES:
            problems.append(f"{len(text.encode())} bytes")
        if seconds > MAX_SECONDS:
            problems.append(f"{seconds:.1f} s")
        if SECRET in text or "root:x:" in text:
            problems.append("leaked a file's content")
        for needle in case.needles:
            if needle and needle not in text:
                problems.append(f"no {needle!r} in the message")
        orphans = _orphans(children)
        if orphans:
            problems.append(f"orphaned workers {orphans}")
        problems += _file_problems(before, _snapshot(work), case)
        return Outcome(case, not problems, problems, proc.returncode, seconds, text)
    finally:
        for folder in list(_MOUNTS):
            subprocess.run(["umount", "-l", str(folder)], check=False)
            _MOUNTS.remove(folder)
        shutil.rmtree(work, ignore_errors=True)


def _signal_when_writing(proc: subprocess.Popen[bytes], work: Path, sig: int) -> list[int]:
    """Send ``sig`` once a temporary output file exists: the folders under ``work`` are watched
    with inotify, so the wait ends on the file's creation, not after a guessed time (the deadline
    only bounds a command that never writes one). Returns the process's children at that
    moment."""
    with _Created(work) as created:
        deadline = time.monotonic() + MAX_SECONDS
        while proc.poll() is None and not any(p.name.endswith(".tmp") for p in work.rglob(".*")):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            created.wait(left)
    children = _children(proc.pid)
    if proc.poll() is None:
        proc.send_signal(sig)
    return children


class _Created:
    """An inotify watch for files created in a folder and its subfolders (Linux): ``wait``
    returns as soon as one is, or after ``timeout`` seconds. The standard library has no inotify
    binding; this is the three libc calls it needs, through ctypes."""

    IN_CREATE = 0x100
    IN_NONBLOCK = os.O_NONBLOCK
    IN_CLOEXEC = os.O_CLOEXEC

    def __init__(self, folder: Path) -> None:
        import ctypes

        self.libc = ctypes.CDLL(None, use_errno=True)
        self.folder = folder
        self.fd = self.libc.inotify_init1(self.IN_NONBLOCK | self.IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self._watch()

    def _watch(self) -> None:
        """Watch the folder and every subfolder (again: a folder the command made since is new;
        a second watch on a known one is the same watch)."""
        for path in (self.folder, *(p for p in self.folder.rglob("*") if p.is_dir())):
            self.libc.inotify_add_watch(self.fd, os.fsencode(path), self.IN_CREATE)

    def wait(self, timeout: float) -> None:
        import select

        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            with contextlib.suppress(BlockingIOError):
                os.read(self.fd, 65536)
            self._watch()

    def __enter__(self) -> _Created:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def _children(pid: int) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in text:
            found.append(int(status.parent.name))
    return found


def _orphans(pids: list[int]) -> list[int]:
    """The processes of ``pids`` still alive after a grace period (zombies count as gone): each
    is watched through a pidfd, which becomes readable when the process ends, so the wait ends
    on the exits themselves."""
    import select

    fds = {}
    for pid in pids:
        try:
            fds[os.pidfd_open(pid)] = pid
        except OSError:  # gone already
            continue
    try:
        deadline = time.monotonic() + 10
        waiting = set(fds)
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select(list(waiting), [], [], left)
            waiting -= set(ready)
        return [fds[fd] for fd in waiting if _alive(fds[fd])]
    finally:
        for fd in fds:
            os.close(fd)


def _alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in text


def _file_problems(
    before: dict[str, tuple[int, str]], after: dict[str, tuple[int, str]], case: Case
) -> list[str]:
    problems = []
    for name, state in before.items():
        if name not in after:
            problems.append(f"{name} removed")
        elif after[name] != state:
            problems.append(f"{name} changed")
    for name in after:
        if name not in before and not name.startswith("cache"):
            if name.endswith(".tmp"):
                problems.append(f"left {name}")
            elif case.signal is None:
                problems.append(f"wrote {name}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="run the cases whose surface or name holds this text")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true", help="show each case's output")
    ns = parser.parse_args()
    selected = [c for c in cases() if not ns.only or ns.only in c.surface or ns.only in c.name]
    if ns.list:
        for c in selected:
            print(f"{c.surface:20} {c.name}")
        return 0
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="vgfc-hostile-"))
    by_surface: dict[str, list[Outcome]] = {}
    try:
        for case in selected:
            if case.root and not is_root:
                print(f"skip (needs root)  {case.surface}: {case.name}")
                continue
            outcome = run_case(case, base)
            by_surface.setdefault(case.surface, []).append(outcome)
            mark = "ok  " if outcome.ok else "FAIL"
            print(
                f"{mark} {case.surface:18} {case.name:45} exit {outcome.code} "
                f"{outcome.seconds:5.1f} s {'; '.join(outcome.problems)}",
                flush=True,
            )
            if ns.verbose or not outcome.ok:
                print(textwrap.indent(outcome.text.rstrip()[:1500], "      "))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print()
    print(f"{'surface':20} {'cases':>5} {'ok':>5} {'failed':>6}")
    failed = 0
    for surface, outcomes in by_surface.items():
        bad = sum(not o.ok for o in outcomes)
        failed += bad
        print(f"{surface:20} {len(outcomes):5} {len(outcomes) - bad:5} {bad:6}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
