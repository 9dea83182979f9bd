"""Reading a library entry's composed graph (``compose``): its constants, tensors and TOSA ops.
A composed graph names only tensors it has, each written once, and has no cycle (its ops are put
in dependency order); each op is a TOSA operator with the inputs, outputs and attributes its
instruction takes (:mod:`vgfc.resolve.compose_check`).
"""

from __future__ import annotations

from typing import Any

from vgfc.dtypes import DType
from vgfc.limits import quote
from vgfc.resolve.expr import Expr, ExprError
from vgfc.resolve.library.reader import SectionReader
from vgfc.resolve.library.records import Compose, ComposeOp, Constant
from vgfc.resolve.library.values import array_type, check_literals, constant_dtype

__all__ = ["ComposeReader"]


class ComposeReader(SectionReader):
    """Reads an entry's ``compose``."""

    def compose(
        self,
        raw: dict[str, Any],
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
        graph_names: frozenset[str],
        at: list[Any],
    ) -> Compose:
        constants = {}
        operands = inputs + outputs
        for name, c in (raw.get("constants") or {}).items():
            if name in graph_names:
                raise self.fail(
                    f"constant '{name}' shadows an operand or parameter", [*at, "constants", name]
                )
            known_dtype = c["dtype"] == "SHAPE" or c["dtype"] in DType.__members__
            if not known_dtype and c["dtype"] not in operands:
                raise self.fail(
                    f"unknown dtype '{quote(c['dtype'])}'", [*at, "constants", name, "dtype"]
                )
            if known_dtype and array_type(constant_dtype(c["dtype"])) is None:
                raise self.fail(
                    f"constants of {c['dtype']} cannot be written",
                    [*at, "constants", name, "dtype"],
                )
            value = c["value"]
            if isinstance(value, list):
                parsed: Expr | tuple[Expr, ...] = tuple(
                    self.expr(v, graph_names, [*at, "constants", name, "value", k])
                    for k, v in enumerate(value)
                )
            else:
                parsed = self.expr(value, graph_names, [*at, "constants", name, "value"])
            shape = (
                tuple(
                    self.expr(v, graph_names, [*at, "constants", name, "shape", k])
                    for k, v in enumerate(c["shape"])
                )
                if "shape" in c
                else None
            )
            constant = Constant(c["dtype"], shape, parsed)
            try:
                check_literals(constant)
            except ExprError as e:
                raise self.fail(str(e), [*at, "constants", name]) from None
            constants[name] = constant
        tensors = {}
        for name, rule in (raw.get("tensors") or {}).items():
            if name in graph_names or name in constants:
                raise self.fail(f"tensor '{name}' shadows another name", [*at, "tensors", name])
            tensors[name] = self.rule(rule, graph_names, operands, [*at, "tensors", name])
        ops = []
        produced: dict[str, int] = {}
        for k, o in enumerate(raw["ops"]):
            for name in o["outputs"]:
                if name in inputs or name in constants:
                    raise self.fail(
                        f"'{name}' is an input or constant: a composed op cannot write it",
                        [*at, "ops", k, "outputs"],
                    )
                if name not in outputs and name not in tensors:
                    raise self.fail(
                        f"'{name}' is neither an output of the operator nor declared under "
                        "tensors (which gives its dtype and shape)",
                        [*at, "ops", k, "outputs"],
                    )
                if name in produced:
                    raise self.fail(
                        f"'{name}' is written by ops {produced[name]} and {k}",
                        [*at, "ops", k, "outputs"],
                    )
                produced[name] = k
            attrs: dict[str, Any] = {}
            for key, value in (o.get("attrs") or {}).items():
                attrs[key] = self.attr(value, graph_names, [*at, "ops", k, "attrs", key])
            ops.append(ComposeOp(o["op"], tuple(o.get("inputs") or ()), tuple(o["outputs"]), attrs))
        for k, o in enumerate(ops):
            for name in o.inputs:
                if name not in inputs and name not in constants and name not in produced:
                    raise self.fail(
                        f"op {k} ({o.op}) reads '{name}', which no input, constant or op gives",
                        [*at, "ops", k, "inputs"],
                    )
        missing = [name for name in outputs if name not in produced]
        if missing:
            raise self.fail(f"no op writes the output '{missing[0]}'", [*at, "ops"])
        from vgfc.resolve.compose_check import check_compose_ops

        check_compose_ops(ops, self.fail, [*at, "ops"])
        order = self.order(ops, produced, at)
        return Compose(tuple(ops[k] for k in order), constants, tensors)

    def attr(self, value: Any, known: frozenset[str], at: list[Any]) -> Any:
        if isinstance(value, list):
            return tuple(self.attr(v, known, [*at, k]) for k, v in enumerate(value))
        if isinstance(value, str) and value.isidentifier() and value not in known:
            return value  # an enum name such as FP32 or PROPAGATE
        return self.expr(value, known, at)

    def order(self, ops: list[ComposeOp], produced: dict[str, int], at: list[Any]) -> list[int]:
        """The ops in dependency order (each after the ops whose results it reads), or the
        cycle they form. Without recursion: a chain of thousands of ops is a long loop."""
        deps = [sorted({produced[n] for n in o.inputs if n in produced}) for o in ops]
        state = [0] * len(ops)  # 0 new, 1 on the path, 2 done
        order: list[int] = []
        for start in range(len(ops)):
            if state[start]:
                continue
            state[start] = 1
            path = [start]
            pending = [iter(deps[start])]
            while pending:
                for d in pending[-1]:
                    if state[d] == 1:
                        cycle = [*path[path.index(d) :], d]
                        text = " -> ".join(f"op {c} ({ops[c].op})" for c in cycle)
                        raise self.fail(f"the composed ops form a cycle: {text}", [*at, "ops", d])
                    if state[d] == 0:
                        state[d] = 1
                        path.append(d)
                        pending.append(iter(deps[d]))
                        break
                else:
                    done = path.pop()
                    pending.pop()
                    state[done] = 2
                    order.append(done)
        return order
