"""The prelude of complex math: device functions of the real and imaginary parts, which
`pykern.passes.complex` calls for what complex arithmetic does not write out in a few real
operations. Each is typed per part type (f32 for c64, f64 for c128); one with a complex
result returns its two parts as a tuple.

They follow numpy (whose algorithms are C99's, Annex G): the same special values for
infinite, nan and signed-zero parts, the same branch cuts (along the negative real axis for
log and sqrt, the imaginary axis beyond +-i for asin/atan's...), and these algorithms:

- divide: Smith's scaled division, numpy's own steps, so that huge and tiny parts neither
  overflow nor underflow where the quotient does not;
- power: the integer exponents |n| < 100 by repeated squaring as numpy multiplies them (so
  z**2 is z*z exactly), 0**y and z**0 as numpy; else exp(y log z);
- abs: hypot, scaled by the larger part (no overflow); log: log|z| through log1p where |z| is
  near 1; sqrt: the stable half-angle formulas, scaled near overflow;
- the trigonometric functions from the hyperbolic ones (sin z = -i sinh(iz), ...), those from
  exp with expm1 where they cancel; the inverse functions from log and sqrt by Kahan's
  formulas, with log(2|z|) where the squares would overflow.

`IMPLEMENTATIONS` names each with its number of complex arguments.
"""

from __future__ import annotations

import math

from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.func import func
from pykern.lang.real_math import expm1 as real_expm1
from pykern.lang.real_math import log1p as real_log1p

INF = math.inf
NAN = math.nan
PI = math.pi
LN2 = math.log(2.0)
INV_LN2 = 1.0 / math.log(2.0)
INV_LN10 = 1.0 / math.log(10.0)


@func
def _quarter_max(x):
    """A quarter of the largest finite value of x's type: parts beyond it are scaled first."""
    if x.dtype == dt.f64:
        return dt.f64(4.4942328371557893e307)
    return dt.f32(8.507059e37)


@func
def _sin(x):
    """sin x, and x itself where that is sin x to the type's precision (|x| below 2^-12 for
    f32, 2^-26 for f64): some devices' sin returns 0 for the tiniest normal numbers, which
    would make inf * sin x a nan."""
    s = bi.sin(x)
    if abs(x) < _small_angle(x):
        s = x
    return s


@func
def _small_angle(x):
    if x.dtype == dt.f64:
        return dt.f64(1.4901161193847656e-08)
    return dt.f32(2.44140625e-4)


@func
def _large(x):
    """Beyond this magnitude, x * x overflows in x's type (and 1 + x * x is x * x)."""
    if x.dtype == dt.f64:
        return dt.f64(1.0e150)
    return dt.f32(1.0e18)


@func
def _tiny(x):
    """The smallest normal number of x's type (devices may flush those below to zero)."""
    if x.dtype == dt.f64:
        return dt.f64(2.2250738585072014e-308)
    return dt.f32(1.1754944e-38)


@func
def _nan(x):
    """A nan of x's type (a first value for a result that branches assign)."""
    if x.dtype == dt.f64:
        return dt.f64(NAN)
    return dt.f32(NAN)


@func
def _one(x):
    if x.dtype == dt.f64:
        return dt.f64(1.0)
    return dt.f32(1.0)


@func
def _isfinite(x):
    return not (bi.isinf(x) or bi.isnan(x))


@func
def _hypot(x, y):
    """sqrt(x*x + y*y) without overflow or underflow: inf if a part is infinite (nan too)."""
    a = abs(x)
    b = abs(y)
    r = a + b  # nan when either is nan
    if bi.isinf(a) or bi.isinf(b):
        r = INF
    elif not bi.isnan(r):
        big = max(a, b)
        small = min(a, b)
        if big != 0.0:
            q = small / big
            r = big * bi.sqrt(1.0 + q * q)
    return r


@func
def _mul(xr, xi, yr, yi):
    """numpy's complex product."""
    return xr * yr - xi * yi, xr * yi + xi * yr


@func
def complex_divide(xr, xi, yr, yi):
    """x / y by numpy's steps (Smith's algorithm)."""
    ar = abs(yr)
    ai = abs(yi)
    re = xr
    im = xi
    if ar >= ai:
        if ar == 0.0 and ai == 0.0:  # a complex inf or nan, as numpy
            re = xr / ar
            im = xi / ar
        else:
            rat = yi / yr
            scl = 1.0 / (yr + yi * rat)
            re = (xr + xi * rat) * scl
            im = (xi - xr * rat) * scl
    else:
        rat = yr / yi
        scl = 1.0 / (yi + yr * rat)
        re = (xr * rat + xi) * scl
        im = (xi * rat - xr) * scl
    return re, im


@func
def complex_abs(xr, xi):
    """|x|."""
    return _hypot(xr, xi)


@func
def complex_exp(xr, xi):
    """e**x, C99's special values."""
    re = _nan(xr)
    im = _nan(xr)
    if _isfinite(xr):
        if xi == 0.0:
            re = bi.exp(xr)
            im = xi
        elif _isfinite(xi):
            re, im = _scaled_cis(xr, xi, 1.0)
    elif bi.isnan(xr):
        if xi == 0.0:
            im = xi
    elif xr > 0.0:  # +inf
        re = INF
        if xi == 0.0:
            im = xi
        elif _isfinite(xi):
            re = bi.copysign(INF, bi.cos(xi))
            im = bi.copysign(INF, _sin(xi))
    else:  # -inf: zero, with the signs of cis(xi) where it has them
        re = 0.0
        im = bi.copysign(0.0, xi)
        if _isfinite(xi):
            re = bi.copysign(0.0, bi.cos(xi))
            im = bi.copysign(0.0, _sin(xi))
    return re, im


@func
def _exp_large(x):
    """Beyond this, e**x overflows x's type (though e**x * cos(y) may not)."""
    if x.dtype == dt.f64:
        return dt.f64(700.0)
    return dt.f32(85.0)


@func
def _scaled_cis(x, y, scale):
    """scale * e**x * (cos y + i sin y) for finite x and y, through e**(x/2) twice where e**x
    alone would overflow."""
    # the scale last: a tiny sin y times a scale below 1 could be flushed to zero before the
    # exponential makes it large (then 0 * inf is a nan)
    c = bi.cos(y)
    s = _sin(y)
    re = c
    im = s
    if x > _exp_large(x):
        h = bi.exp(x * 0.5)
        re = (c * h) * (h * scale)
        im = (s * h) * (h * scale)
    else:
        e = bi.exp(x)
        re = (c * e) * scale
        im = (s * e) * scale
    return re, im


@func
def _log_abs(xr, xi):
    """log|x|, through log1p where |x| is near 1 (where log would cancel)."""
    a = abs(xr)
    b = abs(xi)
    r = a + b
    if bi.isinf(a) or bi.isinf(b):
        r = INF
    elif not bi.isnan(r):
        big = max(a, b)
        small = min(a, b)
        if big == 0.0:
            r = -INF
        else:
            q = small / big
            h = big * bi.sqrt(1.0 + q * q)
            if big < 1.0 and h > 0.7:
                r = 0.5 * real_log1p((big - 1.0) * (big + 1.0) + small * small)
            else:
                r = bi.log(big) + 0.5 * real_log1p(q * q)
    return r


@func
def complex_log(xr, xi):
    """The natural logarithm: branch cut along the negative real axis (log(-1 +- 0j) is
    0 +- pi j)."""
    return _log_abs(xr, xi), bi.atan2(xi, xr)


@func
def complex_log2(xr, xi):
    re, im = complex_log(xr, xi)
    return re * INV_LN2, im * INV_LN2


@func
def complex_log10(xr, xi):
    re, im = complex_log(xr, xi)
    return re * INV_LN10, im * INV_LN10


@func
def complex_sqrt(xr, xi):
    """The principal square root (the real part >= 0), FreeBSD's / numpy's algorithm."""
    re = xr
    im = xi
    if xr == 0.0 and xi == 0.0:
        re = 0.0
    elif bi.isinf(xi):
        re = INF
    elif bi.isnan(xr):
        im = (xi - xi) / (xi - xi)
    elif bi.isinf(xr):
        if xr < 0.0:
            re = abs(xi - xi)
            im = bi.copysign(INF, xi)
        else:
            im = bi.copysign(xi - xi, xi)
    else:
        a = xr
        b = xi
        scale = 1.0
        if abs(a) >= _quarter_max(a) or abs(b) >= _quarter_max(a):
            a = a * 0.25
            b = b * 0.25
            scale = 2.0
        elif abs(a) < 4.0 * _tiny(a) and abs(b) < 4.0 * _tiny(a):
            # (a + |z|) / 2 would be subnormal, which devices may flush to zero: scale by 2^24
            a = a * 16777216.0
            b = b * 16777216.0
            scale = 1.0 / 4096.0
        if a >= 0.0:
            t = bi.sqrt((a + _hypot(a, b)) * 0.5)
            re = t * scale
            im = b / (2.0 * t) * scale
        else:
            t = bi.sqrt((_hypot(a, b) - a) * 0.5)
            re = abs(b) / (2.0 * t) * scale
            im = bi.copysign(t, b) * scale
    return re, im


@func
def complex_power(xr, xi, yr, yi):
    """x**y as numpy computes it."""
    re = _nan(xr)
    im = _nan(xr)
    n = 0
    if yr == 0.0 and yi == 0.0:
        re = 1.0
        im = 0.0
    elif xr == 0.0 and xi == 0.0:  # 0 to a power with a positive real part is 0
        if yr > 0.0:
            re = 0.0
            im = 0.0
    elif yi == 0.0 and yr == bi.trunc(yr) and abs(yr) < 100.0:
        n = dt.i32(yr)
        if n == 1:
            re = xr
            im = xi
        elif n == 2:
            re, im = _mul(xr, xi, xr, xi)
        elif n == 3:
            sr, si = _mul(xr, xi, xr, xi)
            re, im = _mul(xr, xi, sr, si)
        else:
            m = abs(n)
            mask = 1
            re = 1.0
            im = 0.0
            pr = xr
            pi = xi
            while True:
                if (m & mask) != 0:
                    re, im = _mul(re, im, pr, pi)
                mask = mask << 1
                if m < mask:
                    break
                pr, pi = _mul(pr, pi, pr, pi)
            if n < 0:
                re, im = complex_divide(_one(xr), 0.0 * _one(xr), re, im)
    else:
        lr, li = complex_log(xr, xi)
        re, im = complex_exp(lr * yr - li * yi, lr * yi + li * yr)
    return re, im


@func
def complex_log1p(xr, xi):
    """log(1 + x), accurate near 0 (numpy's is log|1 + x| there)."""
    a = xr + 1.0
    re = _log_abs(a, xi)
    if _isfinite(xr) and _isfinite(xi) and abs(xr) < 0.5 and abs(xi) < 0.5:
        re = 0.5 * real_log1p(xr * (2.0 + xr) + xi * xi)
    return re, bi.atan2(xi, a)


@func
def complex_expm1(xr, xi):
    """e**x - 1 by numpy's formula, with an accurate real expm1, for finite x; exp's special
    values minus one otherwise (the array API's table for expm1 is exactly that)."""
    re, im = complex_exp(xr, xi)
    re = re - 1.0
    if _isfinite(xr) and _isfinite(xi):
        s = _sin(xi * 0.5)
        re = real_expm1(xr) * bi.cos(xi) - 2.0 * s * s
        if re == 0.0:
            re = 0.0  # expm1(-0 + 0j) is +0 + 0j
        if xi != 0.0:
            im = bi.exp(xr) * _sin(xi)
    return re, im


@func
def complex_sinh(xr, xi):
    """The hyperbolic sine, C99's special values."""
    re = _nan(xr)
    im = _nan(xr)
    if _isfinite(xr) and _isfinite(xi):
        if xi == 0.0:
            re = bi.sinh(xr)
            im = xi
        elif xr == 0.0:
            re = xr * bi.cos(xi)
            im = _sin(xi)
        elif abs(xr) > _exp_large(xr):  # sinh x = +-cosh x = +-e**|x| / 2 here
            c, s = _scaled_cis(abs(xr), xi, 0.5)
            re = bi.copysign(1.0, xr) * c
            im = s
        else:
            re = bi.sinh(xr) * bi.cos(xi)
            im = bi.cosh(xr) * _sin(xi)
    elif xr == 0.0:  # the imaginary part is infinite or nan
        re = xr
        im = xi - xi
    elif xi == 0.0:  # the real part is infinite or nan
        re = xr
        im = xi
    elif bi.isinf(xr):
        if _isfinite(xi):
            re = bi.copysign(INF, xr) * bi.cos(xi)
            im = INF * _sin(xi)
        else:  # FreeBSD's (and numpy's) signs
            re = xr * xr
            im = xr * (xi - xi)
    return re, im


@func
def complex_cosh(xr, xi):
    """The hyperbolic cosine, C99's special values."""
    re = _nan(xr)
    im = _nan(xr)
    if _isfinite(xr) and _isfinite(xi):
        if xi == 0.0:
            re = bi.cosh(xr)
            im = xr * xi
        elif xr == 0.0:
            re = bi.cos(xi)
            im = xr * _sin(xi)
        elif abs(xr) > _exp_large(xr):  # cosh x = +-sinh x = e**|x| / 2 here
            c, s = _scaled_cis(abs(xr), xi, 0.5)
            re = c
            im = bi.copysign(1.0, xr) * s
        else:
            re = bi.cosh(xr) * bi.cos(xi)
            im = bi.sinh(xr) * _sin(xi)
    elif xr == 0.0:  # the imaginary part is infinite or nan (numpy's zero is +0)
        re = xi - xi
        im = abs(xr)
    elif xi == 0.0:  # the real part is infinite or nan
        re = abs(xr)
        im = xi
        if bi.isinf(xr):
            im = xi * bi.copysign(1.0, xr)
    elif bi.isinf(xr):
        if _isfinite(xi):
            re = INF * bi.cos(xi)
            im = bi.copysign(INF, xr) * _sin(xi)
        else:
            re = INF
            im = xi - xi
    return re, im


@func
def _tanh_large(x):
    """Beyond this |x|, tanh(x + iy) is +-1 to the precision of x's type."""
    if x.dtype == dt.f64:
        return dt.f64(22.0)
    return dt.f32(11.0)


@func
def complex_tanh(xr, xi):
    """The hyperbolic tangent (Kahan's formula, FreeBSD's special values, as numpy)."""
    re = _nan(xr)
    im = _nan(xr)
    if bi.isnan(xr):
        re = xr
        if xi == 0.0:
            im = xi
    elif bi.isinf(xr):
        re = bi.copysign(1.0, xr)
        im = bi.copysign(0.0, xi)
        if _isfinite(xi):
            im = bi.copysign(0.0, _sin(2.0 * xi))
    elif not _isfinite(xi):
        re = xi - xi
        if xr == 0.0:
            re = xr
    elif abs(xr) >= _tanh_large(xr):
        e = bi.exp(-abs(xr))
        re = bi.copysign(1.0, xr)
        im = 4.0 * _sin(xi) * bi.cos(xi) * e * e
    else:
        t = bi.tan(xi)
        beta = 1.0 + t * t
        s = bi.sinh(xr)
        rho = bi.sqrt(1.0 + s * s)
        denom = 1.0 + beta * s * s
        re = beta * rho * s / denom
        im = t / denom
    return re, im


@func
def complex_sin(xr, xi):
    """sin(x + iy) is sinh(y + ix) with its parts swapped (numpy's special values)."""
    a, b = complex_sinh(xi, xr)
    return b, a


@func
def complex_cos(xr, xi):
    """cos x = complex_cosh(ix)."""
    return complex_cosh(-xi, xr)


@func
def complex_tan(xr, xi):
    """tan x = -i tanh(ix)."""
    a, b = complex_tanh(-xi, xr)
    return b, -a


@func
def _asin_first_quadrant(a, b):
    """asin and acos's real parts and asin's imaginary part of a + bi, for finite a, b >= 0
    below `_large`: Hull, Fairgrieve and Tang's algorithm (no cancellation near +-1)."""
    r = _hypot(a + 1.0, b)
    s = _hypot(a - 1.0, b)
    big = 0.5 * (r + s)
    ratio = a / big
    b2 = b * b
    apx = big + a
    re_asin = bi.asin(ratio)
    re_acos = bi.acos(ratio)
    if ratio > 0.6417:
        if a <= 1.0:
            d = bi.sqrt(0.5 * apx * (b2 / (r + (a + 1.0)) + (s + (1.0 - a))))
        else:
            d = b * bi.sqrt(0.5 * (apx / (r + (a + 1.0)) + apx / (s + (a - 1.0))))
        re_asin = bi.atan(a / d)
        re_acos = bi.atan(d / a)
    im = bi.log(big + bi.sqrt(big * big - 1.0))
    if big <= 1.5:
        am1 = 0.5 * (b2 / (r + (a + 1.0)) + (s + (a - 1.0)))
        if a < 1.0:
            am1 = 0.5 * (b2 / (r + (a + 1.0)) + b2 / (s + (1.0 - a)))
        im = real_log1p(am1 + bi.sqrt(am1 * (big + 1.0)))
        if b2 < _tiny(b) and a < 1.0:  # b * b underflowed (or lost bits as a subnormal):
            # the first term of the series
            im = b / bi.sqrt((1.0 - a) * (1.0 + a))
    return re_asin, re_acos, im


@func
def _asin_acos(xr, xi):
    """asin and acos's real parts and asin's imaginary part of x, for |x|'s parts, with the
    infinite, nan and huge cases: there asin(a + bi) = -i log(2 i z) to working precision."""
    a = abs(xr)
    b = abs(xi)
    re_asin = _nan(xr)
    re_acos = _nan(xr)
    im = _nan(xr)
    if _isfinite(a) and _isfinite(b) and max(a, b) < _large(a):
        re_asin, re_acos, im = _asin_first_quadrant(a, b)
    elif bi.isnan(a) or bi.isnan(b):
        if bi.isinf(a) or bi.isinf(b):
            im = INF
        elif a == 0.0:
            re_asin = a
            re_acos = PI * 0.5
    else:  # an infinite or huge part: asin z = -i log(2iz), acos z = -i log(2z)
        lr = _log_abs(a, b) + LN2
        t = bi.atan2(b, a)
        re_asin = bi.atan2(a, b)
        re_acos = t
        im = lr
    return re_asin, re_acos, im


@func
def complex_asin(xr, xi):
    """The inverse sine: branch cuts along the real axis beyond +-1."""
    re, _, im = _asin_acos(xr, xi)
    return bi.copysign(re, xr), bi.copysign(im, xi)


@func
def complex_acos(xr, xi):
    """The inverse cosine: branch cuts along the real axis beyond +-1."""
    _, re, im = _asin_acos(xr, xi)
    if xr < 0.0 or (xr == 0.0 and bi.copysign(1.0, xr) < 0.0):
        re = PI - re
    return re, -bi.copysign(im, xi)


@func
def complex_asinh(xr, xi):
    """asinh x = -i asin(ix): branch cuts along the imaginary axis beyond +-i."""
    a, b = complex_asin(-xi, xr)
    return b, -a


@func
def complex_acosh(xr, xi):
    """acosh x = +-i acos x, with the real part >= 0: branch cut along the real axis below
    1."""
    a, b = complex_acos(xr, xi)
    return abs(b), bi.copysign(a, xi)


@func
def complex_atanh(xr, xi):
    """The inverse hyperbolic tangent: branch cuts along the real axis beyond +-1."""
    a = abs(xr)
    b = abs(xi)
    re = _nan(xr)
    im = _nan(xr)
    if bi.isnan(a):
        if bi.isinf(b):
            re = 0.0
            im = PI * 0.5
    elif bi.isnan(b):
        if bi.isinf(a):
            re = 0.0
        elif a == 0.0:
            re = a
    elif bi.isinf(a) or bi.isinf(b) or max(a, b) > _large(a):
        # every divisor scaled by 1/16: Vulkan leaves x / y undefined for |y| above 2^126
        # (the H200 gives nan there), and big * (p² + q²) may reach 2 * max
        big = max(a, b)
        small_big = big * 0.0625
        p = (a * 0.0625) / small_big
        q = (b * 0.0625) / small_big
        re = 0.0
        if _isfinite(big):
            re = (p * 0.0625) / (small_big * (p * p + q * q))
        im = PI * 0.5
    else:
        d = (1.0 - a) * (1.0 - a) + b * b
        re = 0.25 * real_log1p(4.0 * a / d)
        if d < _tiny(a) and b != 0.0:  # underflow next to +-1: log|1 + z| - log|1 - z|, halved
            re = 0.5 * (_log_abs(1.0 + a, b) - _log_abs(1.0 - a, b))
        im = 0.5 * bi.atan2(2.0 * b, (1.0 - a) * (1.0 + a) - b * b)
    return bi.copysign(re, xr), bi.copysign(im, xi)


@func
def complex_atan(xr, xi):
    """atan x = -i atanh(ix): branch cuts along the imaginary axis beyond +-i."""
    a, b = complex_atanh(-xi, xr)
    return b, -a


# name -> (device function, number of complex arguments)
IMPLEMENTATIONS = {
    "divide": (complex_divide, 2), "power": (complex_power, 2), "abs": (complex_abs, 1),
    "exp": (complex_exp, 1), "log": (complex_log, 1), "log2": (complex_log2, 1),
    "log10": (complex_log10, 1), "sqrt": (complex_sqrt, 1), "log1p": (complex_log1p, 1),
    "expm1": (complex_expm1, 1), "sin": (complex_sin, 1), "cos": (complex_cos, 1),
    "tan": (complex_tan, 1), "sinh": (complex_sinh, 1), "cosh": (complex_cosh, 1),
    "tanh": (complex_tanh, 1), "asin": (complex_asin, 1), "acos": (complex_acos, 1),
    "atan": (complex_atan, 1), "asinh": (complex_asinh, 1), "acosh": (complex_acosh, 1),
    "atanh": (complex_atanh, 1),
}
