"""The host device's f32 exp, log and tanh: pykern functions the decomposition pass
(`pykern.passes.decompose`) puts in place of `pk.exp(x)`, `pk.log(x)` and `pk.tanh(x)` on an
f32 `x` when the host compiles a kernel (`pykern.llvm.mathfns.lowers_math`).

The C library's expf, logf and tanhf are a call per element, which LLVM cannot vectorise: a
loop of f32 tanh ran 26x slower than numpy's. These are straight-line code (selects, no
branches), so a kernel's loop over them vectorises. Each computes in f64 and rounds once to
f32, so the result is the correctly rounded one but within a few times 2**-37 of a tie
(where it may be the other neighbour: at most 1 ULP from the exact value, as numpy's are):

- `exp`: x clamped to [-160, 130] (beyond, the f32 result is 0 or inf either way);
  x = k ln2 + y with |y| <= ln2/2, e**y by its Taylor polynomial to y**9 (truncation below
  2**-37), times 2**k made from its exponent bits (k is within f64's normal range).
- `log`: x = 2**e m from the f64's bits (f32 subnormals are normal f64s) with m in
  [sqrt(1/2), sqrt(2)), log m = 2 atanh((m - 1)/(m + 1)) by its series to s**15 (|s| <= 0.172:
  truncation below 2**-41); 0, negatives, inf and NaN by selects.
- `tanh`: (e**2a - 1) / (e**2a + 1) written as t / (t + 2) with t = e**2a - 1 from its Taylor
  series below 2a = 1 (where e**2a - 1 cancels) and from `exp_of_f64` above; |x| > 10 rounds
  to +-1 in f32; the sign copied back (tanh(-0.0) is -0.0).

Checked against numpy's f64 functions rounded to f32 over a million arguments each
(tests/llvm/test_llvm_math.py).
"""

from __future__ import annotations

import math

import pykern as pk
from pykern import ir

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
SQRT2 = 1.4142135623730951
MANTISSA_BITS = (1 << 52) - 1  # an f64's fraction field
ONE_BITS = 1023 << 52  # the exponent field of 1.0

# polynomial coefficients, the highest power's first (each evaluated by Horner's scheme)
EXP_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(9, -1, -1))  # e**y, |y| <= ln2/2
EXPM1_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(14, 1, -1))  # (e**z - 1 - z)/z**2
ATANH_SERIES = tuple(1.0 / (2 * k + 1) for k in range(7, -1, -1))  # atanh(s)/s in s**2


@pk.func
def exp_of_f64(d):
    """e**d in f64 for d in [-160, 130] (NaN for NaN), to about 2**-37 relative."""
    kf = pk.floor(d * LOG2E + 0.5)
    y = d - kf * LN2
    p: pk.f64 = EXP_TAYLOR[0]
    for term in pk.static_range(1, len(EXP_TAYLOR)):
        p = p * y + EXP_TAYLOR[term]
    return p * pk.bitcast((pk.i64(kf) + 1023) << 52, pk.f64)


@pk.func
def exp_f32(x):
    """e**x for an f32 x (0 below -103.97, inf above 88.72, NaN for NaN)."""
    d = pk.f64(x)
    d = pk.select(d < -160.0, -160.0, pk.select(d > 130.0, 130.0, d))  # NaN stays NaN
    return pk.f32(exp_of_f64(d))


@pk.func
def log_f32(x):
    """The natural logarithm of an f32 x (NaN below 0 and for NaN, -inf at 0, inf at inf)."""
    d = pk.f64(x)
    bits = pk.bitcast(d, pk.i64)
    m = pk.bitcast((bits & MANTISSA_BITS) | ONE_BITS, pk.f64)  # in [1, 2)
    e = pk.f64(((bits >> 52) & 2047) - 1023)
    big = m > SQRT2
    m = pk.select(big, m * 0.5, m)
    e = pk.select(big, e + 1.0, e)
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    t: pk.f64 = ATANH_SERIES[0]
    for term in pk.static_range(1, len(ATANH_SERIES)):
        t = t * s2 + ATANH_SERIES[term]
    r = e * LN2 + 2.0 * s * t
    r = pk.select(d > 0.0, r, pk.select(d == 0.0, -math.inf, math.nan))
    return pk.f32(pk.select(d == math.inf, math.inf, r))


@pk.func
def tanh_f32(x):
    """The hyperbolic tangent of an f32 x."""
    d = pk.f64(x)
    a = pk.select(abs(d) > 10.0, 10.0, abs(d))  # NaN stays NaN
    z = 2.0 * a
    p: pk.f64 = EXPM1_TAYLOR[0]
    for term in pk.static_range(1, len(EXPM1_TAYLOR)):
        p = p * z + EXPM1_TAYLOR[term]
    t = pk.select(z < 1.0, z + z * z * p, exp_of_f64(z) - 1.0)
    return pk.f32(pk.copysign(t / (t + 2.0), d))


IMPLEMENTATIONS: dict[ir.MathFn, object] = {
    ir.MathFn.EXP: exp_f32, ir.MathFn.LOG: log_f32, ir.MathFn.TANH: tanh_f32,
}
