"""Reading one operator of a library into an :class:`~vgfc.resolve.library.records.Entry`:
its operands, parameters, ``infer`` rules and ``example``, then its kernels
(:mod:`vgfc.resolve.library.read_kernel`) or its composed graph
(:mod:`vgfc.resolve.library.read_compose`). Every name an expression reads must be a parameter,
an operand or a dimension the entry defines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vgfc.resolve.library.read_compose import ComposeReader
from vgfc.resolve.library.read_kernel import KernelReader
from vgfc.resolve.library.records import DIMENSIONS, Entry
from vgfc.resolve.params import TYPES, Field, Params

__all__ = ["Reader"]


class Reader(KernelReader, ComposeReader):
    """Turns validated data into entries, checking what the schema cannot."""

    def entry(self, i: int, raw: dict[str, Any]) -> Entry:
        at = ["operators", i]
        inputs, outputs = tuple(raw["inputs"]), tuple(raw["outputs"])
        operands = inputs + outputs
        if len(set(operands)) != len(operands):
            raise self.fail("operand names must be distinct", [*at, "inputs"])
        params = self.params(raw.get("params") or {"encoding": "none"}, [*at, "params"])
        clash = set(params.names) & (set(operands) | set(DIMENSIONS))
        if clash:
            raise self.fail(
                f"parameter {sorted(clash)[0]!r} has the name of an operand or a dimension",
                [*at, "params"],
            )
        graph_names = frozenset(params.names) | frozenset(operands)
        infer = {}
        for name, rule in (raw.get("infer") or {}).items():
            if name not in outputs:
                raise self.fail(f"'{name}' is not an output ({', '.join(outputs)})", [*at, "infer"])
            infer[name] = self.rule(rule, graph_names, operands, [*at, "infer", name])
        kernels = tuple(
            self.kernel(k, j, raw, params, [*at, "kernels", j])
            for j, k in enumerate(raw.get("kernels") or ())
        )
        compose = None
        if raw.get("compose") is not None:
            compose = self.compose(raw["compose"], inputs, outputs, graph_names, [*at, "compose"])
        line, column = self.lines.place(at)
        torch = self.lines.place([*at, "torch"]) if "torch" in raw else (0, None)
        return Entry(
            domain=raw["domain"],
            name=raw["name"],
            inputs=inputs,
            outputs=outputs,
            layout=raw.get("layout", "NHWC"),
            params=params,
            infer=infer,
            kernels=kernels,
            compose=compose,
            library=self.library,
            line=line,
            column=column,
            example=self.example(raw.get("example") or {}, params, operands, [*at, "example"]),
            reference=raw.get("reference"),
            torch=raw.get("torch"),
            torch_line=torch[0],
            torch_column=torch[1],
        )

    def example(
        self, raw: dict[str, Any], params: Params, operands: Sequence[str], at: list[Any]
    ) -> dict[str, Any]:
        for name in raw.get("params") or {}:
            if name not in params.names:
                raise self.fail(f"'{name}' is no parameter", [*at, "params", name])
        for name in raw.get("shapes") or {}:
            if name not in operands:
                raise self.fail(f"'{name}' is no operand", [*at, "shapes", name])
        return raw

    def params(self, raw: dict[str, Any], at: list[Any]) -> Params:
        encoding = raw["encoding"]
        fields = []
        for j, f in enumerate(raw.get("fields") or ()):
            if f["type"] == "str" and encoding == "struct":
                raise self.fail("a struct holds no strings", [*at, "fields", j, "type"])
            if encoding != "struct" and "offset" in f:
                raise self.fail("offset is for struct parameters", [*at, "fields", j, "offset"])
            if f.get("count") == "any" and encoding == "struct":
                raise self.fail("a struct holds no list of any length", [*at, "fields", j, "count"])
            values = {}
            for code, name in (f.get("values") or {}).items():
                try:
                    values[int(code)] = name
                except ValueError:
                    raise self.fail(
                        f"enum code {code!r} is not an integer", [*at, "fields", j, "values"]
                    ) from None
            assert f["type"] in TYPES or f["type"] == "str"
            fields.append(
                Field(
                    name=f["name"],
                    type=f["type"],
                    count=None if f.get("count") == "any" else f.get("count"),
                    variable=f.get("count") == "any",
                    default=tuple(f["default"])
                    if isinstance(f.get("default"), list)
                    else f.get("default"),
                    has_default="default" in f,
                    key=f.get("key"),
                    offset=f.get("offset"),
                    values=values,
                )
            )
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise self.fail("parameter names must be distinct", [*at, "fields"])
        return Params(encoding, tuple(fields))
