"""Split a graph into an ordered sequence of ML and shader partitions.

The rules (seed 001): every Vulkan custom shader op is a partition of its own; all other work goes
into ML partitions; kinds never mix; a partition comes after every partition whose results it
reads. Within those rules vgfc places work as early as the dependencies allow:

* each ML op joins the **earliest** ML partition that follows all of its producers (an ML
  producer's partition itself qualifies, a shader producer forces a later one), and a new ML
  partition is only ever appended at the end;
* each shader goes right before the first ML partition that follows its producers (after any
  shaders already there, so independent shaders keep their program order).

Independent work therefore joins an existing partition instead of opening a new one. Processing
the ops in program order, this never yields more partitions than the program-order rule (a new
partition at every change of kind): a new ML partition is opened at most once per program-order
run of ML ops, and shader counts are equal.

Constants (CONST, CONST_SHAPE) are not placed on their own: each ML partition that reads a
constant lists it, so a constant used on both sides of a shader is materialised in both partitions.
A shader cannot hold a constant (a compute segment has no constants, and ExecuTorch's runtime
refuses them there), so a constant a shader reads, like one that is a graph output, is
materialised by an ML partition that runs before it and passed on as that partition's output, as
the reference converter does: the first ML partition when it runs before every such shader, else a
new one opened first.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from vgfc.ir import Graph, Operator
from vgfc.record import field, record
from vgfc.verify import data_producers, topological_order

__all__ = [
    "Partition",
    "PartitionKind",
    "Plan",
    "logical_bindings",
    "partition",
    "program_order_count",
]


class PartitionKind(enum.Enum):
    ML = "ml"
    SHADER = "shader"


@record
class Partition:
    """One unit of work that becomes one VGF segment."""

    id: int
    """Position in the execution sequence, from 0."""
    kind: PartitionKind
    operators: tuple[int, ...]
    """Indices of the operators it runs, in dependency order (constants excluded)."""
    constants: tuple[int, ...]
    """Indices of the CONST / CONST_SHAPE operators whose values it reads."""
    inputs: tuple[str, ...]
    """Tensors it reads from graph inputs or from earlier partitions."""
    outputs: tuple[str, ...]
    """Tensors it writes that a later partition or the graph's outputs read."""
    depends_on: tuple[int, ...]
    """Ids of the partitions that produce its inputs."""
    reason: str
    """Why this partition exists, e.g. which dependency forced a new ML partition."""


@record
class Plan:
    """The partitioned model: an ordered sequence of partitions."""

    partitions: tuple[Partition, ...]
    inputs: tuple[str, ...]
    """The graph's inputs."""
    outputs: tuple[str, ...]
    """The graph's outputs."""
    program_order_count: int
    """How many partitions the program-order rule (new partition at each change of kind) gives."""


@record(frozen=False, eq=False)
class _Part:
    kind: PartitionKind
    ops: list[Operator] = field(default_factory=list)
    # What forced this partition into existence: (consumer op, tensor, producer op) or None.
    cause: tuple[Operator, str, Operator] | None = None


def partition(graph: Graph, order: Sequence[int] | None = None) -> Plan:
    """Partition a verified graph. Pure: no I/O, the same graph always gives the same plan.

    ``order`` is the dependency order :func:`~vgfc.verify.verify` returned (operator indices);
    it is computed here when not given."""
    ops = _ordered(graph, order)
    producer = data_producers(graph)
    ML, SHADER = PartitionKind.ML, PartitionKind.SHADER  # an enum member costs a lookup each use
    seq: list[_Part] = []
    part_of: dict[int, _Part] = {}
    constant_ops: list[Operator] = []
    # What program_order_count gives, counted on the way rather than in a second walk.
    program_order, in_ml = 0, False

    for op in ops:
        if op.is_constant:
            constant_ops.append(op)
            continue
        shader = op.is_shader
        if shader or not in_ml:
            program_order += 1
        in_ml = not shader
        # The earliest position this op may take, and the dependency that decides it.
        lower, cause = 0, None
        for tensor in op.inputs:
            index = producer.get(tensor)
            p = None if index is None else part_of.get(index)
            if p is None:  # a graph input, or a constant: no partition holds those
                continue
            pos = seq.index(p) + (1 if (shader or p.kind is SHADER) else 0)
            if pos > lower or (pos == lower and cause is None and pos > 0):
                lower, cause = pos, (op, tensor, graph.operators[producer[tensor]])
        if lower < len(seq) and seq[lower].kind is ML:
            first_ml: int | None = lower  # the usual case, without the search below
        else:
            first_ml = next((i for i in range(lower, len(seq)) if seq[i].kind is ML), None)
        if shader:
            target = _Part(SHADER, [op], cause)
            seq.insert(len(seq) if first_ml is None else first_ml, target)
        elif first_ml is not None:
            target = seq[first_ml]
            target.ops.append(op)
        else:
            target = _Part(ML, [op], cause)
            seq.append(target)
        part_of[op.index] = target

    orphans = _place_orphan_constants(graph, seq, part_of, constant_ops, producer)
    return _finish(graph, seq, part_of, orphans, constant_ops, producer, program_order)


def _place_orphan_constants(
    graph: Graph,
    seq: list[_Part],
    part_of: dict[int, _Part],
    constant_ops: list[Operator],
    producer: dict[str, int],
) -> list[Operator]:
    """A constant that only feeds graph outputs, or that a shader reads, is materialised by the
    first ML partition (a new one opened first when a shader reading one runs before it).
    Returns those constants, in program order."""
    outputs = set(graph.outputs)
    # Few models have a constant among their outputs: only they need the set of tensors read.
    orphans = [op for op in constant_ops if not outputs.isdisjoint(op.outputs)]
    if orphans:
        read = {n for op in graph.operators if not op.is_constant for n in op.inputs}
        orphans = [op for op in orphans if read.isdisjoint(op.outputs)]
    # The shaders that read a constant, and those constants.
    readers: list[_Part] = []
    by_index = {op.index: op for op in constant_ops}
    for p in seq:
        if p.kind is not PartitionKind.SHADER:
            continue
        for n in p.ops[0].inputs:
            c = by_index.get(producer.get(n, -1))
            if c is not None:
                readers.append(p)
                if c not in orphans:
                    orphans.append(c)
    if not orphans:
        return orphans
    orphans.sort(key=lambda op: op.index)
    home = next((p for p in seq if p.kind is PartitionKind.ML), None)
    if home is None or any(seq.index(r) < seq.index(home) for r in readers):
        home = _Part(PartitionKind.ML)
        seq.insert(0, home)
    for op in orphans:
        part_of[op.index] = home
    return orphans


def _finish(
    graph: Graph,
    seq: list[_Part],
    part_of: dict[int, _Part],
    orphans: list[Operator],
    constant_ops: list[Operator],
    producer: dict[str, int],
    program_order: int,
) -> Plan:
    ids = {id(p): i for i, p in enumerate(seq)}
    constant_of = {
        o: op.index for op in constant_ops for o in op.outputs if producer.get(o) == op.index
    }
    # The constants of each partition: the orphans it materialises, then those it reads, in the
    # order it first reads them (which orders the constants it passes on as graph outputs).
    constants: list[list[int]] = [[] for _ in seq]
    for op in orphans:
        constants[ids[id(part_of[op.index])]].append(op.index)
    reads: list[tuple[str, ...]] = []  # what each partition reads from outside itself
    # What some partition reads from another: each tensor has one producer in a verified graph,
    # so the partition that computes one of these passes it on.
    crossing: set[str] = set()
    # Plain loops: a model of many one-op partitions pays for a comprehension once per partition.
    for pid, p in enumerate(seq):
        own: set[str] = set()
        for op in p.ops:
            own.update(op.outputs)
        inputs: dict[str, None] = {}
        read_constants: dict[int, None] = {}
        shader = p.kind is PartitionKind.SHADER
        for op in p.ops:
            for n in op.inputs:
                if n in own:
                    continue
                c = constant_of.get(n)
                if c is None or shader:  # a shader reads a constant from an ML partition
                    inputs[n] = None
                else:
                    read_constants[c] = None
        crossing.update(inputs)
        reads.append(tuple(inputs))
        materialised = set(constants[pid])  # a set: a partition may hold thousands
        constants[pid] += [c for c in read_constants if c not in materialised]

    outputs = set(graph.outputs)
    emitted_constants: set[str] = set()
    partitions: list[Partition] = []
    for pid, p in enumerate(seq):
        ins = reads[pid]
        outs = _unique(o for op in p.ops for o in op.outputs if o in outputs or o in crossing)
        const_outs = [
            o
            for c in constants[pid]
            for o in graph.operators[c].outputs
            if (o in outputs or o in crossing) and o not in emitted_constants
        ]
        emitted_constants.update(const_outs)
        outs += tuple(const_outs)
        deps = sorted({ids[id(part_of[producer[n]])] for n in ins if n in producer} - {pid})
        partitions.append(
            Partition(
                id=pid,
                kind=p.kind,
                operators=tuple(op.index for op in p.ops),
                constants=tuple(sorted(constants[pid])),
                inputs=ins,
                outputs=outs,
                depends_on=tuple(deps),
                reason=_reason(p, ids, part_of),
            )
        )
    return Plan(tuple(partitions), graph.inputs, graph.outputs, program_order)


def _reason(p: _Part, ids: dict[int, int], part_of: dict[int, _Part]) -> str:
    if p.kind is PartitionKind.SHADER:
        return f"shader {p.ops[0].label()} runs alone in a compute partition"
    if not p.ops:
        return "materialises constants that are graph outputs or that shaders read"
    if p.cause is None:
        return f"first ML work ({p.ops[0].label()})"
    consumer, tensor, prod = p.cause
    src = ids[id(part_of[prod.index])]
    return (
        f"{consumer.label()} reads '{tensor}' from shader partition {src} "
        f"({prod.label()}), so it must run after it"
    )


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def _ordered(graph: Graph, order: Sequence[int] | None) -> Sequence[Operator]:
    if order is None:
        return topological_order(graph)
    by_index = {op.index: op for op in graph.operators}
    return [by_index[i] for i in order]


def program_order_count(graph: Graph, order: Sequence[int] | None = None) -> int:
    """Partitions the program-order rule makes: one per shader, one per run of ML ops between."""
    return _program_order_count(_ordered(graph, order))


def _program_order_count(ops: Sequence[Operator]) -> int:
    count, in_ml = 0, False
    for op in ops:
        if op.is_constant:
            continue
        if op.is_shader:
            count, in_ml = count + 1, False
        elif not in_ml:
            count, in_ml = count + 1, True
    return count


def logical_bindings(graph: Graph, plan: Plan) -> dict[str, int]:
    """Logical binding id of every value that crosses a partition (a segment of the VGF):
    graph inputs first, then intermediates in partition order, then graph outputs. Lower
    gives them to the graph modules, layout to the resource table."""
    ids: dict[str, int] = {}
    for name in graph.inputs:
        ids.setdefault(name, len(ids))
    outputs = set(graph.outputs)
    for p in plan.partitions:
        for name in p.outputs:
            if name not in outputs:
                ids.setdefault(name, len(ids))
    for name in graph.outputs:
        ids.setdefault(name, len(ids))
    return ids
