"""The panel kernel of the LU factorization with partial pivoting: one workgroup factors the
panel of one matrix (columns k0..k0+w, all rows from k0 down), column by column.

Each invocation owns the rows congruent to its index modulo the workgroup size and is the only
one that reads or writes them in device memory, so the kernel needs only workgroup-memory
barriers: the pivot search is a tree reduction in shared memory, and the pivot row and the row
it replaces travel through shared memory too. A zero pivot (an exactly singular matrix) is
recorded in `info` (1 + its row, the first one only) and its column left unscaled, as LAPACK
does; the factorization goes on. The pivot's magnitude is `pivot_size`: |a| for real dtypes,
|re| + |im| for complex ones (LAPACK's izamax, so numpy's row interchanges).
"""

import functools
import math

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.linalg.blocks import PANEL
from pykern.linalg.pivots import pivot_size
from pykern.tensor.core.device_limits import is_cpu_device, loop_budget
from pykern.tensor.core.tensor import Tensor


def factor_panel(a: Tensor, pivots: Tensor, info: Tensor, k0: int, w: int,
                 threads: int | None = None) -> None:
    """Factors columns k0..k0+w of the (B, n, n) stack `a` in place (rows k0.. of the panel
    swapped, multipliers below the diagonal), recording the pivot rows in `pivots`; with
    `threads` invocations per workgroup (a power of two; by default chosen for the device)."""
    rows = a.shape[1] - k0
    if threads is None:
        # CPU devices run a workgroup's invocations in turn: barriers cost more than they share
        # (but each invocation must stay within the device's loop budget: ~w loops per row)
        budget = loop_budget()
        few = rows <= 32 or (is_cpu_device() and (budget is None or rows * (w + 8) < budget))
        threads = 32 if few else 256
    _panel_kernel(a.dtype, threads)[threads, a.shape[0]](a, pivots, info, k0, w)


@pk.func
def largest_of_rows(a, b, k, first, m, step, none):
    """The largest pivot size in column k among rows first, first + step, ... < m, and its
    row (m, and `none`, where there is none)."""
    bv = none
    bi: pk.i32 = m
    for i in range(first, m, step):
        v = pivot_size(a[b, i, k])
        if i == k and pk.isnan(v):  # LAPACK's idamax keeps a NaN in row k
            v = math.inf
        if v > bv:
            bv = v
            bi = i
    return bv, bi


@functools.lru_cache(maxsize=None)
def _panel_kernel(dtype: DType, threads: int) -> pk.Kernel:
    T = threads  # noqa: N806
    NB = PANEL  # noqa: N806
    LEVELS = threads.bit_length() - 1  # noqa: N806
    DT = dtype  # noqa: N806
    RT = dtype.real_dtype  # noqa: N806

    @pk.kernel(workgroup=(T, 1, 1))
    def linalg_lu_panel(a: dtype[:, :, :], pivots: pk.i32[:, :], info: pk.i32[:], k0: int,
                        w: int):
        best = pk.shared(RT, T)
        where = pk.shared(pk.i32, T)
        new_row = pk.shared(DT, NB)
        old_row = pk.shared(DT, NB)
        t = pk.local_id(0)
        b = pk.global_id(1)
        m = a.shape[1]
        for kk in range(w):
            k = k0 + kk
            first = k + (t - k % T + T) % T  # this invocation's first row from k on
            bv, bi = largest_of_rows(a, b, k, first, m, T, RT(-1.0))
            best[t] = bv
            where[t] = bi
            pk.barrier()
            for level in range(LEVELS):
                step = T >> (level + 1)
                if t < step:
                    ov = best[t + step]
                    oi = where[t + step]
                    if ov > best[t] or (ov == best[t] and oi < where[t]):
                        best[t] = ov
                        where[t] = oi
                pk.barrier()
            p = where[0]
            if p >= m:
                p = k  # a column of NaNs: keep the diagonal
            owner_k = k % T
            if t == p % T:
                for j in range(w):
                    new_row[j] = a[b, p, k0 + j]
            if t == owner_k:
                for j in range(w):
                    old_row[j] = a[b, k, k0 + j]
            pk.barrier()
            if t == owner_k:
                for j in range(w):
                    a[b, k, k0 + j] = new_row[j]
            if p != k and t == p % T:
                for j in range(w):
                    a[b, p, k0 + j] = old_row[j]
            d = new_row[kk]
            if t == 0:
                pivots[b, k] = p
                if d == 0 and info[b] == 0:
                    info[b] = k + 1
            if d != 0:
                for i in range(first, m, T):
                    if i > k:
                        ell = a[b, i, k] / d
                        a[b, i, k] = ell
                        for j in range(kk + 1, w):
                            a[b, i, k0 + j] = a[b, i, k0 + j] - ell * new_row[j]
            pk.barrier()

    return linalg_lu_panel
