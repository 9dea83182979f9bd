"""The click side of the options commands share.

:func:`declare` makes a command's click options from the one option table,
:data:`vgfc.options.OPTIONS`: everything that changes a compile (``--target``, ``--kernels``,
``--no-auto-convert``, the shader options) is handed to the command as one
:class:`vgfc.compiler.Options` named ``options``, checked as :func:`vgfc.compile` checks it.
The click parameter types the table's kinds map to are here, as are the options of commands
that do not compile: :func:`run_options` is how ``run`` and ``verify`` execute a VGF.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vgfc.cli.errors import handle_errors

if TYPE_CHECKING:
    from vgfc.options import Option

__all__ = [
    "Count",
    "FiniteFloat",
    "InputPath",
    "Seconds",
    "declare",
    "inputs_option",
    "max_errors_option",
    "model_argument",
    "run_options",
]

F = TypeVar("F", bound=Callable[..., Any])


class InputPath(click.Path):
    """A file a command reads, taken as given: whatever is wrong with it (missing, unreadable, a
    folder, a FIFO, a symlink loop) is said by :func:`vgfc.files.inputs.open_input` when the
    command reads it, in gcc's form and with exit code 1 (``nosuch.tosa: error: cannot read the
    model: no such file``), as for every other input, never as click's usage error. An empty
    path names no file: that is a usage error (``Path("")`` would be the current folder)."""

    def __init__(self, *, dash: bool = False) -> None:
        super().__init__(exists=False, readable=False, path_type=Path, allow_dash=dash)
        self.dash = dash
        """``-`` is standard input (:data:`vgfc.files.inputs.STDIN`), read by the command."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Path):
            return value
        if value == "":  # Path("") is the current folder, which no one meant
            self.fail("an empty path names no file", param, ctx)
        return Path(value)


model_argument = click.argument("model", type=InputPath(dash=True))
"""The MODEL.tosa argument of the commands that read a model (``-``: standard input)."""


def max_errors_option(grouping: str) -> Callable[[F], F]:
    """``--max-errors N`` of ``check`` and ``kernels``: at most N errors listed, those that
    fail the same way counting once (``grouping`` says how, in the help); 0 for all."""
    from vgfc.limits import LIMITS

    return click.option(
        "--max-errors",
        type=click.IntRange(min=0),
        default=LIMITS.check_errors_shown,
        show_default=True,
        metavar="N",
        help=f"List at most N errors ({grouping}), then say how many more there are; 0 lists "
        "every error on its own line. --json keeps them all.",
    )


def inputs_option(metavar: str, help: str) -> Callable[[F], F]:
    """``-i/--input`` of ``run`` and ``verify`` (repeatable), handed over as ``inputs``."""
    return click.option("-i", "--input", "inputs", multiple=True, metavar=metavar, help=help)


class FiniteFloat(click.FloatRange):
    """A float in a range that is also a number: ``nan`` (which compares false with everything,
    so it slips past the bounds) and ``inf`` are refused."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class Count(click.IntRange):
    """A whole number of at least 0 (and at most ``max``); a value too long to be one is named
    cut short, not echoed whole."""

    def __init__(self, max: int | None = None) -> None:
        super().__init__(min=0, max=max)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and len(value) > 40:
            from vgfc.limits import quote

            self.fail(f"{quote(value, 40)!s} is not a whole number in {self._describe_range()}")
        return super().convert(value, param, ctx)


class Seconds(click.FloatRange):
    """Seconds of a limit: at least 0, ``inf`` for none; ``nan`` (which slips past the bounds)
    is refused."""

    def __init__(self) -> None:
        super().__init__(min=0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number


def _click_option(option: Option) -> Callable[[F], F]:
    """The click option of a table entry: its type from its kind."""
    from vgfc.options import REPORT_NEXT_TO_OUTPUT

    kwargs: dict[str, Any] = {"help": option.help, "show_default": option.show_default}
    if option.metavar is not None:
        kwargs["metavar"] = option.metavar
    kind = option.kind
    if kind == "flag":
        kwargs["is_flag"] = True
    elif kind == "report":
        kwargs.update(is_flag=False, flag_value=REPORT_NEXT_TO_OUTPUT, default=None)
        kwargs["type"] = click.Path(dir_okay=False, readable=False)
    elif option.multiple:
        kwargs["multiple"] = True
        if kind == "dirs":
            kwargs["type"] = click.Path(exists=True, file_okay=False, path_type=Path)
    else:
        types: dict[str, Callable[[], Any]] = {
            "choice": lambda: click.Choice(option.choices),
            "seconds": Seconds,
            "count": lambda: Count(option.maximum),
            # Outputs: written, never read (a folder that cannot be read or searched is an
            # error naming it when the command writes there, exit 1).
            "file": lambda: click.Path(dir_okay=False, readable=False, path_type=Path),
            "folder": lambda: click.Path(file_okay=False, readable=False, path_type=Path),
            "text": lambda: click.STRING,
        }
        kwargs["type"] = types[kind]()
        if option.default is not None:
            kwargs["default"] = option.default
    return click.option(*option.flags, option.param, **kwargs)


def declare(command: str) -> Callable[[F], F]:
    """Every option of :data:`vgfc.options.OPTIONS` that ``command`` takes, in the table's
    order: the compile options handed to the command as one :class:`vgfc.compiler.Options`
    named ``options`` (checked by :func:`vgfc.compilation.make_options`, whose refusals are usage
    errors), the command's own as parameters of their names."""
    from vgfc.options import options_of

    own = options_of(command)
    compiling = [o.param for o in own if o.into is not None]

    def decorate(func: F) -> F:
        @wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            from vgfc.compilation import make_options
            from vgfc.options import UsageError, compile_values

            params = {name: kwargs.pop(name) for name in compiling}
            try:
                options = make_options(**compile_values(command, params))
            except UsageError as e:
                raise click.UsageError(str(e)) from None
            if "color" in kwargs:
                from vgfc.cli.console import set_colour

                set_colour(kwargs.pop("color"))
            if kwargs.pop("diagnostics_format", None) == "sarif":
                from vgfc.cli.console import start_sarif

                start_sarif()
            return func(*args, options=options, **kwargs)

        wrapped: Any = handle_errors(run)
        for option in reversed(own):
            wrapped = _click_option(option)(wrapped)
        return wrapped  # type: ignore[no-any-return]

    return decorate


def _declare(func: Callable[..., Any], options: tuple[Callable[[F], F], ...]) -> Any:
    for option in reversed(options):
        func = option(func)
    return func


def run_options(func: F) -> F:
    """``--validate`` and ``--device``: how ``run`` and ``verify`` execute a VGF."""
    return _declare(  # type: ignore[no-any-return]
        func,
        (
            click.option(
                "--validate",
                is_flag=True,
                help="Run the Khronos validation layer below the emulation layers; any message "
                "it reports fails the run (needs apt-get install vulkan-validationlayers).",
            ),
            click.option(
                "--device",
                type=click.Choice(["cpu", "gpu", "auto"]),
                default="cpu",
                show_default=True,
                help="cpu: lavapipe. gpu: the machine's Vulkan GPU driver (under the same "
                "emulation layers). auto: the GPU when the machine has one.",
            ),
        ),
    )
