"""The specification's conditions on RESIZE (scale, offset, border and the output size they
give) and RESCALE (zero points per type, the flag combinations, per-channel multipliers).

RESIZE's parameters are CONST_SHAPE operands in TOSA 1.0; under the dynamic extension they may
be graph inputs, and then nothing here can be checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from vgfc.ir import DType
from vgfc.verify.conditions import LEVEL, dims, exact_division, rank
from vgfc.verify.view import OpView, Violation, dtype_of, name_of, shape_of

__all__ = ["SCALE_RULES"]

_MAX_RESIZE_DIMENSION = 16384
"""RESIZE's ``ERROR_IF(max(OH, OW, IH, IW) >= 16384)``."""
_MAX_SCALE_N = 1 << 11


def _resize(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input"), v.output()
    yield from rank(source, "input", 4)
    yield from rank(out, "output", 4)
    shape, result = shape_of(source), shape_of(out)
    if shape is not None and result is not None and len(shape) == len(result) == 4:
        if shape[0] != result[0]:
            yield Violation(
                "BatchMismatch",
                f"output batch {result[0]} differs from the input's {shape[0]}",
                name_of(out),
            )
        if shape[3] != result[3]:
            yield Violation(
                "ChannelMismatch",
                f"output channels {result[3]} differ from the input's {shape[3]}",
                name_of(out),
            )
        biggest = max(shape[1], shape[2], result[1], result[2])
        if biggest >= _MAX_RESIZE_DIMENSION:
            yield Violation(
                "MaxDimExceeded",
                f"a height or width of input {dims(shape)} or output {dims(result)} is "
                f"{biggest}, not less than {_MAX_RESIZE_DIMENSION}",
                name_of(out),
            )
            return
    scale, offset, border = (v.ints(v.input(n)) for n in ("scale", "offset", "border"))
    if scale is None or offset is None or border is None:
        return
    if (len(scale), len(offset), len(border)) != (4, 2, 2):
        yield Violation(
            "ResizeParameterShapeMismatch",
            f"scale {list(scale)}, offset {list(offset)}, border {list(border)}: RESIZE takes 4, "
            "2 and 2 values",
            tensor=v.op.inputs[1],
        )
        return
    bad = False
    for axis, (n, d), o, b in zip(
        ("y", "x"), (scale[0:2], scale[2:4]), offset, border, strict=True
    ):
        said = f"scale_{axis} {n}/{d}"
        level = LEVEL.max_scale
        checks = (
            (n <= 0 or d <= 0, "ScaleSmallerEqualZero", f"{said} is not positive", "scale"),
            (n > _MAX_SCALE_N, "ScaleNLargerMax", f"{said}: numerator over {_MAX_SCALE_N}",
             "scale"),
            (d >= 16 * n, "ScaleDLargerMax", f"{said}: denominator not below 16 x numerator",
             "scale"),
            (n > level * d, "LevelLimitExceeded", f"{said} is over the level's {level}", "scale"),
            (o < -n, "OffsetSmallerMin", f"offset_{axis} {o} is below -{n}", "offset"),
            (o >= 16 * n, "OffsetLargerEqualMax", f"offset_{axis} {o} is not below 16 x {n}",
             "offset"),
            (b < -16 * n, "BorderSmallerMin", f"border_{axis} {b} is below -16 x {n}", "border"),
            (b >= n, "BorderLargerEqualMax", f"border_{axis} {b} is not below {n}", "border"),
        )  # fmt: skip
        for broken, kind, message, operand in checks:
            if broken:
                bad = True
                name = v.op.inputs[{"scale": 1, "offset": 2, "border": 3}[operand]]
                yield Violation(kind, message, tensor=name)
                break
    if bad or shape is None or result is None or len(shape) != 4 or len(result) != 4:
        return
    for i, (axis, n, d, o, b) in enumerate(
        (("height", scale[0], scale[1], offset[0], border[0]),
         ("width", scale[2], scale[3], offset[1], border[1]))
    ):  # fmt: skip
        numerator = (shape[1 + i] - 1) * n - o + b
        quotient, exact = exact_division(numerator, d)
        said = f"((input {shape[1 + i]} - 1) * {n} - offset {o} + border {b}) / {d} + 1"
        if not exact:
            yield Violation(
                "ResizeOutputShapeNonInteger",
                f"output {axis} {result[1 + i]} != {said} = {numerator / d + 1:g} (not an integer)",
                tensor=v.op.inputs[1],
            )
        elif result[1 + i] != quotient + 1:
            yield Violation(
                "ResizeOutputShapeMismatch",
                f"output {axis} {result[1 + i]} != {said} = {quotient + 1}",
                tensor=name_of(out),
            )


def _rescale(v: OpView) -> Iterator[Violation]:
    source, out = v.input("input"), v.output()
    t_in, t_out = dtype_of(source), dtype_of(out)
    scale32, rounding = v.attr("scale32"), v.attr("rounding_mode")
    per_channel = v.attr("per_channel")
    in_unsigned, out_unsigned = v.attr("input_unsigned") is True, v.attr("output_unsigned") is True
    i32, i48, i16 = DType.INT32, DType.INT48, DType.INT16
    flags = (
        (in_unsigned and out_unsigned, "RescaleInputUnsignedOutputUnsigned",
         "input_unsigned and output_unsigned are both set", "input_unsigned"),
        (t_out is i32 and in_unsigned, "RescaleI32OutputInputUnsigned",
         "input_unsigned is set for an INT32 output", "input_unsigned"),
        (t_in is i32 and out_unsigned, "RescaleI32InputOutputUnsigned",
         "output_unsigned is set for an INT32 input", "output_unsigned"),
        (t_in is i48 and out_unsigned, "RescaleI48InputOutputUnsigned",
         "output_unsigned is set for an INT48 input", "output_unsigned"),
        (t_in is i48 and in_unsigned, "RescaleI48InputUnsigned",
         "input_unsigned is set for an INT48 input", "input_unsigned"),
        (t_in is i32 and in_unsigned, "RescaleI32InputUnsigned",
         "input_unsigned is set for an INT32 input", "input_unsigned"),
        (t_out is i32 and out_unsigned, "RescaleI32OutputUnsigned",
         "output_unsigned is set for an INT32 output", "output_unsigned"),
        (scale32 is True and t_in is i48, "ScaleTrue",
         "scale32 is set for an INT48 input", "scale32"),
        (scale32 is False and rounding == "DOUBLE_ROUND", "ScaleNotTrue",
         "rounding_mode DOUBLE_ROUND needs scale32", "rounding_mode"),
    )  # fmt: skip
    for broken, kind, message, key in flags:
        if broken:
            yield Violation(kind, message, key=key)
    for zp_name, tensor, unsigned, kind, u16 in (
        ("input_zp", source, in_unsigned, "InputZeroPointNotZero", "U16InputZeroPointNotValid"),
        ("output_zp", out, out_unsigned, "OutputZeroPointNotZero", "U16OutputZeroPointNotValid"),
    ):
        zp = v.input(zp_name)
        values, element = v.ints(zp), dtype_of(tensor)
        if values is None or element is None or all(x == 0 for x in values):
            continue
        if element is i16 and unsigned:
            # 32768 is stored in an INT16 tensor as its bit pattern, -32768.
            if any(x & 0xFFFF not in (0, 0x8000) for x in values):
                yield Violation(
                    u16,
                    f"{zp_name} is {values[0]}; an unsigned INT16 takes zero point 0 or 32768",
                    tensor=name_of(zp),
                )
        elif element is not DType.INT8:
            yield Violation(
                kind,
                f"{zp_name} is {values[0]}, but a {element.value} value takes zero point 0 "
                "(only INT8 and unsigned INT16 take another)",
                tensor=name_of(zp),
            )
    shape = shape_of(source)
    if shape is None:
        return
    if per_channel is True and not shape:
        yield Violation(
            "RescalePerChannelRank0", "per_channel is set for a rank-0 input", key="per_channel"
        )
        return
    channels = shape[-1] if per_channel is True else 1
    for name in ("multiplier", "shift"):
        tensor = v.input(name)
        got = shape_of(tensor)
        if got is not None and got != (channels,):
            how = f"one per channel of the input {dims(shape)}" if per_channel else "one value"
            yield Violation(
                "RescaleChannelMismatch",
                f"{name} has shape {dims(got)}; it takes {channels} ({how})",
                tensor=name_of(tensor),
            )
    multiplier = v.input("multiplier")
    want = i32 if scale32 is True else i16
    if multiplier is not None and isinstance(scale32, bool) and multiplier.dtype is not want:
        yield Violation(
            "WrongInputType",
            f"multiplier is {multiplier.dtype.value}; scale32 {scale32} takes {want.value}",
            tensor=multiplier.name,
        )


SCALE_RULES = {"RESIZE": _resize, "RESCALE": _rescale}
"""Op -> the function that yields its violations."""
