"""`pk.linalg.eigh` and `eigvalsh`: eigenvalues and eigenvectors of symmetric matrices.

Each matrix (its lower triangle, mirrored, as numpy reads it) is shifted by the Gershgorin
bound σ = max(0, max_i(Σ_j≠i |a_ij| - a_ii)) ≥ -λ_min to the positive semidefinite
B = A + σI, whose singular value decomposition is its eigendecomposition: the one-sided Jacobi
sweeps of `svd` orthogonalise the columns of B, the accumulated rotations are the
eigenvectors, and λ_i = ‖B v_i‖ - σ. Eigenvalues are accurate to a small multiple of
n·eps·(‖A‖ + σ), the eigenvectors to that over the gap between eigenvalues. Hermitian
(complex) matrices go the same way, with complex rotations: real eigenvalues, unitary
eigenvectors.
"""

from __future__ import annotations

from typing import NamedTuple

from pykern.autograd.graph import needs_grad
from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg import jacobi
from pykern.linalg.checks import power_of_two_scale, unscaled
from pykern.linalg.inputs import as_batch, compute_dtype, result_dtype, stack_of_matrices
from pykern.linalg import jacobi_kernels as jk
from pykern.tensor.create.creation import fill, tril
from pykern.tensor.elementwise.functions import abs as pk_abs
from pykern.tensor.elementwise.functions import where
from pykern.tensor.core.tensor import Tensor, empty


class EighResult(NamedTuple):
    """What `eigh` returns: A · eigenvectors[..., :, i] = eigenvalues[..., i] ·
    eigenvectors[..., :, i], eigenvalues ascending."""

    eigenvalues: Tensor
    eigenvectors: Tensor


def eigh(x: object, /) -> EighResult:
    """The eigenvalues (ascending, (..., N)) and orthonormal eigenvectors (the columns of
    (..., N, N)) of each symmetric (Hermitian, for complex x) matrix of the stack `x`; only the
    lower triangle is read. f16/bf16 are computed in f32, integers in the default float;
    complex x gives real eigenvalues (f32 for c64, f64 for c128) and unitary eigenvectors.

        w, v = pk.linalg.eigh(a)     # a @ v == v * w
    """
    t = stack_of_matrices(x, "eigh", square=True)
    return differentiable("linalg.eigh", (t,), _eigh, gradients.eigh, complex_ok=True)


def _eigh(t: Tensor) -> EighResult:
    values, vectors = _decompose(t, "eigh", True)
    assert vectors is not None
    out = result_dtype(t.dtype)
    return EighResult(values.astype(out.real_dtype, copy=False),
                      vectors.astype(out, copy=False))


def eigvalsh(x: object, /) -> Tensor:
    """The eigenvalues of each symmetric (Hermitian, for complex x: real results) matrix of the
    stack `x`, ascending: (..., N); only the lower triangle is read."""
    t = stack_of_matrices(x, "eigvalsh", square=True)
    if needs_grad(t, complex_ok=True):  # the eigenvectors carry the gradient back
        return differentiable("linalg.eigvalsh", (t,), lambda a: tuple(_eigh(a)),
                              gradients.eigvalsh, complex_ok=True)[0]
    real = result_dtype(t.dtype).real_dtype
    return _decompose(t, "eigvalsh", False)[0].astype(real, copy=False)


def _decompose(t: Tensor, op: str, vectors: bool) -> tuple[Tensor, Tensor | None]:
    d = compute_dtype(t.dtype, op)
    n = t.shape[-1]
    a = as_batch(t, d)
    batch = a.shape[0]
    vecs = empty((batch, n, n), d) if vectors else None
    if batch == 0 or n == 0:
        values = empty((batch, n), d.real_dtype)
    else:
        values = _jacobi_eigh(a, vecs)
    shape = t.shape[:-2]
    return values.reshape(shape + (n,)), None if vecs is None else vecs.reshape(shape + (n, n))


def _jacobi_eigh(a: Tensor, vecs: Tensor | None) -> Tensor:
    """Eigenvalues of the (B, N, N) batch `a`, the eigenvectors written to `vecs`."""
    batch, n, _ = a.shape
    # each matrix divided by (a power of two near) the largest magnitude of its lower
    # triangle (the part read), so that the sweeps' sums of squares neither underflow nor
    # overflow (as LAPACK scales); a matrix with an inf or nan there gives nan
    scale, finite = power_of_two_scale(tril(pk_abs(a)))
    a = a / scale
    r = jacobi.padded_rows(n)
    w = empty((batch, r, n), a.dtype)
    if r > n:
        fill(w[:, n:, :], 0)
    bounds = empty((batch, n), a.dtype.real_dtype)
    shift = empty((batch,), a.dtype.real_dtype)
    jk.symmetric_rows(a.dtype)[n, batch](a, w, bounds)
    jk.shifted_diagonal(a.dtype)[n, batch](bounds, w, shift)
    vt = jacobi.orthogonalise(w, with_v=vecs is not None)
    short = None if vecs is None else vecs.mT
    values = jacobi.sorted_rows(w, vt, n, shift, False, None, short)
    if vecs is not None:
        vecs[...] = where(finite, vecs, float("nan"))
    return unscaled(values, scale, finite)
