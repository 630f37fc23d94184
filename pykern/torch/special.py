"""Special functions (`torch.special` and kin) composed from pykern's elementwise ops, in
float64 where the device has it (so that the series, recurrences and continued fractions below
keep float32 results exact to the last bits), else in float32.

- erfc from 1 - erf near 0 and the Laplace continued fraction beyond; erfcx alike;
- erfinv, ndtri by Newton's method on erfc from Winitzki's approximation;
- lgamma, digamma by the recurrence up to 10 and Stirling's (de Moivre's) series, with the
  reflection formula below 0; polygamma and the Hurwitz zeta by Euler–Maclaurin summation;
- i0, i1 (and their exponentially scaled forms) by their power series, asymptotic beyond 40;
- the orthogonal polynomials by their three-term recurrences, with PyTorch's special cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import pykern as pk
from pykern.torch.args import operand, write

Fn = Callable[..., pk.Tensor]
SQRT_PI = math.sqrt(math.pi)


def _work_dtype(t: torch.Tensor) -> torch.dtype:
    """float64 where the device has it, else float32."""
    p = operand(t)
    fp64 = getattr(p, "device", None) is not None and p.device.features.fp64  # type: ignore
    return torch.float64 if fp64 else torch.float32


def unary(fn: Fn) -> Callable[..., torch.Tensor]:
    """`special_<fn>.out(self, *, out)` computed in the work dtype."""
    def impl(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
        return write(out, fn(operand(self, _work_dtype(self))))
    return impl


def binary(fn: Fn) -> Callable[..., torch.Tensor]:
    """`<fn>.out(self, other, *, out)` (either may be a number), in the work dtype."""
    def impl(self: object, other: object, *, out: torch.Tensor) -> torch.Tensor:
        d = _work_dtype(out)
        return write(out, fn(operand(self, d), operand(other, d)))
    return impl


# ---------------------------------------------------------------- error functions

CF_TERMS = 60  # continued-fraction depth: float64-exact from x = 4 on


def _erfc_tail(x: pk.Tensor) -> pk.Tensor:
    """√π · e^(x²) · erfc(x) for x ≥ 4: the Laplace continued fraction
    1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), evaluated from the bottom."""
    t = x
    for k in range(CF_TERMS, 0, -1):
        t = pk.add(x, pk.divide(k / 2.0, t))
    return pk.divide(1.0, t)


def erfc(x: pk.Tensor) -> pk.Tensor:
    """1 - erf(x), accurate where it is tiny (large x)."""
    a = pk.abs(x)
    big = pk.greater_equal(a, 4.0)
    safe = pk.where(big, a, 4.0)
    tail = pk.divide(pk.multiply(pk.exp(pk.negative(pk.multiply(safe, safe))),
                                 _erfc_tail(safe)), SQRT_PI)
    positive = pk.where(big, tail, pk.subtract(1.0, pk.erf(a)))
    r = pk.where(pk.less(x, 0), pk.subtract(2.0, positive), positive)
    return pk.where(pk.isnan(x), x, r)


def erfcx(x: pk.Tensor) -> pk.Tensor:
    """e^(x²) · erfc(x), without overflow for large x."""
    a = pk.abs(x)
    big = pk.greater_equal(a, 4.0)
    safe = pk.where(big, a, 4.0)
    tail = pk.divide(_erfc_tail(safe), SQRT_PI)
    near = pk.multiply(pk.exp(pk.multiply(a, a)), pk.subtract(1.0, pk.erf(a)))
    positive = pk.where(big, tail, near)
    r = pk.where(pk.less(x, 0),
                 pk.subtract(pk.multiply(2.0, pk.exp(pk.multiply(x, x))), positive), positive)
    return pk.where(pk.isnan(x), x, r)


def _erfc_inverse(z: pk.Tensor) -> pk.Tensor:
    """t ≥ 0 with erfc(t) = z, for z in (0, 1]: Newton's method from Winitzki's
    approximation of erfinv(1 - z)."""
    y = pk.subtract(1.0, z)
    a = 0.147
    ln = pk.log(pk.multiply(z, pk.subtract(2.0, z)))  # log(1 - y²)
    b = pk.add(2.0 / (math.pi * a), pk.multiply(ln, 0.5))
    t = pk.sqrt(pk.maximum(pk.subtract(pk.sqrt(pk.subtract(pk.multiply(b, b),
                                                          pk.divide(ln, a))), b), 0.0))
    t = pk.where(pk.equal(y, 0), 0.0, t)
    for _ in range(6):
        slope = pk.multiply(-2.0 / SQRT_PI, pk.exp(pk.negative(pk.multiply(t, t))))
        step = pk.divide(pk.subtract(erfc(t), z), slope)
        t = pk.where(pk.equal(slope, 0), t, pk.subtract(t, step))
    return t


def erfinv(y: pk.Tensor) -> pk.Tensor:
    """x with erf(x) = y (±inf at ±1, NaN outside [-1, 1])."""
    a = pk.abs(y)
    inside = pk.less(a, 1.0)
    t = _erfc_inverse(pk.where(inside, pk.subtract(1.0, a), 1.0))
    r = pk.where(pk.less(y, 0), pk.negative(t), t)
    r = pk.where(pk.equal(a, 1.0), pk.multiply(y, math.inf), r)
    return pk.where(pk.logical_or(pk.greater(a, 1.0), pk.isnan(y)), math.nan, r)


def ndtri(p: pk.Tensor) -> pk.Tensor:
    """The standard normal quantile: x with Φ(x) = p."""
    low = pk.less(p, 0.5)
    z = pk.multiply(2.0, pk.where(low, p, pk.subtract(1.0, p)))  # erfc(|x| / √2)
    inside = pk.logical_and(pk.greater(z, 0.0), pk.less_equal(z, 1.0))
    t = pk.multiply(math.sqrt(2.0), _erfc_inverse(pk.where(inside, z, 1.0)))
    r = pk.where(low, pk.negative(t), t)
    r = pk.where(pk.equal(p, 0.0), -math.inf, pk.where(pk.equal(p, 1.0), math.inf, r))
    bad = pk.logical_or(pk.logical_or(pk.less(p, 0.0), pk.greater(p, 1.0)), pk.isnan(p))
    return pk.where(bad, math.nan, r)


# ---------------------------------------------------------------- gamma functions

SHIFT = 10.0  # recurrences move the argument to at least this before the asymptotic series


def _shifted(x: pk.Tensor, accumulate: Callable[[pk.Tensor, pk.Tensor, pk.Tensor],
                                                pk.Tensor]) -> tuple[pk.Tensor, pk.Tensor]:
    """(z ≥ SHIFT reached from x > 0 by steps of 1, the accumulated terms of the steps)."""
    z = x
    acc = pk.zeros(x.shape, dtype=x.dtype)
    for _ in range(int(SHIFT)):
        step = pk.less(z, SHIFT)
        acc = accumulate(acc, z, step)
        z = pk.where(step, pk.add(z, 1.0), z)
    return z, acc


def _lgamma_positive(x: pk.Tensor) -> pk.Tensor:
    z, logs = _shifted(x, lambda acc, z, step: pk.add(acc, pk.where(step, pk.log(z), 0.0)))
    w = pk.divide(1.0, pk.multiply(z, z))
    series = pk.divide(pk.add(1 / 12, pk.multiply(w, pk.add(-1 / 360, pk.multiply(
        w, pk.add(1 / 1260, pk.multiply(w, pk.add(-1 / 1680, pk.multiply(w, 1 / 1188)))))))),
        z)
    stirling = pk.add(pk.subtract(pk.multiply(pk.subtract(z, 0.5), pk.log(z)), z),
                      pk.add(0.5 * math.log(2 * math.pi), series))
    return pk.subtract(stirling, logs)


def lgamma(x: pk.Tensor) -> pk.Tensor:
    """log |Γ(x)|: inf at 0 and the negative integers (and at ±inf)."""
    pos = pk.greater(x, 0.0)
    safe = pk.where(pos, x, pk.subtract(1.0, x))  # reflection: Γ(x)Γ(1-x) = π/sin(πx)
    g = _lgamma_positive(pk.where(pk.isinf(safe), 1.0, safe))
    sin = pk.abs(pk.sin(pk.multiply(math.pi, pk.subtract(x, pk.floor(x)))))
    reflected = pk.subtract(pk.subtract(math.log(math.pi), pk.log(sin)), g)
    r = pk.where(pos, g, reflected)
    pole = pk.logical_and(pk.less_equal(x, 0.0), pk.equal(x, pk.floor(x)))
    r = pk.where(pk.logical_or(pole, pk.isinf(x)), math.inf, r)
    return pk.where(pk.isnan(x), x, r)


def _digamma_positive(x: pk.Tensor) -> pk.Tensor:
    z, inv = _shifted(x, lambda acc, z, step: pk.add(acc, pk.where(step, pk.divide(1.0, z),
                                                                   0.0)))
    w = pk.divide(1.0, pk.multiply(z, z))
    series = pk.multiply(w, pk.add(1 / 12, pk.multiply(w, pk.add(-1 / 120, pk.multiply(
        w, pk.add(1 / 252, pk.multiply(w, pk.add(-1 / 240, pk.multiply(w, 1 / 132)))))))))
    psi = pk.subtract(pk.subtract(pk.log(z), pk.divide(0.5, z)), series)
    return pk.subtract(psi, inv)


def digamma(x: pk.Tensor) -> pk.Tensor:
    """ψ(x), the derivative of log Γ: -inf at +0 (+inf at -0), NaN at negative integers."""
    pos = pk.greater(x, 0.0)
    g = _digamma_positive(pk.where(pos, x, pk.where(pk.isinf(x), 2.0, pk.subtract(1.0, x))))
    frac = pk.subtract(x, pk.floor(x))
    cot = pk.divide(math.pi, pk.tan(pk.multiply(math.pi, frac)))
    r = pk.where(pos, g, pk.subtract(g, cot))  # ψ(1 - x) - π cot(πx)
    r = pk.where(pk.equal(x, 0.0), pk.copysign(math.inf, pk.negative(x)), r)
    negative_int = pk.logical_and(pk.less(x, 0.0), pk.equal(frac, 0.0))
    r = pk.where(negative_int, math.nan, r)
    r = pk.where(pk.equal(x, math.inf), math.inf, r)
    return pk.where(pk.logical_or(pk.isnan(x), pk.equal(x, -math.inf)), math.nan, r)


# Bernoulli numbers B2, B4, ..., B12 over (2j)!: the Euler–Maclaurin tail of ζ(s, q)
_EM = [(1 / 6) / 2, (-1 / 30) / 24, (1 / 42) / 720, (-1 / 30) / 40320, (5 / 66) / 3628800,
       (-691 / 2730) / 479001600]
ZETA_TERMS = 12


def zeta(s: pk.Tensor, q: pk.Tensor) -> pk.Tensor:
    """The Hurwitz zeta function Σ (q + k)^-s: inf at s = 1 or q a non-positive integer, NaN
    for s < 1 or a negative q with non-integer s (Cephes' conventions, as PyTorch)."""
    total = pk.zeros(pk.add(s, q).shape, dtype=s.dtype)
    for k in range(ZETA_TERMS):
        total = pk.add(total, pk.pow(pk.add(q, float(k)), pk.negative(s)))
    a = pk.add(q, float(ZETA_TERMS))
    total = pk.add(total, pk.divide(pk.pow(a, pk.subtract(1.0, s)), pk.subtract(s, 1.0)))
    total = pk.add(total, pk.multiply(0.5, pk.pow(a, pk.negative(s))))
    rising = s  # s (s+1) ... (s + 2j - 2)
    power = pk.pow(a, pk.negative(pk.add(s, 1.0)))  # a^-(s + 2j - 1)
    inv_a2 = pk.divide(1.0, pk.multiply(a, a))
    for j, b in enumerate(_EM):
        if j:
            rising = pk.multiply(rising, pk.multiply(pk.add(s, 2.0 * j - 1),
                                                     pk.add(s, 2.0 * j)))
            power = pk.multiply(power, inv_a2)
        total = pk.add(total, pk.multiply(b, pk.multiply(rising, power)))
    # the cases in Cephes' order of precedence, the first applied last
    q_int = pk.equal(q, pk.floor(q))
    r = pk.where(pk.logical_and(pk.less_equal(q, 0.0), q_int), math.inf, total)
    s_frac = pk.not_equal(s, pk.floor(s))
    r = pk.where(pk.logical_and(pk.less(q, 0.0), pk.logical_and(pk.logical_not(q_int), s_frac)),
                 math.nan, r)
    r = pk.where(pk.less(s, 1.0), math.nan, r)
    r = pk.where(pk.equal(s, 1.0), math.inf, r)
    return pk.where(pk.logical_or(pk.isnan(s), pk.isnan(q)), math.nan, r)


def polygamma_out(n: int, self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """`polygamma.out`: the n-th derivative of digamma, (-1)^(n+1) n! ζ(n + 1, x)."""
    x = operand(self, _work_dtype(out))
    if n == 0:
        return write(out, digamma(x))  # type: ignore[arg-type]
    factor = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0))
    s = pk.full(x.shape, float(n + 1), dtype=x.dtype)  # type: ignore[union-attr]
    return write(out, pk.multiply(factor, zeta(s, x)))  # type: ignore[arg-type]


def mvlgamma_out(self: torch.Tensor, p: int, *, out: torch.Tensor) -> torch.Tensor:
    """`mvlgamma.out`: the multivariate log-gamma, p(p-1)/4 log π + Σ lgamma(x - j/2)."""
    x = operand(self, _work_dtype(out))
    total = pk.full(x.shape, p * (p - 1) / 4 * math.log(math.pi), dtype=x.dtype)  # type: ignore
    for j in range(p):
        total = pk.add(total, lgamma(pk.subtract(x, j / 2)))  # type: ignore[arg-type]
    return write(out, total)


# ---------------------------------------------------------------- modified Bessel functions

SERIES_TERMS = 70  # power-series terms: float64-exact for |x| up to ASYMPTOTIC
ASYMPTOTIC = 40.0


def _bessel_i(x: pk.Tensor, order: int, scaled: bool) -> pk.Tensor:
    """I0 or I1 of x (times e^-|x| when scaled): the power series Σ (x/2)^(2k+ν) / (k!(k+ν)!)
    up to ASYMPTOTIC, Hankel's asymptotic expansion beyond."""
    a = pk.abs(x)
    small = pk.less(a, ASYMPTOTIC)
    xs = pk.where(small, a, 1.0)
    q = pk.multiply(pk.multiply(xs, xs), 0.25)
    term = pk.full(x.shape, 1.0, dtype=x.dtype) if order == 0 else pk.multiply(xs, 0.5)
    total = term
    for k in range(1, SERIES_TERMS):
        term = pk.multiply(term, pk.divide(q, float(k * (k + order))))
        total = pk.add(total, term)
    if scaled:
        total = pk.multiply(total, pk.exp(pk.negative(xs)))
    xl = pk.where(small, ASYMPTOTIC, a)
    mu = 4.0 * order * order
    coefficient, series, inv = 1.0, pk.full(x.shape, 1.0, dtype=x.dtype), pk.divide(1.0, xl)
    power = pk.full(x.shape, 1.0, dtype=x.dtype)
    for k in range(1, 12):
        coefficient *= -(mu - (2 * k - 1) ** 2) / (k * 8.0)
        power = pk.multiply(power, inv)
        series = pk.add(series, pk.multiply(coefficient, power))
    large = pk.divide(series, pk.sqrt(pk.multiply(2 * math.pi, xl)))
    if not scaled:
        large = pk.multiply(large, pk.exp(xl))
    r = pk.where(small, total, large)
    if order == 1:
        r = pk.where(pk.less(x, 0), pk.negative(r), r)
    return pk.where(pk.isnan(x), x, r)


def i0(x: pk.Tensor) -> pk.Tensor:
    """The modified Bessel function of the first kind, order 0."""
    return _bessel_i(x, 0, False)


def i0e(x: pk.Tensor) -> pk.Tensor:
    """e^-|x| I0(x)."""
    return _bessel_i(x, 0, True)


def i1(x: pk.Tensor) -> pk.Tensor:
    """The modified Bessel function of the first kind, order 1."""
    return _bessel_i(x, 1, False)


def i1e(x: pk.Tensor) -> pk.Tensor:
    """e^-|x| I1(x)."""
    return _bessel_i(x, 1, True)


def spherical_bessel_j0(x: pk.Tensor) -> pk.Tensor:
    """sin(x) / x, 1 at 0."""
    zero = pk.equal(x, 0.0)
    r = pk.divide(pk.sin(x), pk.where(zero, 1.0, x))
    r = pk.where(zero, 1.0, r)
    return pk.where(pk.isinf(x), 0.0, r)
