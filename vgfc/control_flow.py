"""Control flow -> straight-line TOSA, so that a graph with COND_IF or WHILE_LOOP can be lowered.

TOSA.001000.1 has no control-flow instruction and a VGF's segments run in a fixed order, but
TOSA operators have no side effects, so a branch or a loop whose shape is known at compile time
can be written out as plain operators (each one marked ``inserted`` with how it came to be, so
the report lists them):

- **COND_IF with a constant condition**: the branch it takes, inlined.
- **COND_IF otherwise (if-conversion)**: both branches inlined and each result chosen by SELECT on
  the condition, reshaped to the result's rank (TOSA's SELECT broadcasts size-1 dimensions of
  operands of one rank). Computing the branch not taken costs time, never a different value.
  Both branches must give results of the COND_IF's shapes and types.
- **WHILE_LOOP**: unrolled when its condition can be decided at compile time on every trip: the
  loop values the condition graph reads must follow from constants through the integer and
  boolean operators of :data:`_EVALUATORS` (evaluated exactly, with numpy), and the loop must
  end within ``loop_trips_max`` trips (:data:`vgfc.limits.LIMITS`). Otherwise it is refused.

Nested control flow (a branch or a body with its own COND_IF) is converted from the inside out.
Nothing here is a library's job: no maintained TOSA tool does if-conversion or unrolling (the
reference converter refuses control flow), and the evaluator is the few exact integer operators a
loop counter uses, not a TOSA interpreter.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vgfc.diagnostics import InputError, UnsupportedError
from vgfc.ir import REGION_ATTRS, Data, DType, Graph, Operator, Tensor
from vgfc.limits import LIMITS
from vgfc.record import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.ir import Array

__all__ = ["has_control_flow", "inline_control_flow"]


def has_control_flow(graph: Graph) -> bool:
    return any(op.op in REGION_ATTRS for op in graph.operators)


def inline_control_flow(graph: Graph) -> Graph:
    """``graph`` with every COND_IF and WHILE_LOOP replaced by plain operators (see the module
    docstring); operators are renumbered (``index`` the new position, ``source_index`` the op
    of the file). Raises :class:`UnsupportedError` for control flow that cannot be written out
    and :class:`InputError` for a branch or body that does not fit its op."""
    if not any(op.op in REGION_ATTRS for op in graph.operators):
        return graph
    inliner = _Inliner(graph)
    ops = inliner.block(graph, {}, None, depth=0)
    operators = tuple(replace(op, index=i, source_index=op.file_index) for i, op in enumerate(ops))
    return replace(graph, operators=operators, tensors=MappingProxyType(inliner.tensors))


class _Inliner:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.tensors: dict[str, Tensor] = dict(graph.tensors)
        self.used: set[str] = set(graph.tensors)
        self.added = 0
        """Operators written out so far (held to ``written_out_ops_max``)."""

    def fresh(self, base: str) -> str:
        name, n = base, 1
        while name in self.used:
            n += 1
            name = f"{base}~{n}"
        self.used.add(name)
        return name

    def block(
        self,
        block: Graph,
        rename: dict[str, str],
        outer: Operator | None,
        *,
        depth: int,
        why: str | None = None,
    ) -> list[Operator]:
        """The operators of ``block`` with their tensors renamed by ``rename`` (extended with
        fresh names for what the block defines), control flow written out."""
        out: list[Operator] = []
        for op in block.operators:
            if outer is not None:  # a branch's op: fresh names, marked as vgfc's
                self.added += 1
                if self.added > LIMITS.written_out_ops_max:
                    raise UnsupportedError(
                        "writing out this control flow would add more than "
                        f"{LIMITS.written_out_ops_max} operators (written_out_ops_max)",
                        self.graph.where(outer),
                    )
                for name in op.outputs:
                    if name not in rename:
                        new = self.fresh(f"{outer_prefix(outer)}{name}")
                        rename[name] = new
                        self.tensors[new] = replace(_tensor(block, name, op), name=new)
                op = replace(
                    op,
                    inputs=tuple(rename.get(n, n) for n in op.inputs),
                    outputs=tuple(rename[n] for n in op.outputs),
                    index=outer.file_index,
                    source_index=outer.file_index,
                    inserted=why,
                )
            if op.op in REGION_ATTRS:
                if depth > 32:
                    raise UnsupportedError(
                        "control flow nested more than 32 deep", self.graph.where(op)
                    )
                convert = self.cond_if if op.op == "COND_IF" else self.while_loop
                out += convert(op, depth + 1)
            else:
                out.append(op)
        return out

    def region(self, op: Operator, key: str) -> Graph:
        name = op.attrs.get(key)
        found = self.graph.blocks.get(name) if isinstance(name, str) else None
        if found is None:
            raise InputError(
                f"refers to region {name!r}, which has no basic block of its own to run",
                self.graph.where(op),
                key=key,
            )
        return found

    def inline(
        self, op: Operator, key: str, operands: tuple[str, ...], depth: int, why: str
    ) -> tuple[list[Operator], tuple[str, ...]]:
        """The ops of region ``key`` of ``op`` run on ``operands``; and its results' names."""
        block = self.region(op, key)
        if len(block.inputs) != len(operands):
            raise InputError(
                f"the region takes {len(block.inputs)} inputs but {op.op} passes it "
                f"{len(operands)}",
                self.graph.where(op),
                key=key,
            )
        rename: dict[str, str] = {}
        for inner, outer_name in zip(block.inputs, operands, strict=True):
            self._same_type(op, key, _tensor(block, inner, None), outer_name, "input")
            rename[inner] = outer_name
        ops = self.block(block, rename, op, depth=depth, why=why)
        results = tuple(rename.get(n, n) for n in block.outputs)
        for name in block.outputs:
            if name not in rename:
                raise InputError(
                    f"region output '{name}' is neither an input nor computed by the region",
                    self.graph.where(op),
                    key=key,
                )
        return ops, results

    def _same_type(self, op: Operator, key: str, inner: Tensor, outer: str, role: str) -> None:
        there = self.tensors[outer]
        if inner.dtype is not there.dtype or inner.shape != there.shape:
            raise InputError(
                f"region {role} '{inner.name}' is {_text(inner)} but the {op.op} {role} "
                f"'{outer}' is {_text(there)}",
                self.graph.where(op),
                key=key,
            )

    def results(self, op: Operator, key: str, ops: list[Operator], got: tuple[str, ...]) -> None:
        if len(got) != len(op.outputs):
            raise InputError(
                f"the region gives {len(got)} results but {op.op} has {len(op.outputs)} outputs",
                self.graph.where(op),
                key=key,
            )
        for name, outer in zip(got, op.outputs, strict=True):
            self._same_type(op, key, self.tensors[name], outer, "output")

    # -- COND_IF --------------------------------------------------------------------------

    def cond_if(self, op: Operator, depth: int) -> list[Operator]:
        if not op.inputs:
            raise InputError("COND_IF has no condition", self.graph.where(op))
        condition, operands = op.inputs[0], op.inputs[1:]
        cond = self.tensors[condition]
        if cond.dtype is not DType.BOOL or cond.element_count != 1:
            raise InputError(
                f"the condition must be one BOOL value, not {_text(cond)}",
                self.graph.where(op),
                tensor=condition,
            )
        label = f"COND_IF #{op.file_index}"
        known = _value(cond)
        if known is not None:
            key = "then_graph" if bool(known.reshape(-1)[0]) else "else_graph"
            branch = key.split("_")[0]
            why = f"{branch} branch of {label} (its condition is a constant)"
            ops, got = self.inline(op, key, operands, depth, why)
            self.results(op, key, ops, got)
            return ops + [
                self.identity(op, source, result, why)
                for source, result in zip(got, op.outputs, strict=True)
            ]
        then_ops, then_got = self.inline(
            op, "then_graph", operands, depth, f"then branch of {label} (if-converted)"
        )
        self.results(op, "then_graph", then_ops, then_got)
        else_ops, else_got = self.inline(
            op, "else_graph", operands, depth, f"else branch of {label} (if-converted)"
        )
        self.results(op, "else_graph", else_ops, else_got)
        why = f"if-conversion of {label}: picks each result by its condition"
        out = then_ops + else_ops
        by_rank: dict[int, str] = {}
        for a, b, result in zip(then_got, else_got, op.outputs, strict=True):
            rank = len(self.tensors[result].shape or ())
            pick = by_rank.get(rank)
            if pick is None:
                pick, reshaped = self.condition_of_rank(op, condition, rank, why)
                out += reshaped
                by_rank[rank] = pick
            out.append(
                replace(
                    op,
                    op="SELECT",
                    inputs=(pick, a, b),
                    outputs=(result,),
                    attrs=MappingProxyType({}),
                    inserted=why,
                )
            )
        return out

    def condition_of_rank(
        self, op: Operator, condition: str, rank: int, why: str
    ) -> tuple[str, list[Operator]]:
        """``condition`` as a tensor of ``rank`` (all ones), and the ops that reshape it."""
        if len(self.tensors[condition].shape or ()) == rank:
            return condition, []
        import numpy as np

        shape_name = self.fresh(f"{condition}.shape{rank}")
        self.tensors[shape_name] = Tensor(
            shape_name,
            (rank,),
            DType.SHAPE,
            Data.of(np.ones(rank, dtype=np.int64), DType.SHAPE),
            is_shape=True,
        )
        name = self.fresh(f"{condition}.rank{rank}")
        self.tensors[name] = Tensor(name, (1,) * rank, DType.BOOL)
        const = replace(
            op,
            op="CONST_SHAPE",
            inputs=(),
            outputs=(shape_name,),
            attrs=MappingProxyType({}),
            inserted=why,
        )
        reshape = replace(
            op,
            op="RESHAPE",
            inputs=(condition, shape_name),
            outputs=(name,),
            attrs=MappingProxyType({}),
            inserted=why,
        )
        return name, [const, reshape]

    def identity(self, op: Operator, source: str, result: str, why: str) -> Operator:
        return replace(
            op,
            op="IDENTITY",
            inputs=(source,),
            outputs=(result,),
            attrs=MappingProxyType({}),
            inserted=why,
        )

    # -- WHILE_LOOP ------------------------------------------------------------------------

    def while_loop(self, op: Operator, depth: int) -> list[Operator]:
        label = f"WHILE_LOOP #{op.file_index}"
        cond_block = self.region(op, "cond_graph")
        if len(cond_block.outputs) != 1:
            raise InputError(
                "the condition graph must give one BOOL value",
                self.graph.where(op),
                key="cond_graph",
            )
        state = tuple(op.inputs)
        if len(cond_block.inputs) != len(state):
            raise InputError(
                f"the condition graph takes {len(cond_block.inputs)} inputs but WHILE_LOOP "
                f"passes it {len(state)}",
                self.graph.where(op),
                key="cond_graph",
            )
        values: dict[str, Array | None] = {n: _value(self.tensors[n]) for n in state}
        out: list[Operator] = []
        for trip in range(LIMITS.loop_trips_max + 1):
            decided = _evaluate_all(cond_block, [values[n] for n in state], self.tensors)[0]
            if decided is None:
                read = {n for o in cond_block.operators for n in o.inputs}
                unknown = [
                    f"'{op.inputs[i]}' (loop value {i})"
                    for i, inner in enumerate(cond_block.inputs)
                    if values[state[i]] is None and inner in read
                ]
                which = f" reads {unknown[0]}, which" if unknown else ""
                raise UnsupportedError(
                    f"cannot unroll {label}: its condition{which} is not known at compile time "
                    "(a loop is written out only when its trip count follows from constants)",
                    self.graph.where(op),
                    key="cond_graph",
                )
            if not bool(decided.reshape(-1)[0]):
                why = f"{label} unrolled {trip} time{'s' if trip != 1 else ''}"
                return out + [
                    self.identity(op, source, result, why)
                    for source, result in zip(state, op.outputs, strict=True)
                ]
            if trip == LIMITS.loop_trips_max:
                break
            why = f"trip {trip + 1} of {label} (unrolled)"
            body = self.region(op, "body_graph")
            ops, got = self.inline(op, "body_graph", state, depth, why)
            self.results(op, "body_graph", ops, got)
            known = _evaluate_all(body, [values[n] for n in state], self.tensors)
            values.update(zip(got, known, strict=True))
            out += ops
            state = got
        raise UnsupportedError(
            f"cannot unroll {label}: it runs more than {LIMITS.loop_trips_max} trips",
            self.graph.where(op),
        )


def outer_prefix(op: Operator) -> str:
    return f"{op.op.lower()}{op.file_index}/"


def _tensor(block: Graph, name: str, op: Operator | None) -> Tensor:
    found = block.tensors.get(name)
    if found is None:
        raise InputError("refers to a tensor its region does not define", tensor=name)
    return found


def _text(t: Tensor) -> str:
    shape = "unranked" if t.shape is None else str(list(t.shape))
    return f"{t.dtype.value} {shape}"


def _outer(tensors: Mapping[str, Tensor], name: str) -> Array | None:
    tensor = tensors.get(name)
    return None if tensor is None else _value(tensor)


def _value(tensor: Tensor) -> Array | None:
    return None if tensor.data is None else tensor.data.array


# -- the evaluator for loop conditions -------------------------------------------------------

_EVALUATORS: Mapping[str, str] = MappingProxyType(
    {
        "ADD": "add",
        "SUB": "subtract",
        "MAXIMUM": "maximum",
        "MINIMUM": "minimum",
        "GREATER": "greater",
        "GREATER_EQUAL": "greater_equal",
        "EQUAL": "equal",
        "LOGICAL_AND": "logical_and",
        "LOGICAL_OR": "logical_or",
        "LOGICAL_XOR": "logical_xor",
        "LOGICAL_NOT": "logical_not",
        "IDENTITY": "asarray",
    }
)
"""The operators a loop's condition may be computed with, on INT8/16/32 and BOOL values, and
the numpy function that computes each (in int64, so that an overflow is seen, not wrapped)."""

_BITS = MappingProxyType({DType.INT8: 8, DType.INT16: 16, DType.INT32: 32, DType.BOOL: 1})


def _evaluate_all(
    block: Graph, inputs: list[Array | None], outer: Mapping[str, Tensor]
) -> list[Array | None]:
    """The values of ``block``'s outputs that follow from ``inputs`` (``None``: unknown). A
    name the block does not define is the enclosing graph's (``outer``): its constants are
    known."""
    import numpy as np

    from vgfc.dtypes import numpy_dtype

    known: dict[str, Array | None] = dict(zip(block.inputs, inputs, strict=True))
    for op in block.operators:
        if op.is_constant:
            for name in op.outputs:
                known[name] = _value(block.tensors[name])
            continue
        args = [known[n] if n in known else _outer(outer, n) for n in op.inputs]
        out = block.tensors.get(op.outputs[0]) if len(op.outputs) == 1 else None
        known.update(dict.fromkeys(op.outputs))
        if op.op not in _EVALUATORS or out is None or out.dtype not in _BITS:
            continue
        if not args or any(a is None for a in args):
            continue
        fn = getattr(np, _EVALUATORS[op.op])
        value = np.asarray(fn(*(np.asarray(a, np.int64) for a in args)))
        bits = _BITS[out.dtype]
        if bits > 1 and value.size:
            low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
            if value.min() < low or value.max() > high:
                continue  # an overflow: the device's rules, not decided here
        known[op.outputs[0]] = value.astype(numpy_dtype(out.dtype) or np.bool_)
    return [known.get(n) for n in block.outputs]
