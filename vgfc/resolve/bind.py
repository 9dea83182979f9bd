"""Bind one custom op to a kernel library entry: check its outputs against what the entry
infers (:mod:`vgfc.resolve.infer`), then either expand the entry's ``compose``
(:mod:`vgfc.resolve.compose`) or select a kernel (:mod:`vgfc.resolve.select`) and make the op
that runs it, with the conversions it needs around it (:mod:`vgfc.resolve.convert`).

What comes out is a list of operators and the new tensors they use; the resolve stage splices
them into the graph in place of the custom op (:mod:`vgfc.resolve`). The op that runs a kernel
gets the kernel's :class:`~vgfc.ir.ShaderSpec` (made here: its shader file, defines and dispatch
size evaluated for the op) and an :class:`~vgfc.diagnostics.Origin` of kind ``kernel``, so a
later stage's error at it (a shader compile error, a dispatch warning) names the library's
entry, kernel and keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vgfc.diagnostics import Diagnostic, InputError, Location, Origin, UnsupportedError
from vgfc.dtypes import element_format
from vgfc.ir import (
    IMAGE_DESCRIPTORS,
    Graph,
    Operator,
    ShaderResource,
    ShaderSpec,
    Tensor,
    TensorsAdded,
)
from vgfc.record import record, replace
from vgfc.resolve.compose import expand
from vgfc.resolve.convert import Names, converted
from vgfc.resolve.expr import ExprError
from vgfc.resolve.infer import check_inferred, infer_outputs
from vgfc.resolve.library.records import DIMENSIONS, Entry, Kernel, Library
from vgfc.resolve.library.values import dispatch_size
from vgfc.resolve.params import ParamError, decode_params
from vgfc.resolve.select import View, lossy_warnings, select_kernel

# infer_outputs: also imported from here (vgfc.executorch).
__all__ = ["Binding", "bind_op", "infer_outputs", "read_shader"]

_KIND = {
    "VK_DESCRIPTOR_TYPE_TENSOR_ARM": "tensor",
    "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER": "buffer",
    "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER": "buffer",
}


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
    check_inferred(op, graph, entry, tensors, scope, where)
    if entry.compose is not None:
        operators, new = expand(op, graph, entry, names, tensors, scope, where)
        return Binding(operators, new)
    kernel, views = select_kernel(entry, tensors, auto_convert, where)
    binding = _build(op, graph, entry, kernel, names, tensors, views, params, where)
    return replace(binding, warnings=lossy_warnings(entry, kernel, views, where))


def _raw_attrs(op: Operator) -> bytes | None:
    raw = op.attrs.get("implementation_attrs")
    if isinstance(raw, bytes):
        return raw
    if isinstance(raw, np.ndarray):
        return raw.tobytes()
    return None


# --- The op that runs the selected kernel ----------------------------------------------------


def _build(
    op: Operator,
    graph: Graph,
    entry: Entry,
    kernel: Kernel,
    names: Mapping[str, str],
    tensors: Mapping[str, Tensor],
    views: Mapping[str, View],
    params: Mapping[str, Any],
    where: Location,
) -> Binding:
    fresh = Names(graph)
    new: dict[str, Tensor] = {}
    before: list[Operator] = []
    after: list[Operator] = []
    kernel_names: dict[str, str] = {}
    line, column = (kernel.line, kernel.column) if kernel.line else (entry.line, entry.column)
    inserted = Origin(
        "conversion", entry.label, entry.library.shown, line, kernel.name, column=column
    )
    for name in entry.inputs:
        kernel_names[name], ops = converted(
            op, name, tensors[name], views[name], entry, fresh, new, inserted
        )
        before.extend(ops)
    for name in entry.outputs:
        kernel_names[name], ops = converted(
            op, name, tensors[name], views[name], entry, fresh, new, inserted, result=True
        )
        after.extend(ops)
    all_tensors = TensorsAdded(graph.tensors, new)  # a view: one op's work stays its own size
    kernel_tensors = {n: all_tensors[kernel_names[n]] for n in entry.operands}
    spec = _spec(op, entry, kernel, kernel_tensors, params, where)
    bound = replace(
        op,
        inputs=tuple(kernel_names[n] for n in entry.inputs),
        outputs=tuple(kernel_names[n] for n in entry.outputs),
        shader=spec,
        origin=Origin(
            "kernel",
            entry.label,
            entry.library.shown,
            line,
            kernel.name,
            # What messages call the shader's source (as vgfc.lower.elements.code_name does).
            str(kernel.shader.path).replace("\\", "/").rsplit("/", 1)[-1],
            tuple(
                [(f"input_{i}", n) for i, n in enumerate(entry.inputs)]
                + [(f"output_{i}", n) for i, n in enumerate(entry.outputs)]
            ),
            shader_file(entry.library, kernel.shader.path),
            column,
        ),
    )
    conversions = tuple(note for v in views.values() for note in v.notes)
    return Binding((*before, bound, *after), new, kernel.name, conversions)


def shader_file(library: Library, path: Path) -> str:
    """A kernel's shader file as an editor opens it (:attr:`Origin.shader_file`): beside the
    library as the user named it where it lies in the library's folder, else its real path."""
    from vgfc.files.inputs import shown_path

    folder = library.path.parent
    shown = Path(library.shown)
    if path.is_relative_to(folder) and shown.name == library.path.name:
        return shown_path(shown.parent / path.relative_to(folder))
    return shown_path(path)


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
        # As the user would name it (beside the library as named): what a depfile lists.
        source_file=shader_file(entry.library, shader.path),
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
