"""The host device's f32 tanh: a pykern function the decomposition pass
(`pykern.passes.decompose`) puts in place of `pk.tanh(x)` on an f32 `x` when the host compiles
a kernel (`pykern.llvm.mathfns.lowers_math`).

The C library's tanhf is a call per element, which LLVM cannot vectorise, and a slow one: a
loop of f32 tanh ran 26x slower than numpy's. This is straight-line code (selects, no
branches), so a kernel's loop over it vectorises, and it is cheaper than tanhf one element at
a time too. It computes in f64 and rounds once to f32, so the result is the correctly rounded
one but within a few times 2**-37 of a tie (where it may be the other neighbour): (e**2a - 1) /
(e**2a + 1) written as t / (t + 2) with t = e**2a - 1 from its Taylor series below 2a = 1
(where e**2a - 1 cancels) and from `exp_of_f64` above; |x| > 10 rounds to +-1 in f32; the sign
copied back (tanh(-0.0) is -0.0). `exp_of_f64`: x = k ln2 + y with |y| <= ln2/2, e**y by its
Taylor polynomial to y**9 (truncation below 2**-37), times 2**k made from its exponent bits.

(f32 exp and log stay the C library's: written this way they vectorise, 1.9x faster in long
loops, but in the short per-row loops of softmax and cross-entropy, which run one element at a
time, they cost twice the C library's.)

Checked against numpy's f64 tanh rounded to f32 (tests/llvm/test_llvm_math.py).
"""

from __future__ import annotations

import math

import pykern as pk
from pykern import ir
from pykern.mathlib.prelude_f64 import LOG2E

LN2 = 0.6931471805599453

# polynomial coefficients, the highest power's first (each evaluated by Horner's scheme)
EXP_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(9, -1, -1))  # e**y, |y| <= ln2/2
EXPM1_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(14, 1, -1))  # (e**z - 1 - z)/z**2


@pk.func
def exp_of_f64(d):
    """e**d in f64 for |d| <= 708 (2**k must be a normal f64; NaN for NaN), to about 2**-37
    relative."""
    kf = pk.floor(d * LOG2E + 0.5)
    y = d - kf * LN2
    p: pk.f64 = EXP_TAYLOR[0]
    for term in pk.static_range(1, len(EXP_TAYLOR)):
        p = p * y + EXP_TAYLOR[term]
    return p * pk.bitcast((pk.i64(kf) + 1023) << 52, pk.f64)


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


IMPLEMENTATIONS: dict[ir.MathFn, object] = {ir.MathFn.TANH: tanh_f32}
