"""The orthogonal polynomials of `torch.special` (Chebyshev T, U, V, W and their shifted forms,
Hermite H and He, Laguerre, Legendre) of x and a degree n per element: the three-term
recurrence run to the largest n, each element keeping the value at its own n, in the output's
dtype (as PyTorch's CPU kernels round each step), with PyTorch's special cases (n < 0, |x| = 1,
the trigonometric forms of Chebyshev polynomials of high degree)."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

import pykern as pk
from pykern.torch.args import operand, write

Step = Callable[[pk.Tensor, pk.Tensor, pk.Tensor, int], pk.Tensor]


def _recurrence(x: pk.Tensor, n: pk.Tensor, p0: pk.Tensor, p1: pk.Tensor,
                step: Step) -> pk.Tensor:
    """P_n(x) per element: p0 = P_0, p1 = P_1, then P_j = step(x, P_{j-1}, P_{j-2}, j) for
    j = 2, 3, ... up to the largest n."""
    top = int(pk.max(n).item()) if n.size else 0
    p, q = p0, p1
    for j in range(2, top + 1):
        r = step(x, q, p, j)
        active = pk.less_equal(float(j), n)
        p, q = pk.where(active, q, p), pk.where(active, r, q)
    out = pk.where(pk.equal(n, 0.0), p0, q)
    return pk.where(pk.less(n, 0.0), 0.0, out)


def _operands(x: object, n: object, out: torch.Tensor) -> tuple[pk.Tensor, pk.Tensor]:
    shape = tuple(out.shape)
    d = out.dtype
    px = operand(x, d)
    pn = operand(n, d)
    px = px.broadcast_to(shape) if isinstance(px, pk.Tensor) else \
        pk.full(shape, px, dtype=pk.f64 if d == torch.float64 else pk.f32)
    pn = pn.broadcast_to(shape) if isinstance(pn, pk.Tensor) else pk.full(shape, pn,
                                                                         dtype=px.dtype)
    return px, pk.trunc(pn)  # PyTorch converts n to an integer


def _ones(x: pk.Tensor) -> pk.Tensor:
    return pk.full(x.shape, 1.0, dtype=x.dtype)


def _chebyshev(x: pk.Tensor, n: pk.Tensor, kind: str) -> pk.Tensor:
    two_x = pk.add(x, x)
    first = {"t": x, "u": two_x, "v": pk.subtract(two_x, 1.0), "w": pk.add(two_x, 1.0)}[kind]
    r = _recurrence(x, n, _ones(x), first,
                    lambda x, q, p, j: pk.subtract(pk.multiply(pk.add(x, x), q), p))
    # the trigonometric forms in float64 where the device has it: Vulkan allows float32 acos
    # 4096 ULP, more than PyTorch's CPU result differs by
    narrow = x.dtype
    if x.dtype == pk.f32 and x.device.features.fp64:
        x, n = x.astype(pk.f64), n.astype(pk.f64)
    theta = pk.acos(pk.where(pk.less(pk.abs(x), 1.0), x, 0.0))
    odd = pk.equal(pk.remainder(n, 2.0), 1.0)
    if kind == "t":
        trig, limit = pk.cos(pk.multiply(n, theta)), 6
        at_one = pk.where(pk.logical_or(pk.greater(x, 0), pk.logical_not(odd)), 1.0, -1.0)
    elif kind == "u":
        s = pk.sin(theta)
        trig = pk.where(pk.not_equal(s, 0.0),
                        pk.divide(pk.sin(pk.multiply(pk.add(n, 1.0), theta)), s),
                        pk.divide(pk.multiply(pk.add(n, 1.0),
                                              pk.cos(pk.multiply(pk.add(n, 1.0), theta))), x))
        limit = 8
        at_one = pk.where(pk.logical_or(pk.greater(x, 0), pk.logical_not(odd)),
                          pk.add(n, 1.0), pk.negative(pk.add(n, 1.0)))
    elif kind == "v":
        half = pk.divide(theta, 2.0)
        edge = pk.where(odd, pk.negative(pk.add(pk.add(n, n), 1.0)), pk.add(pk.add(n, n), 1.0))
        trig = pk.where(pk.not_equal(pk.sin(half), 1.0),
                        pk.divide(pk.cos(pk.multiply(pk.add(n, 0.5), theta)), pk.cos(half)),
                        edge)
        limit = 8
        at_one = pk.where(pk.greater(x, 0), 1.0, edge)
    else:
        half = pk.divide(theta, 2.0)
        edge = pk.where(pk.greater(x, 0), pk.add(pk.add(n, n), 1.0),
                        pk.where(odd, -1.0, 1.0))
        trig = pk.where(pk.not_equal(pk.cos(half), 1.0),
                        pk.divide(pk.sin(pk.multiply(pk.add(n, 0.5), theta)), pk.sin(half)),
                        edge)
        limit = 8
        at_one = edge
    trig, at_one = trig.astype(narrow), pk.asarray(at_one).astype(narrow)
    x, n = x.astype(narrow), n.astype(narrow)
    r = pk.where(pk.logical_and(pk.greater(n, float(limit)), pk.less(pk.abs(x), 1.0)), trig, r)
    r = pk.where(pk.equal(pk.abs(x), 1.0), at_one, r)
    return pk.where(pk.less(n, 0.0), 0.0, r)


def chebyshev(kind: str, shifted: bool = False) -> Callable[..., torch.Tensor]:
    """`special_[shifted_]chebyshev_polynomial_<kind>.out` (and the scalar overloads); the
    shifted polynomial of x is the polynomial of 2x - 1."""
    def impl(x: object, n: object, *, out: torch.Tensor) -> torch.Tensor:
        px, pn = _operands(x, n, out)
        if shifted:
            px = pk.subtract(pk.add(px, px), 1.0)
        return write(out, _chebyshev(px, pn, kind))
    return impl


def hermite_h(x: object, n: object, *, out: torch.Tensor) -> torch.Tensor:
    """`special_hermite_polynomial_h.out`: H_j = 2x H_{j-1} - 2(j-1) H_{j-2} (NaN past
    PyTorch's limit on n)."""
    px, pn = _operands(x, n, out)
    limit = _hermite_limit(out.dtype)
    r = _recurrence(px, pk.minimum(pn, limit), _ones(px), pk.add(px, px),
                    lambda x, q, p, j: pk.subtract(pk.multiply(pk.add(x, x), q),
                                                   pk.multiply(float(2 * (j - 1)), p)))
    return write(out, pk.where(pk.greater(pn, limit), math.nan, r))


def _hermite_limit(dtype: torch.dtype) -> float:
    return 128.0 if dtype != torch.float64 else 512.0


def hermite_he(x: object, n: object, *, out: torch.Tensor) -> torch.Tensor:
    """`special_hermite_polynomial_he.out`: He_j = x He_{j-1} - (j-1) He_{j-2}."""
    px, pn = _operands(x, n, out)
    r = _recurrence(px, pk.minimum(pn, _hermite_limit(out.dtype)), _ones(px), px,
                    lambda x, q, p, j: pk.subtract(pk.multiply(x, q),
                                                   pk.multiply(float(j - 1), p)))
    return write(out, pk.where(pk.greater(pn, _hermite_limit(out.dtype)), math.nan, r))


def laguerre(x: object, n: object, *, out: torch.Tensor) -> torch.Tensor:
    """`special_laguerre_polynomial_l.out`: L_{k+1} = ((2k + 1 - x) L_k - k L_{k-1})/(k+1);
    1 at x = 0."""
    px, pn = _operands(x, n, out)
    r = _recurrence(px, pn, _ones(px), pk.subtract(1.0, px),
                    lambda x, q, p, j: pk.divide(pk.subtract(
                        pk.multiply(pk.add(float(2 * j - 2), pk.subtract(1.0, x)), q),
                        pk.multiply(float(j - 1), p)), float(j)))
    r = pk.where(pk.logical_and(pk.equal(px, 0.0), pk.greater_equal(pn, 0.0)), 1.0, r)
    return write(out, r)


def legendre(x: object, n: object, *, out: torch.Tensor) -> torch.Tensor:
    """`special_legendre_polynomial_p.out`: P_{k+1} = ((2k + 1) x P_k - k P_{k-1})/(k+1)."""
    px, pn = _operands(x, n, out)
    r = _recurrence(px, pn, _ones(px), px,
                    lambda x, q, p, j: pk.divide(pk.subtract(
                        pk.multiply(pk.multiply(float(2 * j - 1), x), q),
                        pk.multiply(float(j - 1), p)), float(j)))
    odd = pk.equal(pk.remainder(pn, 2.0), 1.0)
    at_one = pk.where(pk.logical_or(pk.greater(px, 0), pk.logical_not(odd)), 1.0, -1.0)
    r = pk.where(pk.logical_and(pk.equal(pk.abs(px), 1.0), pk.greater_equal(pn, 0.0)),
                 at_one, r)
    return write(out, r)
