"""What a library's expressions give under a scope (a model's shapes and parameters, or an
example's): dispatch sizes, and the constants of a composed graph as numpy arrays, each held to
its limits. The literal checks here also run while a library is read
(:mod:`vgfc.resolve.library.read_compose`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vgfc.dtypes import DType
from vgfc.limits import LIMITS, UINT32_MAX, quote
from vgfc.resolve.expr import Expr, ExprError
from vgfc.resolve.library.records import Constant

__all__ = ["array_type", "build_constant", "check_literals", "constant_dtype", "dispatch_size"]


def dispatch_size(e: Expr, scope: Mapping[str, Any]) -> int:
    """A dispatch size (``global`` or ``workgroups``) under ``scope``: rounded up, from 1 to
    2^32 - 1 (``vkCmdDispatch`` and invocation ids are uint32). Raises :class:`ExprError`."""
    value = e.whole(scope, round_up=True)
    if not 1 <= value <= UINT32_MAX:
        raise ExprError(
            f"'{e.text}' gives a dispatch size of {value}: it must be from 1 to {UINT32_MAX}"
        )
    return value


def constant_dtype(name: str) -> DType:
    return DType.SHAPE if name == "SHAPE" else DType[name]


def array_type(dtype: DType) -> Any:
    """The numpy type constants of ``dtype`` are built in; ``None`` for packed types."""
    import numpy as np

    from vgfc.dtypes import numpy_dtype

    return np.dtype(np.int64) if dtype is DType.SHAPE else numpy_dtype(dtype)


def _check_dims(dims: Sequence[int]) -> int:
    """The element count of a constant of shape ``dims``, within the limits."""
    import math

    if len(dims) > LIMITS.rank_max:
        raise ExprError(f"a shape of {len(dims)} dimensions, more than {LIMITS.rank_max}")
    for d in dims:
        if d < 1:
            raise ExprError(f"shape {list(dims)}: every dimension must be at least 1")
        if d > LIMITS.compose_constant_elements_max:
            break
    else:
        count = math.prod(dims)
        if count <= LIMITS.compose_constant_elements_max:
            return count
    raise ExprError(
        f"shape {quote(list(dims))} has more than the {LIMITS.compose_constant_elements_max} "
        "elements a composed op's constant may have (compose_constant_elements_max)"
    )


def _check_value(value: Any, dtype: DType) -> None:
    """Refuse a value the constant's element type cannot hold: not a number, NaN or infinity
    for an integer type, a fraction for an integer type, a number out of the type's range."""
    import math

    import numpy as np

    if isinstance(value, bool):
        return
    if not isinstance(value, int | float):
        raise ExprError(f"{quote(value)} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprError(f"{value} is not a finite number")
    if dtype.is_float:
        top = float(np.finfo(array_type(dtype)).max)
        if abs(value) > top:
            raise ExprError(f"{value} does not fit in {dtype.value} (at most {top:g})")
        return
    if isinstance(value, float):
        if not value.is_integer():
            raise ExprError(f"{value} is not a whole number, and the constant is {dtype.value}")
        value = int(value)
    if dtype is DType.BOOL:
        low, high = 0, 1
    else:
        bits = 64 if dtype is DType.SHAPE else dtype.storage_bits
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise ExprError(f"{value} does not fit in {dtype.value} ({low} to {high})")


def check_literals(constant: Constant) -> None:
    """What a constant's literal shape and values already break, before any model."""
    exprs = constant.value if isinstance(constant.value, tuple) else (constant.value,)
    if len(exprs) > LIMITS.compose_constant_elements_max:
        raise ExprError(
            f"more than the {LIMITS.compose_constant_elements_max} values a composed op's "
            "constant may have (compose_constant_elements_max)"
        )
    if constant.shape is not None and not any(e.names() for e in constant.shape):
        _check_dims([e.whole({}) for e in constant.shape])
    if constant.dtype == "SHAPE" or constant.dtype in DType.__members__:
        dtype = constant_dtype(constant.dtype)
        for e in exprs:
            if not e.names():
                value = e.evaluate({})
                for item in value if isinstance(value, tuple) else (value,):
                    _check_value(item, dtype)


def build_constant(constant: Constant, dtype: DType, scope: Mapping[str, Any]) -> Any:
    """A composed op's constant as a read-only numpy array of its shape and ``dtype`` (the
    constant's own, or its operand's), its expressions evaluated under ``scope``. One value
    fills every element. Raises :class:`ExprError` for a shape or a value out of range."""
    import numpy as np

    numpy_type = array_type(dtype)
    if numpy_type is None:
        raise ExprError(f"constants of {dtype.value} cannot be written")
    exprs = constant.value if isinstance(constant.value, tuple) else (constant.value,)
    flat: list[Any] = []
    for e in exprs:
        value = e.evaluate(scope)
        items = value if isinstance(value, tuple) else (value,)
        if len(flat) + len(items) > LIMITS.compose_constant_elements_max:
            raise ExprError(
                f"more than the {LIMITS.compose_constant_elements_max} values a composed op's "
                "constant may have (compose_constant_elements_max)"
            )
        flat.extend(items)
    if constant.shape is not None:
        dims = tuple(e.whole(scope) for e in constant.shape)
    else:
        dims = (len(flat),)
    count = _check_dims(dims)
    for value in flat:
        _check_value(value, dtype)
    if len(flat) == 1 and count != 1:
        data = np.full(dims, flat[0], dtype=numpy_type)
    elif len(flat) != count:
        raise ExprError(f"{len(flat)} values for shape {list(dims)}")
    else:
        data = np.asarray(flat).astype(numpy_type).reshape(dims)
    data.flags.writeable = False
    return data
