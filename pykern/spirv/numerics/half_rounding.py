"""f32 and f64 narrowed to f16, rounded to nearest even in integer arithmetic.

NVIDIA's driver (580) drops an OpFConvert to f16 whose result is converted back to a wider
float (`float(pk.f16(x))` gave x itself, 78.312775 where numpy gives 78.3125), also with
RoundingModeRTE, NoContraction or a bitcast round trip of the f16 bits in between; and an f16
assembled from integer bits and bitcast to a half (through a 32-bit word: a device with f16
arithmetic may lack 16-bit integers) widened to garbage there when an f16 function of it was
computed in f32 (`atan(f16(sqrt(x)))` gave NaN).

So the rounding is done on the source's own bits, in the source type: `x` is moved onto f16's
grid (ties to even, f16's subnormal spacing below its normal range, infinity above its
largest finite value) and stays a float of the source type, whose value f16 holds exactly.
The OpFConvert to f16 that follows is then exact on every device, and a driver that drops it
together with a conversion back keeps the right value anyway. On every device: the result is
the same everywhere, and a conversion costs a dozen integer instructions.
"""

from __future__ import annotations

import struct

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.types import BOOL, F16, FloatType, IntType

F16_MANTISSA, F16_MIN_EXPONENT, F16_MAX = 10, -14, 65504.0


def narrow_to_f16(ctx: LoweringContext, src: FloatType, x: int) -> int:
    """`x` (an f32 or f64 value) as the nearest f16, ties to even; NaN stays NaN (quiet),
    infinities and overflow give infinity, values at most half the smallest subnormal give a
    zero of the same sign."""
    return ctx.fn.f_convert(F16, on_f16_grid(ctx, src, x))


def on_f16_grid(ctx: LoweringContext, src: FloatType, x: int) -> int:
    """`x` rounded to the nearest value that f16 holds, as a float of `src`'s type."""
    fn = ctx.fn
    width = src.bits
    uty = IntType(width, False)
    mantissa_bits = 23 if width == 32 else 52
    exponent_max = (1 << (width - 1 - mantissa_bits)) - 1
    bias = exponent_max >> 1

    def u(value: int) -> int:
        return ctx.const(uty, value)

    def bits_of(value: float) -> int:
        return u(_float_bits(value, width))

    bits = fn.bitcast(uty, x)
    sign = fn.bitwise_and(uty, bits, u(1 << (width - 1)))
    magnitude = fn.bitwise_and(uty, bits, u((1 << (width - 1)) - 1))
    exponent = fn.shift_right_logical(uty, magnitude, u(mantissa_bits))
    # below f16's normal range each halving of the value drops one more bit; `gap` counts
    # them, clamped where the value is at most the smallest subnormal's double
    normal_floor = bias + F16_MIN_EXPONENT
    below = fn.u_less_than(BOOL, exponent, u(normal_floor))
    gap = fn.select(uty, below, fn.i_sub(uty, u(normal_floor), exponent), u(0))
    last = F16_MANTISSA  # gap == last: the leading one is the only bit kept (2**-24's place)
    gap = fn.select(uty, fn.u_greater_than(BOOL, gap, u(last)), u(last), gap)
    drop = fn.i_add(uty, u(mantissa_bits - F16_MANTISSA), gap)
    # round to nearest even on the magnitude's bits: a carry runs on into the exponent
    one = u(1)
    kept_odd = fn.bitwise_and(uty, fn.shift_right_logical(uty, magnitude, drop), one)
    half_less_one = fn.i_sub(uty, fn.shift_left_logical(uty, one, fn.i_sub(uty, drop, one)), one)
    rounded = fn.i_add(uty, fn.i_add(uty, magnitude, half_less_one), kept_odd)
    rounded = fn.bitwise_and(uty, rounded, fn.not_(uty, fn.i_sub(
        uty, fn.shift_left_logical(uty, one, drop), one)))
    # the value's place is one below the smallest subnormal's (2**-25 <= |x| < 2**-24): up to
    # it where more than half of it, else 0 (a tie goes to the even 0); further below, 0
    tiny = fn.u_less_than(BOOL, exponent, u(bias - 25 + 1))
    smallest = fn.select(uty, fn.logical_and(
        BOOL, fn.i_equal(BOOL, exponent, u(bias - 25)),
        fn.i_not_equal(BOOL, magnitude, bits_of(2.0 ** -25))), bits_of(2.0 ** -24), u(0))
    rounded = fn.select(uty, tiny, smallest, rounded)
    infinity = u(exponent_max << mantissa_bits)
    rounded = fn.select(uty, fn.u_greater_than(BOOL, rounded, bits_of(F16_MAX)), infinity,
                        rounded)
    quiet_nan = u((exponent_max << mantissa_bits) | (1 << (mantissa_bits - 1)))
    rounded = fn.select(uty, fn.u_greater_than(BOOL, magnitude, infinity), quiet_nan, rounded)
    return fn.bitcast(src, fn.bitwise_or(uty, rounded, sign))


def _float_bits(value: float, width: int) -> int:
    return int.from_bytes(struct.pack("<f" if width == 32 else "<d", value), "little")
