"""`pk.linalg.eigh` and `eigvalsh`: eigenvalues and eigenvectors of symmetric matrices.

Each matrix (its lower triangle, mirrored, as numpy reads it) is shifted by a Gershgorin bound
σ ≥ -λ_min to the positive semidefinite B = A + σI, whose singular value decomposition is its
eigendecomposition: the one-sided Jacobi sweeps of `svd` orthogonalise the columns of B, the
accumulated rotations are the eigenvectors, and λ_i = ‖B v_i‖ - σ. Eigenvalues are accurate to
a small multiple of eps·(‖A‖ + σ), the eigenvectors to that over the gap between eigenvalues.
"""

from __future__ import annotations

from typing import NamedTuple

from pykern.linalg import jacobi
from pykern.linalg.inputs import as_batch, compute_dtype, result_dtype, stack_of_matrices
from pykern.tensor.creation import tril, zeros
from pykern.tensor.elementwise import abs as elementwise_abs
from pykern.tensor.elementwise import maximum
from pykern.tensor.reduction import max as reduce_max
from pykern.tensor.reduction import sum as reduce_sum
from pykern.tensor.strided import view
from pykern.tensor.tensor import Tensor, empty


class EighResult(NamedTuple):
    """What `eigh` returns: A · eigenvectors[..., :, i] = eigenvalues[..., i] ·
    eigenvectors[..., :, i], eigenvalues ascending."""

    eigenvalues: Tensor
    eigenvectors: Tensor


def eigh(x: object, /) -> EighResult:
    """The eigenvalues (ascending, (..., N)) and orthonormal eigenvectors (the columns of
    (..., N, N)) of each symmetric matrix of the stack `x`; only the lower triangle is read.
    f16/bf16 are computed in f32, integers in the default float.

        w, v = pk.linalg.eigh(a)     # a @ v == v * w
    """
    t = stack_of_matrices(x, "eigh", square=True)
    values, vectors = _decompose(t, "eigh", True)
    assert vectors is not None
    out = result_dtype(t.dtype)
    return EighResult(values.astype(out, copy=False), vectors.astype(out, copy=False))


def eigvalsh(x: object, /) -> Tensor:
    """The eigenvalues of each symmetric matrix of the stack `x`, ascending: (..., N)."""
    t = stack_of_matrices(x, "eigvalsh", square=True)
    return _decompose(t, "eigvalsh", False)[0].astype(result_dtype(t.dtype), copy=False)


def _decompose(t: Tensor, op: str, vectors: bool) -> tuple[Tensor, Tensor | None]:
    d = compute_dtype(t.dtype, op)
    n = t.shape[-1]
    a = as_batch(t, d)
    batch = a.shape[0]
    vecs = empty((batch, n, n), d) if vectors else None
    if batch == 0 or n == 0:
        values = empty((batch, n), d)
    else:
        values = _jacobi_eigh(a, vecs)
    shape = t.shape[:-2]
    return values.reshape(shape + (n,)), None if vecs is None else vecs.reshape(shape + (n, n))


def _jacobi_eigh(a: Tensor, vecs: Tensor | None) -> Tensor:
    """Eigenvalues of the (B, N, N) batch `a`, the eigenvectors written to `vecs`."""
    batch, n, _ = a.shape
    lower = tril(a)
    sym = lower + tril(a, k=-1).mT
    shift = _gershgorin_shift(sym)
    r = jacobi.padded_rows(n)
    w = zeros((batch, r, n), a.dtype)
    w[:, :n, :] = sym
    diag = view(w, (batch, n), (r * n, n + 1), w.offset)
    diag += shift.reshape((batch, 1))
    vt = jacobi.orthogonalise(w, with_v=vecs is not None)
    short = None if vecs is None else vecs.mT
    return jacobi.sorted_rows(w, vt, n, shift, False, None, short)


def _gershgorin_shift(sym: Tensor) -> Tensor:
    """σ_b ≥ -λ_min of each matrix: max(0, max_i(Σ_j≠i |a_ij| - a_ii)) (Gershgorin's discs)."""
    batch, n, _ = sym.shape
    diag = view(sym, (batch, n), (sym.element_strides[0], sym.element_strides[1] + 1),
                sym.offset)
    off = reduce_sum(elementwise_abs(sym), axis=-1) - elementwise_abs(diag)
    return maximum(reduce_max(off - diag, axis=-1), 0).contiguous()
