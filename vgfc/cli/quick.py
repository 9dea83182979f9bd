"""The quick path of the ``vgfc`` command: ``vgfc compile MODEL`` and ``vgfc --version`` without
click.

Why by hand: on a small network a compile is mostly start-up, and importing click (with the
``inspect``, ``typing``, ``uuid``, ``datetime`` and ``gettext`` modules it loads) took 47 ms of
the 200 a compile of a 20-op network took on a 2-core machine, where the reference converter
takes 70 ms in all. So the command lines that a build or a CI job runs (one model, ``-o``,
``-q``, ``--report``, the compile and shader options) are parsed here, and the parsed values go
to the same function the click command calls (:func:`vgfc.cli.compiling.compile_single`).

Everything else goes to click: help, batch mode, every other command, and any command line this
parser is not sure of (an unknown or repeated option, a value that starts with ``-``, short
flags run together, a path click would refuse, a usage error found before work). A short option
with its value attached (``-Wno-short-dispatch``, ``-Iinclude``) is read as click reads it.
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

    from vgfc.options import Option

__all__ = ["parse_compile", "parse_model_converter", "run_quick", "run_quick_converter"]


def _table(
    command: str,
) -> tuple[dict[str, tuple[str, bool]], dict[str, str], dict[str, Any]]:
    """From the option table, for ``command``: the flags (as written -> the parameter and the
    value it sets), the options that take a value (as written -> the parameter), and every
    parameter's default as click fills it when no option is given."""
    from vgfc.options import options_of

    flags: dict[str, tuple[str, bool]] = {}
    values: dict[str, str] = {}
    defaults: dict[str, Any] = {}
    for option in options_of(command):
        for flag in option.flags:
            if option.batch:
                continue  # click's
            if option.kind == "flag":
                flags[flag] = (option.param, True)
            elif option.kind != "report":  # --report's FILE is optional: parsed on its own
                values[flag] = option.param
        if option.kind == "flag":
            defaults[option.param] = False
        else:
            defaults[option.param] = () if option.multiple else option.default
    return flags, values, defaults


def _file(value: str, *, model: bool) -> bool:
    """A path click takes as given: any model (the command reads it and says what is wrong with
    it, :class:`vgfc.cli.options.InputPath`); an output missing, or there and no directory."""
    if not value:
        return False
    if model:
        return True
    try:
        st = os.stat(value)
    except (OSError, ValueError):
        return True
    return not stat.S_ISDIR(st.st_mode)


def _convert(option: Option, value: str) -> Any:
    """``value`` of ``option`` as click's type makes it, or ``None`` where this parser is not
    sure click would take it."""
    kind = option.kind
    if kind == "file":
        return Path(value) if _file(value, model=False) else None
    if kind == "report":
        return value if _file(value, model=False) else None
    if kind == "choice":
        return value if value in option.choices else None
    if kind == "dirs":
        ok = bool(value) and os.path.isdir(value) and os.access(value, os.R_OK)
        return Path(value) if ok else None
    if kind == "seconds":
        try:
            seconds = float(value)
        except ValueError:
            return None
        return None if math.isnan(seconds) or seconds < 0 else seconds
    if kind == "count":
        if not (value.isdigit() and value.isascii()) or len(value) > 18:
            return None  # click's int() and its message (a long one is past any bound)
        top = option.maximum
        return int(value) if top is None or int(value) <= top else None
    if kind in ("names", "defines", "text", "warnings", "opcodes"):
        return value
    return None  # -d: batch mode, which click parses


def parse_compile(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``vgfc compile ARGS`` as click's parse gives them, or ``None`` where
    click must parse them (see the module docstring)."""
    parsed = _parse("compile", args, {}, {})
    if parsed is None or len(parsed[1]) != 1:
        return None
    params, models = parsed
    params["models"] = tuple(models)
    return params


def parse_model_converter(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``vgfc-model-converter ARGS`` as click's parse gives them, or ``None``
    where click must parse them: its own ``-i``, ``-o`` and ``--require-static-shape``
    (:data:`vgfc.cli.converting.OWN_VALUES`, ``OWN_FLAGS``), then the option table's."""
    from vgfc.cli.converting import OWN_DEFAULTS, OWN_FLAGS, OWN_VALUES

    own: dict[str, tuple[str, Callable[[str], Any]]] = {
        flag: (param, type(OWN_DEFAULTS[param])) for flag, param in OWN_VALUES
    }
    parsed = _parse("model-converter", args, own, dict(OWN_FLAGS))
    if parsed is None or parsed[1]:
        return None  # a word that is no option's value: click's usage error
    return {**OWN_DEFAULTS, **parsed[0]}


def _parse(
    command: str,
    args: list[str],
    own: dict[str, tuple[str, Callable[[str], Any]]],
    own_flags: dict[str, str],
) -> tuple[dict[str, Any], list[Path]] | None:
    """``command``'s parameters from ``args`` and the words that are no option's (paths), or
    ``None`` where click must parse them. ``own`` and ``own_flags`` are the command's options
    that are not in the option table: as written -> (the parameter, its type) or the
    parameter a flag sets."""
    from vgfc.options import OPTIONS, REPORT_NEXT_TO_OUTPUT

    flags, values, params = _table(command)
    flags.update({flag: (param, True) for flag, param in own_flags.items()})
    values.update({flag: param for flag, (param, _) in own.items()})
    typed = {param: kind for param, kind in own.values()}
    of = {o.param: o for o in OPTIONS if command in o.commands}
    given: set[str] = set()
    words: list[Path] = []
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token == "-":  # standard input, as click's InputPath(dash=True) takes it
            words.append(Path(token))
            continue
        if not token.startswith("-"):
            if not _file(token, model=True):
                return None
            words.append(Path(token))
            continue
        option, equals, attached = token.partition("=")
        if not token.startswith("--") and len(token) > 2 and token[:2] in values:
            # A short option with its value attached, as click reads it: -Wno-x is -W no-x.
            option, equals, attached = token[:2], "=", token[2:]
        value: Any
        if option in flags and not equals:
            name, value = flags[option]
        elif option == "--report" and "report" in of and not equals:
            # The FILE is optional: the next word is taken unless it looks like an option.
            if i < len(args) and (args[i] == "-" or not args[i].startswith("-")):
                value = _convert(of["report"], args[i])
                i += 1
            else:
                value = REPORT_NEXT_TO_OUTPUT
            name = "report"
        elif option in values and (equals == "" or option.startswith("--") or token[1] != "-"):
            name = values[option]
            if equals:
                raw = attached
            elif i < len(args):
                raw = args[i]
                i += 1
            else:
                return None
            if raw.startswith("-") and raw != "-":  # "-" is a value to click, too
                return None
            if name in typed:
                value = typed[name](raw) if raw else None
            else:
                value = _convert(of[name], raw)
        else:
            return None
        if value is None:
            return None
        if name in of and of[name].multiple:
            params[name] = (*params[name], value)
        elif name in given:
            return None
        else:
            given.add(name)
            params[name] = value
    return params, words


def _print_version(verbose: bool) -> None:
    from vgfc.cli.versions import verbose_lines, version_line

    lines = verbose_lines() if verbose else [version_line()]
    sys.stdout.write("".join(f"{line}\n" for line in lines))


def _print_converter_version() -> None:
    from vgfc.cli.converting import version_text

    sys.stdout.write(version_text() + "\n")


def run_quick(argv: list[str]) -> bool:
    """Run ``vgfc ARGV`` and exit when this module can parse it; return when click must, with
    whether the process is prepared already (:func:`vgfc.cli.process.prepare_process`)."""
    from vgfc.cli.process import finish_process, prepare_process

    if argv == ["--version"] or sorted(argv) == ["--verbose", "--version"]:
        prepare_process()
        finish_process(_guarded(lambda: _print_version("--verbose" in argv)))
    if not argv or argv[0] != "compile":
        return False
    params = parse_compile(argv[1:])
    if params is None or params["deps_only"]:
        return False  # -M: click's (vgfc.cli.rules)

    from vgfc.deps import asked
    from vgfc.jobs import plan_jobs
    from vgfc.options import UsageError

    try:
        wanted = asked(
            params["deps"], params["depfile"], params["deps_target"], params["deps_phony"]
        )
        (job,) = plan_jobs(params["models"], params["output"], None, params["report"], wanted)
    except UsageError:
        return False  # click says it, with its usage line
    prepare_process()
    from vgfc.cli.compiling import compile_single

    options: Any = None

    def work() -> None:
        nonlocal options
        from vgfc.cli.console import set_colour

        set_colour(params["color"])
        options = _options(params)
        if options is not None:
            if params["diagnostics_format"] == "sarif":
                from vgfc.cli.console import start_sarif

                start_sarif()
            compile_single(job, options, quiet=params["quiet"])

    code = _guarded(work)
    if options is None and code == 0:
        return True  # a value make_options refuses: a usage error, which click says
    finish_process(code)


def _guarded(work: Callable[[], None]) -> object:
    """Run ``work`` as a click command runs (:func:`vgfc.cli.errors.call_guarded` inside
    :func:`vgfc.cli.process.run_command`); its exit code."""
    from vgfc.cli.console import diagnostics_console, print_diagnostic
    from vgfc.cli.errors import EXIT_ERROR, call_guarded, report_interrupt
    from vgfc.diagnostics import VgfcError
    from vgfc.files.interrupts import Interrupted

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


def _options(params: dict[str, Any], command: str = "compile") -> Any:
    """The :class:`vgfc.compiler.Options` of the parsed values, or ``None`` when
    :func:`vgfc.compilation.make_options` refuses a value."""
    from vgfc.compilation import make_options
    from vgfc.options import UsageError, compile_values

    try:
        return make_options(**compile_values(command, params))
    except UsageError:
        return None


def run_quick_converter(argv: list[str], *, console_script: bool) -> bool:
    """Run ``vgfc-model-converter ARGV`` and exit when this module can parse it; return when
    click must, with whether the process is prepared already. ``console_script``: the process
    is the command (not a program calling :func:`vgfc.cli.model_converter.main`), which then
    ends by the signal that interrupted it."""
    from vgfc.cli.process import die_if_interrupted, finish_process, prepare_process

    if argv in (["--version"], ["-v"]):  # ExecuTorch's check of the converter it is given
        prepare_process()
        finish_process(_guarded(_print_converter_version))
    params = parse_model_converter(argv)
    if params is None or (params["tosa_flatbuffer_schema"] and not params["tosa_flatbuffer"]):
        return False  # the latter a usage error, which click says
    prepare_process()
    from vgfc.cli.converting import convert

    options: Any = None

    def work() -> None:
        nonlocal options
        options = _options(params, "model-converter")
        if options is not None:
            convert(
                params["input_path"],
                params["output"],
                options,
                tosa_flatbuffer=params["tosa_flatbuffer"],
                tosa_flatbuffer_schema=params["tosa_flatbuffer_schema"],
                analysis=params["analysis"],
            )

    code = _guarded(work)
    if options is None and code == 0:
        return True  # a value make_options refuses: a usage error, which click says
    if console_script:
        die_if_interrupted()
    finish_process(code)
