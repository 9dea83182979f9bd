"""docs/guide.md runs, top to bottom, in a fresh folder: the guide cannot rot.

The guide's fenced blocks run in order. ```python blocks share one namespace; in ```console
blocks each line that starts with ``$ `` is a shell command, run with this environment's ``vgfc``
first on PATH, and the lines after it up to the next command are output it must print. A shown
output line must appear in what the command printed (stdout and stderr, with runs of spaces
squeezed); ``...`` in a shown line stands for any text, and a line of ``...`` alone shows that
lines were left out. A command must exit 0, unless it ends with ``# exit: N``. Blocks of other
languages (``json``, ``text``) are illustrations and do not run.

The guide's numbers are checked by the guide itself: a python block asserts that vgfc's output
equals numpy's within a tolerance.

``vgfc run`` needs lavapipe and Arm's ML emulation layers (``make test`` installs them): without
them the test skips, except in CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from paths import ROOT

GUIDE = ROOT / "docs" / "guide.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
EXIT = re.compile(r"#\s*exit:\s*(\d+)\s*$")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@dataclass(frozen=True)
class Block:
    """One fenced block of the guide."""

    language: str
    text: str
    line: int
    """Line of the guide where the block's first line of code is."""


@dataclass(frozen=True)
class Command:
    """One ``$ `` line of a console block and the output shown under it."""

    line: int
    command: str
    exit_code: int
    shown: tuple[str, ...]


def blocks(markdown: str) -> list[Block]:
    """The fenced blocks of ``markdown`` in order."""
    return [
        Block(m.group(1), m.group(2), markdown.count("\n", 0, m.start(2)) + 1)
        for m in FENCE.finditer(markdown)
    ]


def commands(block: Block) -> list[Command]:
    """The commands of a console block, each with the output lines shown under it."""
    found: list[Command] = []
    for offset, raw in enumerate(block.text.splitlines()):
        if raw.startswith("$ "):
            command = raw[2:].strip()
            expected = EXIT.search(command)
            code = int(expected.group(1)) if expected else 0
            found.append(Command(block.line + offset, command, code, ()))
        elif raw.strip() and found:
            last = found[-1]
            found[-1] = Command(last.line, last.command, last.exit_code, (*last.shown, raw))
    return found


def squeeze(text: str) -> str:
    return " ".join(text.split())


def shown_line_printed(shown: str, printed: str) -> bool:
    """Whether the shown line appears in ``printed``, ``...`` standing for any text."""
    pattern = ".*".join(re.escape(part.strip()) for part in squeeze(shown).split("..."))
    return any(re.search(pattern, squeeze(line)) for line in printed.splitlines())


def run_console(block: Block, env: dict[str, str], cwd: Path) -> None:
    block_commands = commands(block)
    assert block_commands, f"guide.md:{block.line}: a console block without a '$ ' command"
    for c in block_commands:
        done = subprocess.run(
            ["bash", "-c", c.command],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=600,
            check=False,
        )
        where = f"guide.md:{c.line}: $ {c.command}"
        assert done.returncode == c.exit_code, (
            f"{where}\nexit code {done.returncode}, expected {c.exit_code}\n{done.stdout}"
        )
        for shown in c.shown:
            if squeeze(shown) == "...":
                continue
            assert shown_line_printed(shown, done.stdout), (
                f"{where}\nthe guide shows a line the command did not print:\n  {shown}\n"
                f"it printed:\n{done.stdout}"
            )


def run_python(block: Block, namespace: dict[str, object]) -> None:
    # Blank lines keep the guide's line numbers in tracebacks.
    code = compile("\n" * (block.line - 1) + block.text, str(GUIDE), "exec")
    exec(code, namespace)


@pytest.fixture
def emulation_stack() -> None:
    """Skip (fail in CI) when ``vgfc run`` cannot run here."""
    from vgfc.diagnostics import UnsupportedError
    from vgfc.runner import find_stack

    try:
        find_stack()
    except UnsupportedError as e:
        if IN_CI:
            pytest.fail(f"{e} (CI is set: the stack must be installed)")
        pytest.skip(str(e))


def test_the_guide_holds_what_this_test_relies_on() -> None:
    """An empty or mangled guide must not pass for a working one."""
    found = blocks(GUIDE.read_text(encoding="utf-8"))
    python = [b for b in found if b.language == "python"]
    console = [c.command for b in found if b.language == "console" for c in commands(b)]
    assert any(re.search(r"^assert .*allclose", b.text, re.MULTILINE) for b in python)
    for step in ("vgfc check", "vgfc compile", "vgfc inspect", "vgfc run"):
        assert any(c.startswith(step) for c in console), step
    assert any(c.exit_code != 0 for b in found if b.language == "console" for c in commands(b))


def test_a_shown_line_must_be_printed() -> None:
    printed = "softsign.vgf: 4712 bytes\nerror:  op #2   CUSTOM 'softsign'\n"
    assert shown_line_printed("softsign.vgf: ... bytes", printed)
    assert shown_line_printed("error: op #2 CUSTOM 'softsign'", printed)
    assert not shown_line_printed("softsign.vgf: ... kilobytes", printed)
    assert not shown_line_printed("op #3", printed)


def test_guide_runs_top_to_bottom(
    emulation_stack: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "COLUMNS": "100",
        "NO_COLOR": "1",
    }
    namespace: dict[str, object] = {"__name__": "guide"}
    ran = 0
    for block in blocks(GUIDE.read_text(encoding="utf-8")):
        if block.language == "python":
            run_python(block, namespace)
        elif block.language == "console":
            run_console(block, env, tmp_path)
        else:
            continue
        ran += 1
    assert ran > 0
