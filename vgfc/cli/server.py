"""``vgfc server start|stop|status``: a process that keeps vgfc imported (:mod:`vgfc.server`)."""

from __future__ import annotations

import click

from vgfc.cli.support import FiniteFloat, handle_errors

__all__ = ["server"]


@click.group("server")
def server() -> None:
    """Keep vgfc loaded in a background process, so each command skips the imports.

    A compile of a small model does 15 to 30 ms of work, but a new process first spends about
    100 ms loading numpy, click and vgfc. While a server runs, `vgfc` and `vgfc-model-converter`
    hand their command to it (with their terminal, folder, environment, umask, limits and
    arguments) and the output, files, exit code and Ctrl-C are what they would have been. It is
    never started for you; without one, or with VGFC_NO_SERVER=1, commands run in their own
    process. A server whose vgfc or packages changed (an upgrade, an edited source file)
    refuses, and the command runs locally. Its socket and log are in $VGFC_SERVER_DIR, else
    $XDG_RUNTIME_DIR/vgfc, else $TMPDIR/vgfc-<uid> ($TMPDIR: /tmp when unset): a folder
    only you can open, one socket per install; the log has a line per command.

    \b
    vgfc server start              keep one running (ends after 30 idle minutes)
    vgfc server status
    vgfc server stop
    """


@server.command("start")
@click.option(
    "--idle-minutes",
    type=FiniteFloat(min=0, max=525_600),
    default=30,
    show_default=True,
    help="Stop after this long without a command (0: never; at most a year).",
)
@handle_errors
def start(idle_minutes: float) -> None:
    """Start the server (or leave the running one as it is)."""
    from vgfc.client import socket_path
    from vgfc.server import start as launch

    pid = launch(idle_minutes)
    click.echo(f"vgfc server running (pid {pid}) on {socket_path()}")


@server.command("stop")
@handle_errors
def stop() -> None:
    """Stop the server."""
    from vgfc.server import stop as halt

    pid = halt()
    click.echo("no vgfc server was running" if pid is None else f"stopped vgfc server (pid {pid})")


@server.command("status")
@handle_errors
def status() -> None:
    """Say whether a server runs, and where. Exit code 0 when one does, 1 otherwise."""
    from vgfc.client import socket_path
    from vgfc.server import running_pid

    pid = running_pid()
    if pid is None:
        click.echo("no vgfc server is running")
        raise SystemExit(1)
    click.echo(f"vgfc server running (pid {pid}) on {socket_path()}")
