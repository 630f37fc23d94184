"""`cholesky`: A = L Lᴴ for Hermitian (real: symmetric) positive-definite A, reading A's lower
triangle only (and the real part of its diagonal).

Right-looking and blocked: each diagonal block of up to PANEL columns is factored by a kernel
that holds it in shared memory, one workgroup per matrix (a matrix of up to PANEL columns is
one block: a batch of them is one launch); the block column below it is solved against the
block's conjugate transpose, and the trailing matrix updated with one matrix product. A pivot
whose real part is not positive (or NaN) raises `LinAlgError`, naming the matrix of the batch.
One kernel serves real and complex dtypes: `pk.conj` and `.real` are identities on reals.
"""

import functools

import pykern as pk

from pykern.lang import dtypes as dt
from pykern.lang.dtypes import DType
from pykern.linalg.blocks import PANEL, block, subtract_product, transposed
from pykern.linalg import gradients
from pykern.linalg.gradients import differentiable
from pykern.linalg.checks import Matrices, adjoint, batch_index, finish, matrices
from pykern.linalg.errors import LinAlgError
from pykern.linalg.triangular import solve_diagonal_block
from pykern.tensor.create.creation import tril, zeros
from pykern.tensor.elementwise.functions import as_tensor
from pykern.tensor.core.tensor import Tensor

THREADS = 64


def cholesky(x: object, /, *, upper: bool = False) -> Tensor:
    """The lower Cholesky factor L of each Hermitian (real: symmetric) positive-definite
    matrix of `x` (..., n, n), with x = L @ Lᴴ; with `upper=True`, U = Lᴴ (x = Uᴴ @ U). Only
    the lower triangle of `x` is read (of the diagonal, the real part). Raises `LinAlgError`
    when a matrix is not positive definite.

        pk.linalg.cholesky(pk.asarray([[4.0, 2.0], [2.0, 5.0]]))   # [[2, 0], [1, 2]]
    """
    if not isinstance(upper, (bool, int)):
        raise TypeError("cholesky: upper must be a bool")
    t = as_tensor(x, "cholesky: x")
    return differentiable("linalg.cholesky", (t,), lambda a: _cholesky(a, bool(upper)),
                          gradients.cholesky(bool(upper)), complex_ok=True)


def _cholesky(x: Tensor, upper: bool) -> Tensor:
    m = matrices(x, "cholesky", square=True)
    a = m.batch
    info = zeros((a.shape[0],), dt.i32)
    n = m.rows
    if a.shape[0] and n:
        _factor(a, info)
        _check_positive(info, m)
    lower = tril(a)
    if upper:
        lower = adjoint(lower).contiguous()
    return finish(lower, m, (n, n))


def _factor(a: Tensor, info: Tensor) -> None:
    n = a.shape[1]
    for k0 in range(0, n, PANEL):
        w = min(PANEL, n - k0)
        _block_kernel(a.dtype)[THREADS, a.shape[0]](a, info, k0, w)
        rest = n - k0 - w
        if rest:
            below = block(a, k0 + w, k0, rest, w)
            # L21 = A21 L11⁻ᴴ, i.e. L21ᴴ = L11⁻¹ A21ᴴ: solved in place in A21's transposed
            # view, conjugated before and after for complex dtypes
            _conjugate(below)
            solve_diagonal_block(a, transposed(below), k0, 0, w, lower=True, unit=False)
            _conjugate(below)
            subtract_product(block(a, k0 + w, k0 + w, rest, rest), below, adjoint(below))


def _conjugate(t: Tensor) -> None:
    """Conjugates the (B, rows, cols) view `t` in place (nothing to do for real dtypes)."""
    if t.dtype.is_complex:
        _conj_kernel(t.dtype)[t.shape[2], t.shape[1], t.shape[0]](t)


def _check_positive(info: Tensor, m: Matrices) -> None:
    codes = info.numpy()
    bad = codes.nonzero()[0]
    if bad.size:
        first = int(bad[0])
        where = f" (matrix {batch_index(first, m.batch_shape)} of the batch)" \
            if m.batch_shape else ""
        raise LinAlgError(f"cholesky: x is not positive definite{where}: pivot "
                          f"{int(codes[first]) - 1} is not positive")


@functools.lru_cache(maxsize=None)
def _block_kernel(dtype: DType) -> pk.Kernel:
    T = THREADS  # noqa: N806
    NB = PANEL  # noqa: N806
    DT = dtype  # noqa: N806

    @pk.kernel(workgroup=(T, 1, 1))
    def linalg_cholesky_block(a: dtype[:, :, :], info: pk.i32[:], k0: int, w: int):
        s = pk.shared(DT, (NB, NB))
        t = pk.local_id(0)
        b = pk.global_id(1)
        for idx in range(t, w * w, T):
            i = idx // w
            j = idx % w
            if j <= i:
                s[i, j] = a[b, k0 + i, k0 + j]
        pk.barrier()
        for k in range(w):
            if t == 0:
                d = s[k, k].real
                if not (d > 0) and info[b] == 0:
                    info[b] = k0 + k + 1
                s[k, k] = DT(pk.sqrt(d))
            pk.barrier()
            for i in range(k + 1 + t, w, T):
                s[i, k] = s[i, k] / s[k, k]
            pk.barrier()
            rest = w - k - 1
            for idx in range(t, rest * rest, T):
                i = k + 1 + idx // rest
                j = k + 1 + idx % rest
                if j <= i:
                    s[i, j] = s[i, j] - s[i, k] * pk.conj(s[j, k])
            pk.barrier()
        for idx in range(t, w * w, T):
            i = idx // w
            j = idx % w
            if j <= i:
                a[b, k0 + i, k0 + j] = s[i, j]

    return linalg_cholesky_block


@functools.lru_cache(maxsize=None)
def _conj_kernel(dtype: DType) -> pk.Kernel:
    @pk.kernel
    def linalg_conj_in_place(x: dtype[:, :, :]):
        j = pk.global_id(0)
        i = pk.global_id(1)
        b = pk.global_id(2)
        x[b, i, j] = pk.conj(x[b, i, j])

    return linalg_conj_in_place
