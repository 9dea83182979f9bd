"""``vgfc cache``: where the shader cache is, what it holds, and clearing it."""

from __future__ import annotations

import json
import time

import click

from vgfc.cli.errors import EXIT_ERROR, handle_errors
from vgfc.cli.options import FiniteFloat
from vgfc.diagnostics import InputError

__all__ = ["cache"]

_SHOWN = 10
"""Files that could not be removed listed by name; the rest are counted."""


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count / (1024 * 1024):.1f} MiB"


@click.group("cache", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_context
@handle_errors
def cache(context: click.Context, as_json: bool) -> None:
    """Show the shader cache: its folder, entries and size.

    Compiled, validated and reflected shaders are kept there so that the next compile of the
    same shader with the same options and tools skips that work. The folder is
    $VGFC_CACHE_DIR/shaders, else the user cache folder (~/.cache/vgfc/shaders on Linux); it
    has no size limit of its own: `vgfc cache clear` empties it, `--older-than DAYS` keeps
    entries used in the last DAYS days.

    \b
    vgfc cache
    vgfc cache clear --older-than 30
    """
    if context.invoked_subcommand is not None:
        return
    from vgfc.shader.cache import cache_dir
    from vgfc.shader.cache_admin import usage

    _check_usable()
    try:
        found = usage()
    except OSError as e:
        where = str(cache_dir())
        raise InputError(f"cannot read the shader cache: {e.strerror}", file=where) from None
    if as_json:
        doc = {
            "folder": str(found.folder),
            "entries": found.entries,
            "bytes": found.bytes,
            "stale_files": found.stale,
            "oldest": found.oldest,
        }
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"shader cache: {found.folder}")
    click.echo(f"{found.entries} entries, {_size(found.bytes)}")
    if found.stale:
        click.echo(f"{found.stale} stale files (an older vgfc's layout or interrupted writes)")
    if found.oldest is not None:
        days = (time.time() - found.oldest) / 86400
        click.echo(f"least recently used entry: {days:.0f} days ago")


@cache.command("clear")
@click.option(
    "--older-than",
    "days",
    type=FiniteFloat(min=0),
    metavar="DAYS",
    help="Remove only entries not used for DAYS days (stale files go either way).",
)
@handle_errors
def clear(days: float | None) -> None:
    """Remove the shader cache's entries (safe while compiles run: they rebuild what they need)."""
    from vgfc.shader.cache import cache_dir
    from vgfc.shader.cache_admin import clear as remove

    _check_usable()
    try:
        done = remove(None if days is None else days * 86400)
    except OSError as e:
        where = str(cache_dir())
        raise InputError(f"cannot read the shader cache: {e.strerror}", file=where) from None
    click.echo(f"removed {done.removed} files, {_size(done.freed)}, from {cache_dir()}")
    if done.failed:
        for path, why in done.failed[:_SHOWN]:
            click.echo(f"error: {path}: cannot remove: {why}", err=True)
        if len(done.failed) > _SHOWN:
            click.echo(f"... and {len(done.failed) - _SHOWN} more files", err=True)
        raise SystemExit(EXIT_ERROR)


def _check_usable() -> None:
    """The error a compile's ``[-Wunusable-cache]`` warning is, for the command that looks
    after the cache: it cannot list or clear a folder that cannot be used."""
    from vgfc.shader.cache import cache_problem

    problem = cache_problem()
    if problem is not None:
        raise InputError(f"the shader cache cannot be used: {problem}")
