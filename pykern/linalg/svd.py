"""`pk.linalg.svd` and `svdvals`: the singular value decomposition by one-sided (Hestenes)
Jacobi on the columns of each matrix (of its rows where it is wide), which finds small
singular values to high relative accuracy, more than an eigensolver of AᵀA would. Complex
matrices rotate by the same method with complex phases (see `jacobi_kernels`): A = U S Vᴴ with
S real."""

from __future__ import annotations

from typing import NamedTuple

from pykern.autograd.graph import needs_grad
from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg import jacobi
from pykern.linalg.checks import power_of_two_scale, unscaled
from pykern.linalg.inputs import as_batch, compute_dtype, result_dtype, stack_of_matrices
from pykern.tensor.create.creation import zeros
from pykern.tensor.elementwise.functions import abs as pk_abs
from pykern.tensor.elementwise.functions import where
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.reduce.reduction import min as reduce_min
from pykern.tensor.create.creation import eye


class SVDResult(NamedTuple):
    """What `svd` returns: A = U · diag(S) · Vh, S descending."""

    U: Tensor
    S: Tensor
    Vh: Tensor


def svd(x: object, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition of each matrix of the (..., M, N) stack `x`:
    `U` (..., M, M), `S` (..., K) descending, `Vh` (..., N, N) with K = min(M, N), such that
    x = U[..., :, :K] · diag(S) · Vh[..., :K, :]. With `full_matrices=False`, U is (..., M, K)
    and Vh (..., K, N), Vh = Vᴴ. f16/bf16 are computed in f32, integers in the default float;
    complex x gives complex U, Vh and real S (f32 for c64, f64 for c128).

        U, S, Vh = pk.linalg.svd(a, full_matrices=False)
    """
    t = stack_of_matrices(x, "svd")
    if not isinstance(full_matrices, (bool, int)):
        raise TypeError("linalg.svd: full_matrices must be a bool")
    if full_matrices and t.shape[-2] != t.shape[-1] and needs_grad(t, complex_ok=True):
        gradients.refuse("linalg.svd", "for full_matrices=True of a non-square matrix (the "
                         "extra singular vectors are not unique); use full_matrices=False")
    if t.dtype.is_complex and needs_grad(t, complex_ok=True):
        return gradients.svd_complex("linalg.svd", t, lambda a: _svd(a, bool(full_matrices)))
    return differentiable("linalg.svd", (t,), lambda a: _svd(a, bool(full_matrices)),
                          gradients.svd)


def _svd(t: Tensor, full_matrices: bool) -> SVDResult:
    u, s, vh = _decompose(t, "svd", True, full_matrices)
    assert u is not None and vh is not None
    out = result_dtype(t.dtype)
    return SVDResult(u.astype(out, copy=False), s.astype(out.real_dtype, copy=False),
                     vh.astype(out, copy=False))


def svdvals(x: object, /) -> Tensor:
    """The singular values of each matrix of the (..., M, N) stack `x`, descending:
    (..., min(M, N)); real (f32 for c64, f64 for c128) for complex x."""
    t = stack_of_matrices(x, "svdvals")
    if needs_grad(t, complex_ok=True):  # the singular vectors carry the gradient back
        return differentiable("linalg.svdvals", (t,), lambda a: tuple(_svd(a, False)),
                              lambda a, u, s, vh: [None, gradients.svd(a, u, s, vh)[1],
                                                   None], complex_ok=True)[1]
    real = result_dtype(t.dtype).real_dtype
    return _decompose(t, "svdvals", False, False)[1].astype(real, copy=False)


def _decompose(t: Tensor, op: str, vectors: bool, full: bool
               ) -> tuple[Tensor | None, Tensor, Tensor | None]:
    """(U, S, Vh) of the stack `t` in its compute dtype (U, Vh None without `vectors`)."""
    d = compute_dtype(t.dtype, op)
    batch_shape = t.shape[:-2]
    m, n = t.shape[-2:]
    k, length = min(m, n), max(m, n)
    a = as_batch(t, d)
    batch = a.shape[0]
    rows_out = length if full else k
    u = empty((batch, m, rows_out if m >= n else m), d) if vectors else None
    vh = empty((batch, n if m >= n else rows_out, n), d) if vectors else None
    if batch == 0 or k == 0:
        s = empty((batch, k), d.real_dtype)
        if vectors and u is not None and vh is not None:
            _empty_vectors(u, vh)
    else:
        s = _jacobi_svd(a, u, vh, full)
    shape = batch_shape
    return (None if u is None else u.reshape(shape + u.shape[1:]),
            s.reshape(shape + (k,)),
            None if vh is None else vh.reshape(shape + vh.shape[1:]))


def _jacobi_svd(a: Tensor, u: Tensor | None, vh: Tensor | None, full: bool) -> Tensor:
    """S of the (B, M, N) batch `a`, writing U and Vh where given."""
    batch, m, n = a.shape
    k, length = min(m, n), max(m, n)
    r = jacobi.padded_rows(k)
    # each matrix divided by (a power of two near) its largest magnitude, so that the
    # rotations' sums of squares neither overflow nor underflow (as LAPACK scales); a matrix
    # with an inf or nan gives nan
    scale, finite = power_of_two_scale(pk_abs(a))
    w = zeros((batch, r, length), a.dtype)
    scaled = a / scale
    w[:, :k, :] = scaled.mT if m >= n else scaled  # the K vectors of length max(M, N) as rows
    vectors = u is not None and vh is not None
    vt = jacobi.orthogonalise(w, with_v=vectors)
    if not vectors:
        s = jacobi.sorted_rows(w, None, k, None, True, None, None)
        return unscaled(s, scale, finite)
    assert u is not None and vh is not None
    # the long vectors are the columns of U (rows of Vh when A is wide), the short ones the
    # rows of Vh (columns of U)
    long, short = (u.mT, vh) if m >= n else (vh, u.mT)
    s = jacobi.sorted_rows(w, vt, k, None, True, long, short)
    if long.shape[1] > k or _has_zero(s):
        jacobi.complete_rows(s, long, long.shape[1])
    for t in (u, vh):
        t[...] = where(finite, t, float("nan"))
    return unscaled(s, scale, finite)


def _has_zero(s: Tensor) -> bool:
    """Whether any singular value is exactly zero (its vector then needs completing)."""

    return bool(reduce_min(s).item() <= 0)


def _empty_vectors(u: Tensor, vh: Tensor) -> None:
    """U and Vh of matrices with a zero dimension: identities (any orthonormal basis does)."""

    for t in (u, vh):
        if t.size:
            t[...] = eye(t.shape[1], t.shape[2], dtype=t.dtype).broadcast_to(t.shape)
