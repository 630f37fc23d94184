"""`ir.Cast`: conversions between dtypes, one table entry per (source kind, target kind).

Semantics (ir.Cast): float -> int truncates toward zero; int -> bool is `!= 0` (float -> bool
too, so NaN is True as in Python); bool -> number is 0/1; int -> int wraps or sign-extends
according to the source's signedness. Where Python raises and SPIR-V is undefined (a float out
of the int's range, NaN), the result is the interpreter's: saturated to the type's limits, NaN
giving 0 (as NVIDIA's conversion instructions do).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pykern.lang.dtypes import DType

from pykern.spirv.numerics import int_equality, strict
from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.grammar import GLSL
from pykern.spirv.numerics.half_rounding import narrow_to_f16
from pykern.spirv.encoding.types import BOOL, F16, F32, FloatType, IntType, ScalarType


Convert = Callable[[LoweringContext, ScalarType, ScalarType, int], int]


def cast(ctx: LoweringContext, source: DType, target: DType, value: int) -> int:
    """`value` (of dtype `source`) converted to `target`."""
    src, dst = ctx.type_of(source), ctx.type_of(target)
    if src == dst:
        return value
    return CASTS[source.kind, target.kind](ctx, src, dst, value)


def _from_bool(ctx: LoweringContext, src: ScalarType, dst: ScalarType, value: int) -> int:
    return ctx.fn.select(dst, value, ctx.const(dst, 1), ctx.const(dst, 0))


def _int_to_bool(ctx: LoweringContext, src: ScalarType, dst: ScalarType, value: int) -> int:
    assert isinstance(src, IntType)
    if src.bits < 32:  # tested in 32 bits, as narrow_int computes 8/16-bit operators
        value, src = int_to_int(ctx, src, IntType(32, src.signed), value), IntType(32, src.signed)
    return int_equality.nonzero(ctx, src, value)


def _float_to_bool(ctx: LoweringContext, src: ScalarType, dst: ScalarType, value: int) -> int:
    return ctx.fn.f_unord_not_equal(BOOL, value, ctx.const(src, 0.0))


def int_to_int(ctx: LoweringContext, src: IntType, dst: IntType, value: int) -> int:
    """`value` of integer type `src` as integer type `dst`: wrapped to a narrower type,
    extended as `src`'s signedness says to a wider one, reinterpreted at the same width."""
    return (_from_signed if src.signed else _from_unsigned)(ctx, src, dst, value)


def _from_signed(ctx: LoweringContext, src: IntType, dst: IntType, value: int) -> int:
    if src.bits == dst.bits:
        return ctx.fn.bitcast(dst, value)
    if src.bits > dst.bits:
        return ctx.fn.s_convert(dst, value)  # truncates, into a type of any signedness
    return _sign_extend(ctx, src, dst, value)


def _sign_extend(ctx: LoweringContext, src: IntType, dst: IntType, value: int) -> int:
    """`value` widened with copies of its sign bit, without OpSConvert: zero-extended, then
    (z ^ s) - s with s the source's sign bit, which leaves a non-negative value as it is and
    subtracts 2**bits from a negative one. lavapipe (Mesa 22.3) miscompiles OpSConvert from
    i32 to i64 when the result is compared (3 < 5 comes out False, i64 // and % of it are
    wrong); this spelling it gets right, and other drivers compile it to the same sign
    extension."""
    fn = ctx.fn
    wide = IntType(dst.bits, False)
    zero_extended = fn.u_convert(wide, fn.bitcast(IntType(src.bits, False), value))
    sign = ctx.const(wide, 1 << (src.bits - 1))
    extended = fn.i_sub(wide, fn.bitwise_xor(wide, zero_extended, sign), sign)
    return fn.bitcast(dst, extended) if dst.signed else extended


def _from_unsigned(ctx: LoweringContext, src: IntType, dst: IntType, value: int) -> int:
    # OpUConvert must produce an unsigned type: widen or narrow first, then reinterpret
    fn = ctx.fn
    if src.bits != dst.bits:
        value = fn.u_convert(IntType(dst.bits, False), value)
    return value if not dst.signed else fn.bitcast(dst, value)


def _float_to_int(ctx: LoweringContext, src: FloatType, dst: IntType, value: int) -> int:
    if dst.bits == 64:
        converted = _float_to_64_bits(ctx, src, dst, value)
    elif dst.signed:
        converted = ctx.fn.convert_f_to_s(dst, value)
    else:
        converted = ctx.fn.convert_f_to_u(dst, value)
    return _saturated(ctx, src, dst, value, converted)


def _float_to_64_bits(ctx: LoweringContext, src: FloatType, dst: IntType, value: int) -> int:
    """A float in `dst`'s range truncated to a 64-bit int, from two 32-bit conversions of its
    magnitude's halves: NVIDIA's driver (580, H200) turns an OpConvertFToU/S to 64 bits whose
    result is then narrowed to 32 bits (`pk.i32(pk.u64(x))`) into one saturating 32-bit
    conversion, which is wrong past 2**32 (all ones, not the low bits). Exact: the high half is
    floor(|v| / 2**32) and the low half |v| - high * 2**32, both exact in the float type (an f16
    is widened to f32 first: 2**32 is beyond its range)."""
    fn = ctx.fn
    if src.bits == 16:
        src, value = F32, fn.f_convert(F32, value)
    magnitude = fn.glsl(src, GLSL.FAbs, value) if dst.signed else value
    high = fn.glsl(src, GLSL.Floor, fn.f_mul(src, magnitude, ctx.const(src, 2.0 ** -32)))
    low = fn.f_sub(src, magnitude, fn.f_mul(src, high, ctx.const(src, 2.0 ** 32)))
    u32, u64 = IntType(32, False), IntType(64, False)
    halves = fn.bitwise_or(
        u64, fn.shift_left_logical(u64, fn.u_convert(u64, fn.convert_f_to_u(u32, high)),
                                   ctx.const(u64, 32)),
        fn.u_convert(u64, fn.convert_f_to_u(u32, low)))
    if not dst.signed:
        return halves
    negative = fn.f_ord_less_than(BOOL, value, ctx.const(src, 0.0))
    return fn.bitcast(dst, fn.select(u64, negative, fn.s_negate(u64, halves), halves))


def _saturated(ctx: LoweringContext, src: FloatType, dst: IntType, value: int,
               converted: int) -> int:
    """`converted` where `value` is inside `dst`'s range; its limits outside; 0 for NaN."""
    fn = ctx.fn
    lo, hi = ((-(1 << (dst.bits - 1)), (1 << (dst.bits - 1)) - 1) if dst.signed
              else (0, (1 << dst.bits) - 1))
    # the limits as floats of the source type: 2**31 - 1 becomes 2**31 in f32, exactly the
    # smallest float that no longer fits; a limit past the type's range becomes inf
    with np.errstate(over="ignore"):
        hi_float, lo_float = (float(np.dtype(f"f{src.bits // 8}").type(v)) for v in (hi, lo))
    result = fn.select(dst, fn.f_ord_greater_than_equal(BOOL, value, ctx.const(src, hi_float)),
                       ctx.const(dst, hi), converted)
    result = fn.select(dst, fn.f_ord_less_than_equal(BOOL, value, ctx.const(src, lo_float)),
                       ctx.const(dst, lo), result)
    return fn.select(dst, fn.is_nan(BOOL, value), ctx.const(dst, 0), result)


def _int_to_float(ctx: LoweringContext, src: IntType, dst: FloatType, value: int) -> int:
    """An integer as a float, signed or unsigned as `src`. To f16 it goes through f32: exact
    up to 2**24, and every integer past f16's largest (65504) rounds to infinity either way,
    so the one rounding is f32 -> f16's, in code. NVIDIA (580) left a u16 of 65535 converted
    straight to f16 finite (65535, not inf) in its register."""
    if dst == F16:
        return narrow_to_f16(ctx, F32, _int_to_float(ctx, src, F32, value))
    if _rounds_in_code(ctx, dst):
        return strict.int_to_float(ctx, src, dst, value)
    convert = ctx.fn.convert_s_to_f if src.signed else ctx.fn.convert_u_to_f
    return convert(dst, value)


def _float_to_float(ctx: LoweringContext, src: FloatType, dst: FloatType, value: int) -> int:
    if dst == F16 and src.bits > 16:
        return narrow_to_f16(ctx, src, value)  # NVIDIA drops OpFConvert round trips to f16
    if dst.bits < src.bits and _rounds_in_code(ctx, dst):
        return strict.narrow_float(ctx, src, dst, value)
    return ctx.fn.f_convert(dst, value)


def _rounds_in_code(ctx: LoweringContext, dst: FloatType) -> bool:
    """Whether a conversion to `dst` must round to nearest even in code: strict floating point
    on a device that cannot ask for RoundingModeRTE on `dst` (where it can, the instruction
    rounds so)."""
    return ctx.target.strict_float and not ctx.target.rounds_to_nearest(dst.bits)


CASTS: dict[tuple[str, str], Convert] = {
    ("b", "i"): _from_bool,
    ("b", "u"): _from_bool,
    ("b", "f"): _from_bool,
    ("i", "b"): _int_to_bool,
    ("u", "b"): _int_to_bool,
    ("f", "b"): _float_to_bool,
    ("i", "i"): _from_signed,
    ("i", "u"): _from_signed,
    ("u", "u"): _from_unsigned,
    ("u", "i"): _from_unsigned,
    ("f", "i"): _float_to_int,
    ("f", "u"): _float_to_int,
    ("i", "f"): _int_to_float,
    ("u", "f"): _int_to_float,
    ("f", "f"): _float_to_float,
}
