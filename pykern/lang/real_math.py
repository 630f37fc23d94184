"""Real math functions that no device instruction computes, as device functions of the kernel
language: `pk.log1p`, `pk.expm1`, `pk.asinh`, `pk.acosh`, `pk.atanh` of a real argument call
these (typed at each call, so for f16, f32 and f64 alike); the complex functions of
`pykern.mathlib.complex_functions` use them too.

Each is straight-line code over exp, log and sqrt, accurate where the naive formula cancels:
- log1p: Goldberg's log(u) * x / (u - 1) with u = 1 + x rounded, exact to a few ULP;
- expm1: Kahan's (u - 1) * x / log(u) with u = e^x rounded;
- asinh, acosh, atanh through log1p, and log(x) + log 2 where x * x would overflow.
"""

from __future__ import annotations

import math

from pykern.lang import builtins as bi
from pykern.lang import dtypes as dt
from pykern.lang.func import func

# beyond this, x * x is not needed: asinh(x) = log(2x) to the working precision (f16: below
# 2**8, whose square overflows f16; log(2x) is off by 1 / (4 x**2) relative, 2**-16 at 2**7)
_LARGE = 2.0 ** 28
_LARGE_F16 = 2.0 ** 7
LN2 = math.log(2.0)


@func
def log1p(x):
    """log(1 + x), accurate near 0."""
    u = 1.0 + x
    r = x
    if u != 1.0:
        r = bi.log(u)
        if u - 1.0 != u:  # finite u: Goldberg's correction of the rounding of 1 + x
            r = r * (x / (u - 1.0))
    return r


@func
def expm1(x):
    """e**x - 1, accurate near 0."""
    u = bi.exp(x)
    r = x
    if u != 1.0:
        r = u - 1.0
        if r == -1.0:
            r = -1.0
        elif u - 1.0 != u:  # finite u: Kahan's correction
            r = r * (x / bi.log(u))
    return r


@func
def _large(a):
    """a is beyond where a * a may be computed: then log(2a) is the inverse hyperbolic sine
    and cosine to the working precision."""
    if a.dtype == dt.f16:
        return a > _LARGE_F16
    return a > _LARGE


@func
def asinh(x):
    """The inverse hyperbolic sine."""
    a = abs(x)
    r = a
    if _large(a):
        r = bi.log(a) + LN2
    else:
        r = log1p(a + a * a / (1.0 + bi.sqrt(1.0 + a * a)))
    return bi.copysign(r, x)


@func
def acosh(x):
    """The inverse hyperbolic cosine: nan below 1."""
    r = x
    if _large(x):
        r = bi.log(x) + LN2
    elif x < 1.0:  # the formula need not give nan there (f16's acosh(-88.0) was -inf)
        r = math.nan
    else:
        t = x - 1.0
        r = log1p(t + bi.sqrt(2.0 * t + t * t))
    return r


@func
def atanh(x):
    """The inverse hyperbolic tangent: +-inf at +-1, nan beyond."""
    a = abs(x)
    r = 0.5 * log1p(2.0 * a / (1.0 - a))
    return bi.copysign(r, x)


IMPLEMENTATIONS = {bi.log1p: log1p, bi.expm1: expm1, bi.asinh: asinh, bi.acosh: acosh,
                   bi.atanh: atanh}
