"""Kernel selection: which kernel of a library entry runs a custom op, and how the kernel sees
each operand (its dtype, layout and channel count) where that differs from the model's.

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

from collections.abc import Mapping

from vgfc.diagnostics import Diagnostic, Location, Severity, UnsupportedError
from vgfc.dtypes import DType, numpy_dtype
from vgfc.ir import IMAGE_DESCRIPTORS, Tensor
from vgfc.record import field, record
from vgfc.resolve.convert import TO_NCHW, TO_NHWC
from vgfc.resolve.library.records import Entry, Kernel

__all__ = ["View", "loses_information", "lossy_warnings", "select_kernel"]


@record(frozen=False)
class View:
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


def select_kernel(
    entry: Entry, tensors: Mapping[str, Tensor], auto_convert: bool, where: Location
) -> tuple[Kernel, dict[str, View]]:
    """The first kernel of ``entry`` that takes the operands ``tensors`` (the entry's names ->
    the model's tensors) as they are, else the first that takes them converted, with how it sees
    each operand. Raises :class:`UnsupportedError` listing each candidate and why it was passed
    over (at ``where``) when none fits, or when a conversion is needed and ``auto_convert`` is
    off."""
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
            return kernel, views
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
) -> dict[str, View] | _Misfit:
    """Each operand's kernel view, or why the kernel does not fit."""
    bound: dict[str, DType] = {}
    views: dict[str, View] = {}
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
        view = View(dtype, layout, notes=notes, lossy=lossy)
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


def lossy_warnings(
    entry: Entry, kernel: Kernel, views: Mapping[str, View], where: Location
) -> tuple[Diagnostic, ...]:
    """The warning each lossy conversion gets: it is allowed, never silent (``-q`` keeps it)."""
    return tuple(
        Diagnostic(
            Severity.WARNING,
            f"kernel selection inserted {view.lossy} for '{name}' around {entry.label} kernel "
            f"'{kernel.name}': it loses information (allowed by allow_lossy, "
            f"{entry.where(kernel.line).render()})",
            where,
            name="lossy-conversion",
        )
        for name, view in views.items()
        if view.lossy is not None
    )


def _kernel_shape(shape: tuple[int, ...], graph_layout: str, view: View) -> tuple[int, ...]:
    if view.layout is not None and view.layout != graph_layout:
        perm = TO_NHWC if view.layout == "NHWC" else TO_NCHW
        shape = tuple(shape[p] for p in perm)
    if view.pad:
        shape = (*shape[:-1], 4)
    return shape
