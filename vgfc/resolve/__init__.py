"""Resolve custom operators: every CUSTOM op of a graph becomes a typed, checked shader op, or
the built-in operators it is composed of.

The stage between verify and partition. For each CUSTOM op it finds what the op *is*:

* a ``com.arm.VulkanCustomShader`` op with shader code is parsed from its
  ``implementation_attrs`` (:mod:`vgfc.resolve.attrs`) and held to the resource layout contract
  (:mod:`vgfc.resolve.contract`);
* any other op (any domain, or an Arm op without code) is looked up by domain and operator name
  in the kernel libraries given with ``--kernels`` (:mod:`vgfc.resolve.library`): its entry
  either expands it into TOSA built-ins (:mod:`vgfc.resolve.compose`), or selects a shader kernel
  (:mod:`vgfc.resolve.select`) and puts the CAST/TRANSPOSE/PAD/SLICE conversions the kernel needs
  around it (:mod:`vgfc.resolve.convert`), as :mod:`vgfc.resolve.bind` directs; each op made so
  carries its :class:`~vgfc.diagnostics.Origin`, which diagnostics at it render;
* a custom op that no library knows is refused with a clear error.

When anything was expanded or inserted the graph is renumbered: ``Operator.index`` is the
position in the new graph and ``source_index`` the op of the file each one came from, so
diagnostics still name the op the user wrote. Conversions that undo each other between two bound
ops (a TRANSPOSE back to NCHW straight into a TRANSPOSE to NHWC; a widening CAST and the
narrowing one after it) are dropped.

Nothing is compiled here: shaders are compiled when their partition is lowered
(:mod:`vgfc.lower.shader`). With ``keep_going`` each op's first error is collected and the next op
resolved, so one ``vgfc check`` run reports every broken op.

Resolve is linear in the number of ops: a bound op sees the tensors the ops before it added
through a view (:class:`~vgfc.ir.TensorsAdded`) over the graph's own, never a copy of the
whole table (a copy per op made 4,000 library ops take 36 s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vgfc.diagnostics import Diagnostic, UnsupportedError, VgfcError, did_you_mean
from vgfc.ir import CUSTOM_SHADER_DOMAIN, Graph, Operator, Tensor, TensorsAdded
from vgfc.record import record, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.ir import ShaderSpec
    from vgfc.resolve.bind import Binding
    from vgfc.resolve.library.records import Entry, Library

__all__ = ["Resolution", "bind_entry", "resolve"]


@record
class Resolution:
    """A graph with its custom ops bound, and what could not be bound."""

    graph: Graph
    """The input graph with ``Operator.shader`` set on every resolved custom op."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """Warnings (a lossy conversion a kernel allowed), and with ``keep_going`` the first error
    of each op that failed."""
    failed: frozenset[int] = frozenset()
    """Indices of the ops that failed (with ``keep_going``); they keep no shader."""
    renumbered: bool = False
    """True when ops were expanded, inserted or dropped: indices are new positions and the
    caller must recompute the dependency order."""
    kernels: tuple[tuple[int, str, str], ...] = ()
    """(op index, library entry, kernel or ``compose``) for every op a library bound."""
    order: tuple[int, ...] = ()
    """The operators' dependency order (indices into the new graph when renumbered)."""


def resolve(
    graph: Graph,
    order: Sequence[int] | None = None,
    *,
    keep_going: bool = False,
    libraries: Sequence[Library] = (),
    auto_convert: bool = True,
    calls: Mapping[str, int] | None = None,
) -> Resolution:
    """Bind every CUSTOM op of ``graph`` (with ``libraries`` searched in order, the first entry
    for an op wins). An op whose domain ``calls`` maps to an opcode is bound to that CALL
    (:attr:`Operator.call_opcode`) whatever the libraries hold: the option is the user's word
    about that domain, a library's entries a default. ``order`` is the graph's dependency
    order (:func:`vgfc.verify.verify`); the result carries it, worked out anew when ops were
    added. Raises the first :class:`VgfcError` unless ``keep_going``."""
    groups: list[tuple[Operator, ...]] = []
    tensors: dict[str, Tensor] = {}
    diagnostics: list[Diagnostic] = []
    failed: list[int] = []  # positions in ``groups``
    bound_by: dict[int, tuple[str, str]] = {}
    changed = False
    view = TensorsAdded(graph.tensors, tensors)
    for op in graph.operators:
        if op.op != "CUSTOM":
            groups.append((op,))
            continue
        opcode = calls.get(op.domain or "") if calls else None
        if opcode is not None:
            groups.append((replace(op, call_opcode=opcode),))
            continue
        try:
            # A view, not a copy: the table the ops before this one grew, over the graph's.
            seen = replace(graph, tensors=view) if tensors else graph
            spec, binding = _bind(op, seen, libraries, auto_convert)
        except VgfcError as e:
            if not keep_going:
                raise
            diagnostics.append(e.diagnostic)
            failed.append(len(groups))
            groups.append((op,))
            continue
        if binding is None:
            groups.append((replace(op, shader=spec),))
            continue
        bound_by[len(groups)] = (binding.entry, binding.kernel or "compose")
        diagnostics.extend(binding.warnings)
        groups.append(binding.operators)
        tensors.update(binding.tensors)
        changed = changed or len(binding.operators) != 1
    if not changed:
        operators = tuple(g[0] for g in groups)
        bound = replace(graph, operators=operators)
        kernels = tuple((operators[i].index, e, k) for i, (e, k) in bound_by.items())
        failed_ops = frozenset(operators[i].index for i in failed)
        if order is None:
            order = _order(bound)
        return Resolution(bound, tuple(diagnostics), failed_ops, False, kernels, tuple(order))
    return _renumbered(graph, groups, tensors, diagnostics, failed, bound_by)


def _order(graph: Graph) -> tuple[int, ...]:
    from vgfc.verify import topological_order

    return tuple(op.index for op in topological_order(graph))


def _renumbered(
    graph: Graph,
    groups: list[tuple[Operator, ...]],
    tensors: dict[str, Tensor],
    diagnostics: list[Diagnostic],
    failed: list[int],
    bound_by: dict[int, tuple[str, str]],
) -> Resolution:
    from vgfc.resolve.convert import cancel_inverse_pairs

    flat: list[Operator] = []
    failed_ops: set[int] = set()
    kernels: list[tuple[int, str, str]] = []
    recorded: set[int] = set()
    failed_groups = set(failed)
    all_tensors = {**graph.tensors, **tensors}
    final = cancel_inverse_pairs(
        [op for g in groups for op in g], all_tensors, frozenset(graph.outputs)
    )
    for g, ops in enumerate(groups):
        for op in ops:
            current = final.get(id(op))
            if current is None:
                continue
            position = len(flat)
            if g in failed_groups:
                failed_ops.add(position)
            composed = g in bound_by and bound_by[g][1] == "compose"
            if g in bound_by and (current.shader is not None or composed) and g not in recorded:
                kernels.append((position, *bound_by[g]))
                recorded.add(g)
            flat.append(
                replace(
                    current,
                    index=position,
                    source_index=current.file_index,
                )
            )
    used = {n for op in flat for n in (*op.inputs, *op.outputs)}
    used.update(graph.inputs, graph.outputs)
    tensor_table = {n: t for n, t in all_tensors.items() if n in used or n in graph.tensors}
    bound = replace(graph, operators=tuple(flat), tensors=tensor_table)
    return Resolution(
        bound, tuple(diagnostics), frozenset(failed_ops), True, tuple(kernels), _order(bound)
    )


@record
class _Bound:
    operators: tuple[Operator, ...]
    tensors: dict[str, Tensor]
    entry: str
    kernel: str | None
    warnings: tuple[Diagnostic, ...] = ()


def _bind(
    op: Operator, graph: Graph, libraries: Sequence[Library], auto_convert: bool
) -> tuple[ShaderSpec | None, _Bound | None]:
    # Only a model with custom ops imports what reads and checks their attributes.
    from vgfc.resolve.attrs import parse_shader_spec
    from vgfc.resolve.contract import check_contract

    domain = op.domain or ""
    name = op.custom_name or ""
    entry = next((e for lib in libraries if (e := lib.find(domain, name)) is not None), None)
    if domain == CUSTOM_SHADER_DOMAIN:
        try:
            spec = parse_shader_spec(op, graph)
        except VgfcError:
            if entry is None:
                raise
            spec = None  # attributes without the shader's: the library says how it runs
        if spec is not None and (spec.language is not None or entry is None):
            check_contract(spec, op, graph)
            _check_operands(op, graph)
            return spec, None
    if entry is None:
        raise UnsupportedError(_unknown(domain, name, libraries), op.where(graph.source))
    binding = bind_entry(op, graph, entry, auto_convert=auto_convert)
    return None, _Bound(
        binding.operators, dict(binding.tensors), entry.label, binding.kernel, binding.warnings
    )


def bind_entry(op: Operator, graph: Graph, entry: Entry, *, auto_convert: bool = True) -> Binding:
    """Bind the custom op ``op`` of ``graph`` to the kernel-library ``entry`` as :func:`resolve`
    does: the entry's expansion or kernel with its conversions, each shader op of it held to
    the resource layout contract and reading no variable. Raises
    :class:`VgfcError`."""
    from vgfc.resolve.bind import bind_op
    from vgfc.resolve.contract import check_contract

    binding = bind_op(op, graph, entry, auto_convert=auto_convert)
    after = replace(graph, tensors=TensorsAdded(graph.tensors, binding.tensors))
    for added in binding.operators:
        if added.shader is not None:
            # Errors about the op as the model has it: its operands, not the kernel's names.
            plain = replace(added, origin=None)
            check_contract(added.shader, plain, after)
            _check_operands(plain, after)
    return binding


def _unknown(domain: str, name: str, libraries: Sequence[Library]) -> str:
    if not libraries:
        hint = (
            "; vgfc ships a library for MediaPipe's TFLite custom ops: --kernels mediapipe"
            if domain == "TFL"
            else ""
        )
        return (
            f"no kernel for custom operator {domain}/{name}: vgfc compiles "
            f"{CUSTOM_SHADER_DOMAIN} operators with shader code, and others through a kernel "
            f"library given with --kernels FILE{hint}"
            f"{did_you_mean(domain, [CUSTOM_SHADER_DOMAIN])}"
        )
    known = [f"{e.domain}/{e.name}" for lib in libraries for e in lib.entries.values()]
    shown = ", ".join(lib.shown for lib in libraries)
    return (
        f"no kernel library entry for {domain}/{name} (searched {shown})"
        f"{did_you_mean(f'{domain}/{name}', known)}"
    )


def _check_operands(op: Operator, graph: Graph) -> None:
    """A shader reads tensors through descriptors that a runtime binds once per run; a variable
    keeps state across runs, which such a binding cannot. (A constant it reads is materialised
    by a graph segment before it: :mod:`vgfc.partition`.)"""
    for name in (*op.inputs, *op.outputs):
        if graph.tensors[name].is_variable:
            raise UnsupportedError(
                "a shader that reads or writes a variable (state kept across runs) is not "
                "supported: move the value through VARIABLE_READ / VARIABLE_WRITE in the graph",
                op.where(graph.source),
                tensor=name,
            )
