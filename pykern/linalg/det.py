"""`det` and `slogdet` from the LU factorization: the product of U's diagonal, its sign
flipped once per row interchange. For complex matrices the sign is the product of the
diagonal's phases u/|u|, a complex number of modulus 1 (numpy's), and logabsdet is real. A
singular matrix gives det 0 and (sign 0, logabsdet -inf), as numpy's."""

import functools
import math
from typing import NamedTuple

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg.checks import finish, matrices
from pykern.linalg.lu import lu_factor, panel_width, small
from pykern.tensor.core.dispatch import dispatch
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor, empty


class SlogdetResult(NamedTuple):
    """`slogdet`'s result: det = sign · exp(logabsdet)."""

    sign: Tensor
    logabsdet: Tensor


def det(x: object, /) -> Tensor:
    """The determinant of each square matrix of `x` (..., n, n), shape x.shape[:-2].

        pk.linalg.det(pk.asarray([[1.0, 2.0], [3.0, 4.0]]))   # -2.0
    """
    t = as_tensor(x, "det: x")
    return differentiable("linalg.det", (t,), lambda a: _determinants("det", a)[0],
                          gradients.det, complex_ok=True)


def slogdet(x: object, /) -> SlogdetResult:
    """The sign (-1, 0 or 1; for complex `x` a complex number of modulus 1, or 0) and the
    natural log of the absolute value of the determinant of each square matrix of `x` (real);
    for determinants too large or small for the dtype.

        sign, logabsdet = pk.linalg.slogdet(pk.asarray([[2.0, 0.0], [0.0, 3.0]]))
    """
    t = as_tensor(x, "slogdet: x")
    return differentiable("linalg.slogdet", (t,), _slogdet, gradients.slogdet, complex_ok=True)


def _slogdet(x: Tensor) -> SlogdetResult:
    _, sign, logabs = _determinants("slogdet", x)
    return SlogdetResult(sign, logabs)


def _determinants(op: str, x: object) -> tuple[Tensor, Tensor, Tensor]:
    m = matrices(x, op, square=True)
    a = m.batch
    key = ("linalg.det", small(a.shape[1]), panel_width(a.dtype))
    det, sign, logabs = dispatch(key, (a,), lambda: _from_factors(a))
    return (finish(det, m, ()), finish(sign, m, ()),
            finish(logabs, m, (), m.result.real_dtype))


def _from_factors(a: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(det, sign, logabsdet) of the (B, n, n) stack `a`, through its LU factors."""
    f = lu_factor(a)
    bsz = a.shape[0]
    outs = [empty((bsz,), d) for d in (a.dtype, a.dtype, a.dtype.real_dtype)]
    if bsz:
        _det_kernel(a.dtype)[bsz](f.lu, f.pivots, *outs)
    return outs[0], outs[1], outs[2]


@functools.lru_cache(maxsize=None)
def _det_kernel(dtype: DType) -> pk.Kernel:
    DT = dtype  # noqa: N806
    RT = dtype.real_dtype  # noqa: N806
    COMPLEX = dtype.is_complex  # noqa: N806

    @pk.kernel
    def linalg_det(lu: dtype[:, :, :], pivots: pk.i32[:, :], det: dtype[:], sign: dtype[:],
                   logabs: RT[:]):
        b = pk.global_id(0)
        p: DT = 1.0
        parity: RT = 1.0  # -1 for an odd number of row interchanges
        s: DT = 1.0
        total: RT = 0.0
        singular = False
        for k in range(lu.shape[2]):
            u = lu[b, k, k]
            if pivots[b, k] != k:
                parity = -parity
            if COMPLEX:
                if u != 0:
                    s = s * (u / abs(u))
            elif u < 0:
                s = -s
            if u == 0:
                singular = True  # not p == 0 at the end: p may underflow
            p = p * u
            total += pk.log(abs(u))
        if singular:  # det 0, as numpy's and as sign · exp(logabsdet) says, also where
            p = DT(0.0)  # another pivot is inf or nan (the product would be inf · 0, nan)
            s = DT(0.0)
            parity = 1.0  # +0, as numpy's
            total = -math.inf
        det[b] = parity * p
        sign[b] = parity * s
        logabs[b] = total

    return linalg_det
