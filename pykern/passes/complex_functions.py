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
from pykern.lang.real_math import log1p as real_log1p

INF = math.inf
NAN = math.nan
PI = math.pi
LN2 = math.log(2.0)


@func
def _quarter_max(x):
    """A quarter of the largest finite value of x's type: parts beyond it are scaled first."""
    if x.dtype == dt.f64:
        return dt.f64(4.4942328371557893e307)
    return dt.f32(8.507059e37)


@func
def _large(x):
    """Beyond this magnitude, x * x overflows in x's type (and 1 + x * x is x * x)."""
    if x.dtype == dt.f64:
        return dt.f64(1.0e150)
    return dt.f32(1.0e18)


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
def divide(xr, xi, yr, yi):
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
def abs_(xr, xi):
    """|x|."""
    return _hypot(xr, xi)


@func
def exp(xr, xi):
    """e**x, C99's special values."""
    re = _nan(xr)
    im = _nan(xr)
    if _isfinite(xr):
        if xi == 0.0:
            re = bi.exp(xr)
            im = xi
        elif _isfinite(xi):
            e = bi.exp(xr)
            re = e * bi.cos(xi)
            im = e * bi.sin(xi)
    elif bi.isnan(xr):
        if xi == 0.0:
            im = xi
    elif xr > 0.0:  # +inf
        re = INF
        if xi == 0.0:
            im = xi
        elif _isfinite(xi):
            re = bi.copysign(INF, bi.cos(xi))
            im = bi.copysign(INF, bi.sin(xi))
    else:  # -inf: zero, with the signs of cis(xi) where it has them
        re = 0.0
        im = 0.0
        if _isfinite(xi):
            re = bi.copysign(0.0, bi.cos(xi))
            im = bi.copysign(0.0, bi.sin(xi))
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
def log(xr, xi):
    """The natural logarithm: branch cut along the negative real axis (log(-1 +- 0j) is
    0 +- pi j)."""
    return _log_abs(xr, xi), bi.atan2(xi, xr)


@func
def log2(xr, xi):
    re, im = log(xr, xi)
    return re * (1.0 / LN2), im * (1.0 / LN2)


@func
def log10(xr, xi):
    re, im = log(xr, xi)
    return re * (1.0 / math.log(10.0)), im * (1.0 / math.log(10.0))


@func
def sqrt(xr, xi):
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
def power(xr, xi, yr, yi):
    """x**y as numpy computes it."""
    re = _nan(xr)
    im = _nan(xr)
    n = 0
    if yr == 0.0 and yi == 0.0:
        re = 1.0
        im = 0.0
    elif xr == 0.0 and xi == 0.0:
        if yr > 0.0 and yi == 0.0:
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
                re, im = divide(_one(xr), 0.0 * _one(xr), re, im)
    else:
        lr, li = log(xr, xi)
        re, im = exp(lr * yr - li * yi, lr * yi + li * yr)
    return re, im


# name -> (device function, number of complex arguments)
IMPLEMENTATIONS = {
    "divide": (divide, 2), "power": (power, 2), "abs": (abs_, 1), "exp": (exp, 1),
    "log": (log, 1), "log2": (log2, 1), "log10": (log10, 1), "sqrt": (sqrt, 1),
}
