"""What vgfc promises for any input file, checked by the fuzzer and the regression corpus.

For every file, ``vgfc check`` (the pipeline stopped after layout, going on past errors) and
``vgfc compile`` (all of it) either

- succeed, and the VGF decodes and each SPIR-V module in it passes the validator; or
- fail with :class:`vgfc.VgfcError`s whose rendered messages name the file and stay short,
  and none of which is an internal error (vgfc's own word for a bug);

and they agree: check is clean exactly when compile succeeds, and check's first error is the one
compile stops at. Each finishes within a deadline. Any other exception escapes as it is.
"""

from __future__ import annotations

import itertools
import os
import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from vgfc.compiler import Options, compile_model
from vgfc.diagnostics import ErrorKind, VgfcError
from vgfc.spirv.spirv_tools import validate
from vgfc.vgf.decode import decode

__all__ = ["DEADLINE_S", "MAX_MESSAGE", "Outcome", "Violation", "classify", "run"]

MAX_MESSAGE = 2_000
"""Characters a rendered diagnostic may take: a line or two, never a dump of the input."""
DEADLINE_S = 10.0
"""Seconds ``vgfc check`` may take on one input, and ``vgfc compile`` too."""


class Violation(AssertionError):
    """vgfc broke the invariant. ``kind`` names the class of finding."""

    def __init__(self, kind: str, detail: str, message: str | None = None) -> None:
        self.kind = kind
        self.message = message
        """The vgfc message at fault, when there is one."""
        super().__init__(f"{kind}: {detail}")


@dataclass(frozen=True)
class Outcome:
    """What happened to one input when the invariant held."""

    check_errors: tuple[str, ...]
    compile_error: str | None
    modules: int
    """Modules in the VGF (0 when compile failed)."""
    seconds: float


class _Stages:
    """``on_stage`` for compile_model: when each stage began, hence which one took longest
    (also when the pipeline raised)."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, float]] = []

    def __call__(self, stage: str) -> None:
        self.starts.append((stage, time.monotonic()))

    def end(self) -> None:
        self.starts.append(("", time.monotonic()))

    def slowest(self) -> tuple[str, float]:
        spans = [(a[0], b[1] - a[1]) for a, b in itertools.pairwise(self.starts)]
        return max(spans, key=lambda span: span[1], default=("?", 0.0))


def _message(text: str, path: str, where: str) -> None:
    if len(text) > MAX_MESSAGE:
        raise Violation("long-message", f"{where}: {len(text)} characters: {text[:300]!r}...", text)
    if path not in text:
        raise Violation("message-without-file", f"{where}: {text[:MAX_MESSAGE]!r}", text)


def run(
    path: str | os.PathLike[str], deadline_s: float = DEADLINE_S, options: Options | None = None
) -> Outcome:
    """Check and compile ``path`` (with ``options``, vgfc's defaults if none); raise
    :class:`Violation` (or whatever vgfc raised) on a bug."""
    name = os.fspath(path)
    start = time.monotonic()
    check_stages = _Stages()
    check = compile_model(
        name, options, on_stage=check_stages, stop_after="layout", keep_going=True
    )
    checked = time.monotonic()
    check_stages.end()
    for d in check.diagnostics:
        _message(d.render(), name, f"check {d.severity.value}")
    error: VgfcError | None = None
    modules = 0
    compile_stages = _Stages()
    try:
        result = compile_model(name, options, on_stage=compile_stages)
    except VgfcError as e:
        error = e
        _message(e.render(), name, "compile error")
        if e.kind is ErrorKind.INTERNAL:
            raise Violation("internal-error", e.render()[:MAX_MESSAGE], e.render()) from e
    else:
        assert result.vgf is not None
        try:
            model = decode(result.vgf)
        except VgfcError as e:
            raise Violation("vgf-does-not-decode", e.render()[:MAX_MESSAGE]) from e
        for i, module in enumerate(model.modules):
            if module.spirv is None:
                continue
            try:
                validate(module.spirv)
            except VgfcError as e:
                raise Violation("invalid-spirv", f"module {i}: {e.render()[:MAX_MESSAGE]}") from e
        modules = len(model.modules)
    compiled = time.monotonic()
    compile_stages.end()
    for command, seconds, stages in (
        ("check", checked - start, check_stages),
        ("compile", compiled - checked, compile_stages),
    ):
        if seconds > deadline_s:
            slowest = stages.slowest()
            raise Violation(
                "slow",
                f"{command} took {seconds:.1f} s (slowest stage {slowest[0]} "
                f"{slowest[1]:.1f} s), deadline {deadline_s} s",
            )
    first = check.errors[0].render() if check.errors else None
    stopped = error.render() if error is not None else None
    if first != stopped:
        raise Violation(
            "check-compile-disagree",
            f"check's first error {first!r:.500}, compile's error {stopped!r:.500}",
            f"check: {first} / compile: {stopped}",
        )
    return Outcome(tuple(d.render() for d in check.errors), stopped, modules, compiled - start)


def _skeleton(text: str) -> str:
    """A message with its particulars (quoted names, numbers) blanked, to group findings."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", text)
    return re.sub(r"\d+", "N", text)[:120]


def classify(exc: BaseException, path: str) -> tuple[str, str]:
    """(class, signature) of a failure: the class is what broke (a :class:`Violation` kind or
    the exception type), the signature tells apart failures of one class that differ in
    where they come from (the innermost vgfc frame, or the shape of the message)."""
    if isinstance(exc, Violation):
        if exc.kind == "slow":
            return exc.kind, re.sub(r"[\d.]+ s", "", str(exc))
        text = exc.message if exc.message is not None else str(exc).removeprefix(f"{exc.kind}: ")
        return exc.kind, f"{exc.kind}: " + _skeleton(text.replace(path, "FILE"))
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if f"{os.sep}vgfc{os.sep}" in f.filename
    ]
    where = frames[-1] if frames else None
    site = f"{Path(where.filename).name}:{where.lineno} {where.name}" if where else "?"
    return type(exc).__name__, f"{type(exc).__name__} at {site}"
