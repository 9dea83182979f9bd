"""What every ``vgfc`` command shares: error reporting, exit codes, atomic writes, printing user
text through rich without it being read as markup, and the shader compile options.

Exit codes: 0 success, 1 the input (model, shader, options' content) is wrong or unsupported,
2 usage error (unknown option, missing argument), 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from vgfc.diagnostics import Diagnostic, ErrorKind, InputError, Severity, VgfcError

if TYPE_CHECKING:
    from rich.console import Console

    from vgfc.shader.options import CompileOptions

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "FiniteFloat",
    "compile_options",
    "emit",
    "escape",
    "handle_errors",
    "kernel_options",
    "load_kernels",
    "model_argument",
    "print_diagnostic",
    "run_options",
    "shader_options",
    "stderr_console",
    "write_atomically",
]

F = TypeVar("F", bound=Callable[..., Any])

EXIT_ERROR = 1
EXIT_INTERNAL = 3


def stderr_console() -> Console:
    from rich.console import (
        Console,
    )  # rich costs start-up time; only output that is printed needs it

    return Console(stderr=True, highlight=False, soft_wrap=True)


def escape(text: str) -> str:
    """``text`` with rich's markup characters escaped (:func:`rich.markup.escape`)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def print_diagnostic(console: Console, d: Diagnostic, label: str | None = None) -> None:
    """``error: <location>: <message>`` with the label coloured and the text printed as it is:
    model text (``[1, 8, 8, 4]``, ``vgfc[shaders]``) is escaped, never read as rich markup."""
    if label is None:
        label = d.severity.value
    colour = "red" if d.severity is Severity.ERROR else "yellow"
    console.print(f"[bold {colour}]{escape(label)}:[/] {escape(d.render())}", highlight=False)
    for line in d.excerpt:
        console.print(f"    {escape(line)}", highlight=False)


def handle_errors(func: F) -> F:
    """Turn errors into one clear line on stderr and an exit code; tracebacks only with --debug."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = bool(click.get_current_context().find_root().params.get("debug"))
        try:
            return func(*args, **kwargs)
        except VgfcError as e:
            if debug:
                raise
            label = "internal error" if e.kind is ErrorKind.INTERNAL else "error"
            print_diagnostic(stderr_console(), e.diagnostic, label)
            sys.exit(EXIT_INTERNAL if e.kind is ErrorKind.INTERNAL else EXIT_ERROR)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt):
            raise
        except BrokenPipeError:
            # The reader went away (`vgfc inspect m.vgf | head`): not an error of ours. Point
            # stdout at nothing so that the interpreter's own flush at exit stays quiet.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_ERROR)
        except Exception as e:
            if debug:
                raise
            stderr_console().print(
                f"[bold red]internal error:[/] {escape(f'{type(e).__name__}: {e}')}\n"
                "This is a bug in vgfc; rerun with --debug for a traceback and report it.",
                highlight=False,
            )
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomically(path: Path, data: bytes | Callable[[Any], object]) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename: never a partial file.

    ``data`` is the bytes, or a function that writes them to the binary file it is given (so
    that a large output, a VGF with gigabytes of constants, streams to disk instead of being
    built in memory first); if it raises, nothing is written."""
    target = path.resolve()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise InputError(f"cannot write output file: {e.strerror}", file=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
        # mkstemp creates 0600; give the file the mode a plain open() would: the existing file's,
        # else 0666 less the umask.
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_SHADER_TIMEOUT = "vgfc.shader_timeout"
"""Where :func:`shader_options` keeps ``--shader-timeout`` in ``click.Context.meta``."""


def compile_options(
    include_dirs: tuple[Path, ...],
    defines: tuple[str, ...],
    target_env: str,
    shader_timeout: float | None = None,
    *,
    cache: bool | None = None,
) -> CompileOptions:
    """The shader compile options from ``-I``, ``-D``, ``--target-env``, ``--shader-timeout``
    and ``--no-cache``.

    ``shader_timeout`` and ``cache`` default to the ``--shader-timeout`` and ``--no-cache`` of
    the command being run (which :func:`shader_options` keeps in the click context), else to
    the library's defaults (5 s; the shader cache on).
    """
    from vgfc.shader.options import DEFAULT_TIMEOUT, CompileOptions

    context = click.get_current_context(silent=True)
    if shader_timeout is None:
        shader_timeout = context.meta.get(_SHADER_TIMEOUT, None) if context else None
    if shader_timeout is None:
        shader_timeout = DEFAULT_TIMEOUT
    if cache is None:
        cache = not (context and context.meta.get("vgfc.no_cache", False))

    pairs = []
    for d in defines:
        name, _, value = d.partition("=")
        if not name.isidentifier():
            raise click.BadParameter(f"'{d}' is not NAME or NAME=VALUE", param_hint="-D/--define")
        pairs.append((name, value or "1"))
    return CompileOptions(
        target_env=target_env,
        include_dirs=tuple(str(p) for p in include_dirs),
        defines=tuple(pairs),
        timeout=shader_timeout,
        cache=cache,
    )


class FiniteFloat(click.FloatRange):
    """A float in a range that is also a number: ``nan`` (which compares false with everything,
    so it slips past the bounds) and ``inf`` are refused."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def run_options(func: F) -> F:
    """``--validate`` and ``--device``: how ``run`` and ``verify`` execute a VGF."""
    func = click.option(
        "--device",
        type=click.Choice(["cpu", "gpu", "auto"]),
        default="cpu",
        show_default=True,
        help="cpu: lavapipe. gpu: the machine's Vulkan GPU driver (under the same emulation "
        "layers). auto: the GPU when the machine has one.",
    )(func)
    func = click.option(
        "--validate",
        is_flag=True,
        help="Run the Khronos validation layer below the emulation layers; any message it "
        "reports fails the run (needs apt-get install vulkan-validationlayers).",
    )(func)
    return func


def shader_options(func: F) -> F:
    """Options shared by every command that compiles shaders.

    ``--shader-timeout`` and ``--no-cache`` reach :func:`compile_options` through the click
    context rather than as parameters of the command.
    """

    def keep_timeout(
        context: click.Context, _param: click.Parameter, value: float | None
    ) -> float | None:
        context.meta[_SHADER_TIMEOUT] = value
        return value

    def keep_no_cache(context: click.Context, _param: click.Parameter, value: bool) -> bool:
        context.meta["vgfc.no_cache"] = value  # read by compile_options
        return value

    func = click.option(
        "--no-cache",
        is_flag=True,
        expose_value=False,
        callback=keep_no_cache,
        help="Compile every shader afresh, without reading or writing the shader cache "
        "(compiled, validated shaders kept under $VGFC_CACHE_DIR, else the user cache folder).",
    )(func)

    func = click.option(
        "--shader-timeout",
        type=click.FloatRange(min=0),
        default=None,  # vgfc.shader.options.DEFAULT_TIMEOUT, filled in by compile_options
        metavar="SECONDS",
        expose_value=False,
        callback=keep_timeout,
        help="Seconds one GLSL/HLSL shader may take to compile (default 5). Each compiles in "
        "a worker process that is killed when the time is up and may use at most 2 GiB more "
        "memory; 0: no limits, compiled in vgfc's own process.",
    )(func)
    func = click.option(
        "--target-env",
        type=click.Choice(["vulkan1.1", "vulkan1.2", "vulkan1.3"]),
        default="vulkan1.3",
        show_default=True,
        help="Vulkan environment shaders are compiled and validated for.",
    )(func)
    func = click.option(
        "-D",
        "--define",
        "defines",
        multiple=True,
        metavar="NAME[=VALUE]",
        help="Preprocessor definition for GLSL/HLSL shaders (repeatable).",
    )(func)
    func = click.option(
        "-I",
        "--include-dir",
        "include_dirs",
        multiple=True,
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Directory searched by #include in shaders (repeatable).",
    )(func)
    return func


def kernel_options(func: F) -> F:
    """``--kernels`` and ``--no-auto-convert``: how custom ops without a shader are bound."""
    func = click.option(
        "--no-auto-convert",
        "no_auto_convert",
        is_flag=True,
        help="Refuse a kernel that needs its operands converted (CAST, TRANSPOSE, channel "
        "padding) instead of inserting the conversions.",
    )(func)
    func = click.option(
        "--kernels",
        "kernels",
        multiple=True,
        metavar="LIB",
        help="Kernel library for custom ops that carry no shader: a YAML file "
        "(schemas/kernel_library.schema.json) or a bundled one by name (mediapipe). "
        "Repeatable; the first library with an entry for an op wins.",
    )(func)
    return func


def load_kernels(kernels: tuple[str, ...]) -> tuple[Any, ...]:
    """The libraries of ``--kernels`` (``vgfc.resolve.library.Library``), read and checked."""
    if not kernels:
        return ()
    from vgfc.resolve.library import load_libraries

    return load_libraries(kernels)


model_argument = click.argument(
    "model", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
"""The MODEL.tosa argument of the commands that read a model."""


def emit(text: str, output: Path | None) -> None:
    """Print ``text``, or write it atomically to ``output``."""
    if output is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        write_atomically(output, text.encode("utf-8"))
