"""f32 and f64 narrowed to f16, rounded to nearest even in integer arithmetic.

NVIDIA's driver (580) drops an OpFConvert to f16 whose result is converted back to a wider
float (`float(pk.f16(x))` gave x itself, 78.312775 where numpy gives 78.3125), also with
RoundingModeRTE, NoContraction or a bitcast round trip of the f16 bits in between. Rounding
done on the bits of the source, with shifts, masks and compares, it computes as written, so
every conversion to f16 from a wider float is lowered this way (on every device: the result
is the same, and a conversion costs a few dozen integer instructions).

The f16 bits are assembled in the source's unsigned integer type and handed over through a
32-bit word bitcast to two f16 halves (no 16-bit integer type, which a device with f16
arithmetic may lack): the low half, element 0, is the result.
"""

from __future__ import annotations

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.types import BOOL, FloatType, IntType, U32, VectorType

F16_MANTISSA, F16_BIAS, F16_INF = 10, 15, 0x7C00


def narrow_to_f16(ctx: LoweringContext, src: FloatType, x: int) -> int:
    """`x` (an f32 or f64 value) as the nearest f16, ties to even; NaN stays NaN (quiet),
    infinities and overflow give infinity, values below half the smallest subnormal give a
    zero of the same sign."""
    fn = ctx.fn
    width = src.bits
    uty = IntType(width, False)
    mantissa_bits = 23 if width == 32 else 52
    exponent_max = (1 << (width - 1 - mantissa_bits)) - 1
    bias = exponent_max >> 1

    def u(value: int) -> int:
        return ctx.const(uty, value)

    bits = fn.bitcast(uty, x)
    sign = fn.bitwise_and(uty, fn.shift_right_logical(uty, bits, u(width - 16)), u(0x8000))
    exponent = fn.bitwise_and(uty, fn.shift_right_logical(uty, bits, u(mantissa_bits)),
                              u(exponent_max))
    mantissa = fn.bitwise_and(uty, bits, u((1 << mantissa_bits) - 1))
    # the f16 exponent field, offset so that it stays unsigned: field = exponent - bias + 15,
    # kept as exponent + (15 - bias) compared against bias - 15 + {1, 31}
    low, high = bias - F16_BIAS + 1, bias - F16_BIAS + 31  # normal f16 exponents: [low, high)
    normal = _normal(ctx, uty, exponent, mantissa, mantissa_bits, low)
    subnormal = _subnormal(ctx, uty, exponent, mantissa, mantissa_bits, low)
    nan = fn.select(uty, fn.i_not_equal(BOOL, mantissa, u(0)), u(F16_INF | 0x200), u(F16_INF))
    result = fn.select(uty, fn.u_less_than(BOOL, exponent, u(low)), subnormal, normal)
    result = fn.select(uty, fn.u_greater_than_equal(BOOL, exponent, u(high)), u(F16_INF), result)
    result = fn.select(uty, fn.i_equal(BOOL, exponent, u(exponent_max)), nan, result)
    result = fn.bitwise_or(uty, result, sign)
    word = result if width == 32 else fn.u_convert(U32, result)
    halves = fn.bitcast(VectorType(FloatType(16), 2), word)
    return fn.composite_extract(FloatType(16), halves, 0)


def _rounded(ctx: LoweringContext, uty: IntType, kept: int, dropped: int, half: int) -> int:
    """`kept` plus one where the `dropped` low bits are above `half` (the id of half their
    unit), or exactly half with `kept` odd."""
    fn = ctx.fn
    odd = fn.i_not_equal(BOOL, fn.bitwise_and(uty, kept, ctx.const(uty, 1)), ctx.const(uty, 0))
    up = fn.logical_or(BOOL, fn.u_greater_than(BOOL, dropped, half),
                       fn.logical_and(BOOL, fn.i_equal(BOOL, dropped, half), odd))
    return fn.select(uty, up, fn.i_add(uty, kept, ctx.const(uty, 1)), kept)


def _normal(ctx: LoweringContext, uty: IntType, exponent: int, mantissa: int,
            mantissa_bits: int, low: int) -> int:
    """The bits of a result in f16's normal range (a carry out of the mantissa moves into the
    exponent, up to infinity)."""
    fn = ctx.fn
    drop = mantissa_bits - F16_MANTISSA
    field = fn.i_add(uty, fn.i_sub(uty, exponent, ctx.const(uty, low)), ctx.const(uty, 1))
    kept = fn.bitwise_or(uty, fn.shift_left_logical(uty, field, ctx.const(uty, F16_MANTISSA)),
                         fn.shift_right_logical(uty, mantissa, ctx.const(uty, drop)))
    dropped = fn.bitwise_and(uty, mantissa, ctx.const(uty, (1 << drop) - 1))
    v = _rounded(ctx, uty, kept, dropped, ctx.const(uty, 1 << (drop - 1)))
    return fn.select(uty, fn.u_greater_than(BOOL, v, ctx.const(uty, F16_INF)),
                     ctx.const(uty, F16_INF), v)


def _subnormal(ctx: LoweringContext, uty: IntType, exponent: int, mantissa: int,
               mantissa_bits: int, low: int) -> int:
    """The bits of a result below f16's normal range: the significand (with its leading one)
    shifted right by `mantissa_bits - 10 + (low - exponent)`, rounded; 0 where even the
    rounding cannot reach the smallest subnormal. A source zero or subnormal gives 0."""
    fn = ctx.fn
    significand = fn.bitwise_or(uty, mantissa, ctx.const(uty, 1 << mantissa_bits))
    gap = fn.i_sub(uty, ctx.const(uty, low), exponent)  # >= 1 here (wraps where unused)
    limit = mantissa_bits + 2  # from this shift on, the value is below half the smallest
    shift = fn.i_add(uty, ctx.const(uty, mantissa_bits - F16_MANTISSA), gap)
    too_far = fn.u_greater_than_equal(BOOL, shift, ctx.const(uty, limit))
    shift = fn.select(uty, too_far, ctx.const(uty, limit), shift)
    kept = fn.shift_right_logical(uty, significand, shift)
    one = ctx.const(uty, 1)
    dropped = fn.bitwise_and(uty, significand,
                             fn.i_sub(uty, fn.shift_left_logical(uty, one, shift), one))
    half = fn.shift_left_logical(uty, one, fn.i_sub(uty, shift, one))
    v = _rounded(ctx, uty, kept, dropped, half)
    return fn.select(uty, too_far, ctx.const(uty, 0), v)
