"""The quick path of the ``vgfc`` command: ``vgfc compile MODEL`` and ``vgfc --version`` without
click.

Why by hand: on a small network a compile is mostly start-up, and importing click (with the
``inspect``, ``typing``, ``uuid``, ``datetime`` and ``gettext`` modules it loads) took 47 ms of
the 200 a compile of a 20-op network took on a 2-core machine, where the reference converter
takes 70 ms in all. So the command lines that a build or a CI job runs (one model, ``-o``,
``-q``, ``--report``, the compile and shader options) are parsed here, and the parsed values go
to the same function the click command calls (:func:`vgfc.cli.compiling.compile_single`).

Everything else goes to click: help, batch mode, every other command, and any command line this
parser is not sure of (an unknown or repeated option, a value that starts with ``-``, a short
option with its value attached, a path click would refuse, a usage error found before work).
Leaving a command line to click is always right, only slower, so this parser takes what it
knows and nothing else; ``tests/property/test_quick_path.py`` holds it to click's parse of the
same command lines (``make_context``), value for value, defaults included.
"""

from __future__ import annotations

import math
import os
import stat
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["parse_compile", "run_quick"]

_FLAGS = {
    "-q": "quiet",
    "--quiet": "quiet",
    "--keep-source": "keep_source",
    "--no-auto-convert": "no_auto_convert",
    "--no-cache": "no_cache",
}
"""Flags: the option as written, the parameter it sets to True."""

_VALUES = {
    "-o": "output",
    "--output": "output",
    "--report": "report",
    "--target": "target",
    "--kernels": "kernels",
    "-I": "include_dirs",
    "--include-dir": "include_dirs",
    "-D": "defines",
    "--define": "defines",
    "--target-env": "target_env",
    "--shader-timeout": "shader_timeout",
}
"""Options that take a value: the option as written, its parameter."""

_MULTIPLE = ("kernels", "include_dirs", "defines")
"""Parameters an option may give more than once (a tuple of the values, in order)."""


def _defaults() -> dict[str, Any]:
    """The compile command's parameters as click fills them when no option is given."""
    return {
        "models": (),
        "output": None,
        "output_dir": None,
        "report": None,
        "keep_source": False,
        "jobs": 1,
        "as_json": False,
        "quiet": False,
        "target": "scenario-runner",
        "kernels": (),
        "no_auto_convert": False,
        "include_dirs": (),
        "defines": (),
        "target_env": "vulkan1.3",
        "shader_timeout": 5.0,
        "no_cache": False,
    }


def _file(value: str, *, model: bool) -> bool:
    """A path click's ``Path(dir_okay=False)`` takes as given: missing (a model must at least be
    a link), or there, no directory, and readable."""
    if not value:
        return False
    try:
        st = os.stat(value)
    except (OSError, ValueError):
        return os.path.lexists(value) if model else True
    return not stat.S_ISDIR(st.st_mode) and os.access(value, os.R_OK)


def _convert(name: str, value: str) -> Any:
    """``value`` of parameter ``name`` as click's type makes it, or ``None`` where this parser
    is not sure click would take it."""
    from vgfc.compiler import TARGET_ENVS, TARGET_NAMES

    if name == "output":
        return Path(value) if _file(value, model=False) else None
    if name == "report":
        return value if _file(value, model=False) else None
    if name == "target":
        return value if value in TARGET_NAMES else None
    if name == "target_env":
        return value if value in TARGET_ENVS else None
    if name == "include_dirs":
        ok = bool(value) and os.path.isdir(value) and os.access(value, os.R_OK)
        return Path(value) if ok else None
    if name == "shader_timeout":
        try:
            seconds = float(value)
        except ValueError:
            return None
        return None if math.isnan(seconds) or seconds < 0 else seconds
    return value  # kernels, defines: text


def parse_compile(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``vgfc compile ARGS`` as click's parse gives them, or ``None`` where
    click must parse them (see the module docstring)."""
    from vgfc.cli.compiling import REPORT_NEXT_TO_OUTPUT

    params = _defaults()
    given: set[str] = set()
    models: list[Path] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if not token.startswith("-"):
            if not _file(token, model=True):
                return None
            models.append(Path(token))
            continue
        option, equals, attached = token.partition("=")
        value: Any
        if option in _FLAGS and not equals:
            name, value = _FLAGS[option], True
        elif option == "--report" and not equals:
            # The FILE is optional: the next word is taken unless it looks like an option.
            if i < len(args) and not args[i].startswith("-"):
                value = _convert("report", args[i])
                i += 1
            else:
                value = REPORT_NEXT_TO_OUTPUT
            name = "report"
        elif option in _VALUES and (equals == "" or option.startswith("--")):
            name = _VALUES[option]
            if equals:
                raw = attached
            elif i < len(args):
                raw = args[i]
                i += 1
            else:
                return None
            if raw.startswith("-"):
                return None
            value = _convert(name, raw)
        else:
            return None
        if value is None:
            return None
        if name in _MULTIPLE:
            params[name] = (*params[name], value)
        elif name in given:
            return None
        else:
            given.add(name)
            params[name] = value
    if len(models) != 1:
        return None
    params["models"] = tuple(models)
    return params


def _print_version() -> None:
    import vgfc

    # As click.version_option prints it.
    sys.stdout.write(f"vgfc, version {vgfc.__version__}\n")


def run_quick(argv: list[str]) -> bool:
    """Run ``vgfc ARGV`` and exit when this module can parse it; return when click must, with
    whether the process is prepared already (:func:`vgfc.cli.support.prepare_process`)."""
    from vgfc.cli.support import finish_process, prepare_process

    if argv == ["--version"]:
        prepare_process()
        finish_process(_guarded(_print_version))
    if not argv or argv[0] != "compile":
        return False
    params = parse_compile(argv[1:])
    if params is None:
        return False

    from vgfc.cli.compiling import UsageError, plan_jobs

    try:
        (job,) = plan_jobs(params["models"], params["output"], None, params["report"])
    except UsageError:
        return False  # click says it, with its usage line
    prepare_process()
    from vgfc.cli.compiling import compile_single

    options: Any = None

    def work() -> None:
        nonlocal options
        options = _options(params)
        if options is not None:
            compile_single(job, options, quiet=params["quiet"])

    code = _guarded(work)
    if options is None and code == 0:
        return True  # a value make_options refuses: a usage error, which click says
    finish_process(code)


def _guarded(work: Callable[[], None]) -> object:
    """Run ``work`` as a click command runs (:func:`vgfc.cli.support.call_guarded` inside
    :func:`vgfc.cli.support.run_command`); its exit code."""
    from vgfc.cli.support import (
        EXIT_ERROR,
        call_guarded,
        diagnostics_console,
        print_diagnostic,
        report_interrupt,
    )
    from vgfc.diagnostics import VgfcError
    from vgfc.files import Interrupted

    try:
        call_guarded(work, (), {}, debug=False)
    except SystemExit as e:
        return e.code
    except Interrupted as e:  # a signal outside the work
        report_interrupt(e)
        return EXIT_ERROR
    except VgfcError as e:  # writing outside the work: the version to a full disk
        print_diagnostic(diagnostics_console(), e.diagnostic, "error")
        return EXIT_ERROR
    return 0


def _options(params: dict[str, Any]) -> Any:
    """The :class:`vgfc.compiler.Options` of the parsed values (kernel libraries read), or
    ``None`` when :func:`vgfc.compiler.make_options` refuses a value."""
    from vgfc.compiler import make_options
    from vgfc.record import replace

    try:
        options = make_options(
            kernels=params["kernels"],
            target=params["target"],
            include_dirs=params["include_dirs"],
            defines=params["defines"],
            target_env=params["target_env"],
            shader_timeout=params["shader_timeout"],
            cache=not params["no_cache"],
            auto_convert=not params["no_auto_convert"],
        )
    except ValueError:
        return None
    return replace(options, keep_source=True) if params["keep_source"] else options
