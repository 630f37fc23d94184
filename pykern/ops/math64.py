"""The exp/log family in f64, as device functions for the elementwise ops: Vulkan's GLSL.std.450
has transcendental functions for 16- and 32-bit floats only.

- `exp_d`: x = k ln2 + r with |r| <= ln2/2 (Cody-Waite split of ln2), a degree-13 Taylor
  polynomial of e^r (truncation below 2^-60), times 2^k built exactly from powers of two (in two
  halves, so 2^k is representable down to the subnormal range).
- `log_d`: x = 2^k m with m in [sqrt(1/2), sqrt(2)) — k from the f32 logarithm after scaling
  x into the f32 range by exact powers of two, then corrected — and
  log m = 2 atanh((m - 1)/(m + 1)) by its series to s^23 (|s| <= 0.172, truncation below
  2^-58); k ln2 added in two parts.
- expm1/log1p use series near 0 (where e^x - 1 and log(1 + x) cancel), the others are
  compositions. Measured on lavapipe within a few ULP of numpy's (tests/ops/test_elementwise.py).
"""

from __future__ import annotations

import math

import pykern as pk

LN2_HI = 6.93147180369123816490e-01
LN2_LO = 1.90821492927058770002e-10
LOG2E = 1.44269504088896338700e+00
TWO_POW_200 = 1.6069380442589903e+60
TWO_POW_M200 = 6.223015277861142e-61


@pk.func
def pow2_d(k):
    """2**k (f64) for an integer |k| <= 1023, by squaring (exact)."""
    n = abs(k)
    base: pk.f64 = 2.0
    if k < 0:
        base = 0.5
    p: pk.f64 = 1.0
    for bit in range(10):
        if (n >> bit) & 1 != 0:
            p = p * base
        base = base * base
    return p


@pk.func
def exp_d(x):
    """e**x in f64 (inf above 709.78, 0 below -745.2, nan for nan)."""
    r: pk.f64 = 0.0
    if x != x:
        r = x
    elif x > 709.782712893384:
        r = math.inf
    elif x < -745.2:
        r = 0.0
    else:
        kf = pk.floor(x * LOG2E + 0.5)
        y = x - kf * LN2_HI - kf * LN2_LO
        p: pk.f64 = 1.0 / 6227020800.0
        p = p * y + 1.0 / 479001600.0
        p = p * y + 1.0 / 39916800.0
        p = p * y + 1.0 / 3628800.0
        p = p * y + 1.0 / 362880.0
        p = p * y + 1.0 / 40320.0
        p = p * y + 1.0 / 5040.0
        p = p * y + 1.0 / 720.0
        p = p * y + 1.0 / 120.0
        p = p * y + 1.0 / 24.0
        p = p * y + 1.0 / 6.0
        p = p * y + 0.5
        p = p * y + 1.0
        p = p * y + 1.0
        k = pk.i32(kf)
        half = k // 2
        r = p * pow2_d(half) * pow2_d(k - half)
    return r


@pk.func
def exp2_d(x):
    """2**x in f64: 2**round(x) (exact) times e**(f ln2) for the fraction f (|f| <= 1/2)."""
    r: pk.f64 = 0.0
    if x != x:
        r = x
    elif x > 1024.0:
        r = math.inf
    elif x < -1080.0:
        r = 0.0
    else:
        kf = pk.floor(x + 0.5)
        k = pk.i32(kf)
        half = k // 2
        r = exp_d((x - kf) * 0.6931471805599453) * pow2_d(half) * pow2_d(k - half)
    return r


@pk.func
def log_d(x):
    """The natural logarithm in f64 (nan below 0, -inf at 0, inf at inf)."""
    r: pk.f64 = 0.0
    if x != x or x < 0.0:
        r = math.nan
    elif x == 0.0:
        r = -math.inf
    elif x == math.inf:
        r = math.inf
    else:
        m = x
        k = 0
        # into the f32 range by exact scalings, so the f32 log2 can estimate the exponent
        for _ in range(6):
            if m < 1e-30:
                m = m * TWO_POW_200
                k -= 200
            elif m > 1e30:
                m = m * TWO_POW_M200
                k += 200
        e = pk.i32(pk.floor(pk.log2(pk.f32(m)) + 0.5))
        m = m * pow2_d(-e)
        k += e
        if m > 1.4142135623730951:
            m = m * 0.5
            k += 1
        elif m < 0.7071067811865476:
            m = m * 2.0
            k -= 1
        s = (m - 1.0) / (m + 1.0)
        s2 = s * s
        t: pk.f64 = 1.0 / 23.0
        t = t * s2 + 1.0 / 21.0
        t = t * s2 + 1.0 / 19.0
        t = t * s2 + 1.0 / 17.0
        t = t * s2 + 1.0 / 15.0
        t = t * s2 + 1.0 / 13.0
        t = t * s2 + 1.0 / 11.0
        t = t * s2 + 1.0 / 9.0
        t = t * s2 + 1.0 / 7.0
        t = t * s2 + 1.0 / 5.0
        t = t * s2 + 1.0 / 3.0
        t = t * s2 + 1.0
        kf = pk.f64(k)
        r = kf * LN2_HI + (2.0 * s * t + kf * LN2_LO)
    return r


@pk.func
def expm1_d(x):
    """e**x - 1, by its Taylor series for |x| < 0.5."""
    r: pk.f64 = 0.0
    if abs(x) < 0.5:
        p: pk.f64 = 1.0 / 355687428096000.0
        p = p * x + 1.0 / 20922789888000.0
        p = p * x + 1.0 / 1307674368000.0
        p = p * x + 1.0 / 87178291200.0
        p = p * x + 1.0 / 6227020800.0
        p = p * x + 1.0 / 479001600.0
        p = p * x + 1.0 / 39916800.0
        p = p * x + 1.0 / 3628800.0
        p = p * x + 1.0 / 362880.0
        p = p * x + 1.0 / 40320.0
        p = p * x + 1.0 / 5040.0
        p = p * x + 1.0 / 720.0
        p = p * x + 1.0 / 120.0
        p = p * x + 1.0 / 24.0
        p = p * x + 1.0 / 6.0
        p = p * x + 0.5
        r = x + x * x * p
    else:
        r = exp_d(x) - 1.0
    return r


@pk.func
def log1p_d(x):
    """log(1 + x), by 2 atanh(x / (2 + x)) for |x| < 0.25."""
    r: pk.f64 = 0.0
    if abs(x) < 0.25:
        s = x / (2.0 + x)
        s2 = s * s
        t: pk.f64 = 1.0 / 25.0
        t = t * s2 + 1.0 / 23.0
        t = t * s2 + 1.0 / 21.0
        t = t * s2 + 1.0 / 19.0
        t = t * s2 + 1.0 / 17.0
        t = t * s2 + 1.0 / 15.0
        t = t * s2 + 1.0 / 13.0
        t = t * s2 + 1.0 / 11.0
        t = t * s2 + 1.0 / 9.0
        t = t * s2 + 1.0 / 7.0
        t = t * s2 + 1.0 / 5.0
        t = t * s2 + 1.0 / 3.0
        t = t * s2 + 1.0
        r = 2.0 * s * t
    else:
        r = log_d(1.0 + x)
    return r


@pk.func
def tanh_d(x):
    a = abs(x)
    r: pk.f64 = 0.0
    if a > 20.0:
        r = 1.0
    else:
        t = expm1_d(2.0 * a)
        r = t / (t + 2.0)
    return pk.copysign(r, x)


@pk.func
def sinh_d(x):
    a = abs(x)
    r: pk.f64 = 0.0
    if a < 0.5:
        t = expm1_d(a)
        r = 0.5 * (t + t / (t + 1.0))
    elif a > 709.0:
        h = exp_d(0.5 * a)
        r = 0.5 * h * h
    else:
        e = exp_d(a)
        r = 0.5 * (e - 1.0 / e)
    return pk.copysign(r, x)


@pk.func
def cosh_d(x):
    a = abs(x)
    r: pk.f64 = 0.0
    if a > 709.0:
        h = exp_d(0.5 * a)
        r = 0.5 * h * h
    else:
        e = exp_d(a)
        r = 0.5 * (e + 1.0 / e)
    return r


@pk.func
def unary_d(x, op):
    """The f64 version of a unary op: `op` is its name with "_d" appended (x is f64)."""
    if op == "exp_d":
        return exp_d(x)
    elif op == "exp2_d":
        return exp2_d(x)
    elif op == "expm1_d":
        return expm1_d(x)
    elif op == "log_d":
        return log_d(x)
    elif op == "log2_d":
        return log_d(x) * 1.4426950408889634
    elif op == "log10_d":
        return log_d(x) * 0.4342944819032518
    elif op == "log1p_d":
        return pk.select(x < -1.0, math.nan, log1p_d(x))
    elif op == "sinh_d":
        return sinh_d(x)
    elif op == "cosh_d":
        return cosh_d(x)
    elif op == "tanh_d":
        return tanh_d(x)
    elif op == "asinh_d":
        a = abs(x)
        big = log_d(pk.select(a > 1e150, a, 1.0)) + 0.6931471805599453
        small = log1p_d(a + a * a / (1.0 + pk.sqrt(1.0 + a * a)))
        return pk.copysign(pk.select(a > 1e150, big, small), x)
    elif op == "acosh_d":
        t = x - 1.0
        big = log_d(pk.select(x > 1e150, x, 1.0)) + 0.6931471805599453
        r = pk.select(x > 1e150, big, log1p_d(t + pk.sqrt(abs(2.0 * t + t * t))))
        return pk.select(x < 1.0, math.nan, r)
    elif op == "atanh_d":
        a = abs(x)  # on |x|: near -1, 2x / (1 - x) would sit next to -1 and lose digits
        r = pk.copysign(0.5 * log1p_d(2.0 * a / (1.0 - a)), x)
        return pk.select(a > 1.0, math.nan, r)
    elif op == "sigmoid_d":
        return 1.0 / (1.0 + exp_d(-x))
    else:  # "silu_d"
        return x / (1.0 + exp_d(-x))


@pk.func
def pow_d(x, y):
    """x ** y in f64 as exp(y log |x|), with numpy's special cases: x ** 0 == 1, 1 ** y == 1,
    a negative base needs an integral exponent (else nan) and takes its sign from the parity."""
    r: pk.f64 = 0.0
    yi = pk.trunc(y)
    if y == 0.0 or x == 1.0:
        r = 1.0
    elif x != x or y != y:
        r = x + y
    elif x < 0.0 and yi != y:
        r = math.nan
    else:
        ax = abs(x)
        if ax == 0.0:
            r = math.inf
            if y > 0.0:
                r = 0.0
        elif ax == 1.0:
            r = 1.0
        else:
            r = exp_d(y * log_d(ax))
        if x < 0.0 or (x == 0.0 and pk.copysign(1.0, x) < 0.0):
            half = yi * 0.5
            if pk.trunc(half) != half:  # odd exponent
                r = -r
    return r


@pk.func
def logaddexp_d(x, y):
    d = x - y
    m = pk.select(x > y, x, y)
    return pk.select(d != d, x + y, m + log1p_d(exp_d(-abs(d))))
