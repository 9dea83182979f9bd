"""Bind one custom op to a kernel library entry: infer and check its outputs, then either expand
its composed graph or select a kernel and put the conversions it needs around it.

What comes out is a list of operators and the new tensors they use; the resolve stage splices
them into the graph in place of the custom op (:mod:`vgfc.resolve`).

Selection (ExecuTorch's partial kernels): the first kernel whose ``arg_meta`` accepts every
operand's dtype and layout as the model gives them wins. If none does, the first kernel that
accepts them after a conversion wins, and the conversions become built-in ops around the custom
op (PPL.NN's automatic reorder, seed 000's NCHW -> NHWC around a shader):

* a dtype the kernel does not take: CAST to one it does (a float to a float first);
* NCHW where the kernel wants NHWC (or the reverse): TRANSPOSE;
* an image resource on C = 3 data: PAD to 4 channels before, SLICE back to 3 after.

Inputs are converted before the op, results after it, in reverse order, so the op's outputs keep
the names, dtypes and shapes the model declares. With ``auto_convert`` off a conversion is an
error instead. When no kernel fits, the error lists each candidate and why it was passed over.

Selection never narrows unasked. A CAST that loses information on its way into a kernel (FP32
to FP16 or BF16, FP16 to BF16, float to integer, a wider integer to a narrower one, an integer
to a float too narrow to hold it exactly) would give wrong numbers with every tool saying "ok",
so a kernel that needs one is passed over unless it names the operand in ``allow_lossy``; then
the CAST is inserted and reported as a warning. A kernel's result converted to the dtype the
model declares is rounded to that dtype's precision, which the model asked for: only a float
result turned into an integer (or a boolean) counts as lossy there. TRANSPOSE, and the PAD of a
third channel to four (a zero channel the SLICE after the op drops again), change no value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from vgfc.diagnostics import Diagnostic, InputError, Location, Severity, UnsupportedError
from vgfc.dtypes import DType, element_format, numpy_dtype
from vgfc.ir import IMAGE_DESCRIPTORS, Data, Graph, Operator, ShaderResource, ShaderSpec, Tensor
from vgfc.record import field, record, replace
from vgfc.resolve.expr import Expr, ExprError
from vgfc.resolve.library import (
    DIMENSIONS,
    Constant,
    Entry,
    Kernel,
    TensorRule,
    build_constant,
    dispatch_size,
)
from vgfc.resolve.params import ParamError, decode_params

__all__ = ["Binding", "bind_op", "infer_outputs"]

_TO_NHWC = (0, 2, 3, 1)
_TO_NCHW = (0, 3, 1, 2)
_KIND = {
    "VK_DESCRIPTOR_TYPE_TENSOR_ARM": "tensor",
    "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER": "buffer",
    "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER": "buffer",
}
_NUMERIC = {"SINT": "SINT", "UINT": "UINT", "SFLOAT": "SFLOAT"}


@record
class Binding:
    """What replaces one custom op."""

    operators: tuple[Operator, ...]
    """In dependency order; ``index`` is left to the caller (resolve renumbers)."""
    tensors: Mapping[str, Tensor]
    """Tensors the new operators add."""
    kernel: str | None = None
    """The selected kernel's name (``None`` for a composed op)."""
    conversions: tuple[str, ...] = ()
    """One line per inserted conversion, for the report."""
    warnings: tuple[Diagnostic, ...] = ()
    """One per lossy conversion inserted (a kernel's ``allow_lossy`` allowed it)."""


@record(frozen=False)
class _View:
    """How the kernel sees one operand."""

    dtype: DType
    layout: str | None
    pad: bool = False
    notes: list[str] = field(default_factory=list)
    lossy: str | None = None
    """The lossy CAST this view needs, as the op it inserts (``CAST FP32->FP16``)."""


@record
class _Misfit:
    """Why a kernel does not take the operands."""

    reason: str
    lossy: bool = False
    """True when only a conversion that loses information, not allowed, stands in the way."""


# (significand bits with the implicit one, exponent bits) of each float type: a float converts
# to another exactly when the other has at least as many of both.
_FLOATS = {
    DType.FP32: (24, 8),
    DType.FP16: (11, 5),
    DType.BF16: (8, 8),
    DType.FP8E4M3: (4, 4),
    DType.FP8E5M2: (3, 5),
}
_INTEGERS = {DType.INT8: 8, DType.INT16: 16, DType.INT32: 32, DType.INT48: 48, DType.INT64: 64}


def loses_information(source: DType, target: DType) -> bool:
    """True when a CAST from ``source`` to ``target`` can change a value: a narrower float or
    integer, a float to an integer, an integer to a float whose significand cannot hold it, any
    type to BOOL. BOOL converts exactly to every type (0 and 1)."""
    if source is target or source is DType.BOOL:
        return False
    if target is DType.BOOL:
        return True
    if source in _FLOATS:
        if target not in _FLOATS:
            return True
        (sig, exp), (to_sig, to_exp) = _FLOATS[source], _FLOATS[target]
        return to_sig < sig or to_exp < exp
    bits = _INTEGERS.get(source)
    if bits is None:
        return True
    if target in _FLOATS:
        return bits - 1 > _FLOATS[target][0]  # the magnitude bits must fit the significand
    return _INTEGERS.get(target, 0) < bits


def _result_loses(kernel: DType, model: DType) -> bool:
    """A kernel's result cast to the dtype the model declares: rounding to the model's own
    precision is what the model asked for; dropping a float's fraction (or all but one bit)
    is not."""
    if model is DType.BOOL:
        return kernel is not DType.BOOL
    return kernel.is_float and not model.is_float


def bind_op(op: Operator, graph: Graph, entry: Entry, *, auto_convert: bool = True) -> Binding:
    """Bind ``op`` to ``entry``. Raises :class:`InputError` or :class:`UnsupportedError`."""
    where = op.where(graph.source)
    try:
        params = decode_params(entry.params, _raw_attrs(op))
    except ParamError as e:
        raise InputError(
            f"{e} (as {entry.where().render()} decodes {entry.params.encoding} parameters)",
            Location(key="implementation_attrs").merged(where),
        ) from None
    if len(op.inputs) != len(entry.inputs) or len(op.outputs) != len(entry.outputs):
        raise InputError(
            f"{entry.label} takes {len(entry.inputs)} input(s) and {len(entry.outputs)} "
            f"output(s) ({entry.where().render()}), the op has {len(op.inputs)} and "
            f"{len(op.outputs)}",
            where,
        )
    names = dict(zip(entry.operands, op.inputs + op.outputs, strict=True))
    tensors = {n: graph.tensors[t] for n, t in names.items()}
    for n, t in tensors.items():
        if t.shape is None or any(d < 0 for d in t.shape):
            raise UnsupportedError(
                f"operand '{n}' has no static shape: kernel rules need one", where, tensor=t.name
            )
    scope: dict[str, Any] = {**params, **{n: t.shape for n, t in tensors.items()}}
    _check_inferred(op, graph, entry, tensors, scope, where)
    if entry.compose is not None:
        return _expand(op, graph, entry, names, tensors, scope, where)
    return _select(op, graph, entry, names, tensors, params, auto_convert, where)


def _raw_attrs(op: Operator) -> bytes | None:
    raw = op.attrs.get("implementation_attrs")
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, np.ndarray):
        return raw.tobytes()
    return None


def infer_outputs(
    entry: Entry, inputs: Mapping[str, Tensor], params: Mapping[str, Any]
) -> list[tuple[DType | None, tuple[int, ...] | None]]:
    """Each output's element type and shape as ``entry`` infers them from its ``inputs`` (the
    entry's input names -> tensors) and decoded ``params`` (defaults filled in here); ``None``
    where the entry says nothing. Raises :class:`InputError` naming the entry when a rule cannot
    be evaluated."""
    scope: dict[str, Any] = {
        **{f.name: f.default for f in entry.params.fields if f.has_default},
        **params,
        **{n: t.shape for n, t in inputs.items()},
    }
    found: list[tuple[DType | None, tuple[int, ...] | None]] = []
    for name in entry.outputs:
        rule = entry.infer.get(name)
        if rule is None:
            found.append((None, None))
            continue
        try:
            found.append(_evaluate_rule(rule, inputs, scope))
        except (ExprError, KeyError) as e:
            raise InputError(
                f"cannot infer output '{name}': {e}",
                Location(key=entry.label).merged(entry.where()),
            ) from None
    return found


def _evaluate_rule(
    rule: TensorRule, tensors: Mapping[str, Tensor], scope: Mapping[str, Any]
) -> tuple[DType | None, tuple[int, ...] | None]:
    dtype = None
    if rule.dtype is not None:
        dtype = tensors[rule.dtype].dtype if rule.dtype in tensors else DType[rule.dtype]
    shape: tuple[int, ...] | None = None
    if isinstance(rule.shape, str):
        shape = tensors[rule.shape].shape
    elif rule.shape is not None:
        shape = tuple(e.whole(scope) for e in rule.shape)
    return dtype, shape


def _check_inferred(
    op: Operator,
    graph: Graph,
    entry: Entry,
    tensors: Mapping[str, Tensor],
    scope: Mapping[str, Any],
    where: Location,
) -> None:
    for name, rule in entry.infer.items():
        tensor = tensors[name]
        at = Location(tensor=tensor.name, key=f"output '{name}'").merged(where)
        try:
            dtype, shape = _evaluate_rule(rule, tensors, scope)
        except ExprError as e:
            raise InputError(
                f"cannot infer its shape: {e} ({entry.where().render()})", at
            ) from None
        if dtype is not None and dtype is not tensor.dtype:
            raise InputError(
                f"{entry.label} gives {dtype.value} ({entry.where().render()}), the model "
                f"declares {tensor.dtype.value}",
                at,
            )
        if shape is not None and shape != tensor.shape:
            raise InputError(
                f"{entry.label} infers shape {list(shape)} ({entry.where().render()}), the "
                f"model declares {list(tensor.shape or ())}",
                at,
            )


# --- Composed operators -----------------------------------------------------------------------


def _expand(
    op: Operator,
    graph: Graph,
    entry: Entry,
    names: Mapping[str, str],
    tensors: Mapping[str, Tensor],
    scope: Mapping[str, Any],
    where: Location,
) -> Binding:
    compose = entry.compose
    assert compose is not None
    fresh = _Names(graph)
    base = op.outputs[0] if op.outputs else f"op{op.index}"
    mapping = dict(names)
    new: dict[str, Tensor] = {}
    operators: list[Operator] = []
    why = f"expanded from {entry.label}"
    try:
        for cname, c in compose.constants.items():
            tname = fresh(f"{base}.{cname}")
            mapping[cname] = tname
            dtype_name = tensors[c.dtype].dtype.value if c.dtype in tensors else c.dtype
            new[tname] = _constant(tname, dtype_name, c.shape, c.value, scope)
            kind = "CONST_SHAPE" if c.dtype == "SHAPE" else "CONST"
            operators.append(_added(op, kind, (), (tname,), {}, why))
        for iname, rule in compose.tensors.items():
            inner_dtype, shape = _evaluate_rule(rule, tensors, scope)
            if inner_dtype is None or shape is None:
                raise ExprError(f"intermediate '{iname}' needs both a dtype and a shape")
            tname = fresh(f"{base}.{iname}")
            mapping[iname] = tname
            new[tname] = Tensor(tname, shape, inner_dtype)
        for o in compose.ops:
            attrs = {k: _attr(v, scope) for k, v in o.attrs.items()}
            operators.append(
                _added(
                    op,
                    o.op,
                    tuple(mapping[n] for n in o.inputs),
                    tuple(mapping[n] for n in o.outputs),
                    attrs,
                    why,
                )
            )
    except ExprError as e:
        raise InputError(f"{e} ({entry.where().render()}: compose)", where) from None
    every = {**graph.tensors, **new}
    for added in operators:
        floats = {
            every[n].dtype.value
            for n in (*added.inputs, *added.outputs)
            if every[n].dtype.is_float and added.op != "CAST"
        }
        if len(floats) > 1:
            raise InputError(
                f"{entry.label} composes {added.op} over {' and '.join(sorted(floats))} values "
                f"({entry.where().render()}: compose): TOSA takes one float type per op; give "
                "constants the dtype of an operand (dtype: <operand name>) or CAST",
                where,
            )
    return Binding(tuple(operators), new)


def _attr(value: Any, scope: Mapping[str, Any]) -> Any:
    if isinstance(value, tuple):
        return tuple(_attr(v, scope) for v in value)
    if isinstance(value, Expr):
        out = value.evaluate(scope)
        if isinstance(out, float) and out.is_integer() and value.tree is not None:
            return int(out)
        return out
    return value


def _constant(
    name: str,
    dtype_name: str,
    shape: tuple[Expr, ...] | None,
    value: Expr | tuple[Expr, ...],
    scope: Mapping[str, Any],
) -> Tensor:
    dtype = DType.SHAPE if dtype_name == "SHAPE" else DType[dtype_name]
    data = build_constant(Constant(dtype_name, shape, value), dtype, scope)
    return Tensor(name, data.shape, dtype, data=Data.of(data, dtype), is_shape=dtype is DType.SHAPE)


# --- Kernel selection -------------------------------------------------------------------------


def _select(
    op: Operator,
    graph: Graph,
    entry: Entry,
    names: Mapping[str, str],
    tensors: Mapping[str, Tensor],
    params: Mapping[str, Any],
    auto_convert: bool,
    where: Location,
) -> Binding:
    rejected: list[str] = []
    lossy: list[str] = []
    unfit: list[str] = []  # why kernels fit neither as they are nor converted
    for convert in (False, True):
        for kernel in entry.kernels:
            views = _match(kernel, entry, tensors, convert)
            if isinstance(views, _Misfit):
                line = f"{kernel.name} (line {kernel.line})"
                if not convert:
                    rejected.append(f"{line}: {views.reason}")
                elif views.lossy:
                    lossy.append(f"{line} needs {views.reason}")
                else:
                    unfit.append(f"{line}: {views.reason}")
                continue
            if convert and not auto_convert:
                needed = "; ".join(n for v in views.values() for n in v.notes)
                raise UnsupportedError(
                    f"no kernel of {entry.label} ({entry.where().render()}) takes "
                    f"{_signature(entry, tensors)} as it is: {'; '.join(rejected)}; "
                    f"{kernel.name} takes it after conversions ({needed}), but "
                    "--no-auto-convert forbids them",
                    where,
                )
            binding = _build(op, graph, entry, kernel, names, tensors, views, params, where)
            return replace(binding, warnings=_lossy_warnings(entry, kernel, views, where))
    lines = "; ".join(rejected)
    if lossy:
        others = f"; {'; '.join(unfit)}" if unfit else ""
        raise UnsupportedError(
            f"no kernel of {entry.label} ({entry.where().render()}) takes "
            f"{_signature(entry, tensors)} without losing information: {'; '.join(lossy)}"
            f"{others}. Kernel selection never narrows unasked: give the op data of a dtype a "
            "kernel takes, or allow the conversion on the kernel with `allow_lossy: true` (or "
            "a list of operands)",
            where,
        )
    raise UnsupportedError(
        f"no kernel of {entry.label} ({entry.where().render()}) takes "
        f"{_signature(entry, tensors)}: {lines}",
        where,
    )


def _signature(entry: Entry, tensors: Mapping[str, Tensor]) -> str:
    parts = []
    for n in entry.operands:
        t = tensors[n]
        layout = f" {entry.layout}" if t.shape is not None and len(t.shape) == 4 else ""
        parts.append(f"{n}: {t.dtype.value}{layout}")
    return "(" + ", ".join(parts) + ")"


def _match(
    kernel: Kernel, entry: Entry, tensors: Mapping[str, Tensor], convert: bool
) -> dict[str, _View] | _Misfit:
    """Each operand's kernel view, or why the kernel does not fit."""
    bound: dict[str, DType] = {}
    views: dict[str, _View] = {}
    for name in entry.operands:
        tensor = tensors[name]
        meta = kernel.arg_meta.get(name)
        dtype = tensor.dtype
        result = name in entry.outputs
        notes: list[str] = []
        lossy: str | None = None
        if meta is not None and meta.dtypes is not None:
            allowed = (bound[meta.alias],) if meta.alias in bound else meta.dtypes
            if dtype not in allowed:
                accepted = "/".join(d.value for d in allowed)
                if not convert:
                    return _Misfit(f"'{name}' is {dtype.value}, it takes {accepted}")
                target = _cast_target(dtype, allowed, result)
                if target is None:
                    return _Misfit(
                        f"'{name}' is {dtype.value}, it takes {accepted} (no CAST converts)"
                    )
                source, to = (target, dtype) if result else (dtype, target)
                if _result_loses(target, dtype) if result else loses_information(dtype, target):
                    lossy = f"CAST {source.value}->{to.value}"
                    if name not in kernel.allow_lossy:
                        return _Misfit(f"{lossy} for '{name}'", lossy=True)
                notes.append(f"CAST {dtype.value}->{target.value} for '{name}'")
                dtype = target
            if meta.alias is not None:
                bound[meta.alias] = dtype
        layout = entry.layout if tensor.shape is not None and len(tensor.shape) == 4 else None
        layouts = meta.layouts if meta is not None else None
        if layout is not None and layouts is not None and layout not in layouts:
            if not convert:
                return _Misfit(f"'{name}' is {layout}, it takes {'/'.join(layouts)}")
            notes.append(f"TRANSPOSE {layout}->{layouts[0]} for '{name}'")
            layout = layouts[0]
        view = _View(dtype, layout, notes=notes, lossy=lossy)
        resource = kernel.resources[name]
        if resource.descriptor in IMAGE_DESCRIPTORS:
            shape = _kernel_shape(tensor.shape or (), entry.layout, view)
            if shape and shape[-1] == 3:
                if not convert:
                    return _Misfit(
                        f"'{name}' is an image with 3 channels, which needs padding to 4"
                    )
                view.pad = True
                view.notes.append(f"PAD/SLICE channels 3->4 for '{name}'")
        views[name] = view
    return views


def _cast_target(dtype: DType, allowed: tuple[DType, ...], result: bool) -> DType | None:
    """The accepted dtype a CAST turns ``dtype`` into (or, for a result, from): one that loses
    nothing first, then one of the same kind (float/integer), else the first accepted."""
    castable = [d for d in allowed if d is not DType.SHAPE and numpy_dtype(d) is not None]

    def cost(d: DType) -> tuple[bool, bool]:
        lossy = _result_loses(d, dtype) if result else loses_information(dtype, d)
        return lossy, d.is_float != dtype.is_float

    return min(castable, key=cost) if castable else None


def _lossy_warnings(
    entry: Entry, kernel: Kernel, views: Mapping[str, _View], where: Location
) -> tuple[Diagnostic, ...]:
    """The warning each lossy conversion gets: it is allowed, never silent (``-q`` keeps it)."""
    return tuple(
        Diagnostic(
            Severity.WARNING,
            f"kernel selection inserted {view.lossy} for '{name}' around {entry.label} kernel "
            f"'{kernel.name}': it loses information (allowed by allow_lossy, "
            f"{entry.where(kernel.line).render()})",
            where,
        )
        for name, view in views.items()
        if view.lossy is not None
    )


def _kernel_shape(shape: tuple[int, ...], graph_layout: str, view: _View) -> tuple[int, ...]:
    if view.layout is not None and view.layout != graph_layout:
        perm = _TO_NHWC if view.layout == "NHWC" else _TO_NCHW
        shape = tuple(shape[p] for p in perm)
    if view.pad:
        shape = (*shape[:-1], 4)
    return shape


def _build(
    op: Operator,
    graph: Graph,
    entry: Entry,
    kernel: Kernel,
    names: Mapping[str, str],
    tensors: Mapping[str, Tensor],
    views: Mapping[str, _View],
    params: Mapping[str, Any],
    where: Location,
) -> Binding:
    fresh = _Names(graph)
    new: dict[str, Tensor] = {}
    before: list[Operator] = []
    after: list[Operator] = []
    kernel_names: dict[str, str] = {}
    for name in entry.inputs:
        kernel_names[name], ops = _converted(
            op, name, tensors[name], views[name], entry, fresh, new
        )
        before.extend(ops)
    for name in entry.outputs:
        kernel_names[name], ops = _converted(
            op, name, tensors[name], views[name], entry, fresh, new, result=True
        )
        after.extend(ops)
    all_tensors = {**graph.tensors, **new}
    kernel_tensors = {n: all_tensors[kernel_names[n]] for n in entry.operands}
    spec = _spec(op, entry, kernel, kernel_tensors, params, where)
    bound = replace(
        op,
        inputs=tuple(kernel_names[n] for n in entry.inputs),
        outputs=tuple(kernel_names[n] for n in entry.outputs),
        shader=spec,
    )
    conversions = tuple(note for v in views.values() for note in v.notes)
    return Binding((*before, bound, *after), new, kernel.name, conversions)


def _spec(
    op: Operator,
    entry: Entry,
    kernel: Kernel,
    tensors: Mapping[str, Tensor],
    params: Mapping[str, Any],
    where: Location,
) -> ShaderSpec:
    scope: dict[str, Any] = {**params, **{n: t.shape for n, t in tensors.items()}}
    first = tensors[entry.outputs[0]].shape or ()
    if len(first) == 4:
        scope.update(zip(DIMENSIONS, first, strict=True))
    elif len(first) == 3:
        scope.update(zip(DIMENSIONS[1:], first, strict=True))
    at = Location(key=f"{entry.label} {kernel.name}").merged(where)
    try:
        defines = tuple(
            (name, _define_text(e.evaluate(scope))) for name, e in kernel.shader.defines
        )
        sizes = kernel.global_size or kernel.workgroups or ()
        xyz = [dispatch_size(e, scope) for e in sizes] + [1] * (3 - len(sizes))
    except ExprError as e:
        raise InputError(f"{e} ({entry.where(kernel.line).render()})", at) from None
    if any(n < 1 for n in xyz):
        raise InputError(
            f"the dispatch comes out as {xyz}: every size must be at least 1 "
            f"({entry.where(kernel.line).render()})",
            at,
        )
    shader = kernel.shader
    code: str | None = None
    spirv: bytes | None = None
    spirv, code = read_shader(kernel, at)
    resources = []
    for role, operands in (("input", entry.inputs), ("output", entry.outputs)):
        for i, name in enumerate(operands):
            r = kernel.resources[name]
            t = tensors[name]
            resources.append(
                ShaderResource(
                    role=role,
                    index=i,
                    tensor=t.name,
                    binding=r.binding,
                    set=r.set,
                    descriptor_type=r.descriptor,
                    format=r.format or _format(t, r.descriptor, at),
                    kind=_KIND.get(r.descriptor, "image"),
                    sampler=r.sampler,
                )
            )
    counts = tuple(xyz) if kernel.workgroups is not None else None
    size = tuple(xyz) if kernel.global_size is not None else None
    return ShaderSpec(
        name=op.custom_name or entry.name,
        entry_point=shader.entry_point,
        workgroup_counts=counts,  # type: ignore[arg-type]
        global_size=size,  # type: ignore[arg-type]
        language=shader.language,
        code=code,
        spirv=spirv,
        push_constants=(),
        inputs=tuple(r for r in resources if r.role == "input"),
        outputs=tuple(r for r in resources if r.role == "output"),
        defines=defines,
        include_dirs=tuple(str(d) for d in shader.include_dirs),
        source_file=str(shader.path),
        origin=f"{entry.where(kernel.line).render()}: {kernel.name}",
        operand_names=tuple(
            [(f"input_{i}", n) for i, n in enumerate(entry.inputs)]
            + [(f"output_{i}", n) for i, n in enumerate(entry.outputs)]
        ),
    )


def read_shader(kernel: Kernel, at: Location) -> tuple[bytes | None, str | None]:
    """A library kernel's shader file: (SPIR-V, None) or (None, source text), read through
    :func:`vgfc.files.inputs.open_input` (the file may have changed since the library was
    loaded)."""
    from vgfc.files.inputs import read_input, read_text
    from vgfc.limits import LIMITS

    shader = kernel.shader
    how: dict[str, Any] = {
        "what": "shader",
        "limit": LIMITS.shader_file_bytes_max,
        "limit_name": "shader_file_bytes_max",
        "shown": shader.path.name,
        "where": at,
    }
    if shader.language == "SPIR-V":
        return read_input(shader.path, **how), None
    return None, read_text(shader.path, **how)


def _define_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, tuple):
        return ", ".join(_define_text(v) for v in value)
    return str(value)


def _format(tensor: Tensor, descriptor: str, at: Location) -> str:
    try:
        scalar = element_format(tensor.dtype)
    except UnsupportedError as e:
        raise UnsupportedError(str(e.diagnostic.message), at) from None
    if descriptor not in IMAGE_DESCRIPTORS:
        return scalar
    channels = (tensor.shape or (1,))[-1]
    # VK_FORMAT_R32_SFLOAT -> VK_FORMAT_R32G32B32A32_SFLOAT for C = 4.
    _, _, rest = scalar.partition("VK_FORMAT_R")
    bits, _, numeric = rest.partition("_")
    if channels not in (1, 2, 4) or not bits.isdigit():
        return scalar  # the contract check says what is wrong
    return "VK_FORMAT_" + "".join(f"{c}{bits}" for c in "RGBA"[:channels]) + f"_{numeric}"


# --- Conversions between the model's view of an operand and the kernel's ---------------------

_WHY = "inserted by kernel selection"

_Op = tuple[str, tuple[str, ...], str, dict[str, Any]]
"""An op to insert: kind, inputs, output, attributes."""


@record
class _Step:
    """One conversion of an operand: the value the kernel sees (``near``), the ops that make it
    from the model's value (an input) or the model's value from it (a result), in the order
    they run, the constants they read, and the note the report shows."""

    near: Tensor
    ops: tuple[_Op, ...]
    note: str
    constants: tuple[Tensor, ...] = ()


def _cast(t: Tensor, now: Tensor, view: _View, entry: Entry, result: bool, fresh: _Names) -> _Step:
    near = Tensor(fresh(f"{t.name}.{view.dtype.value.lower()}"), now.shape, view.dtype)
    if result:
        return _Step(
            near, (("CAST", (near.name,), now.name, {}),), f"{view.dtype.value}->{t.dtype.value}"
        )
    return _Step(
        near, (("CAST", (now.name,), near.name, {}),), f"{t.dtype.value}->{view.dtype.value}"
    )


def _transpose(
    t: Tensor, now: Tensor, view: _View, entry: Entry, result: bool, fresh: _Names
) -> _Step:
    assert view.layout is not None
    perm, back = (_TO_NHWC, _TO_NCHW) if view.layout == "NHWC" else (_TO_NCHW, _TO_NHWC)
    shape = tuple((now.shape or ())[p] for p in perm)
    near = Tensor(fresh(f"{t.name}.{view.layout.lower()}"), shape, now.dtype)
    if result:
        op = ("TRANSPOSE", (near.name,), now.name, {"perms": back})
        return _Step(near, (op,), f"{view.layout}->{entry.layout}")
    op = ("TRANSPOSE", (now.name,), near.name, {"perms": perm})
    return _Step(near, (op,), f"{entry.layout}->{view.layout}")


def _pad(t: Tensor, now: Tensor, view: _View, entry: Entry, result: bool, fresh: _Names) -> _Step:
    """C = 3 to 4 before an image resource (PAD), and back after it (SLICE)."""
    shape = now.shape or ()
    if result:
        start = _shape_const(fresh(f"{t.name}.start"), [0] * len(shape))
        size = _shape_const(fresh(f"{t.name}.size"), list(shape))
        near = Tensor(fresh(f"{t.name}.c4"), (*shape[:-1], 4), now.dtype)
        ops: tuple[_Op, ...] = (
            ("CONST_SHAPE", (), size.name, {}),
            ("CONST_SHAPE", (), start.name, {}),
            ("SLICE", (near.name, start.name, size.name), now.name, {}),
        )
        return _Step(near, ops, "", (start, size))
    pads = _shape_const(fresh(f"{t.name}.padding"), [0] * (2 * len(shape) - 1) + [1])
    value = _scalar_const(fresh(f"{t.name}.pad_value"), now.dtype)
    near = Tensor(fresh(f"{t.name}.c4"), (*shape[:-1], 4), now.dtype)
    ops = (
        ("CONST_SHAPE", (), pads.name, {}),
        ("CONST", (), value.name, {}),
        ("PAD", (now.name, pads.name, value.name), near.name, {}),
    )
    return _Step(near, ops, "", (pads, value))


_CONVERSIONS: tuple[tuple[Callable[[Tensor, _View, Entry], bool], Callable[..., _Step]], ...] = (
    (lambda t, view, entry: view.dtype is not t.dtype, _cast),
    (lambda t, view, entry: view.layout is not None and view.layout != entry.layout, _transpose),
    (lambda t, view, entry: view.pad, _pad),
)
"""The conversions kernel selection may insert, each with when it applies, in order from the
model's value to the kernel's: run forward for an input, backward (last first) for a result."""


def _converted(
    op: Operator,
    name: str,
    t: Tensor,
    view: _View,
    entry: Entry,
    fresh: _Names,
    new: dict[str, Tensor],
    *,
    result: bool = False,
) -> tuple[str, list[Operator]]:
    """The tensor the kernel sees for operand ``name`` (the model's ``t``), and the ops that
    convert to it (an input) or back from it (a result), in the order they run. The tensors
    they add go into ``new``."""
    now = t
    steps: list[list[Operator]] = []
    for applies, make in _CONVERSIONS:
        if not applies(t, view, entry):
            continue
        step: _Step = make(t, now, view, entry, result, fresh)
        for c in step.constants:
            new[c.name] = c
        new[step.near.name] = step.near
        note = f"{_WHY}: {step.note} for '{name}'" if step.note else _WHY
        steps.append(
            [
                _added(op, kind, inputs, (output,), attrs, note if inputs else _WHY)
                for kind, inputs, output, attrs in step.ops
            ]
        )
        now = step.near
    if result:
        steps.reverse()
    return now.name, [o for ops in steps for o in ops]


# --- Helpers ----------------------------------------------------------------------------------


class _Names:
    """Fresh tensor names: the wanted one, else with a number after it."""

    def __init__(self, graph: Graph) -> None:
        self.taken = set(graph.tensors)

    def __call__(self, wanted: str) -> str:
        name, n = wanted, 1
        while name in self.taken:
            n += 1
            name = f"{wanted}.{n}"
        self.taken.add(name)
        return name


def _added(
    op: Operator,
    kind: str,
    inputs: tuple[str, ...],
    outputs: tuple[str, ...],
    attrs: Mapping[str, Any],
    why: str,
) -> Operator:
    from types import MappingProxyType

    return Operator(
        index=op.index,
        op=kind,
        inputs=inputs,
        outputs=outputs,
        attrs=MappingProxyType(dict(attrs)),
        location_text=op.location_text,
        source_index=op.file_index,
        inserted=why,
    )


def _shape_const(name: str, values: list[int]) -> Tensor:
    data = np.asarray(values, dtype=np.int64)
    data.flags.writeable = False
    return Tensor(name, (len(values),), DType.SHAPE, data=Data.of(data, DType.SHAPE), is_shape=True)


def _scalar_const(name: str, dtype: DType) -> Tensor:
    np_type = numpy_dtype(dtype)
    assert np_type is not None
    data = np.zeros((1,), dtype=np_type)
    data.flags.writeable = False
    return Tensor(name, (1,), dtype, data=Data.of(data, dtype))
