"""Dependency files (``-MD``, ``-MF``, ``-MT``, ``-MP``, ``-M``): what a compile read, as a Make
rule.

A build system that runs ``vgfc compile`` must know every file the VGF depends on to rebuild it
when one changes, and no other. vgfc writes that list as gcc does, in GNU Make syntax, which
make reads with ``include``, ninja with ``deps = gcc`` and CMake with ``DEPFILE``; so a build
needs nothing vgfc-specific::

    out/model.vgf: \\
      model.tosa \\
      ops.yaml \\
      shaders/blur.comp \\
      include/common.glsl

The files are those the compile read, each once, in the order first read
(:attr:`vgfc.compilation.Compilation.reads`): the model, the kernel libraries, the shader files
of the kernels bound, and every ``#include`` glslang opened, also when the shader came from the
shader cache (an entry remembers the files it included). The rule is written with the VGF,
atomically, and never when the compile fails. ``-M`` (or ``-MM``, the same: vgfc has no system
include folders for it to leave out) prints the rule instead of compiling
(:mod:`vgfc.cli.rules`).

Names are written as gcc writes them: a space or tab after a backslash, ``#`` escaped with a
backslash, ``$`` doubled. A newline cannot be written in Make syntax: a file whose name holds
one is an error, not a broken rule. This module imports nothing of vgfc but the option table's
:class:`~vgfc.options.UsageError`, the records and, when it fails, the diagnostics.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from vgfc.options import UsageError
from vgfc.record import record

__all__ = ["Depfile", "DepsAsked", "asked", "escape", "make_rule"]


@record
class Depfile:
    """Where one model's dependency file goes and what it says."""

    path: Path
    target: str
    """The rule's target as written in the file: the VGF's path escaped, or ``-MT`` as given."""
    phony: bool = False
    """Also a rule with no recipe for each dependency but the model (``-MP``), so that make
    does not stop when an include is deleted."""


@record
class DepsAsked:
    """What the command line (or :func:`vgfc.compile`) asked for: ``-MD``, ``-MF FILE``,
    ``-MT TARGET``, ``-MP``, ``-M``."""

    next_to_output: bool = False
    file: Path | None = None
    target: str | None = None
    phony: bool = False
    only: bool = False
    """``-M``: the rule is all that is written (to standard output, or ``-MF``), no VGF."""

    @property
    def wanted(self) -> bool:
        """``-MD``, ``-MF`` or ``-M``: a dependency rule is written (``-MF`` alone is enough)."""
        return self.next_to_output or self.file is not None or self.only

    def check(self, models: int) -> None:
        """The combinations that cannot be written: :class:`UsageError`."""
        if not self.wanted:
            if self.target is not None or self.phony:
                given = "-MT" if self.target is not None else "-MP"
                raise UsageError(
                    f"{given} says how to write a dependency file: give -MD, -MF or -M"
                )
            return
        if self.only and self.next_to_output:
            raise UsageError(
                "-M prints the dependency rule instead of compiling, -MD writes it beside the "
                "compiled VGF: give one of them"
            )
        if self.file is not None and models > 1:
            instead = (
                "leave it out and -M prints every model's rule"
                if self.only
                else "give -MD to write each model's dependency file next to its VGF as <stem>.d"
            )
            raise UsageError(
                f"-MF {self.file} names one file, and {models} models were given: {instead}"
            )
        if self.target is not None:
            if models > 1:
                raise UsageError(
                    f"-MT names the target of one model's rule, and {models} models were given: "
                    "leave it out and each rule names its VGF"
                )
            if not self.target.strip() or "\n" in self.target or "\r" in self.target:
                raise UsageError(f"-MT {self.target!r} is not a target: a name on one line")

    def depfile(self, output: Path) -> Depfile | None:
        """Where the dependency file of the VGF ``output`` goes: ``-MF``, else ``output`` with
        its suffix replaced by ``.d`` as gcc does for ``-o X.o`` (``model.vgf`` -> ``model.d``)."""
        if not self.wanted:
            return None
        if os.fspath(output) == "-" and self.only and self.target is None:
            raise UsageError("with -o - the VGF has no file name for the rule: give -MT TARGET")
        if (
            os.fspath(output) == "-"
            and not self.only
            and (self.file is None or self.target is None)
        ):
            raise UsageError(
                "with -o - the VGF has no file name for a dependency file or its rule: give "
                "-MF FILE and -MT TARGET"
            )
        if self.target is None and ("\n" in os.fspath(output) or "\r" in os.fspath(output)):
            raise UsageError(
                "the VGF's name holds a line break, which a Make rule cannot hold: give -MT TARGET"
            )
        if self.file is not None:
            path = self.file
        else:  # -M: standard output
            path = Path("-") if self.only else output.with_suffix(".d")
        target = self.target if self.target is not None else escape(os.fspath(output))
        return Depfile(path, target, self.phony)


def asked(
    deps: object = False,
    depfile: object = None,
    deps_target: object = None,
    deps_phony: object = False,
    deps_only: object = False,
) -> DepsAsked:
    """The values of ``-MD``, ``-MF``, ``-MT``, ``-MP`` and ``-M`` (by their names in the option
    table, the keywords of :func:`vgfc.compile`), each checked: :class:`UsageError` names the
    one of the wrong type."""
    for name, flag in (("deps", deps), ("deps_phony", deps_phony), ("deps_only", deps_only)):
        if not isinstance(flag, bool):
            raise UsageError(f"{name} must be True or False, not {flag!r}")
    if depfile is not None and (
        not isinstance(depfile, str | os.PathLike) or not os.fspath(depfile)
    ):
        raise UsageError(f"depfile must be a file name, not {depfile!r}")
    if deps_target is not None and not isinstance(deps_target, str):
        raise UsageError(f"deps_target must be a string, not {deps_target!r}")
    file = Path(os.fspath(depfile)) if depfile is not None else None
    return DepsAsked(bool(deps), file, deps_target, bool(deps_phony), bool(deps_only))


def escape(name: str) -> str:
    """``name`` as a file name in a Make rule, as gcc writes it: a space or tab gets a backslash
    (and the backslashes before it are doubled, as GNU make reads them), ``#`` a backslash,
    ``$`` another ``$``."""
    out: list[str] = []
    for i, c in enumerate(name):
        if c in " \t":
            slashes = len(name[:i]) - len(name[:i].rstrip("\\"))
            out.append("\\" * slashes + "\\")
        elif c == "#":
            out.append("\\")
        elif c == "$":
            out.append("$")
        out.append(c)
    return "".join(out)


def make_rule(depfile: Depfile, reads: Iterable[str]) -> bytes:
    """The dependency file's text: ``target: dep \\`` with one file a line, each once, and
    with ``phony`` an empty rule for each file but the first (the model). A model read from
    standard input is no file to depend on: left out. Raises
    :class:`~vgfc.diagnostics.InputError` for a file name Make syntax cannot hold."""
    from vgfc.files.inputs import STDIN

    read = list(reads)
    files = [name for name in dict.fromkeys(read) if name != STDIN]
    for name in files:
        if "\n" in name or "\r" in name:
            from vgfc.diagnostics import InputError
            from vgfc.limits import quote

            raise InputError(
                f"cannot write the dependency file: the compile read {quote(name)}, whose name "
                "holds a line break, which a Make rule cannot hold",
                file=os.fspath(depfile.path),
            )
    lines = [f"{depfile.target}:"] + [f"  {escape(name)}" for name in files]
    text = " \\\n".join(lines) + "\n"
    if depfile.phony:
        first = 1 if read and read[0] != STDIN else 0  # the model has no rule of its own
        text += "".join(f"\n{escape(name)}:\n" for name in files[first:])
    return text.encode("utf-8", "surrogateescape")
