"""The one table of warning names, and what the ``-W`` options make of them.

Every warning vgfc can emit has a stable name, declared once in :data:`WARNINGS` and printed
as ``[-Wname]`` at the end of its first line (``[-Werror=name]`` where ``-Werror`` made it an
error). ``-Wno-NAME``, ``-WNAME``, ``-Werror``, ``-Wno-error``, ``-Werror=NAME`` and
``-Wno-error=NAME`` are read as gcc reads them, left to right, the last word about a name
winning (``-Wno-x -Werror=x`` makes x an error; ``-Werror=x -Wno-x`` silences it); a named
``-W[no-]error=NAME`` wins over the plain ``-W[no-]error`` whatever their order. ``-w`` hides
every warning. docs/commands.md lists the table (a test holds the two together).

A leaf, as :mod:`vgfc.options` is: the option table checks ``-W`` values with :func:`parse`,
and :mod:`vgfc.diagnostics` checks the names its warnings carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vgfc.record import record

__all__ = ["WARNINGS", "WarningFlags", "parse", "spec_problem"]

WARNINGS: Mapping[str, str] = {
    "unused-binding": "A declared resource (input_N/output_N) that the shader never reads or "
    "writes: the value is bound and unread.",
    "short-dispatch": "The dispatch runs fewer invocations than the output has elements (or "
    "texels, or words the shader writes at once): part of it would stay unwritten.",
    "portable-workgroup-count": "A workgroup count above 65535, the maxComputeWorkGroupCount "
    "every Vulkan device supports: devices with a lower limit cannot run the dispatch.",
    "placeholder-shader": "A custom op with no shader code: its module is a placeholder a "
    "runtime must replace.",
    "lossy-conversion": "Kernel selection inserted a conversion that loses information "
    "(allowed by the library entry's allow_lossy).",
    "unusable-cache": "The shader cache folder cannot be used (a relative VGFC_CACHE_DIR, or a "
    "folder that cannot be made, read or written): every shader is compiled afresh.",
    "unwritten-output": "vgfc run: a shader segment left elements of its output unwritten "
    "(the write-coverage canary; vgfc verify makes it an error).",
}
"""Every warning's name, with what it is about (the table in docs/commands.md)."""


@record
class WarningFlags:
    """What the ``-W`` options (and ``-w``) asked for, as :func:`parse` reads them."""

    disabled: frozenset[str] = frozenset()
    """Names turned off (``-Wno-NAME``)."""
    errors: frozenset[str] = frozenset()
    """Names made errors (``-Werror=NAME``)."""
    not_errors: frozenset[str] = frozenset()
    """Names kept warnings under ``-Werror`` (``-Wno-error=NAME``)."""
    all_errors: bool = False
    """``-Werror``: every warning not kept by ``-Wno-error=NAME`` is an error."""
    hidden: bool = False
    """``-w``: no warning is shown (nor made an error)."""

    def verdict(self, name: str) -> str:
        """``off``, ``warning`` or ``error``: what becomes of warning ``name``."""
        if self.hidden or name in self.disabled:
            return "off"
        if name in self.errors or (self.all_errors and name not in self.not_errors):
            return "error"
        return "warning"


def spec_problem(spec: object) -> str | None:
    """What is wrong with one ``-W`` value (``no-short-dispatch``, ``error=NAME``), or
    ``None``."""
    if not isinstance(spec, str):
        return f"{spec!r} is not a warning option (a string such as 'no-short-dispatch')"
    if spec in ("error", "no-error"):
        return None
    if not spec:
        return "-W needs a warning name, error, error=NAME or no-NAME"
    name = spec
    for prefix in ("no-error=", "error=", "no-"):
        if spec.startswith(prefix):
            name = spec.removeprefix(prefix)
            break
    if not name:
        return f"-W{spec} needs a warning name after it"
    if name in WARNINGS:
        return None
    from vgfc.limits import quote

    shown = quote(spec, 60) if len(spec) > 60 or not spec.isprintable() else spec
    close = _closest(name)
    hint = f" (did you mean -W{spec[: len(spec) - len(name)]}{close}?)" if close else ""
    return f"-W{shown}: unknown warning{hint}; the warnings: {', '.join(WARNINGS)}"


def _closest(word: str) -> str | None:
    if len(word) > 100:
        return None
    import difflib  # only for a message that offers a name

    close = difflib.get_close_matches(word, list(WARNINGS), n=1, cutoff=0.6)
    return close[0] if close else None


def parse(specs: Iterable[str], *, hidden: bool = False) -> WarningFlags:
    """The ``-W`` values in command-line order (each checked by :func:`spec_problem`), and
    ``-w``, as gcc reads them."""
    disabled: set[str] = set()
    errors: set[str] = set()
    not_errors: set[str] = set()
    all_errors = False
    for spec in specs:
        if spec in ("error", "no-error"):
            all_errors = spec == "error"
        elif spec.startswith("error="):
            name = spec.removeprefix("error=")
            errors.add(name)
            not_errors.discard(name)
            disabled.discard(name)  # -Werror=x turns x on, as in gcc
        elif spec.startswith("no-error="):
            name = spec.removeprefix("no-error=")
            not_errors.add(name)
            errors.discard(name)
        elif spec.startswith("no-"):
            disabled.add(spec.removeprefix("no-"))
        else:
            disabled.discard(spec)
    return WarningFlags(
        frozenset(disabled), frozenset(errors), frozenset(not_errors), all_errors, hidden
    )
