"""The lowering table: one entry per TOSA operator of the ``TOSA.001000.1`` instruction set.

An entry says how each of the op's attributes becomes an instruction operand; everything else
about the instruction comes from its grammar (:mod:`vgfc.spirv.extinst`): the opcode and the
operand order. Walking the grammar's operands, a name the entry lists is an attribute, read from
``op.attrs`` and encoded; any other name is the op's next input tensor (a ``*`` operand takes all
remaining inputs, for CONCAT). Attribute encodings are those of the reference converter:

* enumerations are 32-bit unsigned constants: ``nan_mode`` PROPAGATE 1 / IGNORE 2; ``acc_type``
  INT32 1, FP16 2, FP32 3, INT48 4 (the instruction set's own numbering, unlike TOSA's DType);
  ``rounding_mode`` SINGLE_ROUND 1, INEXACT_ROUND 2, DOUBLE_ROUND 3; ``mode`` NEAREST 1,
  BILINEAR 2;
* ``axis`` is a 32-bit unsigned constant, booleans are ``OpConstantTrue/False``;
* integer lists (``kernel``, ``stride``, ``pad``, ``dilation``, ``out_pad``, ``perms``) are rank-1
  32-bit integer tensor constants, never replicated;
* CLAMP's ``min_val``/``max_val`` are scalars of the input's element type.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import MappingProxyType

from vgfc.diagnostics import InputError
from vgfc.ir import AttrValue, DType, Operator, Tensor
from vgfc.record import field, record
from vgfc.spirv.builder import ModuleBuilder
from vgfc.spirv.extinst import ExtOperand, tosa_instructions
from vgfc.spirv.tensors import scalar_constant, tensor_constant, tensor_type, value_bits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object  # the class below is a protocol for type checkers (vgfc.ir says why)

__all__ = [
    "TOSA_LOWERINGS",
    "AttrEncoder",
    "Emitter",
    "Lowering",
    "Signature",
    "check_operand_counts",
    "constant_inputs",
    "lower_operator",
    "signature",
]


class Emitter(Protocol):
    """What a lowering needs from the graph being built."""

    @property
    def builder(self) -> ModuleBuilder: ...

    @property
    def instruction_set(self) -> int:
        """The id of the ``OpExtInstImport`` of TOSA.001000.1."""
        ...

    def tensor(self, name: str) -> Tensor:
        """The IR tensor of a name (shape and type checked by the emitter)."""
        ...

    def operand(self, name: str) -> int:
        """The id of a tensor's value: graph input, earlier result or constant."""
        ...


AttrEncoder = Callable[[Emitter, Operator, str, AttrValue], int]
"""Turns attribute ``key`` of an op into the id of a constant operand."""


@record
class Lowering:
    """How one TOSA op becomes one ``OpExtInst``."""

    attributes: Mapping[str, AttrEncoder] = field(default_factory=dict)
    """Grammar operand name -> encoder, for the operands that come from attributes."""
    results: int = 1
    """Result tensors; FFT2D and RFFT2D return two, as a struct the graph then unpacks."""
    constants: tuple[str, ...] = ()
    """Grammar names of the tensor operands the instruction takes only as constants
    (``OpConstant*`` or ``OpGraphConstantARM``): the runtime rejects a graph that reads one from
    an input or another instruction (``Missing declared constant for id``), so they are checked
    before lowering. They are TOSA's compile-time-constant inputs (zero points, MUL's shift,
    PAD's pad value, shapes, RESIZE's parameters) except three the runtime takes at run time,
    as the TOSA dynamic extension allows: TABLE's table and RESCALE's multiplier and shift (the
    reference converter's VGF with a dynamic table passes; both found by running each operand
    as a graph input on the emulation stack)."""


def _int(op: Operator, key: str, value: AttrValue) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected an integer, got {value!r}", op.where(), key=key)
    return value


def _u32(ctx: Emitter, op: Operator, key: str, value: AttrValue) -> int:
    number = _int(op, key, value)
    if not 0 <= number <= 0xFFFFFFFF:
        raise InputError(f"{number} is out of range", op.where(), key=key)
    return ctx.builder.constant_u32(number)


def _bool(ctx: Emitter, op: Operator, key: str, value: AttrValue) -> int:
    if not isinstance(value, bool):
        raise InputError(f"expected a boolean, got {value!r}", op.where(), key=key)
    return ctx.builder.constant_bool(value)


def _int_list(ctx: Emitter, op: Operator, key: str, value: AttrValue) -> int:
    if not isinstance(value, tuple) or not value:
        raise InputError(f"expected a non-empty integer list, got {value!r}", op.where(), key=key)
    b = ctx.builder
    # Convolutions repeat the same few strides, pads and dilations: each list is built once.
    return b.memo(
        ("int list", *value),
        lambda: tensor_constant(
            b, DType.INT32, (len(value),), value_bits(DType.INT32, value), replicate=False
        ),
    )


def _enum(numbers: Mapping[str, int]) -> AttrEncoder:
    def encode(ctx: Emitter, op: Operator, key: str, value: AttrValue) -> int:
        if not isinstance(value, str) or value not in numbers:
            allowed = ", ".join(numbers)
            raise InputError(f"{value!r} is not one of {allowed}", op.where(), key=key)
        return ctx.builder.constant_u32(numbers[value])

    encode.names = tuple(numbers)  # type: ignore[attr-defined]  # for checks before lowering
    return encode


def _bound(ctx: Emitter, op: Operator, key: str, value: AttrValue) -> int:
    """A CLAMP bound: a scalar of the input's element type (the reader decoded its bytes)."""
    dtype = ctx.tensor(op.inputs[0]).dtype
    if isinstance(value, (bytes, str)) or value is None or isinstance(value, tuple):
        raise InputError(f"expected one {dtype.value} value, got {value!r}", op.where(), key=key)
    if not isinstance(value, (bool, int, float)):
        count = getattr(value, "size", "several")
        raise InputError(f"expected one {dtype.value} value, got {count}", op.where(), key=key)
    return scalar_constant(ctx.builder, dtype, value_bits(dtype, [value])[0])


AXIS = _u32
BOOL = _bool
INTS = _int_list
BOUND = _bound
NAN_MODE = _enum({"PROPAGATE": 1, "IGNORE": 2})
ACC_TYPE = _enum({"INT32": 1, "FP16": 2, "FP32": 3, "INT48": 4})
ROUNDING_MODE = _enum({"SINGLE_ROUND": 1, "INEXACT_ROUND": 2, "DOUBLE_ROUND": 3})
RESIZE_MODE = _enum({"NEAREST": 1, "BILINEAR": 2})


def _op(
    results: int = 1, *, constants: tuple[str, ...] = (), **attributes: AttrEncoder
) -> Lowering:
    return Lowering(MappingProxyType(attributes), results, constants)


_ZPS = ("input_zp", "weight_zp")
_CONV = _op(
    pad=INTS, stride=INTS, dilation=INTS, acc_type=ACC_TYPE, local_bound=BOOL, constants=_ZPS
)
_PLAIN = _op()  # every operand is a tensor

TOSA_LOWERINGS: Mapping[str, Lowering] = MappingProxyType(
    {
        # Tensor operators.
        "ARGMAX": _op(axis=AXIS, nan_mode=NAN_MODE),
        "AVG_POOL2D": _op(
            kernel=INTS,
            stride=INTS,
            pad=INTS,
            acc_type=ACC_TYPE,
            constants=("input_zp", "output_zp"),
        ),
        "CONV2D": _CONV,
        "CONV3D": _CONV,
        "DEPTHWISE_CONV2D": _CONV,
        "FFT2D": _op(2, inverse=BOOL, local_bound=BOOL),
        "MATMUL": _op(constants=("A_zp", "B_zp")),
        "MAX_POOL2D": _op(kernel=INTS, stride=INTS, pad=INTS, nan_mode=NAN_MODE),
        "RFFT2D": _op(2, local_bound=BOOL),
        "TRANSPOSE_CONV2D": _op(
            out_pad=INTS, stride=INTS, acc_type=ACC_TYPE, local_bound=BOOL, constants=_ZPS
        ),
        # Activation functions.
        "CLAMP": _op(min_val=BOUND, max_val=BOUND, nan_mode=NAN_MODE),
        "ERF": _PLAIN,
        "SIGMOID": _PLAIN,
        "TANH": _PLAIN,
        # Elementwise binary operators.
        "ADD": _PLAIN,
        "ARITHMETIC_RIGHT_SHIFT": _op(round=BOOL),
        "BITWISE_AND": _PLAIN,
        "BITWISE_OR": _PLAIN,
        "BITWISE_XOR": _PLAIN,
        "INTDIV": _PLAIN,
        "LOGICAL_AND": _PLAIN,
        "LOGICAL_LEFT_SHIFT": _PLAIN,
        "LOGICAL_RIGHT_SHIFT": _PLAIN,
        "LOGICAL_OR": _PLAIN,
        "LOGICAL_XOR": _PLAIN,
        "MAXIMUM": _op(nan_mode=NAN_MODE),
        "MINIMUM": _op(nan_mode=NAN_MODE),
        "MUL": _op(constants=("shift",)),
        "POW": _PLAIN,
        "SUB": _PLAIN,
        "TABLE": _PLAIN,  # the table may be a graph input
        # Elementwise unary operators.
        "ABS": _PLAIN,
        "BITWISE_NOT": _PLAIN,
        "CEIL": _PLAIN,
        "CLZ": _PLAIN,
        "COS": _PLAIN,
        "EXP": _PLAIN,
        "FLOOR": _PLAIN,
        "LOG": _PLAIN,
        "LOGICAL_NOT": _PLAIN,
        "NEGATE": _op(constants=("input1_zp", "output_zp")),
        "RECIPROCAL": _PLAIN,
        "RSQRT": _PLAIN,
        "SIN": _PLAIN,
        # Elementwise ternary, comparison.
        "SELECT": _PLAIN,
        "EQUAL": _PLAIN,
        "GREATER": _PLAIN,
        "GREATER_EQUAL": _PLAIN,
        # Reductions.
        "REDUCE_ALL": _op(axis=AXIS),
        "REDUCE_ANY": _op(axis=AXIS),
        "REDUCE_MAX": _op(axis=AXIS, nan_mode=NAN_MODE),
        "REDUCE_MIN": _op(axis=AXIS, nan_mode=NAN_MODE),
        "REDUCE_PRODUCT": _op(axis=AXIS),
        "REDUCE_SUM": _op(axis=AXIS),
        # Data layout.
        "CONCAT": _op(axis=AXIS),
        "PAD": _op(constants=("padding", "pad_const")),
        "RESHAPE": _op(constants=("shape",)),
        "REVERSE": _op(axis=AXIS),
        "SLICE": _op(constants=("start", "size")),
        "TILE": _op(constants=("multiples",)),
        "TRANSPOSE": _op(perms=INTS),
        # Scatter/gather, image, type conversion.
        "GATHER": _PLAIN,
        "SCATTER": _PLAIN,
        "RESIZE": _op(mode=RESIZE_MODE, constants=("scale", "offset", "border")),
        "CAST": _PLAIN,
        "RESCALE": _op(
            scale32=BOOL,
            rounding_mode=ROUNDING_MODE,
            per_channel=BOOL,
            input_unsigned=BOOL,
            output_unsigned=BOOL,
            constants=("input_zp", "output_zp"),  # multiplier and shift may be inputs
        ),
    }
)


@record
class _Form:
    """An op type's instruction with its operands sorted into attributes and tensors: what
    :func:`check_operand_counts` and :func:`lower_operator` would otherwise work out per op."""

    opcode: int
    operands: tuple[tuple[ExtOperand, AttrEncoder | None], ...]
    """Every operand in grammar order, with the encoder of those that are attributes."""
    tensors: tuple[ExtOperand, ...]
    """The operands that are input tensors, in order."""
    variadic: bool
    """One of ``tensors`` is a ``*`` operand, which takes any number of inputs."""
    plain: bool
    """Every operand is one input tensor, so the operands are the op's inputs in order."""
    results: int
    constant_inputs: tuple[tuple[int, str], ...]
    """(input index, grammar name) of each input the instruction takes only as a constant."""


@functools.cache
def _form(name: str) -> _Form:
    """The form of TOSA op ``name`` (a fact of the lowering table and the grammar)."""
    lowering = TOSA_LOWERINGS[name]
    inst = tosa_instructions()[name]
    tensors = tuple(o for o in inst.operands if o.name not in lowering.attributes)
    variadic = any(o.variadic for o in tensors)
    return _Form(
        inst.opcode,
        tuple((o, lowering.attributes.get(o.name)) for o in inst.operands),
        tensors,
        variadic,
        plain=not variadic and len(tensors) == len(inst.operands),
        results=lowering.results,
        constant_inputs=tuple(
            (i, o.name) for i, o in enumerate(tensors) if o.name in lowering.constants
        ),
    )


def constant_inputs(name: str) -> tuple[tuple[int, str], ...]:
    """(input index, grammar name) of each input of TOSA op ``name`` (a key of
    :data:`TOSA_LOWERINGS`) that its instruction takes only as a constant
    (:attr:`Lowering.constants`), in input order."""
    return _form(name).constant_inputs


@record
class Signature:
    """What an op of the lowering table takes, for checks that run without a graph (a kernel
    library's composed ops)."""

    inputs: tuple[str, ...]
    """The input tensors' names, in order."""
    variadic: bool
    """The last input takes any number of tensors (at least one)."""
    results: int
    attributes: Mapping[str, str | tuple[str, ...]]
    """Attribute -> its kind: ``integer``, ``boolean``, ``integer list``, ``number``, or the
    names an enumeration takes."""


def signature(name: str) -> Signature:
    """The signature of TOSA op ``name`` (a key of :data:`TOSA_LOWERINGS`)."""
    form = _form(name)
    kinds: dict[str, str | tuple[str, ...]] = {}
    for operand, encoder in form.operands:
        if encoder is None:
            continue
        names = getattr(encoder, "names", None)
        kinds[operand.name] = names if names is not None else _KINDS[encoder]
    return Signature(
        tuple(o.name for o in form.tensors), form.variadic, form.results, MappingProxyType(kinds)
    )


_KINDS: Mapping[AttrEncoder, str] = {
    AXIS: "integer",
    BOOL: "boolean",
    INTS: "integer list",
    BOUND: "number",
}


def check_operand_counts(op: Operator) -> None:
    """Raise :class:`InputError` naming ``op`` unless it has as many inputs and outputs as its
    instruction takes (a ``*`` operand takes any number). Runs before anything is emitted."""
    form = _form(op.op)
    if len(op.outputs) != form.results:
        raise InputError(
            f"has {len(op.outputs)} outputs, {op.op} produces {form.results}", op.where()
        )
    tensors = form.tensors
    if form.variadic:
        return
    if len(op.inputs) < len(tensors):
        raise InputError(f"input '{tensors[len(op.inputs)].name}' is missing", op.where())
    if len(op.inputs) > len(tensors):
        names = ", ".join(o.name for o in tensors)
        raise InputError(
            f"has {len(op.inputs)} inputs, more than {op.op} takes ({len(tensors)}: {names})",
            op.where(),
        )


def lower_operator(ctx: Emitter, op: Operator, *, counts_checked: bool = False) -> tuple[int, ...]:
    """Emit ``op`` as one ``OpExtInst``; returns the ids of its results, in output order.

    ``counts_checked``: the caller ran :func:`check_operand_counts` on ``op`` already."""
    if not counts_checked:
        check_operand_counts(op)
    form = _form(op.op)
    if form.plain and len(op.inputs) == len(form.tensors):
        operands = [ctx.operand(name) for name in op.inputs]
    else:
        operands = _operands(ctx, op, form)

    b = ctx.builder
    if len(op.outputs) == 1:
        out = ctx.tensor(op.outputs[0])
        type_id = tensor_type(b, out.dtype, out.shape or ())
        return (b.ext_inst(type_id, ctx.instruction_set, form.opcode, operands),)
    types = [tensor_type(b, ctx.tensor(n).dtype, ctx.tensor(n).shape or ()) for n in op.outputs]
    whole = b.ext_inst(b.type_struct(*types), ctx.instruction_set, form.opcode, operands)
    return tuple(b.composite_extract(t, whole, i) for i, t in enumerate(types))


def _operands(ctx: Emitter, op: Operator, form: _Form) -> list[int]:
    """The operand ids of ``op``: attributes encoded, tensors in the order the grammar takes."""
    operands: list[int] = []
    inputs = list(op.inputs)
    for operand, encode in form.operands:
        if encode is not None:
            if operand.name not in op.attrs:
                raise InputError("attribute is missing", op.where(), key=operand.name)
            operands.append(encode(ctx, op, operand.name, op.attrs[operand.name]))
        elif operand.variadic:
            operands += [ctx.operand(name) for name in inputs]
            inputs = []
        elif inputs:
            operands.append(ctx.operand(inputs.pop(0)))
        else:
            raise InputError(f"input '{operand.name}' is missing", op.where())
    if inputs:
        raise InputError(f"has {len(op.inputs)} inputs, more than {op.op} takes", op.where())
    return operands
