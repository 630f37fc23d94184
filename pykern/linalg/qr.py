"""`qr`: A = Q R by Householder reflections, blocked as LAPACK's geqrf/orgqr.

For each panel of PANEL columns: a kernel factors the panel with one workgroup per matrix
(`qr_panel`), the panel's reflectors are gathered into the compact WY form I - V T Vᴴ, and
the trailing matrix is updated with three matrix products, A₂ -= V (Tᴴ (Vᴴ A₂)) (Vᴴ is Vᵀ
for real dtypes, where no conjugated copy is made). Q is then
built from the identity by applying the panels' block reflectors in reverse order, again by
matrix products.
"""

from __future__ import annotations

from typing import NamedTuple

from pykern.autograd.graph import needs_grad

from pykern.linalg.blocks import PANEL, block, subtract_product
from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg.checks import adjoint, finish, matrices, power_of_two_scale
from pykern.linalg.qr_panel import factor_panel, triangular_factor
from pykern.tensor.create.creation import eye, triu
from pykern.tensor.gemm.matmul import matmul
from pykern.tensor.elementwise.functions import abs as pk_abs
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor, empty


class QRResult(NamedTuple):
    """`qr`'s result: x = Q @ R, Q with orthonormal (complex: unitary) columns, R upper
    triangular."""

    Q: Tensor  # noqa: N815
    R: Tensor  # noqa: N815


def qr(x: object, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorization of each matrix of `x` (..., m, n), k = min(m, n): with
    mode="reduced", Q is (..., m, k) and R (..., k, n); with mode="complete", Q is
    (..., m, m) and R (..., m, n). R's diagonal is real and may be negative (as numpy's).

        q, r = pk.linalg.qr(pk.asarray([[3.0, 1.0], [4.0, 2.0]]))
    """
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    t = as_tensor(x, "qr: x")
    if mode == "complete" and t.ndim >= 2 and t.shape[-2] > t.shape[-1] and \
            needs_grad(t, complex_ok=True):
        gradients.refuse("linalg.qr", "for mode='complete' of a tall matrix (the last columns "
                         "of Q are not unique); use mode='reduced'")
    return differentiable("linalg.qr", (t,), lambda a: _qr(a, mode), gradients.qr,
                          complex_ok=True)


def _qr(x: Tensor, mode: str) -> QRResult:
    mt = matrices(x, "qr")
    a = mt.batch
    bsz, m, n = a.shape
    k = min(m, n)
    taus = empty((bsz, k), a.dtype)
    # each matrix divided by a power of two near its largest magnitude (exact), so that the
    # column norms neither underflow nor overflow; R is multiplied back
    scale = 1.0
    if a.size:
        scale, _ = power_of_two_scale(pk_abs(a))
        a /= scale
    panels = []  # (c0, V, T) of each panel
    if bsz:
        for c0 in range(0, k, PANEL):
            w = min(PANEL, k - c0)
            v = factor_panel(a, taus, c0, w)
            t = triangular_factor(matmul(adjoint(v), v), taus, c0)
            panels.append((c0, v, t))
            if n > c0 + w:
                _apply_block(block(a, c0, c0 + w, m - c0, n - c0 - w), v, adjoint(t))
    qcols = k if mode == "reduced" else m
    q = eye(m, qcols, dtype=a.dtype).reshape((1, m, qcols)).broadcast_to((bsz, m, qcols))
    q = q.astype(a.dtype, copy=True)
    for c0, v, t in reversed(panels):
        if qcols > c0:
            _apply_block(block(q, c0, c0, m - c0, qcols - c0), v, t)
    rrows = k if mode == "reduced" else m
    r = triu(block(a, 0, 0, rrows, n)) * scale
    return QRResult(finish(q, mt, (m, qcols)), finish(r, mt, (rrows, n)))


def _apply_block(c: Tensor, v: Tensor, t: Tensor) -> None:
    """C := (I - V T Vᴴ) C in place (pass Tᴴ to apply the block reflector's adjoint)."""
    subtract_product(c, v, matmul(t, matmul(adjoint(v), c)))
