"""Partial pivoting: the size a pivot is chosen by (the LU kernels apply the row interchanges
themselves), and `swap_rows`, the interchanges applied to other rows (PyTorch's lu_solve and
lu_unpack on the "pykern" device)."""

import functools
import math

import pykern as pk
from pykern.lang.dtypes import DType
from pykern.tensor.core.tensor import Tensor


@pk.func
def pivot_size(x):
    """The magnitude partial pivoting maximises: |x| for a real x; |re| + |im| for a complex
    one, as LAPACK's izamax (cheaper than the modulus, and numpy's row interchanges)."""
    return abs(x.real) + abs(x.imag)


@pk.func
def row_major(m, b, i, j):
    """Entry (i, j) of matrix b of a row-major stack (the `entry` of `largest_pivot`)."""
    return m[b, i, j]


@pk.func
def column_major(m, b, i, j):
    """Entry (i, j) of matrix b of a stack stored transposed (columns as rows)."""
    return m[b, j, i]


@pk.func
def largest_pivot(entry, m, b, c, n):
    """The row i of c..n whose entry(m, b, i, c) has the largest pivot size, the first of
    equals; row c for a NaN there (LAPACK's i*amax keeps it) or a column of NaNs."""
    bv = pivot_size(entry(m, b, c, c))
    if pk.isnan(bv):
        bv = math.inf
    p = c
    for i in range(c + 1, n):
        v = pivot_size(entry(m, b, i, c))
        if v > bv:
            bv = v
            p = i
    return p


@pk.func
def zero_pivot(info, b, k, d):
    """Whether the pivot d of column k is zero; the first such column (1-based) goes into
    info[b], as LAPACK's getrf reports it."""
    if d == 0 and info[b] == 0:
        info[b] = k + 1
    return d == 0


@pk.func
def swap_in_column(m, b, r1, r2, j):
    """Swaps entries (r1, j) and (r2, j) of matrix b of the stack m."""
    e = m[b, r1, j]
    m[b, r1, j] = m[b, r2, j]
    m[b, r2, j] = e


def swap_rows(x: Tensor, pivots: Tensor, k0: int, count: int, skip0: int = 0,
              skip1: int = 0) -> None:
    """For k in k0..k0+count, in order: swaps rows k and pivots[:, k] of the (B, n, cols)
    stack `x`, in every column except skip0..skip1 (the panel that is swapped already)."""
    if count == 0 or x.shape[2] == 0:
        return
    _swap_kernel(x.dtype)[x.shape[2], x.shape[0]](x, pivots, k0, count, skip0, skip1)


@functools.lru_cache(maxsize=None)
def _swap_kernel(dtype: DType) -> pk.Kernel:
    @pk.kernel
    def linalg_swap_rows(x: dtype[:, :, :], pivots: pk.i32[:, :], k0: int, count: int,
                         skip0: int, skip1: int):
        j = pk.global_id(0)
        b = pk.global_id(1)
        if j < skip0 or j >= skip1:
            for k in range(k0, k0 + count):
                p = pivots[b, k]
                if p != k:
                    swap_in_column(x, b, k, p, j)

    return linalg_swap_rows
