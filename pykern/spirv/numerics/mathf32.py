"""sin, cos, tan and tanh of f32 values, accurate over the whole f32 range, for `ir.MathCall`.

GLSL.std.450's Sin/Cos/Tan are only specified on [-pi, pi], to 2^-11 absolute, and drivers
really are that loose (NVIDIA: sin(1e-8) = 0, sin(9.9e7) = 0; lavapipe's Tanh of 1e-5 is 0.14%
off). These stay within about one ULP of the correctly rounded result for every f32 — tan
within two plus the driver's division error — with 32-bit integer and float arithmetic only
(no f64: not every device has it).

sin/cos/tan: |x| = k pi/2 + r with |r| <= pi/4, exactly for every finite f32 (Payne-Hanek): x is
m 2^e with a 24-bit integer m, so x 2/pi mod 4 needs only the 96 bits of 2/pi from the one of
weight 2^(1-e) on: m times them (integer products, 120 bits) has k mod 4 in its two integer
bits and r/(pi/2) in its fraction; the fraction rounded to the nearest quadrant is multiplied by
pi/2 as integers too, normalised, and split into r_hi + r_lo (f32s, r_lo below r_hi's last bit).
The closest an f32 comes to a multiple of pi/2 is about 2^-29 (x = 16367173 * 2^72), so the 64
fraction bits kept leave more than 30 significant bits. For |x| <= pi/4 the reduction is
skipped (k = 0, r = |x|). Then minimax polynomials on [0, pi/4] (the kernels take r_lo into
account, as fdlibm's), picked by k and the sign of x; tan is their quotient.

tanh: a + a^3 P(a^2) below |a| = 1, 1 - 2 / (e^2a + 1) from there (where an error of e^2a
counts less than a third), the sign of x put back.

Every branch is computed and one picked (`select`), so the cost is straight-line code. Tiny
arguments (|x| < 2^-12, where sin x = tan x = tanh x = x to f32 precision) return x itself, so
subnormals and -0.0 come back unchanged even where arithmetic flushes them; inf gives NaN,
and NaN comes back as it is. The constants come from `pykern.spirv.numerics.mathf32_derive`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pykern.spirv.context import LoweringContext
from pykern.spirv.encoding.grammar import GLSL
from pykern.spirv.encoding.types import BOOL, F32, U32

# 2/pi after 26 zero bits (bit t has weight 2^(25 - t)): enough for the window of every f32
# exponent at least that of pi/4
_TWO_OVER_PI = (0x00000028, 0xbe60db93, 0x91054a7f, 0x09d5f47d, 0x4d377036, 0xd8a5664f,
                0x10e4107f, 0x9458eaf7)
_PIO2_Q31 = 0xc90fdaa2  # floor(pi/2 * 2^31)
_MIN_EXPONENT = 126  # the biased exponent of pi/4: below it there is nothing to reduce
_MAX_EXPONENT = 254

_SIN = (-0.16666655242443085, 0.00833216030150652, -0.00019515282474458218)
_COS = (0.04166664555668831, -0.0013887316454201937, 2.44331567955669e-05)
_TANH = (-0.333333283662796, 0.1333319991827011, -0.05395309999585152, 0.02178473025560379,
         -0.008595114573836327, 0.0030785943381488323, -0.0008411371964029968,
         0.00012147071538493037)

_SIGN = 0x80000000
_MAGNITUDE = 0x7FFFFFFF
_INF_BITS = 0x7F800000
_PI_OVER_4_BITS = 0x3F490FDB  # f32(pi/4), just above pi/4
_TINY_BITS = 0x39800000  # 2^-12
_ONE_BITS = 0x3F800000


class _Emit:
    """Shorthand for the u32 and f32 instructions these functions are made of."""

    def __init__(self, ctx: LoweringContext) -> None:
        self.ctx, self.fn = ctx, ctx.fn

    def u(self, value: int) -> int:
        return self.ctx.const(U32, value)

    def f(self, value: float) -> int:
        return self.ctx.const(F32, value)

    # u32
    def and_(self, a: int, b: int) -> int:
        return self.fn.bitwise_and(U32, a, b)

    def or_(self, a: int, b: int) -> int:
        return self.fn.bitwise_or(U32, a, b)

    def shl(self, a: int, count: int) -> int:
        return self.fn.shift_left_logical(U32, a, count)

    def shr(self, a: int, count: int) -> int:
        return self.fn.shift_right_logical(U32, a, count)

    def add(self, a: int, b: int) -> int:
        return self.fn.i_add(U32, a, b)

    def sub(self, a: int, b: int) -> int:
        return self.fn.i_sub(U32, a, b)

    def mul_wide(self, a: int, b: int) -> tuple[int, int]:
        return self.fn.u_mul_extended(U32, a, b)

    def carry(self, total: int, addend: int) -> int:
        """1 where `total = x + addend` wrapped around, else 0."""
        return self.pick(self.fn.u_less_than(BOOL, total, addend), self.u(1), self.u(0))

    def less(self, a: int, b: int) -> int:
        return self.fn.u_less_than(BOOL, a, b)

    def equal(self, a: int, b: int) -> int:
        return self.fn.i_equal(BOOL, a, b)

    def pick(self, cond: int, a: int, b: int) -> int:
        return self.fn.select(U32, cond, a, b)

    def fpick(self, cond: int, a: int, b: int) -> int:
        return self.fn.select(F32, cond, a, b)

    def bits(self, x: int) -> int:
        return self.fn.bitcast(U32, x)

    def float_of(self, bits: int) -> int:
        return self.fn.bitcast(F32, bits)

    # f32, each operation rounded on its own (NoContraction)
    def fadd(self, a: int, b: int) -> int:
        return self.fn.f_add(F32, a, b)

    def fsub(self, a: int, b: int) -> int:
        return self.fn.f_sub(F32, a, b)

    def fmul(self, a: int, b: int) -> int:
        return self.fn.f_mul(F32, a, b)

    def neg_if(self, cond: int, x: int) -> int:
        return self.fpick(cond, self.fn.f_negate(F32, x), x)

    def poly(self, coefficients: Sequence[float], z: int) -> int:
        """Horner's rule, lowest degree first."""
        acc = self.f(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.fadd(self.fmul(acc, z), self.f(c))
        return acc


# ---------------------------------------------------------------- argument reduction


def _funnel(e: _Emit, high: int, low: int, shift: int) -> int:
    """The 32 bits starting `shift` (0..31) bits into the 64-bit `high:low`."""
    # low >> (32 - shift) in two steps, since a shift by 32 is undefined
    return e.or_(e.shl(high, shift), e.shr(e.shr(low, e.u(1)), e.sub(e.u(31), shift)))


def _two_over_pi_window(e: _Emit, exponent: int) -> tuple[int, int, int]:
    """The 96 bits of 2/pi from the one of weight 2^(151 - exponent) on, for a biased
    exponent in [126, 254] (three words, most significant first)."""
    start = e.sub(exponent, e.u(_MIN_EXPONENT))  # a bit index into _TWO_OVER_PI, 0..128
    first, shift = e.shr(start, e.u(5)), e.and_(start, e.u(31))
    is_first = [e.equal(first, e.u(j)) for j in range(4)]
    words = []
    for i in range(4):  # _TWO_OVER_PI[first + i], first in 0..4
        word = e.u(_TWO_OVER_PI[i + 4])
        for j in reversed(range(4)):
            word = e.pick(is_first[j], e.u(_TWO_OVER_PI[i + j]), word)
        words.append(word)
    return tuple(_funnel(e, words[i], words[i + 1], shift) for i in range(3))  # type: ignore


def _reduce(e: _Emit, magnitude: int) -> tuple[int, int, int]:
    """(r_hi, r_lo, k): |x| = k pi/2 + r_hi + r_lo (k mod 4, |r| <= pi/4) for the bits of a
    finite |x| >= pi/4."""
    fn = e.fn
    exponent = fn.glsl(U32, GLSL.UMax, e.shr(magnitude, e.u(23)), e.u(_MIN_EXPONENT))
    mantissa = e.or_(e.and_(magnitude, e.u(0x7FFFFF)), e.u(0x800000))  # |x| = m 2^(exp - 150)
    w0, w1, w2 = _two_over_pi_window(e, exponent)
    # m * (w0:w1:w2) = p3:p2:p1:p0, whose bit 94 has weight 1 in |x| 2/pi; p3 only holds
    # multiples of 4
    p0, h2 = e.mul_wide(mantissa, w2)
    l1, h1 = e.mul_wide(mantissa, w1)
    l0, _ = e.mul_wide(mantissa, w0)
    p1 = e.add(h2, l1)
    p2 = e.add(e.add(h1, l0), e.carry(p1, l1))
    quadrant = e.shr(p2, e.u(30))
    # the 64 fraction bits, as a signed fraction in [-1/2, 1/2): rounded to the nearest quadrant
    f_hi = e.or_(e.shl(p2, e.u(2)), e.shr(p1, e.u(30)))
    f_lo = e.or_(e.shl(p1, e.u(2)), e.shr(p0, e.u(30)))
    up = e.shr(f_hi, e.u(31))
    negative = e.equal(up, e.u(1))
    k = e.and_(e.add(quadrant, up), e.u(3))
    # |fraction| (two's complement negation of f_hi:f_lo where negative)
    f_lo_neg = fn.s_negate(U32, f_lo)
    f_hi_neg = e.add(fn.not_(U32, f_hi), e.pick(e.equal(f_lo, e.u(0)), e.u(1), e.u(0)))
    f_hi = e.pick(negative, f_hi_neg, f_hi)
    f_lo = e.pick(negative, f_lo_neg, f_lo)
    # r = |fraction| pi/2 = (f_hi:f_lo) * PIO2_Q31 * 2^-95, the top 64 of the 96 bits kept
    _, a_hi = e.mul_wide(f_lo, e.u(_PIO2_Q31))
    b_lo, b_hi = e.mul_wide(f_hi, e.u(_PIO2_Q31))
    r_lo = e.add(a_hi, b_lo)
    r_hi = e.add(b_hi, e.carry(r_lo, b_lo))  # r = (r_hi:r_lo) 2^-63
    r_hi, r_lo = _float_pair(e, r_hi, r_lo, 63)
    return e.neg_if(negative, r_hi), e.neg_if(negative, r_lo), k


def _float_pair(e: _Emit, high: int, low: int, scale_bits: int) -> tuple[int, int]:
    """The 64-bit unsigned `high:low` times 2^-scale_bits as f32s hi + lo: hi holds the top
    24 significant bits exactly, lo the rest (rounded)."""
    fn = e.fn
    # normalise so that bit 31 of `high` is set: first by a whole word, then by the zeros left
    by_word = e.equal(high, e.u(0))
    high, low = e.pick(by_word, low, high), e.pick(by_word, e.u(0), low)
    msb = fn.glsl(U32, GLSL.FindUMsb, high)  # 0xFFFFFFFF for 0 (r = 0 never happens)
    shift = fn.glsl(U32, GLSL.UMin, e.sub(e.u(31), msb), e.u(31))
    top = _funnel(e, high, low, shift)
    rest = e.shl(low, shift)
    total = e.add(shift, e.pick(by_word, e.u(32), e.u(0)))
    # 2^-(scale_bits - 32 + total), a normal f32 for every total in 0..63
    scale = e.float_of(e.shl(e.sub(e.u(127 + 32 - scale_bits), total), e.u(23)))
    hi = e.fmul(fn.convert_u_to_f(F32, e.and_(top, e.u(0xFFFFFF00))), scale)
    tail = e.fadd(fn.convert_u_to_f(F32, e.and_(top, e.u(0xFF))),
                  e.fmul(fn.convert_u_to_f(F32, rest), e.f(2.0 ** -32)))
    return hi, e.fmul(tail, scale)


# ---------------------------------------------------------------- kernels on [-pi/4, pi/4]


def _sin_kernel(e: _Emit, x: int, tail: int) -> int:
    """sin(x + tail) ~ x + x^3 P(x^2) + tail cos x."""
    z = e.fmul(x, x)
    cubic = e.fmul(e.fmul(z, x), e.poly(_SIN, z))
    correction = e.fmul(tail, e.fsub(e.f(1.0), e.fmul(e.f(0.5), z)))
    return e.fadd(x, e.fadd(cubic, correction))


def _cos_kernel(e: _Emit, x: int, tail: int) -> int:
    """cos(x + tail) ~ 1 - x^2/2 + x^4 P(x^2) - x tail, with 1 - x^2/2 kept in two parts."""
    z = e.fmul(x, x)
    half = e.fmul(e.f(0.5), z)
    w = e.fsub(e.f(1.0), half)
    lost = e.fsub(e.fsub(e.f(1.0), w), half)  # exactly what 1 - half lost in rounding
    small = e.fsub(e.fmul(e.fmul(z, z), e.poly(_COS, z)), e.fmul(x, tail))
    return e.fadd(w, e.fadd(lost, small))


# ---------------------------------------------------------------- sin, cos, tan, tanh


def _reduced(e: _Emit, x: int) -> tuple[int, int, int, int]:
    """(sin r, cos r, k, bits of |x|) for |x| = k pi/2 + r."""
    magnitude = e.and_(e.bits(x), e.u(_MAGNITUDE))
    r_hi, r_lo, k = _reduce(e, magnitude)
    near = e.fn.u_less_than_equal(BOOL, magnitude, e.u(_PI_OVER_4_BITS))
    r_hi = e.fpick(near, e.float_of(magnitude), r_hi)
    r_lo = e.fpick(near, e.f(0.0), r_lo)
    k = e.pick(near, e.u(0), k)
    return _sin_kernel(e, r_hi, r_lo), _cos_kernel(e, r_hi, r_lo), k, magnitude


def _finish(e: _Emit, x: int, magnitude: int, result: int, odd: bool) -> int:
    """NaN for inf and NaN; x itself for tiny odd functions."""
    result = e.fpick(e.less(magnitude, e.u(_INF_BITS)), result, e.f(math.nan))
    result = e.fpick(e.fn.u_greater_than(BOOL, magnitude, e.u(_INF_BITS)), x, result)
    if odd:
        result = e.fpick(e.less(magnitude, e.u(_TINY_BITS)), x, result)
    return result


def _x_negative(e: _Emit, x: int) -> int:
    return e.fn.u_greater_than_equal(BOOL, e.bits(x), e.u(_SIGN))


def _bit_set(e: _Emit, value: int, bit: int) -> int:
    return e.fn.i_not_equal(BOOL, e.and_(value, e.u(bit)), e.u(0))


def sin(ctx: LoweringContext, x: int) -> int:
    """sin of an f32: sin r, cos r, -sin r, -cos r by quadrant, odd in x."""
    e = _Emit(ctx)
    s, c, k, magnitude = _reduced(e, x)
    value = e.fpick(_bit_set(e, k, 1), c, s)
    flip = e.fn.logical_not_equal(BOOL, _bit_set(e, k, 2), _x_negative(e, x))
    return _finish(e, x, magnitude, e.neg_if(flip, value), odd=True)


def cos(ctx: LoweringContext, x: int) -> int:
    """cos of an f32: cos r, -sin r, -cos r, sin r by quadrant, even in x."""
    e = _Emit(ctx)
    s, c, k, magnitude = _reduced(e, x)
    value = e.fpick(_bit_set(e, k, 1), s, c)
    flip = _bit_set(e, e.add(k, e.u(1)), 2)
    return _finish(e, x, magnitude, e.neg_if(flip, value), odd=False)


def tan(ctx: LoweringContext, x: int) -> int:
    """tan of an f32: sin r / cos r, or -cos r / sin r in the odd quadrants, odd in x."""
    e = _Emit(ctx)
    s, c, k, magnitude = _reduced(e, x)
    odd_quadrant = _bit_set(e, k, 1)
    quotient = e.fn.f_div(F32, e.fpick(odd_quadrant, c, s), e.fpick(odd_quadrant, s, c))
    flip = e.fn.logical_not_equal(BOOL, odd_quadrant, _x_negative(e, x))
    return _finish(e, x, magnitude, e.neg_if(flip, quotient), odd=True)


def tanh(ctx: LoweringContext, x: int) -> int:
    """tanh of an f32 (see the module docstring)."""
    e = _Emit(ctx)
    fn = e.fn
    magnitude = e.and_(e.bits(x), e.u(_MAGNITUDE))
    a = e.float_of(magnitude)
    z = e.fmul(a, a)
    near = e.fadd(a, e.fmul(e.fmul(a, z), e.poly(_TANH, z)))
    growth = fn.glsl(F32, GLSL.Exp, e.fadd(a, a))  # inf beyond a = 44: the result is 1
    far = e.fsub(e.f(1.0), fn.f_div(F32, e.f(2.0), e.fadd(growth, e.f(1.0))))
    value = e.fpick(e.less(magnitude, e.u(_ONE_BITS)), near, far)  # both >= +0
    signed = e.float_of(e.or_(e.bits(value), e.and_(e.bits(x), e.u(_SIGN))))
    signed = e.fpick(e.less(magnitude, e.u(_TINY_BITS)), x, signed)
    return e.fpick(fn.u_greater_than(BOOL, magnitude, e.u(_INF_BITS)), x, signed)  # NaN
