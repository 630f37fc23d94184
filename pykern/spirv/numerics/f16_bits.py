"""The bits of an f16 and an f16 from bits, through the exact f32 of the same value.

NVIDIA's driver (580) keeps an f16 computed by an f16 instruction (`Sqrt` of a half, say) in
a wider register, and an OpBitcast of that value to a 16-bit integer reads the wrong bits:
`atan(sqrt(x))` on halves, whose sign fix-up takes the sign from the bits, gave NaN and
garbage, and so would `pk.bitcast(pk.sqrt(h), pk.u16)`. Widening an f16 to f32 is exact
everywhere, so the bits are derived from the f32's instead, in 32-bit integer arithmetic; and
an f16 made from bits is made as the f32 of the same value, converted (exactly) to f16.
"""

from __future__ import annotations

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.types import BOOL, F16, F32, U32, FloatType, IntType

_REBIAS = (127 - 15) << 10  # the f32 exponent bias over f16's, in f16's exponent field


def bits_of(ctx: LoweringContext, x: int) -> int:
    """The bits of the f16 `x`, in the low half of a u32."""
    fn = ctx.fn

    def u(value: int) -> int:
        return ctx.const(U32, value)

    wide = fn.bitcast(U32, fn.f_convert(F32, x))
    sign = fn.bitwise_and(U32, fn.shift_right_logical(U32, wide, u(16)), u(0x8000))
    magnitude = fn.bitwise_and(U32, wide, u(0x7FFFFFFF))
    normal = fn.i_sub(U32, fn.shift_right_logical(U32, magnitude, u(13)), u(_REBIAS))
    # below 2**-14 the value is a multiple of 2**-24 under 2**-14: times 2**24, an exact integer
    scaled = fn.f_mul(F32, fn.bitcast(F32, magnitude), ctx.const(F32, 2.0 ** 24))
    subnormal = fn.convert_f_to_u(U32, scaled)
    result = fn.select(U32, fn.u_less_than(BOOL, magnitude, u(113 << 23)), subnormal, normal)
    special = fn.select(U32, fn.u_greater_than(BOOL, magnitude, u(0x7F800000)), u(0x7E00),
                        u(0x7C00))
    result = fn.select(U32, fn.u_greater_than_equal(BOOL, magnitude, u(0x7F800000)), special,
                       result)
    return fn.bitwise_or(U32, result, sign)


def from_bits(ctx: LoweringContext, bits: int) -> int:
    """The f16 whose bits are the low 16 of the u32 `bits`."""
    fn = ctx.fn

    def u(value: int) -> int:
        return ctx.const(U32, value)

    sign = fn.shift_left_logical(U32, fn.bitwise_and(U32, bits, u(0x8000)), u(16))
    magnitude = fn.bitwise_and(U32, bits, u(0x7FFF))
    normal = fn.bitcast(F32, fn.shift_left_logical(U32, fn.i_add(U32, magnitude, u(_REBIAS)),
                                                    u(13)))
    subnormal = fn.f_mul(F32, fn.convert_u_to_f(F32, magnitude), ctx.const(F32, 2.0 ** -24))
    value = fn.select(F32, fn.u_less_than(BOOL, magnitude, u(0x0400)), subnormal, normal)
    nan = fn.bitcast(F32, fn.bitwise_or(U32, fn.shift_left_logical(U32, magnitude, u(13)),
                                        u(0x7F800000)))
    value = fn.select(F32, fn.u_greater_than_equal(BOOL, magnitude, u(0x7C00)), nan, value)
    signed = fn.bitcast(F32, fn.bitwise_or(U32, fn.bitcast(U32, value), sign))
    return fn.f_convert(F16, signed)


def bitcast(ctx: LoweringContext, dst: IntType | FloatType, src: IntType | FloatType,
            value: int) -> int:
    """`value` of type `src` reinterpreted as `dst` where one of them is f16 and the other a
    16-bit integer."""
    fn = ctx.fn
    u16 = IntType(16, False)
    if src == F16:
        assert isinstance(dst, IntType), (src, dst)
        half = fn.u_convert(u16, bits_of(ctx, value))
        return half if not dst.signed else fn.bitcast(dst, half)
    assert dst == F16 and isinstance(src, IntType), (src, dst)
    unsigned = value if not src.signed else fn.bitcast(u16, value)
    return from_bits(ctx, fn.u_convert(U32, unsigned))
