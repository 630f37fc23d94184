"""`ir.MathCall`: one table entry per math function.

Most are GLSL.std.450 instructions. GLSL.std.450 defines its transcendental functions for 16-
and 32-bit floats only: the target says so (`Target.lowers_math`), and the decomposition pass
rewrites those f64 calls into pykern code before they get here. `erf` is not in
GLSL.std.450: it is evaluated here, in f32, and so is `sinh` near 0 (GLSL's cancels there).
sin, cos, tan and tanh are `pykern.spirv.numerics.mathf32`'s (the GLSL ones are far from numpy's
outside [-pi, pi] and near 0), f16 through f32. `isnan` tests the bits (`is_nan`), which no
fast-math assumption of a driver can fold away.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from pykern.ir import MathFn

from pykern.spirv.numerics import mathf32, strict
from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.grammar import GLSL
from pykern.spirv.numerics.half_rounding import narrow_to_f16
from pykern.spirv.numerics.pysemantics import float_pow
from pykern.spirv.target import MATH_WITHOUT_F64
from pykern.spirv.typemap import value_capabilities
from pykern.spirv.encoding.types import BOOL, F32, U32, FloatType, IntType, VectorType

MathLowering = Callable[[LoweringContext, FloatType, Sequence[int]], int]


def math_call(ctx: LoweringContext, fn: MathFn, ty: FloatType, args: Sequence[int]) -> int:
    """`fn(*args)` for arguments of float type `ty` (the result is `ty`, or bool_ for the
    predicates)."""
    assert not (ty.bits == 64 and fn in MATH_WITHOUT_F64), \
        f"{fn.py_name} on f64 reached the backend: pykern.passes.decompose rewrites it"
    if ty.bits == 16 and fn in THROUGH_F32:
        wide = MATH[fn](ctx, F32, [ctx.fn.f_convert(F32, a) for a in args])
        return narrow_to_f16(ctx, F32, wide)
    return MATH[fn](ctx, ty, args)


def _glsl(instruction: GLSL) -> MathLowering:
    return lambda ctx, ty, args: ctx.fn.glsl(ty, instruction, *args)


def _sqrt(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    # Vulkan's Sqrt is a few ULP off; strict floating point promises the correctly rounded root
    if ctx.target.strict_float:
        return strict.square_root(ctx, ty, args[0])
    return ctx.fn.glsl(ty, GLSL.Sqrt, args[0])


def _fma(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    # Vulkan lets Fma be a separate multiply and add; strict floating point rounds once
    if ctx.target.strict_float:
        return strict.fused_multiply_add(ctx, ty, *args)
    return ctx.fn.glsl(ty, GLSL.Fma, *args)


def _pow(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    return float_pow(ctx, ty, *args)


def _isnan(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    return is_nan(ctx, ty, args[0])


def is_nan(ctx: LoweringContext, ty: FloatType, x: int) -> int:
    """`x` is a NaN, from its bits: exponent all ones and a nonzero fraction. (OpIsNan and
    ordered comparisons are what a driver that assumes no NaNs may fold away.)"""
    fn = ctx.fn
    if ty.bits == 16:  # f16 -> f32 is exact and keeps NaNs NaN; no 16-bit integers needed
        x, ty = fn.f_convert(F32, x), F32
    if ty.bits == 32:
        magnitude = fn.bitwise_and(U32, fn.bitcast(U32, x), ctx.const(U32, 0x7FFFFFFF))
        return fn.u_greater_than(BOOL, magnitude, ctx.const(U32, 0x7F800000))
    # f64 as two u32 words (no 64-bit integers needed): the low word's bits count as one
    words = fn.bitcast(VectorType(U32, 2), x)
    low, high = fn.composite_extract(U32, words, 0), fn.composite_extract(U32, words, 1)
    low_bit = fn.select(U32, fn.i_not_equal(BOOL, low, ctx.const(U32, 0)), ctx.const(U32, 1),
                        ctx.const(U32, 0))
    magnitude = fn.bitwise_or(U32, fn.bitwise_and(U32, high, ctx.const(U32, 0x7FFFFFFF)),
                              low_bit)
    return fn.u_greater_than(BOOL, magnitude, ctx.const(U32, 0x7FF00000))


def _via_f32(f32_function: Callable[[LoweringContext, int], int]) -> MathLowering:
    """A one-argument function of `pykern.spirv.numerics.mathf32` (f32 only: f16 comes
    through f32, `THROUGH_F32`)."""
    def lower(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
        assert ty == F32, ty
        return f32_function(ctx, args[0])
    return lower


def _isinf(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    return ctx.fn.is_inf(BOOL, args[0])


def _copysign(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    # on the bits, so that -0.0 and NaN signs count, as in Python
    fn = ctx.fn
    if ty.bits == 64:
        return _copysign_f64(ctx, ty, args)
    if ty.bits == 16:  # on the exact f32s: an f16's own bits are unsafe (`f16_bits`)
        wide = _copysign(ctx, F32, [fn.f_convert(F32, a) for a in args])
        return fn.f_convert(ty, wide)
    bits = IntType(ty.bits, False)
    ctx.module.require(*value_capabilities(bits))
    sign = ctx.const(bits, 1 << (ty.bits - 1))
    magnitude = fn.bitwise_and(bits, fn.bitcast(bits, args[0]), fn.not_(bits, sign))
    signed = fn.bitwise_or(bits, magnitude, fn.bitwise_and(bits, fn.bitcast(bits, args[1]), sign))
    return fn.bitcast(ty, signed)


def _copysign_f64(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    """copysign of f64 on the high u32 words: x's magnitude bits with y's sign bit, so f64 math
    (the prelude uses copysign throughout) needs no 64-bit integers. On the bits, not by
    negating x: NVIDIA's f64 negation leaves a NaN's sign alone."""
    fn = ctx.fn
    pair = VectorType(U32, 2)
    sign = ctx.const(U32, 0x80000000)
    x_words = fn.bitcast(pair, args[0])
    magnitude = fn.bitwise_and(U32, fn.composite_extract(U32, x_words, 1), fn.not_(U32, sign))
    y_sign = fn.bitwise_and(U32, fn.composite_extract(U32, fn.bitcast(pair, args[1]), 1), sign)
    high = fn.bitwise_or(U32, magnitude, y_sign)
    return fn.bitcast(ty, fn.composite_insert(pair, high, x_words, 1))


def _atan2(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    # GLSL leaves atan2(y, 0) and atan2(0, x) to the driver: lavapipe's atan2(0, 0) is 3*pi/4,
    # atan2(-0.0, 1) +0.0 and atan2(0, subnormal) and atan2(subnormal, 0) NaN. Python gives, for
    # y = +-0, +-0 or +-pi by the sign of x (also a subnormal x), for x = +-0 +-pi/2; the
    # result always has the sign of y (atan2 is odd in y).
    fn = ctx.fn
    y, x = args
    zero = ctx.const(ty, 0.0)
    y_zero = fn.f_ord_equal(BOOL, y, zero)
    x_zero = fn.f_ord_equal(BOOL, x, zero)
    x_negative = fn.f_ord_less_than(BOOL, _copysign(ctx, ty, (ctx.const(ty, 1.0), x)), zero)
    at_zero = fn.select(ty, x_negative, ctx.const(ty, math.pi), zero)
    result = fn.select(ty, x_zero, ctx.const(ty, math.pi / 2), fn.glsl(ty, GLSL.Atan2, y, x))
    result = _copysign(ctx, ty, (fn.select(ty, y_zero, at_zero, result), y))
    return _nan_through(ctx, ty, (y, x), result)


def _atan(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    # the sign of x on the result: lavapipe's Atan(-0.0) is +0.0
    result = _copysign(ctx, ty, (ctx.fn.glsl(ty, GLSL.Atan, args[0]), args[0]))
    return _nan_through(ctx, ty, args, result)


def _nan_through(ctx: LoweringContext, ty: FloatType, args: Sequence[int], result: int) -> int:
    """`result`, or NaN where an argument is NaN: drivers' Atan/Atan2 need not propagate NaN
    (lavapipe's give 0.0)."""
    fn = ctx.fn
    nan = fn.is_nan(BOOL, args[0])
    for arg in args[1:]:
        nan = fn.logical_or(BOOL, nan, fn.is_nan(BOOL, arg))
    return fn.select(ty, nan, ctx.const(ty, float("nan")), result)


def _trunc(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    """Toward zero. f64 from Floor/Ceil: lavapipe's f64 Trunc returns some values unchanged."""
    fn, x = ctx.fn, args[0]
    if ty.bits != 64:
        return fn.glsl(ty, GLSL.Trunc, x)
    negative = fn.f_ord_less_than(BOOL, x, ctx.const(ty, 0.0))
    return fn.select(ty, negative, fn.glsl(ty, GLSL.Ceil, x), fn.glsl(ty, GLSL.Floor, x))


def _round(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    """Python's round(): halves to even. f64 from Floor: lavapipe's f64 RoundEven rounds 1.5
    to 1.0. r = floor(x), then up where x - r (exact) is above a half, or a half and r odd;
    -0.0, inf and NaN come back as they are (x is integral there, or NaN)."""
    fn, x = ctx.fn, args[0]
    if ty.bits != 64:
        return fn.glsl(ty, GLSL.RoundEven, x)

    def c(value: float) -> int:
        return ctx.const(ty, value)

    r = fn.glsl(ty, GLSL.Floor, x)
    fraction = fn.f_sub(ty, x, r)  # exact, in [0, 1)
    half_r = fn.f_mul(ty, r, c(0.5))
    odd = fn.f_unord_not_equal(BOOL, fn.glsl(ty, GLSL.Floor, half_r), half_r)
    up = fn.logical_or(BOOL, fn.f_ord_greater_than(BOOL, fraction, c(0.5)),
                       fn.logical_and(BOOL, fn.f_ord_equal(BOOL, fraction, c(0.5)), odd))
    rounded = fn.select(ty, up, fn.f_add(ty, r, c(1.0)), r)
    # integral x (and so -0.0, +-inf) and NaN as they are; x in (-0.5, 0) rounds to -0.0
    integral = fn.logical_not(BOOL, fn.f_ord_less_than(BOOL, r, x))
    rounded = fn.select(ty, integral, x, rounded)
    to_zero = fn.logical_and(BOOL, fn.f_ord_equal(BOOL, rounded, c(0.0)),
                             fn.f_ord_less_than(BOOL, x, c(0.0)))
    return fn.select(ty, to_zero, c(-0.0), rounded)


# sinh: x + x^3 P(x^2), its Taylor series, below |x| = 1, where GLSL's (e^x - e^-x) / 2 cancels
# (lavapipe's sinh(1e-30) is 3e-8, sinh(-0.0) is +0.0); the terms left out are below 2^-39 of
# it there. From 1 on, the GLSL instruction (no cancellation: e^-x is at most e^x / 7).
_SINH_TAYLOR = (1.0 / 6, 1.0 / 120, 1.0 / 5040, 1.0 / 362880, 1.0 / 39916800,
                1.0 / 6227020800)


def _sinh(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    fn = ctx.fn
    assert ty == F32, ty  # f16 comes through f32 (THROUGH_F32)
    x = args[0]
    acc = ctx.const(F32, _SINH_TAYLOR[-1])
    x2 = fn.f_mul(F32, x, x)
    for k in reversed(_SINH_TAYLOR[:-1]):
        acc = fn.f_add(F32, fn.f_mul(F32, acc, x2), ctx.const(F32, k))
    near = fn.f_add(F32, x, fn.f_mul(F32, fn.f_mul(F32, x, x2), acc))  # -0.0 stays -0.0
    ax = fn.glsl(F32, GLSL.FAbs, x)
    small = fn.f_ord_less_than(BOOL, ax, ctx.const(F32, 1.0))
    far = fn.select(F32, _large(ctx, ax), _copysign(ctx, F32, (_half_exp(ctx, ax), x)),
                    fn.glsl(F32, GLSL.Sinh, x))
    result = fn.select(F32, small, near, far)
    return result


# above this |x|, e^-|x| is below 2^-25 of e^|x|: sinh and cosh are e^|x| / 2 in f32
_HYPERBOLIC_LARGE = 9.0


def _large(ctx: LoweringContext, ax: int) -> int:
    return ctx.fn.f_ord_greater_than(BOOL, ax, ctx.const(F32, _HYPERBOLIC_LARGE))


def _half_exp(ctx: LoweringContext, ax: int) -> int:
    """e^ax / 2 in f32 as (e^(ax/2) / 2) * e^(ax/2), finite wherever the result is: GLSL's
    Sinh and Cosh compute e^ax first, which overflows from ax = 88.72 where sinh and cosh
    are finite up to 89.41 (lavapipe's cosh(89.0) was inf)."""
    fn = ctx.fn
    e = fn.glsl(F32, GLSL.Exp, fn.f_mul(F32, ax, ctx.const(F32, 0.5)))
    return fn.f_mul(F32, fn.f_mul(F32, e, ctx.const(F32, 0.5)), e)


def _cosh(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    """GLSL's Cosh, but e^|x| / 2 without overflow for large |x| (f32; f16 comes through f32,
    where e^x no longer overflows from 11.09 as f16's does)."""
    fn = ctx.fn
    assert ty == F32, ty  # f16 comes through f32 (THROUGH_F32)
    x = args[0]
    ax = fn.glsl(F32, GLSL.FAbs, x)
    result = fn.select(F32, _large(ctx, ax), _half_exp(ctx, ax), fn.glsl(F32, GLSL.Cosh, x))
    return result


# erf: Taylor series near 0 (relative accuracy where erf is small), Abramowitz & Stegun 7.1.26
# elsewhere (absolute error below 1.5e-7)
_ERF_TAYLOR = (1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320)
_ERF_AS_P = 0.3275911
_ERF_AS = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_ERF_SWITCH = 0.5


def _erf(ctx: LoweringContext, ty: FloatType, args: Sequence[int]) -> int:
    fn = ctx.fn
    assert ty == F32, ty  # f16 comes through f32 (THROUGH_F32)
    x = args[0]

    def c(value: float) -> int:
        return ctx.const(F32, value)

    def poly(coefficients: Sequence[float], t: int) -> int:  # Horner
        acc = c(coefficients[-1])
        for k in reversed(coefficients[:-1]):
            acc = fn.f_add(F32, fn.f_mul(F32, acc, t), c(k))
        return acc

    ax = fn.glsl(F32, GLSL.FAbs, x)
    x2 = fn.f_mul(F32, ax, ax)
    near = fn.f_mul(F32, fn.f_mul(F32, ax, c(2 / math.sqrt(math.pi))), poly(_ERF_TAYLOR, x2))
    t = fn.f_div(F32, c(1.0), fn.f_add(F32, c(1.0), fn.f_mul(F32, c(_ERF_AS_P), ax)))
    tail = fn.f_mul(F32, fn.f_mul(F32, t, poly(_ERF_AS, t)),
                    fn.glsl(F32, GLSL.Exp, fn.f_negate(F32, x2)))
    far = fn.f_sub(F32, c(1.0), tail)
    magnitude = fn.select(F32, fn.f_ord_less_than(BOOL, ax, c(_ERF_SWITCH)), near, far)
    # NaN in, NaN out; the sign of x, -0.0's too (erf is odd)
    magnitude = fn.select(F32, is_nan(ctx, F32, x), x, magnitude)
    result = _copysign(ctx, F32, (magnitude, x))
    return result


MATH: dict[MathFn, MathLowering] = {
    MathFn.SQRT: _sqrt,
    MathFn.RSQRT: _glsl(GLSL.InverseSqrt),
    MathFn.EXP: _glsl(GLSL.Exp),
    MathFn.EXP2: _glsl(GLSL.Exp2),
    MathFn.LOG: _glsl(GLSL.Log),
    MathFn.LOG2: _glsl(GLSL.Log2),
    MathFn.SIN: _via_f32(mathf32.sin),
    MathFn.COS: _via_f32(mathf32.cos),
    MathFn.TAN: _via_f32(mathf32.tan),
    MathFn.ASIN: _glsl(GLSL.Asin),
    MathFn.ACOS: _glsl(GLSL.Acos),
    MathFn.ATAN: _atan,
    MathFn.ATAN2: _atan2,  # (y, x) in both
    MathFn.SINH: _sinh,
    MathFn.COSH: _cosh,
    MathFn.TANH: _via_f32(mathf32.tanh),
    MathFn.ERF: _erf,
    MathFn.FLOOR: _glsl(GLSL.Floor),
    MathFn.CEIL: _glsl(GLSL.Ceil),
    MathFn.TRUNC: _trunc,
    MathFn.ROUND: _round,  # Python's round(): halves to even
    MathFn.FMA: _fma,
    MathFn.POW: _pow,
    MathFn.COPYSIGN: _copysign,
    MathFn.ISNAN: _isnan,
    MathFn.ISINF: _isinf,
}

# f16 functions computed in f32 and rounded once to f16, as numpy computes them: NVIDIA's driver
# (580) gave GLSL's f16 Atan of an f16 Sqrt's result NaN for infinity (the loaded infinity
# was right), and its f16 Sqrt is an ulp off where numpy's rounds the f32 root. The exact ones
# (floor, ceil, trunc, round, copysign, the predicates) and fma stay on f16.
THROUGH_F32 = frozenset({
    MathFn.SQRT, MathFn.RSQRT, MathFn.EXP, MathFn.EXP2, MathFn.LOG, MathFn.LOG2, MathFn.SIN,
    MathFn.COS, MathFn.TAN, MathFn.ASIN, MathFn.ACOS, MathFn.ATAN, MathFn.ATAN2, MathFn.SINH,
    MathFn.COSH, MathFn.TANH, MathFn.ERF, MathFn.POW,
})
