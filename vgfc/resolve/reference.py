"""A kernel-library entry's Python reference: ``reference: module:function``.

The function computes the operator the way its author understands it, with numpy, apart from any
shader: ``vgfc verify`` holds the kernels against it (an oracle that shares the shader's mistakes
checks nothing), and tools that need the operator on a CPU (an eager PyTorch op) can call the same
function. It takes the input arrays in the entry's order and the decoded parameters as keyword
arguments, and returns the output array, or a tuple of them in the entry's output order.

The module is imported from the library's own folder first (``ops_ref.py`` next to ``ops.yaml``),
then from ``sys.path``. Importing it runs its code: only commands that need the reference
(``verify``) load it, never ``compile`` or ``check``.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from vgfc.diagnostics import InputError, Location
from vgfc.ir import Array, Tensor
from vgfc.limits import quote
from vgfc.resolve.library.records import Entry

__all__ = ["call_reference", "load_reference"]

_LOADED: dict[tuple[str, str], ModuleType] = {}


def _where(entry: Entry) -> Location:
    return Location(file=entry.library.shown, file_line=entry.line, key=f"{entry.label}: reference")


def load_reference(entry: Entry) -> Callable[..., Any]:
    """The callable ``entry.reference`` names. Raises :class:`InputError` (naming the library
    file, line and entry) when the entry has none, or it cannot be imported or is not callable."""
    if entry.reference is None:
        raise InputError("the entry names no reference (reference: module:function)", _where(entry))
    module_name, _, function = entry.reference.partition(":")
    folder = entry.library.path.parent
    try:
        module = _import(module_name, folder)
    except Exception as e:  # the module's own code failed: any exception, reported as input
        raise InputError(
            f"cannot import {quote(module_name)}: {type(e).__name__}: {quote(str(e), 200)}",
            _where(entry),
        ) from None
    found = getattr(module, function, None)
    if not callable(found):
        raise InputError(
            f"module {quote(module_name)} has no function {quote(function)}", _where(entry)
        )
    return found  # type: ignore[no-any-return]


def _import(name: str, folder: Path) -> ModuleType:
    """``name`` from ``folder`` (``a.b`` is ``folder/a/b.py``), else from ``sys.path``."""
    key = (str(folder), name)
    if key in _LOADED:
        return _LOADED[key]
    local = folder.joinpath(*name.split(".")).with_suffix(".py")
    if local.is_file():
        spec = importlib.util.spec_from_file_location(f"vgfc_reference_{abs(hash(key))}", local)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {local.name}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(name)
    _LOADED[key] = module
    return module


def call_reference(
    entry: Entry,
    inputs: Sequence[Array],
    params: Mapping[str, Any],
    outputs: Sequence[Tensor],
) -> list[Array]:
    """Run the entry's reference on ``inputs`` and check what it returns against ``outputs``
    (the tensors the model declares): one array per output, each of the declared shape and
    converted to the declared element type."""
    from vgfc.dtypes import numpy_dtype

    function = load_reference(entry)
    try:
        result = function(*inputs, **params)
    except Exception as e:  # the reference's own code failed
        raise InputError(
            f"the reference {quote(entry.reference or '')} failed: {type(e).__name__}: "
            f"{quote(str(e), 200)}",
            _where(entry),
        ) from None
    arrays = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(arrays) != len(outputs):
        raise InputError(
            f"the reference returned {len(arrays)} value(s), the entry has "
            f"{len(outputs)} output(s)",
            _where(entry),
        )
    checked = []
    for value, tensor in zip(arrays, outputs, strict=True):
        array = np.asarray(value)
        dtype = numpy_dtype(tensor.dtype)
        if tensor.shape is not None and array.size == int(np.prod(tensor.shape)):
            array = array.reshape(tensor.shape)
        if tensor.shape is not None and array.shape != tuple(tensor.shape):
            raise InputError(
                f"the reference returned shape {list(array.shape)} for '{tensor.name}', the "
                f"model declares {list(tensor.shape)}",
                _where(entry),
            )
        checked.append(array.astype(dtype) if dtype is not None else array)
    return checked
