"""Custom operators from PyTorch: kernel-library entries as ExecuTorch ops lowered to VGF shaders.

An entry of a kernel library (:mod:`vgfc.resolve.library`) already says everything the PyTorch
side of a custom shader op needs: its parameters, its operands' resources, its dispatch, how its
outputs' shapes and types follow from its inputs, which layout and type conversions each kernel
needs (documents 002, 003, 004). An entry that also carries a PyTorch schema::

    - domain: my_ops
      name: swish
      torch: "my_ops::swish(Tensor x, float beta=1.0) -> Tensor"
      reference: my_ops_ref:swish        # numpy in, numpy out: eager PyTorch, and vgfc verify
      ...

becomes, through :func:`load`, a ``torch.library`` op (``torch.ops.my_ops.swish``): its fake
implementation from the entry's shape and type inference, its eager implementation from the
entry's ``reference``. :meth:`TorchOps.attach` then keeps the ops in ExecuTorch's Arm VGF
delegate (``VgfPartitioner.register_custom_partition_op``) and adds one graph pass to the Arm
backend that rewrites each of them into ``tosa.CUSTOM`` with a complete
``com.arm.VulkanCustomShader`` payload (:mod:`vgfc.resolve.payload`): kernel selection, shader
compilation, validation and the cross-check are vgfc's own (the same as ``vgfc compile`` runs on
a model, through the shader cache), and the conversions the selected kernel needs (CAST,
TRANSPOSE between NCHW and NHWC, channel padding) are inserted around the op in the graph. The
payload stands alone: any converter, the reference one included, compiles the TOSA ExecuTorch
writes.

    import vgfc.executorch
    ops = vgfc.executorch.load("my_ops.yaml")
    partitioner = VgfPartitioner(VgfCompileSpec())
    ops.attach(partitioner)
    edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[partitioner])

torch and ExecuTorch are imported by this module only (``pip install 'vgfc[executorch]'``).
ExecuTorch 1.5.1 has no documented way to run the VGF conversion in-process, so its converter
subprocess (``MODEL_CONVERTER_PATH``, e.g. ``vgfc-model-converter``) converts the TOSA as usual.
"""

from __future__ import annotations

import json
import operator
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from vgfc.record import record, replace

try:
    import torch
except ImportError as e:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "vgfc.executorch needs torch and ExecuTorch: pip install 'vgfc[executorch]'"
    ) from e

from vgfc.diagnostics import InputError, Location, VgfcError
from vgfc.ir import CUSTOM_SHADER_DOMAIN, DType, Graph, Operator, Tensor, Version

if TYPE_CHECKING:
    from vgfc.compiler import Options
    from vgfc.resolve.library import Entry

__all__ = ["TorchOp", "TorchOps", "load"]

_DTYPES: dict[torch.dtype, DType] = {
    torch.float32: DType.FP32,
    torch.float16: DType.FP16,
    torch.bfloat16: DType.BF16,
    torch.int8: DType.INT8,
    torch.int16: DType.INT16,
    torch.int32: DType.INT32,
    torch.int64: DType.INT64,
    torch.bool: DType.BOOL,
}
"""PyTorch element types and the TOSA ones they are."""
_TORCH = {v: k for k, v in _DTYPES.items()}

_SCALARS = {
    "float": ("f32", "f64"),
    "int": ("i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"),
    "bool": ("bool",),
    "str": ("str",),
}
"""A schema argument's type and the parameter types it may carry."""


@record
class TorchOp:
    """One kernel-library entry as a PyTorch op."""

    entry: Entry
    qualname: str
    """``my_ops::swish``."""
    schema: Any
    """The parsed ``torch._C.FunctionSchema``."""

    @property
    def overload(self) -> Any:
        """``torch.ops.my_ops.swish.default``: what the partitioner keeps in the delegate."""
        namespace, name = self.qualname.split("::")
        return getattr(getattr(torch.ops, namespace), name).default

    @property
    def operator_name(self) -> str:
        """The ``operator_name`` of the ``tosa.CUSTOM`` op it becomes (also the name of the
        VGF module vgfc writes for it)."""
        return self.qualname.replace("::", ".")

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments by name, defaults filled in (an export drops the arguments
        that equal their defaults, and passes keyword arguments by position)."""
        bound: dict[str, Any] = {}
        for i, argument in enumerate(self.schema.arguments):
            if i < len(args):
                bound[argument.name] = args[i]
            elif argument.name in kwargs:
                bound[argument.name] = kwargs[argument.name]
            elif argument.has_default_value():
                bound[argument.name] = argument.default_value
        return bound

    def params(self, bound: Mapping[str, Any]) -> dict[str, Any]:
        """The entry's parameters of a call (the schema's non-tensor arguments)."""
        return {f.name: bound[f.name] for f in self.entry.params.fields if f.name in bound}

    def where(self) -> Location:
        return self.entry.where()


def load(
    *libraries: str | os.PathLike[str],
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: Mapping[str, str] | Sequence[str] = (),
    target_env: str = "vulkan1.3",
) -> TorchOps:
    """Define a PyTorch op for every entry of ``libraries`` (files, or a bundled library's name)
    that carries a ``torch`` schema. Raises :class:`vgfc.VgfcError` for a library that is wrong,
    an entry whose schema disagrees with its parameters, inputs or outputs, or one that cannot
    be a PyTorch op; each message names ``lib.yaml:LINE`` and the entry."""
    from vgfc.compilation import make_options
    from vgfc.resolve.library import load_libraries

    # Shaders compile in this process: ExecuTorch's export runs many threads, and a worker
    # process forked from it would start with their locks held.
    options = make_options(
        kernels=libraries,
        include_dirs=include_dirs,
        defines=defines,
        target_env=target_env,
        shader_timeout=0,
    )
    loaded = load_libraries(options.kernels, include_dirs=options.shader.include_dirs)
    ops = [
        _define(entry)
        for library in loaded
        for entry in library.entries.values()
        if entry.torch is not None
    ]
    if not ops:
        shown = ", ".join(library.shown for library in loaded)
        raise InputError(f"no entry of {shown} names a PyTorch schema (torch: ns::op(...) -> ...)")
    for op in ops:
        _OPTIONS[op.qualname] = options
    return TorchOps({op.qualname: op for op in ops}, options)


class TorchOps(Mapping[str, TorchOp]):
    """The PyTorch ops of kernel libraries (:func:`load`), by qualified name."""

    def __init__(self, ops: Mapping[str, TorchOp], options: Options) -> None:
        self._ops = dict(ops)
        self.options = options
        """How shaders are compiled (the ``-I``, ``-D`` and ``--target-env`` of ``load``)."""

    def __getitem__(self, name: str) -> TorchOp:
        return self._ops[name]

    def __iter__(self) -> Any:
        return iter(self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def attach(self, partitioner: Any) -> Any:
        """Keep these ops in ``partitioner``'s delegate (an ExecuTorch ``VgfPartitioner``) and
        have the Arm backend rewrite them into ``tosa.CUSTOM`` (one pass per process, for every
        op :func:`load` defined). Returns the partitioner."""
        for op in self._ops.values():
            _ATTACHED[op.overload] = op
            _register_tosa_fake(op.operator_name)
            partitioner.register_custom_partition_op(op.overload)
        _install_pass()
        return partitioner


# -- defining an op ------------------------------------------------------------------------------

_DEFINED: dict[str, tuple[str, Any, TorchOp]] = {}
"""Qualified name -> (schema text, the torch.library.Library holding it, the op): an op is
defined once per process; loading the same entry again reuses it."""


def _define(entry: Entry) -> TorchOp:
    assert entry.torch is not None
    where = Location(key=f"{entry.label}: torch").merged(entry.where(entry.torch_line))
    try:
        schema = torch._C.parse_schema(entry.torch)
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "not a schema"
        raise InputError(f"not a PyTorch operator schema: {first}", where) from None
    qualname = schema.name
    if "::" not in qualname or schema.overload_name:
        overload = f".{schema.overload_name}" if schema.overload_name else ""
        raise InputError(
            f"the schema names '{qualname}{overload}': write namespace::name, without an "
            "overload name",
            where,
        )
    op = TorchOp(entry, qualname, schema)
    _check(op, where)
    known = _DEFINED.get(qualname)
    if known is not None:
        if known[0] != entry.torch:
            raise InputError(
                f"{qualname} is already defined in this process with another schema ({known[0]})",
                where,
            )
        op = replace(known[2], entry=entry)
        _DEFINED[qualname] = (entry.torch, known[1], op)
        return op
    namespace, name = qualname.split("::")
    library = torch.library.Library(namespace, "FRAGMENT")
    library.define(entry.torch.split("::", 1)[1])
    library.impl(name, _eager(qualname), "CompositeExplicitAutograd")
    torch.library.register_fake(qualname, _fake(qualname), lib=library)
    _DEFINED[qualname] = (entry.torch, library, op)
    return op


def _current(qualname: str) -> TorchOp:
    """The op as the library loaded last defines it (a library loaded again replaces its
    entry; the torch op, defined once, follows)."""
    return _DEFINED[qualname][2]


def _check(op: TorchOp, where: Location) -> None:
    """The schema against the entry: tensor arguments are the inputs, in order; every other
    argument is a parameter of a matching type; parameters the schema lacks have defaults; one
    tensor result, the entry's one output, which a kernel (not a composed graph) computes."""
    entry = op.entry
    tensors = [a.name for a in op.schema.arguments if str(a.type) == "Tensor"]
    if tensors != list(entry.inputs):
        raise InputError(
            f"the schema's tensor arguments ({', '.join(tensors) or 'none'}) are not the "
            f"entry's inputs ({', '.join(entry.inputs)}), in order",
            where,
        )
    fields = {f.name: f for f in entry.params.fields}
    for argument in op.schema.arguments:
        kind = str(argument.type)
        if kind == "Tensor":
            continue
        field = fields.get(argument.name)
        if field is None:
            known = ", ".join(fields) or "none"
            raise InputError(
                f"argument '{argument.name}' is not a parameter of the entry (it has {known})",
                where,
            )
        base = kind.removesuffix("[]")
        allowed = _SCALARS.get(base)
        listed = kind.endswith("[]")
        if field.values and base == "str":
            allowed = (field.type,)  # an enum: the name goes in, its code to the kernel
        if (
            allowed is None
            or field.type not in allowed
            or listed != bool(field.count or field.variable)
        ):
            shape = f"{field.type} x {field.count}" if field.count else field.type
            raise InputError(
                f"argument '{argument.name}' is {kind}, the parameter is {shape}", where
            )
    given = {a.name for a in op.schema.arguments}
    for field in entry.params.fields:
        if field.name not in given and not field.has_default:
            raise InputError(
                f"parameter '{field.name}' has no default and the schema does not pass it", where
            )
    if entry.params.fields and entry.params.encoding not in ("json", "none"):
        raise InputError(
            f"a PyTorch op passes its parameters as JSON; the entry decodes "
            f"{entry.params.encoding} (params.encoding: json)",
            where,
        )
    returns = [str(r.type) for r in op.schema.returns]
    if returns != ["Tensor"] or len(entry.outputs) != 1:
        raise InputError(
            f"the schema returns {' , '.join(returns) or 'nothing'} and the entry has "
            f"{len(entry.outputs)} output(s): an ExecuTorch custom op returns one Tensor "
            "(tosa.CUSTOM takes a single output)",
            where,
        )
    if entry.compose is not None or not entry.kernels:
        raise InputError(
            "only an entry with kernels can be a PyTorch op, not a composed one", where
        )
    rule = entry.infer.get(entry.outputs[0])
    if rule is None or rule.dtype is None or rule.shape is None:
        raise InputError(
            f"the entry's infer gives no dtype and shape for '{entry.outputs[0]}': a PyTorch op "
            "needs both (infer: {y: {same_as: x}})",
            where,
        )


def _operands(op: TorchOp, bound: Mapping[str, Any]) -> dict[str, Tensor]:
    """The entry's inputs as IR tensors (shape and type of the tensors of the call)."""
    found = {}
    for name in op.entry.inputs:
        value = bound[name]
        dtype = _DTYPES.get(value.dtype)
        if dtype is None:
            raise InputError(
                f"input '{name}' is {value.dtype}, which no TOSA tensor holds",
                op.where(),
            )
        found[name] = Tensor(name, tuple(int(d) for d in value.shape), dtype)
    return found


def _outputs(op: TorchOp, bound: Mapping[str, Any]) -> list[Tensor]:
    """The entry's outputs as the entry infers them for the call."""
    from vgfc.resolve.bind import infer_outputs

    operands = _operands(op, bound)
    inferred = infer_outputs(op.entry, operands, op.params(bound))
    found = []
    for name, (dtype, shape) in zip(op.entry.outputs, inferred, strict=True):
        assert dtype is not None and shape is not None  # load() refuses an entry without them
        found.append(Tensor(name, shape, dtype))
    return found


def _eager(qualname: str) -> Any:
    def eager(*args: Any, **kwargs: Any) -> torch.Tensor:
        op = _current(qualname)
        entry = op.entry
        if entry.reference is None:
            where = entry.where().render()
            raise RuntimeError(
                f"{qualname} has no eager implementation: its kernel-library entry ({where}) "
                "names no reference (reference: module:function, numpy in, numpy out)"
            )
        from vgfc.resolve.reference import call_reference

        bound = op.bind(args, kwargs)
        arrays = [bound[n].detach().cpu().numpy() for n in entry.inputs]
        (out,) = call_reference(entry, arrays, op.params(bound), _outputs(op, bound))
        return torch.from_numpy(np.ascontiguousarray(out))

    return eager


def _fake(qualname: str) -> Any:
    def fake(*args: Any, **kwargs: Any) -> torch.Tensor:
        op = _current(qualname)
        bound = op.bind(args, kwargs)
        (out,) = _outputs(op, bound)
        _plan(op, bound)  # a call the kernels cannot take fails here, at export
        first = bound[op.entry.inputs[0]]
        return first.new_empty(out.shape, dtype=_TORCH[out.dtype])

    return fake


# -- the rewrite into tosa.CUSTOM ------------------------------------------------------------------

_ATTACHED: dict[Any, TorchOp] = {}
"""The ops attached to a partitioner, by their overload: what the rewrite pass rewrites."""
_OPTIONS: dict[str, Options] = {}
"""How each op's shaders are compiled: the options of the :func:`load` that defined it last."""
_PAYLOADS: dict[tuple[str, bytes], tuple[tuple[int, ...], torch.dtype]] = {}
"""(operator_name, payload) -> the shape and type of the ``tosa.CUSTOM`` op's result, for its
TOSA-dialect fake (which gets only the payload)."""
_PASS: list[Any] = []


def _register_tosa_fake(operator_name: str) -> None:
    from executorch.backends.arm.tosa.dialect.ops.custom import (
        has_fake_tosa_impl,
        register_fake_tosa,
    )

    if has_fake_tosa_impl(operator_name):
        return

    def fake(
        inputs: list[torch.Tensor], operator_name: str, domain_name: str, implementation_attrs: Any
    ) -> list[torch.Tensor]:
        found = _PAYLOADS.get((operator_name, bytes(implementation_attrs or [])))
        if found is None:
            raise RuntimeError(
                f"tosa.CUSTOM {operator_name}: a payload vgfc.executorch did not write"
            )
        shape, dtype = found
        return [inputs[0].new_empty(shape, dtype=dtype)]

    register_fake_tosa(operator_name)(fake)


def _install_pass() -> None:
    """Add the rewrite to the Arm backend's passes, once per process: after RewriteMatmulPass,
    where the graph is still edge ops (so the conversions inserted are lowered as any other)."""
    if _PASS:
        return
    from executorch.backends.arm._passes import RewriteMatmulPass
    from executorch.backends.arm._passes.arm_pass_manager import register_pass_insertions_after

    rewrite = _rewrite_pass()
    _PASS.append(rewrite)
    register_pass_insertions_after(RewriteMatmulPass, [rewrite])


def _rewrite_pass() -> Any:
    from executorch.backends.arm._passes import ArmPass
    from torch.fx.passes.infra.pass_base import PassResult

    class RewriteVgfcOps(ArmPass):  # type: ignore[misc]
        """Kernel-library ops -> tosa.CUSTOM with the conversions their kernel needs."""

        _passes_required_after: set[type] = set()  # noqa: RUF012 - the base's declaration

        def call(self, graph_module: torch.fx.GraphModule) -> Any:
            changed = False
            for node in list(graph_module.graph.nodes):
                if node.op != "call_function":
                    continue
                target = getattr(node.target, "_op", node.target)
                attached = _ATTACHED.get(target)
                if attached is None:
                    continue
                _rewrite(graph_module.graph, node, attached)
                changed = True
            if changed:
                graph_module.graph.lint()
                graph_module.recompile()
            return PassResult(graph_module, changed)

    return RewriteVgfcOps()


@record
class _Plan:
    """What one call of an op (its shapes, types and parameters) becomes: vgfc's binding, the
    conversions and the shader op, with each shader op's payload written and checked."""

    operators: tuple[Operator, ...]
    model: Graph
    """The op alone as a TOSA graph, with the tensors the binding added."""
    payloads: Mapping[str, bytes]
    """A shader op's output tensor -> its ``implementation_attrs``."""
    entry: Entry
    """Kept so that the id in the plan's key stays this entry's."""


_PLANS: dict[tuple[Any, ...], _Plan] = {}
"""Plans by op, entry, input shapes and types, and parameters: made when the op is exported
(its fake implementation runs), used again when the Arm backend rewrites it."""


def _plan(op: TorchOp, bound: Mapping[str, Any]) -> _Plan:
    """The plan for a call, ``bound`` its arguments by name (tensors real or fake). Kernel
    selection, shader compilation, validation and the cross-check run here, once per distinct
    call, so that a call the kernels cannot take fails at export naming the op, the entry and
    the candidates, and no payload vgfc has not checked reaches a converter."""
    op = _current(op.qualname)
    entry = op.entry
    inputs = _operands(op, bound)
    params = op.params(bound)
    key = (
        op.qualname,
        id(entry),
        tuple((t.shape, t.dtype) for t in inputs.values()),
        json.dumps(params, sort_keys=True, default=str),
    )
    found = _PLANS.get(key)
    if found is not None:
        return found
    options = _OPTIONS[op.qualname]
    outputs = _outputs(op, bound)
    tensors = {t.name: t for t in (*inputs.values(), *outputs)}
    custom = Operator(
        0,
        "CUSTOM",
        tuple(entry.inputs),
        tuple(entry.outputs),
        {
            "domain_name": entry.domain,
            "operator_name": entry.name,
            "implementation_attrs": _params_bytes(op, bound),
        },
    )
    source = f"{op.qualname} ({_call_text(inputs, params)})"
    model = Graph(tensors, (custom,), tuple(entry.inputs), tuple(entry.outputs), _VERSION, source)
    from vgfc.resolve.bind import bind_op

    try:
        binding = bind_op(custom, model, entry, auto_convert=options.auto_convert)
        after = replace(model, tensors={**model.tensors, **binding.tensors})
        payloads = {
            ir.outputs[0]: _payload(ir, after, op, options)
            for ir in binding.operators
            if ir.shader is not None
        }
    except VgfcError as e:
        raise InputError(e.diagnostic.render(), op.where()) from None
    plan = _Plan(binding.operators, after, payloads, entry)
    _PLANS[key] = plan
    return plan


def _call_text(inputs: Mapping[str, Tensor], params: Mapping[str, Any]) -> str:
    """``x: FP32[1, 4, 8, 8], beta=1.5``: a call, for messages."""
    parts = [f"{n}: {t.dtype.value}{list(t.shape or ())}" for n, t in inputs.items()]
    parts += [f"{k}={v!r}" for k, v in params.items()]
    return ", ".join(parts)


def _payload(ir: Operator, model: Graph, op: TorchOp, options: Options) -> bytes:
    """The bound shader op's ``implementation_attrs``: compiled, validated and cross-checked by
    vgfc, complete (SPIR-V, bindings, formats, samplers, workgroup counts), and read back by
    vgfc's own parser as the op it was written from."""
    from vgfc.lower.shader import lower_shader
    from vgfc.resolve.attrs import parse_shader_spec
    from vgfc.resolve.contract import check_contract
    from vgfc.resolve.payload import payload_bytes, shader_payload

    spec = ir.shader
    assert spec is not None
    module = lower_shader(spec, ir, model, options.shader)
    for d in module.warnings:
        warnings.warn(f"{op.qualname}: {d.render()}", stacklevel=2)
    assert module.spirv is not None
    payload = payload_bytes(shader_payload(spec, module.spirv, module.dispatch))
    attrs = {"domain_name": CUSTOM_SHADER_DOMAIN, "operator_name": op.operator_name}
    written = replace(ir, attrs={**attrs, "implementation_attrs": payload}, shader=None)
    check_contract(parse_shader_spec(written, model), written, model)
    result = model.tensors[ir.outputs[0]]
    assert result.shape is not None
    _PAYLOADS[(op.operator_name, payload)] = (result.shape, _TORCH[result.dtype])
    return payload


def _rewrite(graph: Any, node: Any, op: TorchOp) -> None:
    """Replace ``node`` (a call of ``op``) by the conversions and ``tosa.CUSTOM`` op of its
    plan."""
    op = _current(op.qualname)
    bound = op.bind(node.args, node.kwargs)
    entry = op.entry
    plan = _plan(op, {**bound, **{name: bound[name].meta["val"] for name in entry.inputs}})
    nodes = {name: bound[name] for name in entry.inputs}
    with graph.inserting_before(node):
        for ir in plan.operators:
            _emit(graph, node, ir, plan, nodes, op)
    node.replace_all_uses_with(nodes[entry.outputs[0]])
    graph.erase_node(node)


_VERSION = Version(1, 0, 0, False)


def _params_bytes(op: TorchOp, bound: Mapping[str, Any]) -> bytes:
    """The call's parameters as the entry decodes them (JSON; an enum's name as its code)."""
    if not op.entry.params.fields:
        return b""
    table = {}
    for field in op.entry.params.fields:
        if field.name not in bound:
            continue
        value = bound[field.name]
        if field.values and isinstance(value, str):
            codes = {name: code for code, name in field.values.items()}
            value = codes.get(value, value)
        table[field.key or field.name] = value
    return json.dumps(table).encode("utf-8")


def _emit(
    graph: Any, node: Any, ir: Operator, plan: _Plan, nodes: dict[str, Any], op: TorchOp
) -> None:
    """One operator of the plan as graph nodes; ``nodes`` maps IR tensors to them."""
    from executorch.exir.dialects._ops import ops as exir_ops

    model = plan.model
    if ir.op in ("CONST", "CONST_SHAPE"):
        return  # their values are the PAD's and SLICE's arguments below
    source = nodes[ir.inputs[0]]
    if ir.op == "CAST":
        dtype = _TORCH[model.tensors[ir.outputs[0]].dtype]
        target = exir_ops.edge.dim_order_ops._to_dim_order_copy.default
        new = _call(graph, node, target, (source,), {"dtype": dtype})
    elif ir.op == "TRANSPOSE":
        perms = [int(p) for p in ir.attrs["perms"]]  # type: ignore[union-attr]
        new = _call(graph, node, exir_ops.edge.aten.permute_copy.default, (source, perms), {})
    elif ir.op == "PAD":
        padding = _shape(graph, node, _values(model, ir.inputs[1]))
        new = _call(graph, node, exir_ops.backend.tosa.PAD.default, (source, padding), {"value": 0})
    elif ir.op == "SLICE":
        start = _shape(graph, node, _values(model, ir.inputs[1]))
        size = _shape(graph, node, _values(model, ir.inputs[2]))
        new = _call(graph, node, exir_ops.backend.tosa.SLICE.default, (source, start, size), {})
    elif ir.shader is not None:
        new = _custom(graph, node, ir, plan, nodes, op)
    else:
        raise InputError(f"{ir.op}: an operator vgfc.executorch cannot write into the graph")
    nodes[ir.outputs[0]] = new


def _values(model: Graph, name: str) -> list[Any]:
    data = model.tensors[name].data
    assert data is not None
    return [v.item() for v in np.asarray(data).reshape(-1)]


def _shape(graph: Any, node: Any, values: list[Any]) -> Any:
    """A ``tosa.CONST_SHAPE`` node: the shape operand of the TOSA dialect's PAD and SLICE."""
    from executorch.backends.arm.tosa.mapping import TosaSpecialDtype
    from executorch.exir.dialects._ops import ops as exir_ops

    shape = [int(v) for v in values]
    new = graph.call_function(exir_ops.backend.tosa.CONST_SHAPE.default, (shape,), {})
    new.meta = dict(node.meta)
    new.meta["val"] = shape
    new.meta[TosaSpecialDtype.meta_key()] = TosaSpecialDtype.SHAPE
    return new


def _call(graph: Any, node: Any, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A new node of ``target``, its value computed from its arguments' (fake) values."""
    new = graph.call_function(target, args, kwargs)
    new.meta = dict(node.meta)
    fake_args = tuple(a.meta["val"] if hasattr(a, "meta") else a for a in args)
    new.meta["val"] = target(*fake_args, **kwargs)
    return new


def _custom(
    graph: Any, node: Any, ir: Operator, plan: _Plan, nodes: dict[str, Any], op: TorchOp
) -> Any:
    """The shader op of the plan as ``tosa.CUSTOM`` and the ``getitem`` of its one result."""
    from executorch.exir.dialects._ops import ops as exir_ops

    result = plan.model.tensors[ir.outputs[0]]
    assert result.shape is not None
    attrs = {"domain_name": CUSTOM_SHADER_DOMAIN, "operator_name": op.operator_name}
    sources = [nodes[name] for name in ir.inputs]
    call = graph.call_function(
        exir_ops.backend.tosa.CUSTOM.default,
        (sources,),
        {**attrs, "implementation_attrs": list(plan.payloads[ir.outputs[0]])},
    )
    call.meta = dict(node.meta)
    first = sources[0].meta["val"]
    value = first.new_empty(result.shape, dtype=_TORCH[result.dtype])
    call.meta["val"] = [value]
    out = graph.call_function(operator.getitem, (call, 0))
    out.meta = dict(node.meta)
    out.meta["val"] = value
    return out
