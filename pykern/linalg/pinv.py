"""`pk.linalg.pinv` and `matrix_rank`, from the singular values of `svd`: singular values at
most `rtol` times the largest count as zero (default rtol: max(M, N) · eps of the dtype, as the
array API standard says)."""

from __future__ import annotations

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.linalg.checks import first_flagged
from pykern.linalg.errors import LinAlgError
from pykern.linalg.inputs import result_dtype, stack_of_matrices
from pykern.linalg.svd import svd, svdvals
from pykern.tensor.elementwise import functions as ew
from pykern.tensor.reduce import reduction as red
from pykern.tensor.complex.complex_elementwise import conj
from pykern.tensor.gemm.matmul import matmul
from pykern.tensor.core.promotion import DEFAULT_INT
from pykern.tensor.core.tensor import Tensor

EPS = {dt.f16: 2.0 ** -10, dt.bf16: 2.0 ** -7, dt.f32: 2.0 ** -23, dt.f64: 2.0 ** -52}


def pinv(x: object, /, *, rtol: object = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix of the (..., M, N) stack `x`:
    (..., N, M). `rtol` (a float, or a tensor broadcasting against the stack's batch shape)
    sets the cut-off relative to the largest singular value.

        pk.linalg.pinv(a) @ b        # the least-squares solution of a @ y = b
    """
    t = stack_of_matrices(x, "pinv")
    u, s, vh = svd(t, full_matrices=False)
    keep = ew.greater(s, _cutoff(s, t, rtol))
    inv_s = ew.where(keep, ew.divide(1, ew.where(keep, s, 1)), 0).astype(s.dtype)
    v, uh = (conj(vh).mT, conj(u).mT) if u.dtype.is_complex else (vh.mT, u.mT)
    scaled = ew.multiply(v, inv_s.reshape(inv_s.shape[:-1] + (1, inv_s.shape[-1])))
    return matmul(scaled, uh)  # V S⁺ Uᴴ


def matrix_rank(x: object, /, *, rtol: object = None) -> Tensor:
    """The rank of each matrix of the (..., M, N) stack `x`: the count of singular values
    above `rtol` times the largest (default rtol: max(M, N) · eps). Default integer dtype.
    A matrix with a NaN is a LinAlgError, as numpy's."""
    t = stack_of_matrices(x, "matrix_rank")
    _refuse_nan(t)
    s = svdvals(t)
    return red.sum(ew.greater(s, _cutoff(s, t, rtol)), axis=-1, dtype=DEFAULT_INT)


def _refuse_nan(t: Tensor) -> None:
    """LinAlgError for a matrix with a NaN, as numpy (its SVD does not converge). `svdvals`
    gives such a matrix NaN singular values, which no cut-off counts: the rank would be a
    silent 0. (A matrix with an inf and no NaN has NaN singular values in numpy too, without an
    error, and rank 0 in both.) matrix_rank waits for the SVD anyway, so reading one flag per
    matrix back costs no extra wait."""
    if not (t.dtype.is_float or t.dtype.is_complex) or t.size == 0:
        return
    batch_shape = tuple(t.shape[:-2])
    has_nan = red.any(ew.isnan(t), axis=(-2, -1)).reshape((-1,)).numpy()
    failed = first_flagged(has_nan, batch_shape)
    if failed:
        raise LinAlgError(f"matrix_rank: SVD did not converge: x has a NaN{failed[0]}")


def _cutoff(s: Tensor, t: Tensor, rtol: object) -> Tensor:
    """rtol · the largest singular value, per matrix, shaped (..., 1) against `s`."""
    d: DType = t.dtype.real_dtype if t.dtype.is_complex else result_dtype(t.dtype)
    if rtol is None:
        rtol = max(t.shape[-2:]) * EPS.get(d, EPS[dt.f32])
    rt = ew.as_tensor(rtol, "linalg: rtol")
    if rt.ndim:
        rt = rt.reshape(rt.shape + (1,))
    largest = s[..., :1] if s.shape[-1] else ew.as_tensor(0.0)
    return ew.multiply(rt, largest).astype(s.dtype)
