"""A kernel-library entry's Python reference: ``reference: module:function``.

The function computes the operator the way its author understands it, with numpy, apart from any
shader: ``vgfc verify`` holds the kernels against it (an oracle that shares the shader's mistakes
checks nothing), and tools that need the operator on a CPU (an eager PyTorch op) can call the same
function. It takes the input arrays in the entry's order and the decoded parameters as keyword
arguments, and returns the output array, or a tuple of them in the entry's output order.

A kernel library is data, and data must not choose code to run: ``reference: os:system`` with a
shell command in a model's attributes would otherwise run it. So the module is a Python file that
ships in the library's own folder (``ops_ref.py`` next to ``ops.yaml``; ``pkg.ops_ref`` is
``pkg/ops_ref.py``), confined as the library's shaders are: a regular file whose real path lies
in that folder (a symbolic link out of it is refused). Any module on ``sys.path`` is imported only
when the caller opts in (``imports=True``: ``vgfc verify --allow-reference-imports``). Importing
the file runs its code: only what needs the reference (``verify``, an eager PyTorch op) loads it,
never ``compile`` or ``check``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from vgfc.diagnostics import InputError, Location
from vgfc.ir import Array, Tensor
from vgfc.limits import quote
from vgfc.options import flag
from vgfc.resolve.library.records import Entry

__all__ = ["call_reference", "load_reference"]

_LOADED: dict[tuple[str, str], ModuleType] = {}


def _where(entry: Entry) -> Location:
    return Location(file=entry.library.shown, file_line=entry.line, key=f"{entry.label}: reference")


def load_reference(entry: Entry, *, imports: bool = False) -> Callable[..., Any]:
    """The callable ``entry.reference`` names, from a Python file in the library's folder, or
    (``imports``) from any module on ``sys.path``. Raises :class:`InputError` (naming the
    library file, line, entry and key) when the entry has none, its module is neither, or it
    cannot be imported or is not callable."""
    if entry.reference is None:
        raise InputError("the entry names no reference (reference: module:function)", _where(entry))
    module_name, _, function = entry.reference.partition(":")
    if not function.isidentifier() or not all(p.isidentifier() for p in module_name.split(".")):
        raise InputError(
            f"{quote(entry.reference)} is not module:function (Python names)", _where(entry)
        )
    folder = Path(os.path.realpath(entry.library.path.parent))
    local = _shipped(module_name, folder)
    if local is None and not imports:
        raise InputError(
            f"{quote(entry.reference)}: no {quote(_file_name(module_name))} in the library's "
            f"folder, and a kernel library runs only Python files it ships; to import "
            f"{quote(module_name)} from the Python path (its code runs), give "
            f"{flag('allow_reference_imports')}",
            _where(entry),
        )
    try:
        module = _import(module_name, folder, local)
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


def _file_name(module: str) -> str:
    return "/".join(module.split(".")) + ".py"


def _shipped(name: str, folder: Path) -> Path | None:
    """The file of module ``name`` in ``folder`` (``a.b`` is ``folder/a/b.py``): a regular file
    whose real path lies in ``folder`` (a real path); ``None`` if there is none."""
    real = Path(os.path.realpath(folder.joinpath(*name.split(".")).with_suffix(".py")))
    if not str(real).startswith(str(folder).rstrip(os.sep) + os.sep):
        return None  # a link out of the library's folder
    try:
        return real if stat.S_ISREG(os.stat(real).st_mode) else None
    except OSError:
        return None


def _import(name: str, folder: Path, local: Path | None) -> ModuleType:
    """``name`` from its file ``local`` in ``folder``, else (``None``) from ``sys.path``."""
    key = (str(folder), name)
    if key in _LOADED:
        return _LOADED[key]
    if local is not None:
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
    *,
    imports: bool = False,
) -> list[Array]:
    """Run the entry's reference on ``inputs`` and check what it returns against ``outputs``
    (the tensors the model declares): one array per output, each of the declared shape and
    converted to the declared element type. ``imports``: as for :func:`load_reference`."""
    from vgfc.dtypes import numpy_dtype

    function = load_reference(entry, imports=imports)
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
