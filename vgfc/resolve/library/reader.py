"""The base of the readers that turn a library's validated data into entries, checking what
the schema cannot: where an error is (the line and key of the offending value), and what every
section reads, expressions (each name one the entry defines) and tensor rules.

The sections have their readers: :mod:`vgfc.resolve.library.read_entry` (an operator, its
parameters, ``infer`` and ``example``), :mod:`vgfc.resolve.library.read_kernel` (kernels: shader,
resources, dispatch) and :mod:`vgfc.resolve.library.read_compose` (a composed graph).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from vgfc.diagnostics import InputError, Location
from vgfc.dtypes import DType
from vgfc.resolve.expr import Expr, ExprError
from vgfc.resolve.library.records import Library, TensorRule
from vgfc.resolve.library.yaml_front import Lines, path_text

__all__ = ["SectionReader"]


class SectionReader:
    """What every section's reader shares: the library, its data and lines, the aliases it
    defines, and the folders its files may lie in."""

    def __init__(
        self,
        library: Library,
        data: dict[str, Any],
        lines: Lines,
        include_dirs: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        self.library = library
        self.data = data
        self.lines = lines
        self.type_alias: dict[str, tuple[DType, ...]] = {
            k: tuple(DType(v) for v in vs) for k, vs in (data.get("type_alias") or {}).items()
        }
        self.layout_alias: dict[str, tuple[str, ...]] = {
            k: tuple(vs) for k, vs in (data.get("layout_alias") or {}).items()
        }
        self.base = library.path.parent
        # Where the library's files may be: its own folder and the user's -I folders, as real
        # paths (the library's path is resolved already).
        self.roots = (str(self.base), *(os.path.realpath(d) for d in include_dirs))

    def fail(self, message: str, path: Sequence[Any]) -> InputError:
        line, column = self.lines.place(path)
        where = Location(
            file=self.library.shown,
            file_line=line,
            file_column=column,
            key=path_text(self.data, path),
        )
        return InputError(message, where)

    def expr(self, value: Any, known: frozenset[str], at: list[Any]) -> Expr:
        try:
            e = Expr.parse(value)
        except ExprError as err:
            raise self.fail(str(err), at) from None
        names = e.names()
        unknown = sorted(names - known)
        if unknown:
            raise self.fail(
                f"'{e.text}' reads {unknown[0]!r}, which is no parameter, operand or dimension "
                f"here (known: {', '.join(sorted(known))})",
                at,
            )
        if e.tree is not None and not names:
            # It reads nothing: what it gives (or the limit it breaks) is known now.
            try:
                e.evaluate({})
            except ExprError as err:
                raise self.fail(str(err), at) from None
        return e

    def rule(
        self, raw: dict[str, Any], known: frozenset[str], operands: Sequence[str], at: list[Any]
    ) -> TensorRule:
        if "same_as" in raw:
            if set(raw) != {"same_as"}:
                raise self.fail("same_as stands alone (it gives both dtype and shape)", at)
            if raw["same_as"] not in operands:
                raise self.fail(f"same_as names '{raw['same_as']}', which is no operand", at)
            return TensorRule(raw["same_as"], raw["same_as"])
        dtype = raw.get("dtype")
        if dtype is not None and dtype not in operands and dtype not in DType.__members__:
            raise self.fail(
                f"dtype '{dtype}' is neither a TOSA type nor an operand", [*at, "dtype"]
            )
        shape = raw.get("shape")
        if isinstance(shape, str):
            if shape not in operands:
                raise self.fail(f"shape names '{shape}', which is no operand", [*at, "shape"])
            return TensorRule(dtype, shape)
        exprs = (
            tuple(self.expr(v, known, [*at, "shape", k]) for k, v in enumerate(shape))
            if shape is not None
            else None
        )
        return TensorRule(dtype, exprs)
