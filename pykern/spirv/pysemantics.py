"""Python's meaning of `//`, `%`, `**`, shifts and `range`, built from SPIR-V instructions
that are defined for every operand.

SPIR-V's OpSDiv/OpSRem/OpSMod truncate or are undefined for negative operands on Vulkan, and
GLSL's Pow is undefined for a negative or zero base, so these are spelled out with unsigned
division, selects and (for integer powers) a loop. Where Python raises, the result is the one
the interpreter backend defines (`pykern.interpret.helpers`): integer `//` and `%` by zero give
0, a `range` with step 0 runs no iterations, out-of-range shifts shift everything out.
"""

from __future__ import annotations

from collections.abc import Callable

from .context import LoweringContext
from .control import begin_loop, end_loop, enter_body
from .function import FunctionBuilder as FB
from .grammar import GLSL
from .typemap import unsigned
from .types import BOOL, FloatType, IntType, ScalarType

Compare = Callable[[FB, ScalarType, int, int], int]

# ---------------------------------------------------------------- signed // and %


def signed_floordiv(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a // b` rounding toward -inf: the quotient of |a| by |b|, negated, minus one when the
    signs differ and the division is inexact (-q - 1 is ~q). INT_MIN // -1 wraps to INT_MIN."""
    parts = _DivMod(ctx, ty, a, b)
    fn, uty = ctx.fn, parts.uty
    negated = fn.select(uty, parts.inexact, fn.not_(uty, parts.uq), fn.s_negate(uty, parts.uq))
    return fn.bitcast(ty, fn.select(uty, parts.signs_differ, negated, parts.uq))


def unsigned_floordiv(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a // b`, 0 for b == 0 (then 0 // 1)."""
    is_zero = ctx.fn.i_equal(BOOL, b, ctx.const(ty, 0))
    a = ctx.fn.select(ty, is_zero, ctx.const(ty, 0), a)
    return ctx.fn.u_div(ty, a, ctx.fn.select(ty, is_zero, ctx.const(ty, 1), b))


def unsigned_mod(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a % b`, 0 for b == 0 (then a % 1)."""
    is_zero = ctx.fn.i_equal(BOOL, b, ctx.const(ty, 0))
    return ctx.fn.u_mod(ty, a, ctx.fn.select(ty, is_zero, ctx.const(ty, 1), b))


def signed_mod(ctx: LoweringContext, ty: IntType, a: int, b: int) -> int:
    """`a % b` with the sign of `b`: |b| - r when the signs differ (and r != 0), then signed
    like `b`."""
    parts = _DivMod(ctx, ty, a, b)
    fn, uty = ctx.fn, parts.uty
    flip = fn.logical_and(BOOL, parts.signs_differ, parts.inexact)
    magnitude = fn.select(uty, flip, fn.i_sub(uty, parts.ub, parts.ur), parts.ur)
    signed_like_b = fn.select(uty, parts.b_negative, fn.s_negate(uty, magnitude), magnitude)
    return fn.bitcast(ty, signed_like_b)


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
        b_zero = fn.i_equal(BOOL, b, zero)
        ua = fn.select(uty, b_zero, ctx.const(uty, 0), ua)
        self.ub = fn.select(uty, b_zero, ctx.const(uty, 1), self.ub)
        self.uq = fn.u_div(uty, ua, self.ub)
        self.ur = fn.u_mod(uty, ua, self.ub)
        self.signs_differ = fn.logical_not_equal(BOOL, a_negative, self.b_negative)
        self.inexact = fn.i_not_equal(BOOL, self.ur, ctx.const(uty, 0))


# ---------------------------------------------------------------- float // and %


def float_floordiv(ctx: LoweringContext, ty: FloatType, a: int, b: int) -> int:
    """Python's `a // b`: the floor of the exact quotient, as numpy computes it through fmod."""
    return _FloatDivMod(ctx, ty, a, b).quotient


def float_mod(ctx: LoweringContext, ty: FloatType, a: int, b: int) -> int:
    """Python's `a % b`: a - b * (a // b) rounded once, with the sign of b (-0.0 for b < 0)."""
    return _FloatDivMod(ctx, ty, a, b).remainder()


class _FloatDivMod:
    """Floor division without an exact fmod.

    q = floor(a / b) can be one off: OpFDiv may err by 2.5 ULP, and even a correctly rounded
    quotient rounds 7.5 / 0.1f up to 75 where the exact one is 74.99999. So q is checked
    against the exact product b * q, which Dekker's algorithm gives as p + e (two floats, from
    multiplies and adds that NoContraction keeps rounded one at a time):
    a < b * q means q is one too big, a >= b * (q + 1) one too small (for b > 0; the other way
    round for b < 0). `a - p` is exact in the cases where the comparison is close (Sterbenz),
    so comparing it with `e` decides them exactly.
    """

    def __init__(self, ctx: LoweringContext, ty: FloatType, a: int, b: int) -> None:
        self.ctx, self.ty, self.a, self.b = ctx, ty, a, b
        fn = ctx.fn
        self.b_split = _split(ctx, ty, b)
        zero, one = ctx.const(ty, 0.0), ctx.const(ty, 1.0)
        self.b_negative = fn.f_ord_less_than(BOOL, b, zero)
        q = fn.glsl(ty, GLSL.Floor, fn.f_div(ty, a, b))
        q_next = fn.f_add(ty, q, one)
        over = self._compare_with_product(q, FB.f_ord_less_than, FB.f_ord_greater_than)
        reached = self._compare_with_product(q_next, FB.f_ord_greater_than_equal,
                                             FB.f_ord_less_than_equal)
        q = fn.select(ty, over, fn.f_sub(ty, q, one), q)
        self.quotient = fn.select(ty, reached, q_next, q)

    def remainder(self) -> int:
        fn, ty = self.ctx.fn, self.ty
        p, e = _two_product(self.ctx, ty, self.b, self.b_split, self.quotient)
        r = fn.f_sub(ty, fn.f_sub(ty, self.a, p), e)
        # an exact zero takes the divisor's sign, as in Python (b * 0.0 is that signed zero)
        is_zero = fn.f_ord_equal(BOOL, r, self.ctx.const(ty, 0.0))
        return fn.select(ty, is_zero, fn.f_mul(ty, self.b, self.ctx.const(ty, 0.0)), r)

    def _compare_with_product(self, q: int, if_positive: Compare, if_negative: Compare) -> int:
        """`a <op> b * q`, exactly: `op` is `if_positive` for b > 0, else `if_negative`."""
        fn, ty = self.ctx.fn, self.ty
        p, e = _two_product(self.ctx, ty, self.b, self.b_split, q)
        difference = fn.f_sub(ty, self.a, p)
        return fn.select(BOOL, self.b_negative, if_negative(fn, BOOL, difference, e),
                         if_positive(fn, BOOL, difference, e))


# significand bits of each float width, for Veltkamp's splitting constant 2**ceil(p/2) + 1
_SIGNIFICAND_BITS = {16: 11, 32: 24, 64: 53}


def _split(ctx: LoweringContext, ty: FloatType, x: int) -> tuple[int, int]:
    """Veltkamp: x = hi + lo exactly, each half with at most half the significand bits."""
    fn = ctx.fn
    factor = ctx.const(ty, 2.0 ** -(-_SIGNIFICAND_BITS[ty.bits] // 2) + 1)
    c = fn.f_mul(ty, factor, x)
    hi = fn.f_sub(ty, c, fn.f_sub(ty, c, x))
    return hi, fn.f_sub(ty, x, hi)


def _two_product(ctx: LoweringContext, ty: FloatType, x: int, x_split: tuple[int, int],
                 y: int) -> tuple[int, int]:
    """Dekker: (p, e) with p = fl(x * y) and p + e = x * y exactly. Where splitting overflows
    (huge operands; f16 above ~1000) e would be NaN: then it is 0 and only p is used."""
    fn = ctx.fn
    (xh, xl), (yh, yl) = x_split, _split(ctx, ty, y)
    p = fn.f_mul(ty, x, y)
    e = fn.f_sub(ty, fn.f_mul(ty, xh, yh), p)
    e = fn.f_add(ty, e, fn.f_mul(ty, xh, yl))
    e = fn.f_add(ty, e, fn.f_mul(ty, xl, yh))
    e = fn.f_add(ty, e, fn.f_mul(ty, xl, yl))
    finite = fn.f_ord_equal(BOOL, e, e)
    return p, fn.select(ty, finite, e, ctx.const(ty, 0.0))


# ---------------------------------------------------------------- **


def int_pow(ctx: LoweringContext, ty: IntType, base: int, exponent: int) -> int:
    """`base ** exponent` by square-and-multiply over the exponent's bits (at most `bits`
    iterations), wrapping. A negative exponent gives 0, except for a base of 1 or -1, which give
    1 or (-1) ** |exponent|, the integer part of Python's float result."""
    fn = ctx.fn
    uty = unsigned(ty)
    uzero, uone = ctx.const(uty, 0), ctx.const(uty, 1)
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

    loop = begin_loop(fn)
    enter_body(fn, loop, fn.i_not_equal(BOOL, fn.load(uty, exp_var), uzero))
    e = fn.load(uty, exp_var)
    r = fn.load(ty, result_var)
    b = fn.load(ty, base_var)
    odd = fn.i_not_equal(BOOL, fn.bitwise_and(uty, e, uone), uzero)
    fn.store(result_var, fn.select(ty, odd, fn.i_mul(ty, r, b), r))
    fn.store(base_var, fn.i_mul(ty, b, b))
    fn.store(exp_var, fn.shift_right_logical(uty, e, uone))
    end_loop(fn, loop)

    result = fn.load(ty, result_var)
    if negative_exp is None:
        return result
    unit = fn.logical_or(BOOL, fn.i_equal(BOOL, base, ctx.const(ty, 1)),
                         fn.i_equal(BOOL, base, ctx.const(ty, -1)))
    vanishes = fn.logical_and(BOOL, negative_exp, fn.logical_not(BOOL, unit))
    return fn.select(ty, vanishes, ctx.const(ty, 0), result)


def float_pow(ctx: LoweringContext, ty: FloatType, x: int, y: int) -> int:
    """Python's (and numpy's) `x ** y` from GLSL Pow(|x|, y), which is undefined for x <= 0:

    - x < 0 and y integral: the sign of (-1) ** y; x < 0 (finite) and y not integral: NaN;
    - x == ±0: y > 0 gives 0 (x itself for odd y), y < 0 gives inf (1/x for odd y);
    - a NaN operand gives NaN, except that y == 0, x == 1, and x == -1 with y = ±inf give 1.
    """
    fn = ctx.fn

    def c(value: float) -> int:
        return ctx.const(ty, value)

    zero, one, inf = c(0.0), c(1.0), c(float("inf"))
    ax = fn.glsl(ty, GLSL.FAbs, x)
    result = fn.glsl(ty, GLSL.Pow, ax, y)

    integral = fn.f_ord_equal(BOOL, fn.glsl(ty, GLSL.Floor, y), y)
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
        distance = fn.i_sub(ty, high, low)
        if ty.signed:
            distance = fn.bitcast(uty, distance)
        if not unit_step:
            uone = ctx.const(uty, 1)
            distance = fn.i_add(uty, fn.u_div(uty, fn.i_sub(uty, distance, uone), magnitude),
                                uone)
        less = (fn.s_less_than if ty.signed else fn.u_less_than)(BOOL, low, high)
        return fn.select(uty, less, distance, ctx.const(uty, 0))

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
    step_zero = fn.i_equal(BOOL, step, zero)
    step = fn.select(ty, step_zero, ctx.const(ty, 1), step)
    trips = up() if not ty.signed else fn.select(
        uty, fn.s_greater_than(BOOL, step, zero), up(), down())
    return fn.select(uty, step_zero, ctx.const(uty, 0), trips)
