"""The options commands share, declared once.

:func:`compile_options` gives a command everything that changes a compile (``--target``,
``--kernels``, ``--no-auto-convert`` and the shader options) and hands it one
:class:`vgfc.compiler.Options` as its ``options`` parameter; ``check``, ``compile``, ``partition``,
``verify`` and ``vgfc-model-converter`` take it. :func:`shader_options` is the shader part alone
(``-I``, ``-D``, ``--target-env``, ``--shader-timeout``, ``--no-cache``), handed over as a
:class:`vgfc.shader.options.CompileOptions` named ``shader``, for ``vgfc kernels``.
:func:`run_options` is how ``run`` and ``verify`` execute a VGF.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vgfc.cli.support import handle_errors
from vgfc.compiler import TARGET_ENVS, TARGET_NAMES

if TYPE_CHECKING:
    from vgfc.compiler import Options

__all__ = [
    "TARGET_NAMES",
    "FiniteFloat",
    "InputPath",
    "Seconds",
    "compile_options",
    "inputs_option",
    "max_errors_option",
    "model_argument",
    "run_options",
    "shader_options",
]

F = TypeVar("F", bound=Callable[..., Any])


class InputPath(click.Path):
    """A file a command reads: a missing one is a usage error (exit 2), as click has it; what
    else is wrong with it (a symlink loop, a FIFO, a device) is left to
    :func:`vgfc.files.open_input`, which names it (exit 1), where click would call a symlink
    loop missing."""

    def __init__(self) -> None:
        super().__init__(exists=False, dir_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import os

        if isinstance(value, str | os.PathLike) and not os.path.lexists(value):
            name = click.format_filename(value)
            self.fail(f"{self.name.title()} {name!r} does not exist.", param, ctx)
        return super().convert(value, param, ctx)


model_argument = click.argument("model", type=InputPath())
"""The MODEL.tosa argument of the commands that read a model."""


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


_SHADER = (
    click.option(
        "-I",
        "--include-dir",
        "include_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Directory searched by #include in shaders (repeatable).",
    ),
    click.option(
        "-D",
        "--define",
        "defines",
        multiple=True,
        metavar="NAME[=VALUE]",
        help="Preprocessor definition for GLSL/HLSL shaders (repeatable).",
    ),
    click.option(
        "--target-env",
        type=click.Choice(TARGET_ENVS),
        default="vulkan1.3",
        show_default=True,
        help="Vulkan environment shaders are compiled and validated for.",
    ),
    click.option(
        "--shader-timeout",
        type=Seconds(),
        default=5.0,
        metavar="SECONDS",
        help="Seconds one GLSL/HLSL shader may take to compile (default 5). Each compiles in "
        "a worker process that is killed when the time is up and may use at most 2 GiB more "
        "memory; 0: no limits, compiled in vgfc's own process.",
    ),
    click.option(
        "--no-cache",
        is_flag=True,
        help="Compile every shader afresh, without reading or writing the shader cache "
        "(compiled, validated shaders kept under $VGFC_CACHE_DIR/shaders, else the user cache "
        "folder).",
    ),
)
_SHADER_PARAMS = ("include_dirs", "defines", "target_env", "shader_timeout", "no_cache")

_COMPILE = (
    click.option(
        "--target",
        type=click.Choice(TARGET_NAMES),
        default="scenario-runner",
        show_default=True,
        help="The runtime the VGF is for. executorch: also hold the file to the rules of "
        "ExecuTorch's Arm VGF runtime (SPIR-V in every module, one descriptor set per segment, "
        "tensors only in graph segments, ...), each violation an error with the way out.",
    ),
    click.option(
        "--kernels",
        "kernels",
        multiple=True,
        metavar="LIB",
        help="Kernel library for custom ops that carry no shader: a YAML file "
        "(schemas/kernel_library.schema.json) or a bundled one by name (mediapipe). "
        "Repeatable; the first library with an entry for an op wins.",
    ),
    click.option(
        "--no-auto-convert",
        "no_auto_convert",
        is_flag=True,
        help="Refuse a kernel that needs its operands converted (CAST, TRANSPOSE, channel "
        "padding) instead of inserting the conversions.",
    ),
)
_COMPILE_PARAMS = ("target", "kernels", "no_auto_convert")


def _options(values: dict[str, Any]) -> Options:
    """The values of the options through :func:`vgfc.compiler.make_options`, which checks them
    as the library API does; what it refuses is a usage error."""
    from vgfc.compiler import make_options

    try:
        return make_options(
            kernels=values.get("kernels", ()),
            target=values.get("target", "scenario-runner"),
            include_dirs=values["include_dirs"],
            defines=values["defines"],
            target_env=values["target_env"],
            shader_timeout=values["shader_timeout"],
            cache=not values["no_cache"],
            auto_convert=not values.get("no_auto_convert", False),
        )
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def _declare(func: Callable[..., Any], options: tuple[Callable[[F], F], ...]) -> Any:
    for option in reversed(options):
        func = option(func)
    return func


def shader_options(func: F) -> F:
    """``-I``, ``-D``, ``--target-env``, ``--shader-timeout``, ``--no-cache``: the command gets
    them as ``shader``, a :class:`~vgfc.shader.options.CompileOptions`."""

    @wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _SHADER_PARAMS}
        return func(*args, shader=_options(values).shader, **kwargs)

    return _declare(handle_errors(command), _SHADER)  # type: ignore[no-any-return]


def compile_options(func: F) -> F:
    """Everything that changes a compile: the command gets it as ``options``, a
    :class:`vgfc.compiler.Options` (kernel libraries read and checked)."""

    @wraps(func)
    def command(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in (*_COMPILE_PARAMS, *_SHADER_PARAMS)}
        return func(*args, options=_options(values), **kwargs)

    # A kernel library is read here, before the command runs: its errors are reported alike.
    return _declare(handle_errors(command), (*_COMPILE, *_SHADER))  # type: ignore[no-any-return]


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
