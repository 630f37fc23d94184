"""Strict floating point: numpy's (IEEE 754 round-to-nearest-even) bits where Vulkan allows less.

Vulkan lets OpFDiv be 2.5 ULP off and Sqrt more, lets GLSL Fma be an unfused multiply and add,
and leaves the rounding of conversions to the driver. In strict mode (`Target.strict_float`):

- `/` and `sqrt` start from the device's instruction and correct it: one Newton step from an
  exact remainder, then the remainder against the midpoint to the next float decides between
  the two neighbours. Remainders are exact without a wider type and without a fused
  multiply-add: Dekker's product (Veltkamp splitting) and Knuth's two-sum, summed into a
  nonoverlapping expansion (Shewchuk's grow-expansion) whose largest component gives the sign.
  Operands are scaled to [1, 2) first and the result scaled back with one rounding, so that
  overflow, underflow and subnormals round as IEEE says.
- `fma` is computed exactly the same way: the product is exact as two floats, the sum of three
  is rounded through the same midpoint test.
- f16 computes `/` and `sqrt` in f32 and rounds once to f16 (f32 has 24 >= 2 * 11 + 2 bits, so
  that double rounding is harmless); f16 `fma` rounds the exact f32 sum to odd first.
- conversions round to nearest even through RoundingModeRTE; where the device cannot ask for it,
  `int_to_float` and `narrow_float` round in exact integer and float operations instead.

Every float operation here is NoContraction (`FunctionBuilder(strict=True)`): the
error-free transformations rely on each one being rounded once, as written. Bit manipulation
needs an integer of the float's width (f64: Int64).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pykern.spirv.context import LoweringContext
from pykern.spirv.function import FunctionBuilder
from pykern.spirv.encoding.grammar import GLSL
from pykern.spirv.numerics.half_rounding import narrow_to_f16
from pykern.spirv.binding_plan import GRID_FIELDS
from pykern.spirv.typemap import value_capabilities
from pykern.spirv.encoding.types import BOOL, F16, F32, I32, U32, FloatType, IntType



# ---------------------------------------------------------------- entry points


def divide(ctx: LoweringContext, ty: FloatType, a: int, b: int) -> int:
    """`a / b` correctly rounded."""
    if ty.bits == 16:
        return _through_f32(ctx, _divide, a, b)
    return _divide(_Ops(ctx, ty), a, b)


def square_root(ctx: LoweringContext, ty: FloatType, x: int) -> int:
    """`sqrt(x)` correctly rounded."""
    if ty.bits == 16:
        return _through_f32(ctx, _square_root, x)
    return _square_root(_Ops(ctx, ty), x)


def fused_multiply_add(ctx: LoweringContext, ty: FloatType, a: int, b: int, c: int) -> int:
    """`a * b + c` rounded once."""
    if ty.bits == 16:
        return _fma_f16(ctx, a, b, c)
    return _fma(_Ops(ctx, ty), a, b, c)


def runtime_constant(ctx: LoweringContext, ty: FloatType, value: float) -> int:
    """The float literal `value`, computed from a value the driver cannot know at compile time.

    lavapipe folds `x * 0.0`, `x + 0.0` and `x / 0.0` with a zero it knows (to 0.0, x, 0.0),
    which is wrong for inf, NaN and -0.0, even with SignedZeroInfNanPreserve and NoContraction;
    a literal it sees can become such a zero (`c = 2.0`, then `x * (c - 2.0)`). The grid size
    is below 2**31 (`normalize_grid`), so its top bit is a zero the driver does not see; adding
    +0.0 changes no other value."""
    fn = ctx.fn
    top_bit = fn.shift_right_logical(U32, ctx.resources.load_field(fn, GRID_FIELDS[0]),
                                     ctx.const(U32, 31))
    zero = fn.bitcast(F32, top_bit)
    if ty.bits != 32:
        zero = fn.f_convert(ty, zero)
    if value == 0:
        return fn.f_negate(ty, zero) if math.copysign(1.0, value) < 0 else zero
    return fn.f_add(ty, ctx.const(ty, value), zero)


def int_to_float(ctx: LoweringContext, src: IntType, dst: FloatType, value: int) -> int:
    """`value` converted to `dst`, rounded to nearest even in integer arithmetic: for devices
    that cannot ask for RoundingModeRTE."""
    fn = ctx.fn
    if src.bits <= FORMATS[dst.bits].precision:  # every value is exact
        return fn.convert_s_to_f(dst, value) if src.signed else fn.convert_u_to_f(dst, value)
    if dst.bits == 16:
        # exact in f32 below 2**24; from there on f16 overflows whatever f32 rounded to
        return narrow_float(ctx, F32, F16, int_to_float(ctx, src, F32, value))
    return _round_int(_Ops(ctx, dst), src, value)


def narrow_float(ctx: LoweringContext, src: FloatType, dst: FloatType, x: int) -> int:
    """`x` (of `src`) rounded to nearest even in the narrower `dst` in exact operations only:
    for devices that cannot ask for RoundingModeRTE."""
    return _narrow(_Ops(ctx, src), dst, x)


# Where the device's own instruction gives the first approximation. Vulkan allows 2.5 ULP for
# OpFDiv and more for Sqrt; the correction below needs no better (the strict-mode tests
# replace these by deliberately worse ones to show it).


def approximate_quotient(fn: FunctionBuilder, ty: FloatType, a: int, b: int) -> int:
    return fn.f_div(ty, a, b)


def approximate_sqrt(fn: FunctionBuilder, ty: FloatType, x: int) -> int:
    return fn.glsl(ty, GLSL.Sqrt, x)


# ---------------------------------------------------------------- formats and emission helpers


@dataclass(frozen=True)
class Format:
    """An IEEE binary format: `precision` significand bits (the implicit one included) and the
    largest exponent `emax`."""

    bits: int
    precision: int
    emax: int

    @property
    def emin(self) -> int:  # of the normal numbers
        return 1 - self.emax

    @property
    def emin_subnormal(self) -> int:  # the exponent of the smallest subnormal
        return self.emin - (self.precision - 1)

    @property
    def exponent_mask(self) -> int:
        return ((1 << (self.bits - self.precision)) - 1) << (self.precision - 1)


FORMATS = {16: Format(16, 11, 15), 32: Format(32, 24, 127), 64: Format(64, 53, 1023)}


class _Ops:
    """Arithmetic on one float type (f32 or f64), its same-width unsigned integer and i32
    exponents, over the function being emitted. Float operations are rounded once each
    (NoContraction in strict mode)."""

    def __init__(self, ctx: LoweringContext, ty: FloatType) -> None:
        self.ctx, self.fn, self.ty = ctx, ctx.fn, ty
        self.fmt = FORMATS[ty.bits]
        self.uint = IntType(ty.bits, False)
        ctx.module.require(*value_capabilities(self.uint))

    # constants
    def c(self, value: float) -> int:
        return self.ctx.const(self.ty, value)

    def u(self, value: int) -> int:
        return self.ctx.const(self.uint, value)

    def i(self, value: int) -> int:
        return self.ctx.const(I32, value)

    # float arithmetic
    def add(self, a: int, b: int) -> int:
        return self.fn.f_add(self.ty, a, b)

    def sub(self, a: int, b: int) -> int:
        return self.fn.f_sub(self.ty, a, b)

    def mul(self, a: int, b: int) -> int:
        return self.fn.f_mul(self.ty, a, b)

    def neg(self, a: int) -> int:
        return self.fn.f_negate(self.ty, a)

    def abs(self, a: int) -> int:
        return self.fn.glsl(self.ty, GLSL.FAbs, a)

    def floor(self, a: int) -> int:
        return self.fn.glsl(self.ty, GLSL.Floor, a)

    def sel(self, cond: int, a: int, b: int) -> int:
        return self.fn.select(self.ty, cond, a, b)

    # float tests (all false for NaN)
    def eq(self, a: int, b: int) -> int:
        return self.fn.f_ord_equal(BOOL, a, b)

    def lt(self, a: int, b: int) -> int:
        return self.fn.f_ord_less_than(BOOL, a, b)

    def gt(self, a: int, b: int) -> int:
        return self.fn.f_ord_greater_than(BOOL, a, b)

    def positive(self, a: int) -> int:
        return self.gt(a, self.c(0.0))

    def negative(self, a: int) -> int:
        return self.lt(a, self.c(0.0))

    def is_zero(self, a: int) -> int:
        return self.eq(a, self.c(0.0))

    def is_finite(self, a: int) -> int:
        return self.lt(self.abs(a), self.c(float("inf")))

    # bools
    def and_(self, *conds: int) -> int:
        result = conds[0]
        for cond in conds[1:]:
            result = self.fn.logical_and(BOOL, result, cond)
        return result

    def or_(self, *conds: int) -> int:
        result = conds[0]
        for cond in conds[1:]:
            result = self.fn.logical_or(BOOL, result, cond)
        return result

    def not_(self, cond: int) -> int:
        return self.fn.logical_not(BOOL, cond)

    # bits
    def bits(self, x: int) -> int:
        return self.fn.bitcast(self.uint, x)

    def from_bits(self, u: int) -> int:
        return self.fn.bitcast(self.ty, u)

    def sign_bit(self, x: int) -> int:
        """The sign bit of `x` (in place, as a `uint`)."""
        return self.fn.bitwise_and(self.uint, self.bits(x), self.u(1 << (self.fmt.bits - 1)))

    def with_sign(self, magnitude: int, sign: int) -> int:
        """`magnitude` (>= +0) with the sign bit `sign` (from `sign_bit`)."""
        return self.from_bits(self.fn.bitwise_or(self.uint, self.bits(magnitude), sign))

    def step(self, x: int, away_from_zero: int) -> int:
        """The float next to `x` (finite, nonzero) away from or toward zero."""
        one = self.sel_uint(away_from_zero, self.u(1), self.u(-1))  # wraps: adds -1
        return self.from_bits(self.fn.i_add(self.uint, self.bits(x), one))

    def is_odd(self, x: int) -> int:
        """Whether the last significand bit of `x` is set."""
        last = self.fn.bitwise_and(self.uint, self.bits(x), self.u(1))
        return self.fn.i_not_equal(BOOL, last, self.u(0))

    def sel_uint(self, cond: int, a: int, b: int) -> int:
        return self.fn.select(self.uint, cond, a, b)

    # i32 exponents
    def iadd(self, a: int, b: int) -> int:
        return self.fn.i_add(I32, a, b)

    def isub(self, a: int, b: int) -> int:
        return self.fn.i_sub(I32, a, b)

    def isel(self, cond: int, a: int, b: int) -> int:
        return self.fn.select(I32, cond, a, b)

    def iclamp(self, a: int, lo: int, hi: int) -> int:
        return self.fn.glsl(I32, GLSL.SClamp, a, self.i(lo), self.i(hi))

    def ilt(self, a: int, b: int) -> int:
        return self.fn.s_less_than(BOOL, a, b)

    def to_i32(self, u: int) -> int:
        """A small `uint` as an i32."""
        if self.fmt.bits == 64:
            u = self.fn.u_convert(U32, u)
        return self.fn.bitcast(I32, u)

    def to_uint(self, e: int) -> int:
        """A nonnegative i32 as a `uint`."""
        u = self.fn.bitcast(U32, e)
        return self.fn.u_convert(self.uint, u) if self.fmt.bits == 64 else u

    def pow2(self, e: int) -> int:
        """2**e for an i32 `e` in [emin, emax] (made from its bits: no rounding, nothing for
        the driver to fold)."""
        biased = self.to_uint(self.iadd(e, self.i(self.fmt.emax)))
        return self.from_bits(self.fn.shift_left_logical(self.uint, biased,
                                                         self.u(self.fmt.precision - 1)))

    def frexp(self, x: int) -> tuple[int, int]:
        """(m, e) with x = m * 2**e, 1 <= |m| < 2, m of x's sign, for a finite nonzero `x`
        (subnormals too: they are scaled up by 2**precision first, exactly)."""
        fmt = self.fmt
        subnormal = self.lt(self.abs(x), self.c(2.0 ** fmt.emin))
        x = self.sel(subnormal, self.mul(x, self.c(2.0 ** fmt.precision)), x)
        field = self.fn.shift_right_logical(
            self.uint, self.fn.bitwise_and(self.uint, self.bits(x), self.u(fmt.exponent_mask)),
            self.u(fmt.precision - 1))
        e = self.isub(self.to_i32(field),
                      self.isel(subnormal, self.i(fmt.emax + fmt.precision), self.i(fmt.emax)))
        significand = self.fn.bitwise_and(self.uint, self.bits(x), self.u(~fmt.exponent_mask))
        one = self.u(fmt.emax << (fmt.precision - 1))  # the exponent field of 1.0
        return self.from_bits(self.fn.bitwise_or(self.uint, significand, one)), e


# ---------------------------------------------------------------- error-free transformations


def _two_sum(o: _Ops, a: int, b: int) -> tuple[int, int]:
    """(s, err): s = a + b rounded, s + err = a + b exactly (Knuth; any order of magnitudes)."""
    s = o.add(a, b)
    b_virtual = o.sub(s, a)
    a_virtual = o.sub(s, b_virtual)
    return s, o.add(o.sub(a, a_virtual), o.sub(b, b_virtual))


def _split(o: _Ops, a: int) -> tuple[int, int]:
    """(hi, lo): a = hi + lo, each of at most half the precision (Veltkamp)."""
    t = o.mul(o.c(2.0 ** ((o.fmt.precision + 1) // 2) + 1), a)
    hi = o.sub(t, o.sub(t, a))
    return hi, o.sub(a, hi)


def _two_product(o: _Ops, a: int, b: int) -> tuple[int, int]:
    """(p, err): p = a * b rounded, p + err = a * b exactly (Dekker), for operands far from
    overflow and underflow."""
    p = o.mul(a, b)
    a_hi, a_lo = _split(o, a)
    b_hi, b_lo = _split(o, b)
    err = o.sub(o.sub(o.sub(p, o.mul(a_hi, b_hi)), o.mul(a_lo, b_hi)), o.mul(a_hi, b_lo))
    return p, o.sub(o.mul(a_lo, b_lo), err)


def _grow(o: _Ops, expansion: Sequence[int], b: int) -> list[int]:
    """The expansion of `expansion` + `b` (Shewchuk's grow-expansion): components
    nonoverlapping, by increasing magnitude, zeros anywhere."""
    result = []
    q = b
    for component in expansion:
        q, h = _two_sum(o, q, component)
        result.append(h)
    return [*result, q]


def _expansion(o: _Ops, terms: Sequence[int]) -> list[int]:
    """The exact sum of `terms` as an expansion."""
    result = [terms[0]]
    for term in terms[1:]:
        result = _grow(o, result, term)
    return result


def _leading(o: _Ops, expansion: Sequence[int]) -> int:
    """The largest nonzero component: its sign is the sign of the exact sum (0 where that
    is 0), the lower components adding up to less than its last bit."""
    lead = expansion[0]
    for component in expansion[1:]:
        lead = o.sel(o.is_zero(component), lead, component)
    return lead


Offset = Callable[[int], Sequence[int]]


def _nearest(o: _Ops, x: int, residual: Sequence[int], offset: Offset,
             remainder_sign: bool) -> tuple[int, int]:
    """The float nearest (ties to even) to an exact value v that `x` (finite, nonzero, normal,
    not the largest float) is within one ULP of.

    `residual` is an expansion with the sign of v - x; `offset(d)` gives the terms that make it
    one with the sign of v - (x + d), for d = x's distance to a neighbour or half of it.
    Returns (r, rho): rho has the sign of v - r (0 where r is exact) when `remainder_sign`
    asks for it (else it is not computed: 0).
    """
    sigma = _leading(o, residual)  # sign of v - x
    up = o.positive(sigma)
    neighbour = o.step(x, o.fn.logical_equal(BOOL, up, o.positive(x)))  # toward v
    half = o.mul(o.sub(neighbour, x), o.c(0.5))  # toward v, exact
    beyond = _leading(o, _grow_all(o, residual, offset(half)))  # sign of v - midpoint
    past = o.or_(o.and_(up, o.positive(beyond)), o.and_(o.negative(sigma), o.negative(beyond)))
    tie = o.and_(o.is_zero(beyond), o.not_(o.is_zero(sigma)))
    take = o.or_(past, o.and_(tie, o.is_odd(x)))
    r = o.sel(take, neighbour, x)
    if not remainder_sign:
        return r, o.c(0.0)
    # v - r: sigma where x stays; past the neighbour's midpoint, the sign of v - neighbour;
    # at the midpoint, back toward x
    after = _leading(o, _grow_all(o, residual, offset(o.add(half, half))))
    rho = o.sel(take, o.sel(tie, o.neg(sigma), after), sigma)
    return r, rho


def _grow_all(o: _Ops, expansion: Sequence[int], terms: Sequence[int]) -> list[int]:
    for term in terms:
        expansion = _grow(o, expansion, term)
    return list(expansion)


def _scale_rounded(o: _Ops, r: int, rho: int, k: int) -> int:
    """RN(v * 2**k) for an exact value v, given r = RN(v) (nonzero, normal) and rho with the
    sign of v - r (0 where r = v): one rounding, to a subnormal, to inf, or none at all."""
    fmt = o.fmt
    magnitude = o.abs(r)
    rho = o.sel(o.negative(r), o.neg(rho), rho)  # the sign of |v| - |r|
    m, e = o.frexp(magnitude)
    scale = o.iclamp(o.iadd(k, e), fmt.emin_subnormal - 2, fmt.emax + 1)  # beyond: 0 or inf
    k1 = o.iclamp(scale, fmt.emin, fmt.emax)
    k2 = o.isub(scale, k1)  # in [-(precision + 1), 1]
    z = o.mul(m, o.pow2(k1))  # exact
    y = o.mul(z, o.pow2(k2))  # the rounding
    # rounding z can be wrong only where z lies halfway between two subnormals and v does
    # not: then the side of v decides. In m's scale (so that nothing here is subnormal):
    below = o.ilt(k2, o.i(0))
    back = o.mul(o.mul(y, o.pow2(o.iclamp(o.isub(o.i(0), k2), 0, fmt.precision + 1))),
                 o.c(2.0 ** -fmt.emin))
    d = o.sub(m, back)
    half_spacing = o.pow2(o.isub(o.i(fmt.emin_subnormal - 1),
                                 o.fn.glsl(I32, GLSL.SMin, scale, o.i(fmt.emin - 1))))
    halfway = o.and_(below, o.eq(o.abs(d), half_spacing))
    up = o.and_(halfway, o.positive(rho), o.positive(d))
    down = o.and_(halfway, o.negative(rho), o.negative(d))
    delta = o.sel_uint(up, o.u(1), o.sel_uint(down, o.u(-1), o.u(0)))
    y = o.from_bits(o.fn.i_add(o.uint, o.bits(y), delta))
    return o.with_sign(y, o.sign_bit(r))


# ---------------------------------------------------------------- division and square root


def _divide(o: _Ops, a: int, b: int) -> int:
    special = o.or_(o.not_(o.is_finite(a)), o.not_(o.is_finite(b)), o.is_zero(a),
                    o.is_zero(b))
    one = o.c(1.0)
    quotient = _divide_finite(o, o.sel(special, one, a), o.sel(special, one, b))
    return o.sel(special, _divide_special(o, a, b), quotient)


def _divide_special(o: _Ops, a: int, b: int) -> int:
    """a / b where one of them is 0, inf or NaN, as IEEE defines it."""
    fn = o.fn
    sign = fn.bitwise_xor(o.uint, o.sign_bit(a), o.sign_bit(b))
    nan = o.or_(fn.is_nan(BOOL, a), fn.is_nan(BOOL, b),
                o.and_(o.is_zero(a), o.is_zero(b)), o.and_(fn.is_inf(BOOL, a), fn.is_inf(BOOL, b)))
    infinite = o.or_(fn.is_inf(BOOL, a), o.is_zero(b))
    magnitude = o.sel(nan, o.c(float("nan")), o.sel(infinite, o.c(float("inf")), o.c(0.0)))
    return o.sel(nan, magnitude, o.with_sign(magnitude, sign))


def _divide_finite(o: _Ops, a: int, b: int) -> int:
    """a / b for finite nonzero a, b."""
    ma, ea = o.frexp(a)
    mb, eb = o.frexp(b)
    x, y = o.abs(ma), o.abs(mb)  # in [1, 2)
    q = approximate_quotient(o.fn, o.ty, x, y)
    p, p_err = _two_product(o, q, y)
    q = o.add(q, o.fn.f_div(o.ty, o.sub(o.sub(x, p), p_err), y))  # one Newton step: faithful
    p, p_err = _two_product(o, q, y)
    remainder = _expansion(o, [x, o.neg(p), o.neg(p_err)])  # x - q * y, exactly

    def offset(d: int) -> list[int]:  # x - (q + d) * y
        return [o.neg(o.mul(d, y))]

    q, rho = _nearest(o, q, remainder, offset, remainder_sign=True)
    quotient = _scale_rounded(o, q, rho, o.isub(ea, eb))
    sign = o.fn.bitwise_xor(o.uint, o.sign_bit(a), o.sign_bit(b))
    return o.with_sign(quotient, sign)


def _square_root(o: _Ops, x: int) -> int:
    regular = o.and_(o.positive(x), o.is_finite(x))
    root = _square_root_finite(o, o.sel(regular, x, o.c(1.0)))
    # +-0, +inf and NaN are their own roots; below zero is NaN
    special = o.sel(o.negative(x), o.c(float("nan")), x)
    return o.sel(regular, root, special)


def _square_root_finite(o: _Ops, x: int) -> int:
    """sqrt(x) for finite x > 0."""
    fn = o.fn
    m, e = o.frexp(x)
    odd = fn.i_not_equal(BOOL, fn.bitwise_and(I32, e, o.i(1)), o.i(0))
    m = o.sel(odd, o.add(m, m), m)  # in [1, 4), the exponent even
    e = o.isub(e, o.isel(odd, o.i(1), o.i(0)))
    s = approximate_sqrt(fn, o.ty, m)
    p, p_err = _two_product(o, s, s)
    s = o.add(s, fn.f_div(o.ty, o.sub(o.sub(m, p), p_err), o.add(s, s)))  # Newton: faithful
    p, p_err = _two_product(o, s, s)
    remainder = _expansion(o, [m, o.neg(p), o.neg(p_err)])  # m - s * s, exactly

    def offset(d: int) -> list[int]:  # m - (s + d)**2 = m - s*s - 2*s*d - d*d, each exact
        return [o.neg(o.mul(o.add(s, s), d)), o.neg(o.mul(d, d))]

    s, _ = _nearest(o, s, remainder, offset, remainder_sign=False)
    return o.mul(s, o.pow2(fn.shift_right_arithmetic(I32, e, o.i(1))))  # exact: never subnormal


# ---------------------------------------------------------------- fused multiply-add


def _fma(o: _Ops, a: int, b: int, c: int) -> int:
    # with an infinite or NaN operand, or a zero product, a * b + c has one rounding already;
    # but a finite product that overflows must not meet an infinite c as inf - inf
    finite_product = o.and_(o.is_finite(a), o.is_finite(b))
    plain = o.or_(o.not_(finite_product), o.not_(o.is_finite(c)), o.is_zero(a), o.is_zero(b))
    one = o.c(1.0)
    fused = _fma_finite(o, o.sel(plain, one, a), o.sel(plain, one, b), o.sel(plain, one, c))
    special = o.sel(o.and_(finite_product, o.fn.is_inf(BOOL, c)), c, o.add(o.mul(a, b), c))
    return o.sel(plain, special, fused)


def _fma_finite(o: _Ops, a: int, b: int, c: int) -> int:
    """a * b + c for finite a, b, c, a and b nonzero: the sum, scaled by 2**-e to put the
    product in [1, 4), is uh + ul + c' exactly; its rounding is decided as for a quotient."""
    p = o.fmt.precision
    ma, ea = o.frexp(a)
    mb, eb = o.frexp(b)
    e = o.iadd(ea, eb)
    c_zero = o.is_zero(c)
    mc, ec = o.frexp(o.sel(c_zero, o.c(1.0), c))
    gap = o.isub(ec, e)
    # far above the product, c is the result; far below, only its sign counts (it decides
    # whether an exact product that is a tie rounds up or down): any tiny value of that sign
    dominates = o.and_(o.not_(c_zero), o.fn.s_greater_than_equal(BOOL, gap, o.i(p + 3)))
    tiny = o.fn.s_less_than_equal(BOOL, gap, o.i(1 - 2 * p))
    c_scaled = o.mul(mc, o.pow2(o.iclamp(gap, 2 - 2 * p, p + 2)))
    c_tiny = o.sel(o.negative(c), o.c(-(2.0 ** (-2 * p))), o.c(2.0 ** (-2 * p)))
    c_scaled = o.sel(c_zero, c, o.sel(tiny, c_tiny, c_scaled))

    uh, ul = _two_product(o, ma, mb)
    th, tl = _two_sum(o, c_scaled, ul)
    sh, sl = _two_sum(o, uh, th)  # the scaled sum is sh + sl + tl
    r = o.add(sh, o.add(sl, tl))  # within one ULP of it; 0 only where it is 0
    cancelled = o.is_zero(r)
    r = o.sel(cancelled, o.c(1.0), r)
    residual = _expansion(o, [sh, sl, tl, o.neg(r)])

    def offset(d: int) -> list[int]:
        return [o.neg(d)]

    r, rho = _nearest(o, r, residual, offset, remainder_sign=True)
    result = _scale_rounded(o, r, rho, e)
    return o.sel(dominates, c, o.sel(cancelled, o.c(0.0), result))  # x - x is +0.0 in IEEE


def _fma_f16(ctx: LoweringContext, a: int, b: int, c: int) -> int:
    """f16 a * b + c: the product is exact in f32 and the f32 sum, rounded to odd, rounds to
    f16 as the exact sum does (24 >= 11 + 2 bits)."""
    fn = ctx.fn
    o = _Ops(ctx, F32)
    a, b, c = (fn.f_convert(F32, v) for v in (a, b, c))
    s, err = _two_sum(o, o.mul(a, b), c)  # err is NaN beyond the finite numbers: not used
    inexact = o.or_(o.positive(err), o.negative(err))
    away = fn.logical_equal(BOOL, o.positive(err), o.positive(s))
    odd = o.sel(o.and_(inexact, o.not_(o.is_odd(s))), o.step(s, away), s)
    return _to_f16(ctx, odd)


def _through_f32(ctx: LoweringContext, op: Callable[..., int], *args: int) -> int:
    """An f16 operation computed strictly in f32 and rounded once more to f16: the same bits
    for + - * / sqrt, as f32 has 24 >= 2 * 11 + 2 bits."""
    o = _Ops(ctx, F32)
    return _to_f16(ctx, op(o, *(ctx.fn.f_convert(F32, a) for a in args)))


def _to_f16(ctx: LoweringContext, x: int) -> int:
    return narrow_to_f16(ctx, F32, x)  # rounded on the bits: NVIDIA drops f16 round trips


# ---------------------------------------------------------------- conversions in code


def _round_int(o: _Ops, src: IntType, value: int) -> int:
    """An integer wider than o's precision, rounded to nearest even: the significand is its top
    bits (rounded on the rest, by integer comparison), scaled by a power of two."""
    fn, p = o.fn, o.fmt.precision
    unsigned = IntType(src.bits, False)

    def u(v: int) -> int:
        return o.ctx.const(unsigned, v)

    negative = fn.s_less_than(BOOL, value, o.ctx.const(src, 0)) if src.signed else None
    magnitude = fn.bitcast(unsigned, value) if src.signed else value
    if negative is not None:  # -(-2**(n-1)) wraps to 2**(n-1), right as unsigned
        magnitude = fn.select(unsigned, negative, fn.bitcast(unsigned, fn.s_negate(src, value)),
                              magnitude)
    top = _find_msb(o, unsigned, magnitude)  # -1 for zero
    shift = fn.glsl(I32, GLSL.SMax, o.isub(top, o.i(p - 1)), o.i(0))
    shift_u = fn.bitcast(U32, shift)
    significand = fn.shift_right_logical(unsigned, magnitude, shift_u)
    rest = fn.i_sub(unsigned, magnitude, fn.shift_left_logical(unsigned, significand, shift_u))
    # half of the dropped part's unit; 0 (and rest 0) where nothing is dropped
    half = fn.shift_right_logical(unsigned, fn.shift_left_logical(unsigned, u(1), shift_u), u(1))
    odd = fn.i_not_equal(BOOL, fn.bitwise_and(unsigned, significand, u(1)), u(0))
    up = o.or_(fn.u_greater_than(BOOL, rest, half),
               o.and_(fn.i_equal(BOOL, rest, half), fn.i_not_equal(BOOL, half, u(0)), odd))
    significand = fn.i_add(unsigned, significand, fn.select(unsigned, up, u(1), u(0)))
    result = o.mul(fn.convert_u_to_f(o.ty, significand), o.pow2(shift))  # both exact
    return result if negative is None else o.sel(negative, o.neg(result), result)


def _find_msb(o: _Ops, ty: IntType, value: int) -> int:
    """The index of the highest set bit of an unsigned `value`, as i32 (-1 for 0)."""
    fn = o.fn
    if ty.bits == 32:
        return fn.glsl(I32, GLSL.FindUMsb, value)
    high = fn.u_convert(U32, fn.shift_right_logical(ty, value, o.ctx.const(U32, 32)))
    low = fn.u_convert(U32, value)
    return o.isel(fn.i_not_equal(BOOL, high, o.ctx.const(U32, 0)),
                  o.iadd(fn.glsl(I32, GLSL.FindUMsb, high), o.i(32)),
                  fn.glsl(I32, GLSL.FindUMsb, low))


def _narrow(o: _Ops, dst: FloatType, x: int) -> int:
    """x rounded to `dst`'s grid in o's (wider) type, with exact operations only: scaled so
    that dst's last place is 1, split at the point by Floor, rounded up past a half (or at one,
    when that makes it even), scaled back; then converted, exactly."""
    fn, narrow = o.fn, FORMATS[dst.bits]
    magnitude = o.abs(x)
    _, e = o.frexp(o.sel(o.is_zero(magnitude), o.c(1.0), magnitude))
    # the exponent of dst's last place at x: its normals' or, below them, its subnormals'
    place = o.isub(o.iclamp(e, narrow.emin, narrow.emax), o.i(narrow.precision - 1))
    units = o.mul(magnitude, o.pow2(o.isub(o.i(0), place)))  # exact: powers of two
    whole = o.floor(units)
    fraction = o.sub(units, whole)  # exact
    half_whole = o.mul(whole, o.c(0.5))
    odd = o.not_(o.eq(o.floor(half_whole), half_whole))
    up = o.or_(o.gt(fraction, o.c(0.5)), o.and_(o.eq(fraction, o.c(0.5)), odd))
    rounded = o.mul(o.sel(up, o.add(whole, o.c(1.0)), whole), o.pow2(place))  # exact
    largest = (2.0 - 2.0 ** (1 - narrow.precision)) * 2.0 ** narrow.emax
    overflow = o.gt(rounded, o.c(largest))
    regular = o.and_(o.is_finite(x), o.not_(overflow))
    rounded = o.sel(regular, rounded, o.sel(overflow, o.c(float("inf")), magnitude))
    # the sign of x (also of a zero or a NaN) and a conversion that is exact by now
    return fn.f_convert(dst, o.with_sign(rounded, o.sign_bit(x)))
