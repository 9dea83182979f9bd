"""The specification checked whole: every ``ERROR_IF`` of TOSA 1.0 a graph can break before it
runs, and the level's limits, for every operator vgfc lowers.

:data:`RULES` maps each operator to the functions that yield its violations (one per family:
:mod:`~vgfc.verify.rules_elementwise`, :mod:`~vgfc.verify.rules_tensor`,
:mod:`~vgfc.verify.rules_layout`, :mod:`~vgfc.verify.rules_scale`,
:mod:`~vgfc.verify.rules_control`) after the element types it takes
(:mod:`~vgfc.verify.types`); :func:`check_level` holds
every tensor to the level's rank. :func:`spec_errors` runs them on a graph and turns each
violation into an :class:`~vgfc.diagnostics.InputError` naming the operator, the operand or
attribute, the values and, in brackets, the condition's name (tosa-tools' name for it, as the
official negative tests carry it).

Conditions on values that exist only at run time (indices read from a graph input, a zero point
or a RESIZE parameter that is a graph input) cannot be checked here; docs/limits.md lists them.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterator, Mapping
from types import MappingProxyType

from vgfc.diagnostics import InputError
from vgfc.ir import Graph, Operator
from vgfc.verify.conditions import LEVEL, dims
from vgfc.verify.rules_control import CONTROL_RULES
from vgfc.verify.rules_elementwise import ELEMENTWISE_RULES
from vgfc.verify.rules_layout import LAYOUT_RULES
from vgfc.verify.rules_scale import SCALE_RULES
from vgfc.verify.rules_tensor import TENSOR_RULES
from vgfc.verify.types import SAME, SIGNATURES, type_rule
from vgfc.verify.view import OpView, Rule, Violation

__all__ = ["RULES", "check_level", "spec_errors", "violations"]


def _rules() -> dict[str, tuple[Rule, ...]]:
    rules: dict[str, tuple[Rule, ...]] = {}
    for op in (*SAME, *SIGNATURES):
        rules[op] = (type_rule,)
    for family in (ELEMENTWISE_RULES, TENSOR_RULES, LAYOUT_RULES, SCALE_RULES, CONTROL_RULES):
        for op, rule in family.items():
            rules[op] = (*rules.get(op, ()), rule)
    return rules


RULES: Mapping[str, tuple[Rule, ...]] = MappingProxyType(_rules())
"""TOSA op -> the functions that yield its violations, in the order they are checked."""


def check_level(v: OpView) -> Iterator[Violation]:
    """``WrongRank`` beyond the level: no tensor an operator reads or writes has more than
    ``MAX_RANK`` dimensions."""
    tensors = v.graph.tensors
    for name in (*v.op.inputs, *v.op.outputs):
        tensor = tensors.get(name)
        if tensor is not None and tensor.shape is not None and len(tensor.shape) > LEVEL.max_rank:
            yield Violation(
                "WrongRank",
                f"rank {len(tensor.shape)} ({dims(tensor.shape)}) is over the level's "
                f"MAX_RANK, {LEVEL.max_rank}",
                tensor=name,
            )
            return


@functools.cache
def _lowered() -> frozenset[str]:
    from vgfc.spirv.tosa_ops import TOSA_LOWERINGS

    return frozenset(TOSA_LOWERINGS)


@functools.cache
def _operand_names(op: str) -> tuple[str, ...]:
    from vgfc.spirv.tosa_ops import TOSA_LOWERINGS, signature

    # IDENTITY and control flow have no instruction: their rules read the inputs by position.
    return signature(op).inputs if op in TOSA_LOWERINGS else ()


def violations(
    graph: Graph, op: Operator, regions: Mapping[str, Graph] | None = None
) -> Iterator[Violation]:
    """Every condition of the specification ``op`` breaks in ``graph`` (whose model's regions
    are ``regions``, by default ``graph.blocks``). An operator with more or fewer operands than
    its instruction takes raises :class:`InputError` first (:func:`check_operand_counts`)."""
    rules = RULES.get(op.op)
    if rules is None:
        return  # a structural op (CONST, CUSTOM) or one of the 1.1 draft's
    key = _shape_key(graph, op)
    if key is not None and key in _CLEAN:
        return
    if op.op in _lowered():
        from vgfc.spirv.tosa_ops import check_operand_counts

        check_operand_counts(op)  # raises: the rules read the operands the grammar names
    v = OpView(graph, op, _operand_names(op.op), regions)
    broken = False
    for rule in (check_level, *rules):
        for found in rule(v):
            broken = True
            yield found
    if key is not None and not broken and len(_CLEAN) < _CLEAN_MAX:
        _CLEAN.add(key)


_CLEAN: set[Hashable] = set()
"""The keys (:func:`_shape_key`) of operators found to break nothing: a model repeats a few
shapes of operator many times, and each is checked once per process."""
_CLEAN_MAX = 1 << 16
"""How many keys :data:`_CLEAN` holds at most (a hostile model's variety costs time, not
memory)."""


def _shape_key(graph: Graph, op: Operator) -> Hashable | None:
    """Everything the rules read of ``op`` when it reads no constant and runs no region: the
    version, the op, its attributes and its operands' shapes and element types; ``None`` for an
    operator whose verdict depends on more (constant values, a region's graphs)."""
    if op.op in _REGION_OPS:
        return None
    tensors = graph.tensors
    ins = []
    for name in op.inputs:
        t = tensors[name]
        if t.data is not None:
            return None
        ins.append((t.shape, t.dtype))
    outs = tuple((tensors[n].shape, tensors[n].dtype) for n in op.outputs)
    key = (graph.version, op.op, tuple(ins), outs, tuple(op.attrs.items()))
    try:
        hash(key)
    except TypeError:  # an attribute no set can hold (an array)
        return None
    return key


_REGION_OPS = frozenset({"COND_IF", "WHILE_LOOP"})


def spec_errors(graph: Graph, *, first_only: bool = False) -> list[InputError]:
    """The violations of every operator of ``graph`` (and of the graphs its control-flow
    operators run), as errors; with ``first_only``, at most the first."""
    errors: list[InputError] = []
    for g in (graph, *graph.blocks.values()):
        for op in g.operators:
            try:
                found_all = list(violations(g, op, graph.blocks))
            except InputError as e:  # too few or too many operands: nothing else is read
                errors.append(InputError(e.message, e.location.merged(g.where(op))))
                if first_only:
                    return errors
                continue
            for found in found_all:
                errors.append(
                    InputError(
                        f"{found.message} [{found.kind}]",
                        g.where(op),
                        tensor=found.tensor,
                        key=found.key,
                    )
                )
                if first_only:
                    return errors
    return errors
