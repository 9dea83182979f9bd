"""Checking a compile option's value as the command line checks it, for
:func:`vgfc.compilation.make_options` (``vgfc.compile(**options)``): what each kind of
:class:`~vgfc.options.Option` accepts, read from the option table (:mod:`vgfc.options`)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from vgfc.options import SHADER_DOMAIN, Option, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["check_value"]


def _several(name: str, value: Any) -> tuple[Any, ...]:
    """A value given any number of times: one string or path is one value, not its characters."""
    if isinstance(value, str | bytes | os.PathLike):
        return (value,)
    if isinstance(value, Mapping):
        return tuple(value.items())
    try:
        return tuple(value)
    except TypeError:
        raise UsageError(f"{name}: {value!r} is not one value or a list of them") from None


def check_value(option: Option, value: Any) -> Any:
    """``value`` of a compile option as the compile takes it, checked as the command line
    checks it; :class:`UsageError` names the option and says what is wrong."""
    name, kind = option.name, option.kind
    if kind == "flag":
        if not isinstance(value, bool):
            raise UsageError(f"{name} must be True or False, not {value!r}")
        return value
    if kind == "choice":
        if value not in option.choices:
            raise UsageError(f"{name} must be one of {', '.join(option.choices)}, not {value!r}")
        return value
    if kind == "count":
        top = option.maximum
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or value < 0
            or (top is not None and value > top)
        ):
            most = f" and at most {top}" if top is not None else ""
            raise UsageError(f"{name} must be a whole number, 0 or more{most}, not {value!r}")
        return value
    if kind == "seconds":
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            seconds = math.nan
        if math.isnan(seconds) or seconds < 0:
            raise UsageError(f"{name} must be 0 or more seconds, not {value!r}")
        return seconds
    items = _several(name, value)
    if kind == "warnings":
        from vgfc.warning_names import spec_problem

        for item in items:
            problem = spec_problem(item)
            if problem is not None:
                raise UsageError(problem)
        return items
    if kind == "names":
        for item in items:
            if not isinstance(item, str | os.PathLike) or not os.fspath(item):
                raise UsageError(f"{name}: {item!r} is not a file or a bundled library's name")
        return tuple(os.fspath(item) for item in items)
    if kind == "dirs":
        for item in items:
            if not isinstance(item, str | os.PathLike) or not os.path.isdir(item):
                raise UsageError(f"{name}: {item!r} is not a directory")
        return tuple(os.fspath(item) for item in items)
    if kind == "defines":
        pairs = []
        for item in items:
            if isinstance(item, str):
                key, text = item.partition("=")[::2]
            elif isinstance(item, tuple) and len(item) == 2:
                key, text = item
            else:
                raise UsageError(f"{name}: {item!r} is not NAME, NAME=VALUE or (NAME, VALUE)")
            if not isinstance(key, str) or not key.isidentifier():
                raise UsageError(f"'{key}={text}' is not NAME or NAME=VALUE")
            pairs.append((key, str(text) or "1"))
        return tuple(pairs)
    if kind == "opcodes":
        from vgfc.custom_calls import parse_opcodes

        try:
            return parse_opcodes(items, refused=SHADER_DOMAIN)
        except ValueError as e:
            raise UsageError(f"{name}: {e}") from None
    raise AssertionError(f"{name}: {kind} is not a compile option's kind")
