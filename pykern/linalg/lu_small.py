"""The LU factorization of small matrices, one invocation per matrix: no barriers and no
shared memory, which suits large batches of tiny matrices (on CPU devices a workgroup that
synchronises costs far more than the few hundred operations of an 8×8 factorization)."""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.linalg.pivots import (column_major, largest_pivot, row_major, swap_in_column,
                                  zero_pivot)
from pykern.tensor.core.tensor import Tensor

GPU_LARGEST = 8  # GPUs: beyond this the one-workgroup panel kernel is faster
CPU_LARGEST = 32  # CPU devices


def factor_small(x: Tensor, pivots: Tensor, info: Tensor) -> None:
    """Factors each matrix of the transposed stack `x` (B, cols, n) in place, as the panel
    kernel does (same pivots, same multipliers), carrying the elimination to its rows n..cols
    (right-hand sides); each matrix in one invocation."""
    _small_kernel(x.dtype)[x.shape[0]](x, pivots, info)


@functools.lru_cache(maxsize=None)
def _small_kernel(dtype: DType) -> pk.Kernel:
    @pk.kernel
    def linalg_lu_small(x: dtype[:, :, :], pivots: pk.i32[:, :], info: pk.i32[:]):
        b = pk.global_id(0)
        n = x.shape[2]
        for k in range(n):
            p = largest_pivot(column_major, x, b, k, n)
            pivots[b, k] = p
            if p != k:
                for j in range(x.shape[1]):
                    e = x[b, j, k]
                    x[b, j, k] = x[b, j, p]
                    x[b, j, p] = e
            d = x[b, k, k]
            if not zero_pivot(info, b, k, d):
                for i in range(k + 1, n):
                    x[b, k, i] = x[b, k, i] / d
                for j in range(k + 1, x.shape[1]):
                    f = x[b, j, k]
                    for i in range(k + 1, n):
                        x[b, j, i] = x[b, j, i] - f * x[b, k, i]

    return linalg_lu_small


def solve_small(a: Tensor, y: Tensor, info: Tensor) -> None:
    """y := A⁻¹ y in place for each matrix of the (B, n, n) stack `a` (row-major, factored in
    place: its LU with the interchanges applied to y) and the (B, n, k) right-hand sides `y`;
    each matrix in one invocation, one launch for the batch."""
    _solve_kernel(a.dtype)[a.shape[0]](a, y, info)


@functools.lru_cache(maxsize=None)
def _solve_kernel(dtype: DType) -> pk.Kernel:
    @pk.kernel
    def linalg_solve_small(a: dtype[:, :, :], y: dtype[:, :, :], info: pk.i32[:]):
        b = pk.global_id(0)
        n = a.shape[1]
        k = y.shape[2]
        for c in range(n):  # the elimination, as the LU kernels do it
            p = largest_pivot(row_major, a, b, c, n)
            if p != c:
                for j in range(n):
                    swap_in_column(a, b, c, p, j)
                for j in range(k):
                    swap_in_column(y, b, c, p, j)
            d = a[b, c, c]
            if not zero_pivot(info, b, c, d):
                for i in range(c + 1, n):
                    f = a[b, i, c] / d
                    for j in range(c + 1, n):
                        a[b, i, j] = a[b, i, j] - f * a[b, c, j]
                    for j in range(k):
                        y[b, i, j] = y[b, i, j] - f * y[b, c, j]
        for step in range(n):  # the back substitution with U
            i = n - 1 - step
            for j in range(k):
                s = y[b, i, j]
                for c in range(i + 1, n):
                    s -= a[b, i, c] * y[b, c, j]
                y[b, i, j] = s / a[b, i, i]

    return linalg_solve_small
