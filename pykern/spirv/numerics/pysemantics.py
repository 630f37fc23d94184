"""Python's meaning of `//`, `%`, `**`, shifts and `range`, built from SPIR-V instructions
that are defined for every operand.

SPIR-V's OpSDiv/OpSRem/OpSMod truncate or are undefined for negative operands on Vulkan, and
GLSL's Pow is undefined for a negative or zero base, so these are spelled out with unsigned
division, selects and (for integer powers) a loop. Where Python raises, the result is the one
the interpreter backend defines (`pykern.interpret.helpers`): integer `//` and `%` by zero give
0, a `range` with step 0 runs no iterations, out-of-range shifts shift everything out.
Their tests of integers for zero are `int_equality`'s sign tests, as the operators' are.
"""

from __future__ import annotations

from collections.abc import Callable

from pykern.spirv import loopcap
from pykern.spirv.numerics import strict
from pykern.spirv.numerics import int_equality, wide_int
from pykern.spirv.context import LoweringContext
from pykern.spirv.control import Loop, while_loop
from pykern.spirv.function import FunctionBuilder as FB
from pykern.spirv.encoding.grammar import GLSL
from pykern.spirv.numerics.half_rounding import narrow_to_f16
from pykern.spirv.typemap import unsigned, value_capabilities
from pykern.spirv.encoding.types import BOOL, F32, FloatType, IntType, ScalarType

Compare = Callable[[FB, ScalarType, int, int], int]

# ---------------------------------------------------------------- signed // and %


def signed_floordiv(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a // b` rounding toward -inf: the quotient of |a| by |b|, negated, minus one when the
    signs differ and the division is inexact (-q - 1 is ~q). INT_MIN // -1 wraps to INT_MIN."""
    parts = _DivMod(ctx, ty, a, b)
    fn = ctx.fn
    # the magnitude is unsigned; the sign is applied in the signed type
    q = fn.bitcast(ty, parts.uq)
    negated = fn.select(ty, parts.inexact, fn.not_(ty, q), fn.s_negate(ty, q))
    return fn.select(ty, parts.signs_differ, negated, q)


def unsigned_floordiv(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a // b`, 0 for b == 0 (then 0 // 1)."""
    is_zero = int_equality.equal(ctx, ty, b, ctx.const(ty, 0))
    a = ctx.fn.select(ty, is_zero, ctx.const(ty, 0), a)
    return ctx.fn.u_div(ty, a, ctx.fn.select(ty, is_zero, ctx.const(ty, 1), b))


def unsigned_mod(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a % b`, 0 for b == 0 (then a % 1)."""
    is_zero = int_equality.equal(ctx, ty, b, ctx.const(ty, 0))
    return ctx.fn.u_mod(ty, a, ctx.fn.select(ty, is_zero, ctx.const(ty, 1), b))


def signed_mod(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a % b` with the sign of `b`: |b| - r when the signs differ (and r != 0), then signed
    like `b`."""
    parts = _DivMod(ctx, ty, a, b)
    fn, uty = ctx.fn, parts.uty
    flip = fn.logical_and(BOOL, parts.signs_differ, parts.inexact)
    # negated in the signed type, as in signed_floordiv
    magnitude = fn.bitcast(ty, fn.select(uty, flip, fn.i_sub(uty, parts.ub, parts.ur), parts.ur))
    return fn.select(ty, parts.b_negative, fn.s_negate(ty, magnitude), magnitude)


class _DivMod:
    """Unsigned quotient and remainder of |a| and |b|, and the sign facts about a and b."""

    def __init__(self, ctx: LoweringContext, ty: IntType, a: int, b: int) -> None:
        fn = ctx.fn
        self.uty = uty = unsigned(ty)
        zero = ctx.const(ty, 0)
        a_negative = fn.s_less_than(BOOL, a, zero)
        self.b_negative = fn.s_less_than(BOOL, b, zero)
        # |x| through a wrapping negation: |INT_MIN| is 2**(bits-1) once read as unsigned
        ua = fn.bitcast(uty, fn.select(ty, a_negative, fn.s_negate(ty, a), a))
        self.ub = fn.bitcast(uty, fn.select(ty, self.b_negative, fn.s_negate(ty, b), b))
        # b == 0 divides 0 by 1: quotient and remainder 0
        b_zero = int_equality.equal(ctx, ty, b, zero)
        ua = fn.select(uty, b_zero, ctx.const(uty, 0), ua)
        self.ub = fn.select(uty, b_zero, ctx.const(uty, 1), self.ub)
        self.uq = fn.u_div(uty, ua, self.ub)
        self.ur = fn.u_mod(uty, ua, self.ub)
        self.signs_differ = fn.logical_not_equal(BOOL, a_negative, self.b_negative)
        self.inexact = int_equality.nonzero(ctx, uty, self.ur)


# ---------------------------------------------------------------- float // and %


def float_floordiv(ctx: LoweringContext, ty: FloatType, a: int, b: int) -> int:
    """Python's `a // b` as numpy computes it (`npy_floor_divide`): a / b for b == 0, else the
    quotient of `npy_divmod`."""
    return _FloatDivMod(ctx, ty, a, b).quotient


def float_mod(ctx: LoweringContext, ty: FloatType, a: int, b: int) -> int:
    """Python's `a % b` as numpy computes it (`npy_remainder`): fmod(a, b) with the sign of b
    (-0.0 for b < 0 where it is zero); inf % b and a % 0 are NaN, a % inf is a or inf."""
    return _FloatDivMod(ctx, ty, a, b).remainder


class _FloatDivMod:
    """numpy's `npy_divmod`, step for step, on an exact fmod:

        mod = fmod(a, b); div = (a - mod) / b
        if mod != 0 and (b < 0) != (mod < 0): mod += b; div -= 1
        if mod == 0: mod = copysign(0, b)
        floordiv = floor(div), plus 1 where div - floor(div) > 0.5; copysign(0, a / b) where
        div == 0; a / b where b == 0.

    f16 is computed in f32 and rounded back, as numpy does. Signed zeros are made on the bits
    (drivers fold `b * 0.0`).
    """

    def __init__(self, ctx: LoweringContext, ty: FloatType, a: int, b: int) -> None:
        fn = ctx.fn
        if ty.bits == 16:
            inner = _FloatDivMod(ctx, F32, fn.f_convert(F32, a), fn.f_convert(F32, b))
            self.quotient = narrow_to_f16(ctx, F32, inner.quotient)
            self.remainder = narrow_to_f16(ctx, F32, inner.remainder)
            return

        def c(value: float) -> int:
            return ctx.const(ty, value)

        zero, one = c(0.0), c(1.0)
        mod = _fmod(ctx, ty, a, b)
        # the quotient of the exact a - mod by b, correctly rounded: Vulkan lets OpFDiv be
        # 2.5 ULP off (NVIDIA's is), and floor() of a quotient one ULP low is a whole number
        # lower where the quotient is large
        div = strict.divide(ctx, ty, fn.f_sub(ty, a, mod), b)
        nonzero = fn.f_unord_not_equal(BOOL, mod, zero)  # NaN counts, as in C's `if (mod)`
        signs_differ = fn.logical_not_equal(BOOL, fn.f_ord_less_than(BOOL, b, zero),
                                            fn.f_ord_less_than(BOOL, mod, zero))
        adjust = fn.logical_and(BOOL, nonzero, signs_differ)
        mod = fn.select(ty, adjust, fn.f_add(ty, mod, b), mod)
        div = fn.select(ty, adjust, fn.f_sub(ty, div, one), div)
        self.remainder = fn.select(ty, nonzero, mod, _signed_zero(ctx, ty, b))

        floordiv = fn.glsl(ty, GLSL.Floor, div)
        snap = fn.f_ord_greater_than(BOOL, fn.f_sub(ty, div, floordiv), c(0.5))
        floordiv = fn.select(ty, snap, fn.f_add(ty, floordiv, one), floordiv)
        # div == 0 only where b is neither 0 nor NaN: a / b is then +-0, signed by a and b
        div_zero = fn.f_ord_equal(BOOL, div, zero)
        floordiv = fn.select(ty, div_zero, _signed_zero(ctx, ty, a, b), floordiv)
        b_zero = fn.f_ord_equal(BOOL, b, zero)
        self.quotient = fn.select(ty, b_zero, fn.f_div(ty, a, b), floordiv)


def _sign_bit(ctx: LoweringContext, ty: FloatType) -> tuple[IntType, int]:
    bits = IntType(ty.bits, False)
    ctx.module.require(*value_capabilities(bits))
    return bits, ctx.const(bits, 1 << (ty.bits - 1))


def _signed_zero(ctx: LoweringContext, ty: FloatType, *signs: int) -> int:
    """0.0 with the sign bit of `signs[0]` (xor that of `signs[1]`), made on the bits."""
    fn = ctx.fn
    bits, sign = _sign_bit(ctx, ty)
    word = fn.bitcast(bits, signs[0])
    for other in signs[1:]:
        word = fn.bitwise_xor(bits, word, fn.bitcast(bits, other))
    return fn.bitcast(ty, fn.bitwise_and(bits, word, sign))


# mantissa (stored significand) bits of f32 and f64
_MANTISSA_BITS = {32: 23, 64: 52}


def _fmod(ctx: LoweringContext, ty: FloatType, a: int, b: int) -> int:
    """C's fmod(a, b), exact (f32, f64): NaN for a NaN operand, an infinite a or b == 0; a where
    |a| < |b| (so for b = +-inf); else the remainder of the significands by long division.

    With a = ma * 2**ea and b = mb * 2**eb (integer significands, ea >= eb), fmod(|a|, |b|) is
    (ma * 2**(ea - eb) mod mb) * 2**eb: the shift is done some bits at a time (as many as fit
    beside a significand in one word: 8 for f32, 11 for f64), reducing mod mb after each, so a
    loop of at most ceil(277 / 8) (f32) or ceil(2098 / 11) (f64) iterations; none where the
    quotient is below 2**8 (2**11). The result has the sign of a.
    """
    fn = ctx.fn
    m = _MANTISSA_BITS[ty.bits]
    uty, sign = _sign_bit(ctx, ty)
    a_bits, nan, below, ua, ub = _fmod_cases(ctx, ty, uty, a, b)
    (ea, ma), (eb, mb) = _unpack_finite(ctx, ty, uty, ua), _unpack_finite(ctx, ty, uty, ub)
    r = _shifted_remainder(ctx, ty, uty, ma, mb, ea, eb)
    # r * 2**(eb - bias - m), exactly: r * 2**-m is in [0, 2), 2**(eb - bias) is a normal float
    scale = fn.bitcast(ty, fn.shift_left_logical(uty, eb, ctx.const(uty, m)))
    magnitude = fn.f_mul(ty, fn.f_mul(ty, fn.convert_u_to_f(ty, r), ctx.const(ty, 2.0 ** -m)),
                         scale)
    signed = fn.bitwise_or(uty, fn.bitcast(uty, magnitude), fn.bitwise_and(uty, a_bits, sign))
    result = fn.select(ty, below, a, fn.bitcast(ty, signed))
    return fn.select(ty, nan, ctx.const(ty, float("nan")), result)


def _fmod_cases(ctx: LoweringContext, ty: FloatType, uty: IntType, a: int, b: int
                ) -> tuple[int, int, int, int, int]:
    """The bits of a; whether fmod(a, b) is NaN, or a (|a| < |b|); and |a|, |b| as bits, both
    1.0 in those trivial cases, so that the division that follows does no iterations."""
    fn = ctx.fn
    width, m = ty.bits, _MANTISSA_BITS[ty.bits]

    def u(value: int) -> int:
        return ctx.const(uty, value)

    magnitude_mask = u((1 << (width - 1)) - 1)
    a_bits = fn.bitcast(uty, a)
    ua = fn.bitwise_and(uty, a_bits, magnitude_mask)
    ub = fn.bitwise_and(uty, fn.bitcast(uty, b), magnitude_mask)
    inf_bits = u(((1 << (width - 1 - m)) - 1) << m)
    nan = fn.logical_or(BOOL, fn.logical_or(BOOL, fn.u_greater_than_equal(BOOL, ua, inf_bits),
                                            fn.u_greater_than(BOOL, ub, inf_bits)),
                        fn.i_equal(BOOL, ub, u(0)))
    below = fn.u_less_than(BOOL, ua, ub)  # |a| < |b|: fmod is a
    trivial = fn.logical_or(BOOL, nan, below)
    one_bits = u(((1 << (width - 2 - m)) - 1) << m)
    ua = fn.select(uty, trivial, one_bits, ua)
    ub = fn.select(uty, trivial, one_bits, ub)
    return a_bits, nan, below, ua, ub


def _unpack_finite(ctx: LoweringContext, ty: FloatType, uty: IntType, x: int
                   ) -> tuple[int, int]:
    """(biased exponent, at least 1; integer significand) of the bits `x` of a finite
    |x| > 0."""
    fn = ctx.fn
    m = _MANTISSA_BITS[ty.bits]
    shift_m, implicit, fraction_mask = (ctx.const(uty, m), ctx.const(uty, 1 << m),
                                        ctx.const(uty, (1 << m) - 1))
    exponent = fn.shift_right_logical(uty, x, shift_m)
    subnormal = fn.i_equal(BOOL, exponent, ctx.const(uty, 0))
    fraction = fn.bitwise_and(uty, x, fraction_mask)
    return (fn.select(uty, subnormal, ctx.const(uty, 1), exponent),
            fn.select(uty, subnormal, fraction, fn.bitwise_or(uty, fraction, implicit)))


def _shifted_remainder(ctx: LoweringContext, ty: FloatType, uty: IntType, ma: int, mb: int,
                       ea: int, eb: int) -> int:
    """(ma << (ea - eb)) mod mb, by a loop that shifts as many bits at a time as fit beside the
    remainder (r < mb < 2**(m + 1)) in one word and reduces after each."""
    fn = ctx.fn
    step = ty.bits - 1 - _MANTISSA_BITS[ty.bits]
    r_var = fn.variable(uty, "fmod.r")
    d_var = fn.variable(uty, "fmod.d")
    fn.store(r_var, fn.u_mod(uty, ma, mb))
    fn.store(d_var, fn.i_sub(uty, ea, eb))

    def reduce(loop: Loop) -> None:
        d = fn.load(uty, d_var)
        k = fn.select(uty, fn.u_less_than(BOOL, d, ctx.const(uty, step)), d,
                      ctx.const(uty, step))
        fn.store(r_var, fn.u_mod(uty, fn.shift_left_logical(uty, fn.load(uty, r_var), k), mb))
        fn.store(d_var, fn.i_sub(uty, d, k))

    while_loop(ctx, lambda: fn.i_not_equal(BOOL, fn.load(uty, d_var), ctx.const(uty, 0)),
               reduce, loopcap.FLOAT_MOD)
    return fn.load(uty, r_var)


# ---------------------------------------------------------------- **


def int_pow(ctx: LoweringContext, ty: IntType, base: int, exponent: int) -> int:
    """`base ** exponent` by square-and-multiply over the exponent's bits (at most `bits`
    iterations), wrapping. A negative exponent gives 0, except for a base of 1 or -1, which give
    1 or (-1) ** |exponent|, the integer part of Python's float result."""
    fn = ctx.fn
    uty = unsigned(ty)
    uone = ctx.const(uty, 1)
    result_var = fn.variable(ty, "pow.result")
    base_var = fn.variable(ty, "pow.base")
    exp_var = fn.variable(uty, "pow.exp")
    negative_exp = None
    magnitude = exponent
    if ty.signed:
        negative_exp = fn.s_less_than(BOOL, exponent, ctx.const(ty, 0))
        magnitude = fn.bitcast(
            uty, fn.select(ty, negative_exp, fn.s_negate(ty, exponent), exponent))
    fn.store(result_var, ctx.const(ty, 1))
    fn.store(base_var, base)
    fn.store(exp_var, magnitude)


    def square_and_multiply(loop: Loop) -> None:
        e = fn.load(uty, exp_var)
        r = fn.load(ty, result_var)
        b = fn.load(ty, base_var)
        odd = int_equality.nonzero(ctx, uty, fn.bitwise_and(uty, e, uone))
        fn.store(result_var, fn.select(ty, odd, wide_int.mul(ctx, ty, r, b), r))
        fn.store(base_var, wide_int.mul(ctx, ty, b, b))
        fn.store(exp_var, fn.shift_right_logical(uty, e, uone))

    while_loop(ctx, lambda: int_equality.nonzero(ctx, uty, fn.load(uty, exp_var)),
               square_and_multiply, loopcap.INT_POW)

    result = fn.load(ty, result_var)
    if negative_exp is None:
        return result
    unit = fn.logical_or(BOOL, int_equality.equal(ctx, ty, base, ctx.const(ty, 1)),
                         int_equality.equal(ctx, ty, base, ctx.const(ty, -1)))
    vanishes = fn.logical_and(BOOL, negative_exp, fn.logical_not(BOOL, unit))
    return fn.select(ty, vanishes, ctx.const(ty, 0), result)


def float_pow(ctx: LoweringContext, ty: FloatType, x: int, y: int) -> int:
    """Python's (and numpy's) `x ** y` from GLSL Pow(|x|, y), which is undefined for x <= 0:

    - x < 0 and y integral: the sign of (-1) ** y; x < 0 (finite) and y not integral: NaN;
    - x == ±0: y > 0 gives 0 (x itself for odd y), y < 0 gives inf (1/x for odd y);
    - a NaN operand gives NaN, except that y == 0, x == 1, and x == -1 with y = ±inf give 1;
    - an integral |y| up to 2**POW_BITS - 1: |x| ** |y| by squaring (`_power_by_squaring`), so
      that x ** 2 is x * x and representable integer results are exact; Vulkan's Pow is only
      as good as exp2(y · log2 x) (lavapipe's f16 6.0 ** 2.0 was 36.06, f32 FLT_MAX ** 1.0
      inf). A negative y divides 1 by that, unless it overflowed (then Pow's);
    - f16 is computed in f32 and rounded once.
    """
    fn = ctx.fn
    if ty != F32:
        wide = float_pow(ctx, F32, fn.f_convert(F32, x), fn.f_convert(F32, y))
        return narrow_to_f16(ctx, F32, wide) if ty.bits == 16 else fn.f_convert(ty, wide)

    def c(value: float) -> int:
        return ctx.const(ty, value)

    zero, one, inf = c(0.0), c(1.0), c(float("inf"))
    ax = fn.glsl(ty, GLSL.FAbs, x)
    result = fn.glsl(ty, GLSL.Pow, ax, y)

    integral = fn.f_ord_equal(BOOL, fn.glsl(ty, GLSL.Floor, y), y)
    ay = fn.glsl(ty, GLSL.FAbs, y)
    power = _power_by_squaring(ctx, ty, ax, ay)
    negative_y = fn.f_ord_less_than(BOOL, y, zero)
    small = fn.logical_and(BOOL, integral, fn.f_ord_less_than(BOOL, ay, c(2.0 ** POW_BITS)))
    overflowed = fn.logical_and(BOOL, negative_y, fn.f_ord_equal(BOOL, power, inf))
    small = fn.logical_and(BOOL, small, fn.logical_not(BOOL, overflowed))
    result = fn.select(ty, small, fn.select(ty, negative_y, fn.f_div(ty, one, power), power),
                       result)
    half = fn.f_mul(ty, y, c(0.5))
    odd = fn.logical_and(
        BOOL, integral, fn.f_unord_not_equal(BOOL, fn.glsl(ty, GLSL.Floor, half), half))
    negative = fn.f_ord_less_than(BOOL, x, zero)
    result = fn.select(ty, fn.logical_and(BOOL, negative, odd), fn.f_negate(ty, result), result)
    finite_negative = fn.logical_and(BOOL, negative, fn.f_ord_less_than(BOOL, ax, inf))
    no_real_root = fn.logical_and(BOOL, finite_negative, fn.logical_not(BOOL, integral))
    result = fn.select(ty, no_real_root, c(float("nan")), result)

    positive_y = fn.select(ty, odd, x, zero)
    negative_y = fn.select(ty, odd, fn.f_div(ty, one, x), inf)
    zero_base = fn.select(ty, fn.f_ord_greater_than(BOOL, y, zero), positive_y,
                          fn.select(ty, fn.f_ord_less_than(BOOL, y, zero), negative_y,
                                    c(float("nan"))))
    result = fn.select(ty, fn.f_ord_equal(BOOL, x, zero), zero_base, result)

    # drivers' pow need not propagate NaN (lavapipe's does not): do it here
    either_nan = fn.logical_or(BOOL, fn.f_unord_not_equal(BOOL, x, x),
                               fn.f_unord_not_equal(BOOL, y, y))
    result = fn.select(ty, either_nan, fn.f_add(ty, x, y), result)

    minus_one_inf = fn.logical_and(BOOL, fn.f_ord_equal(BOOL, x, c(-1.0)),
                                   fn.f_ord_equal(BOOL, fn.glsl(ty, GLSL.FAbs, y), inf))
    unit = fn.logical_or(BOOL, fn.f_ord_equal(BOOL, y, zero), fn.f_ord_equal(BOOL, x, one))
    return fn.select(ty, fn.logical_or(BOOL, unit, minus_one_inf), one, result)


POW_BITS = 3  # integral exponents below 2**3 are powers by squaring (at most 4 roundings)


def _power_by_squaring(ctx: LoweringContext, ty: FloatType, base: int, n: int) -> int:
    """base ** n for an integral float n in [0, 2**POW_BITS), as the product of the squares
    base^(2^k) that n's bits select (straight-line: a select per bit); meaningless for
    other n, which the caller does not take."""
    fn = ctx.fn
    half, two = ctx.const(ty, 0.5), ctx.const(ty, 2.0)
    acc = ctx.const(ty, 1.0)
    for k in range(POW_BITS):
        rest = fn.glsl(ty, GLSL.Floor, fn.f_mul(ty, n, half))
        odd = fn.f_unord_not_equal(BOOL, fn.f_mul(ty, rest, two), n)
        acc = fn.select(ty, odd, fn.f_mul(ty, acc, base), acc)
        n = rest
        if k + 1 < POW_BITS:
            base = fn.f_mul(ty, base, base)
    return acc


# ---------------------------------------------------------------- << and >>


def shift_left(ctx: LoweringContext, ty: IntType, a: int, count: int) -> int:
    """`a << count` wrapped to the type: 0 once count >= bits (SPIR-V leaves that undefined)."""
    fn = ctx.fn
    shifted = fn.shift_left_logical(ty, a, count)
    return fn.select(ty, _shift_out(ctx, ty, count), ctx.const(ty, 0), shifted)


def shift_right(ctx: LoweringContext, ty: IntType, a: int, count: int) -> int:
    """`a >> count`: arithmetic for signed (count clamped to bits - 1, giving 0 or -1),
    logical for unsigned (0 once count >= bits)."""
    fn = ctx.fn
    too_far = _shift_out(ctx, ty, count)
    if ty.signed:
        clamped = fn.select(ty, too_far, ctx.const(ty, ty.bits - 1), count)
        return fn.shift_right_arithmetic(ty, a, clamped)
    return fn.select(ty, too_far, ctx.const(ty, 0), fn.shift_right_logical(ty, a, count))


def _shift_out(ctx: LoweringContext, ty: IntType, count: int) -> int:
    # an unsigned compare also sends negative counts (an error in Python) this way
    return ctx.fn.u_greater_than_equal(BOOL, count, ctx.const(ty, ty.bits))


# ---------------------------------------------------------------- range()


def range_length(ctx: LoweringContext, ty: IntType, start: int, stop: int, step: int,
                 known_step: int | None) -> int:
    """`len(range(start, stop, step))` as an unsigned int of `ty`'s width, exact for every
    start/stop of the type (the difference of two values of the type always fits the unsigned
    type); 0 for step 0. `known_step` is the step when it is a constant: then only one
    direction is emitted. An unsigned range only counts up."""
    fn = ctx.fn
    uty = unsigned(ty)

    def count(low: int, high: int, magnitude: int, unit_step: bool) -> int:
        # low < high: (high - low - 1) // |step| + 1 iterations, else none
        distance = wide_int.sub(ctx, ty, high, low)
        if ty.signed:
            distance = fn.bitcast(uty, distance)
        if not unit_step:
            uone = ctx.const(uty, 1)
            distance = wide_int.add(ctx, uty, fn.u_div(uty, wide_int.sub(ctx, uty, distance, uone),
                                                       magnitude), uone)
        return fn.select(uty, wide_int.less_than(ctx, ty, low, high), distance,
                         ctx.const(uty, 0))

    def up() -> int:
        magnitude = step if not ty.signed else fn.bitcast(uty, step)
        return count(start, stop, magnitude, known_step == 1)

    def down() -> int:
        magnitude = fn.bitcast(uty, fn.s_negate(ty, step))
        return count(stop, start, magnitude, known_step == -1)

    if known_step == 0:
        return ctx.const(uty, 0)
    if known_step is not None:
        return up() if known_step > 0 or not ty.signed else down()
    # a runtime step: its sign picks the direction; 0 runs nothing (and must not divide)
    zero = ctx.const(ty, 0)
    step_zero = int_equality.equal(ctx, ty, step, zero)
    step = fn.select(ty, step_zero, ctx.const(ty, 1), step)
    trips = up() if not ty.signed else fn.select(
        uty, fn.s_greater_than(BOOL, step, zero), up(), down())
    return fn.select(uty, step_zero, ctx.const(uty, 0), trips)
