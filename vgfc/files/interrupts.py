"""Interrupts: the signals that end a command, and the sections they must not cut short.

:func:`interrupt_on_signals` (the command line calls it) turns SIGTERM, SIGHUP and SIGQUIT into
:class:`Interrupted`, which unwinds like Ctrl-C's ``KeyboardInterrupt`` (through
:func:`vgfc.files.outputs.write_atomically`, which removes its temporary file on the way).
:func:`signals_held` holds those signals, and SIGINT, while an output's temporary file is
created, renamed or removed, so that :data:`vgfc.files.outputs.WRITES` always knows whether a
target was replaced; a signal that comes meanwhile is raised when the section ends.

Once the command has cleaned up and said what it wrote, :func:`die_by_signal` ends the process
by the signal it received (the handler reset, the signal sent again), as compilers do: the
caller then sees death by that signal, not exit code 1, so a shell loop over models stops and
make prints "Interrupt" (:func:`received` says which signal, if any).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from types import FrameType

__all__ = [
    "INTERRUPTS",
    "Interrupted",
    "die_by_signal",
    "interrupt_on_signals",
    "received",
    "signals_held",
]

INTERRUPTS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name)
)
"""The signals :func:`interrupt_on_signals` turns into :class:`Interrupted`."""
_BLOCKED = frozenset((signal.SIGINT, *INTERRUPTS))


class Interrupted(BaseException):
    """A signal asked the command to end (SIGTERM, SIGHUP, SIGQUIT): unwinds like
    ``KeyboardInterrupt``, removing temporary files on the way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


_interrupted: list[int] = []
"""The signal that raised :class:`Interrupted` (or KeyboardInterrupt), once one has."""
_deferred: list[int] = []
"""Signals that came while a rename or a cleanup was under way, raised when it ends."""
_holding = [0]
"""How deep the main thread is in :func:`signals_held` sections."""


def _raise_interrupted(signum: int, _frame: FrameType | None) -> None:
    # Only the first signal raises: a second one must not cut short the cleanup the first
    # one started (removing temporary files, ending workers). One that comes while a temporary
    # file is being created, renamed or removed waits until that is done.
    if _interrupted:
        return
    if _holding[0]:
        _deferred.append(signum)
        return
    _raise_now(signum)


def _raise_now(signum: int) -> None:
    _interrupted.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(signum)


def interrupt_on_signals() -> None:
    """Make SIGTERM, SIGHUP and SIGQUIT raise :class:`Interrupted` in the main thread, and
    SIGINT ``KeyboardInterrupt`` as it does, but never in the middle of creating, renaming or
    removing an output's temporary file (a command's process; a library user's process keeps
    its own handlers)."""
    _interrupted.clear()
    _deferred.clear()
    for signum in (signal.SIGINT, *INTERRUPTS):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, _raise_interrupted)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold the interrupts until the block ends. Python runs signal handlers in the main
    thread, but the kernel may deliver a signal to any thread (numpy's, say), so the handlers
    of :func:`interrupt_on_signals` defer it while a block runs; blocking the signals in this
    thread as well covers a process without those handlers."""
    _holding[0] += 1
    old = None
    if hasattr(signal, "pthread_sigmask"):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        _holding[0] -= 1
        if not _holding[0] and _deferred and not _interrupted:
            signum = _deferred[0]
            _deferred.clear()
            _raise_now(signum)


def received() -> int | None:
    """The signal that interrupted this command (through :func:`interrupt_on_signals`'s
    handlers), or ``None``."""
    return _interrupted[0] if _interrupted else None


def die_by_signal(signum: int) -> None:
    """End this process by ``signum``: its default action restored and unblocked, the signal
    sent to this process. Returns only where that does not end it (a platform without it)."""
    if signum == getattr(signal, "SIGQUIT", None):
        # SIGQUIT's default action dumps core: the command cleaned up, it leaves no core file.
        with contextlib.suppress(ImportError, OSError, ValueError):
            import resource

            resource.setrlimit(
                resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1])
            )
    with contextlib.suppress(OSError, ValueError):
        signal.signal(signum, signal.SIG_DFL)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)
