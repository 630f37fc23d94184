"""`qr`: A = Q R by Householder reflections, blocked as LAPACK's geqrf/orgqr.

The factorization works on the transpose X = Aᵀ (a column of A is a row of X). For each panel
of up to `qr_panel.WIDEST` (32) columns, one launch factors the panel and writes the block
reflector I - V T Vᴴ in the form of two factors (`qr_panel`), and the trailing matrix is
updated with two matrix products, X₂ -= (X₂ conj(V)) (conj(T) Vᵀ). Q is then built from the
identity by applying the panels' block reflectors in reverse order, again two products each.
No wait for the device inside; the launches of a shape are recorded on its first call and
replayed after (`pykern.tensor.core.dispatch`).
"""

from __future__ import annotations

from typing import NamedTuple

from pykern.autograd.graph import needs_grad

from pykern.linalg.blocks import block, subtract_product
from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg.checks import finish, matrices, power_of_two_scale
from pykern.linalg.qr_panel import factor_panel, panel_width
from pykern.linalg.qr_small import factor_small, small
from pykern.tensor.core.dispatch import dispatch
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
    qcols = min(m, n) if mode == "reduced" else m
    rrows = min(m, n) if mode == "reduced" else m
    if a.size:
        width = panel_width()
        run = _factor_small if small(m, n) else _factor
        q, r = dispatch(("linalg.qr", mode, width, run is _factor_small), (a,),
                        lambda: run(a, qcols, rrows, width))
    else:
        q = eye(m, qcols, dtype=a.dtype).reshape((1, m, qcols)).broadcast_to((bsz, m, qcols))
        q, r = q.astype(a.dtype, copy=True), empty((bsz, rrows, n), a.dtype)
        if r.size:
            r[...] = 0
    return QRResult(finish(q, mt, (m, qcols)), finish(r, mt, (rrows, n)))


def _factor_small(a: Tensor, qcols: int, rrows: int, width: int) -> tuple[Tensor, Tensor]:
    """(Q, R) as `_factor` gives them, each matrix in one invocation (`qr_small`)."""
    bsz, m, n = a.shape
    scale, _ = power_of_two_scale(pk_abs(a))
    x = a / scale
    q = empty((bsz, m, qcols), a.dtype)
    factor_small(x, q)
    return q, triu(block(x, 0, 0, rrows, n)) * scale


def _factor(a: Tensor, qcols: int, rrows: int, width: int) -> tuple[Tensor, Tensor]:
    """(Q, R) of the (B, m, n) stack `a`, Q with `qcols` columns, R with `rrows` rows, in
    panels of `width` columns."""
    bsz, m, n = a.shape
    k = min(m, n)
    # each matrix divided by a power of two near its largest magnitude (exact), so that the
    # column norms neither underflow nor overflow; R is multiplied back
    scale, _ = power_of_two_scale(pk_abs(a))
    x = empty((bsz, n, m), a.dtype)
    x[...] = (a / scale).mT
    panels = []  # (c0, conj(V), Tᵀ Vᵀ) of each panel
    for c0 in range(0, k, width):
        w = min(width, k - c0)
        vc, left, right = factor_panel(x, c0, w, width)
        panels.append((c0, vc, right))
        if n > c0 + w:
            subtract_product(block(x, c0 + w, c0, n - c0 - w, m - c0), matmul(
                block(x, c0 + w, c0, n - c0 - w, m - c0), vc), left)
    qx = eye(qcols, m, dtype=a.dtype).reshape((1, qcols, m)).broadcast_to((bsz, qcols, m))
    qx = qx.astype(a.dtype, copy=True)  # Qᵀ, built in place
    for c0, vc, right in reversed(panels):
        if qcols > c0:
            view = block(qx, c0, c0, qcols - c0, m - c0)
            subtract_product(view, matmul(view, vc), right)
    q = empty((bsz, m, qcols), a.dtype)
    q[...] = qx.mT
    r = triu(block(x, 0, 0, n, rrows).mT) * scale
    return q, r
