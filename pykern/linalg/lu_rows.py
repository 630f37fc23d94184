"""The panel's factorization carried to the columns right of it (and to the right-hand sides):
one invocation per column (a row of the transposed `lu`) applies the panel's row
interchanges and solves the panel's block row of U with the panel's unit lower triangle L₁₁,
U₁₂ = L₁₁⁻¹ A₁₂, by substitution. The invocations of a workgroup read the same entries of L₁₁
at the same time (one load for all of them)."""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.core.tensor import Tensor

THREADS = 64


def apply_panel(x: Tensor, pivots: Tensor, k0: int, w: int, widest: int) -> None:
    """Rows k0 + w.. of the transposed stack `x` (B, cols, n): the interchanges pivots[:, k0:k0
    + w] applied, then entries k0..k0+w solved with the panel's L₁₁ (w ≤ widest)."""
    rows = x.shape[1] - k0 - w
    if rows > 0:
        _rows_kernel(x.dtype, widest)[rows, x.shape[0]](x, pivots, k0, w)


@functools.lru_cache(maxsize=None)
def _rows_kernel(dtype: DType, widest: int) -> pk.Kernel:
    DT, W = dtype, widest  # noqa: N806

    @pk.kernel(workgroup=(THREADS, 1, 1))
    def linalg_lu_rows(x: DT[:, :, :], pivots: pk.i32[:, :], k0: int, w: int):
        j = k0 + w + pk.global_id(0)
        b = pk.global_id(1)
        u = pk.local(DT, W)
        for i in range(w):
            u[i] = x[b, j, k0 + i]
        for i in range(w):
            p = pivots[b, k0 + i]
            if p != k0 + i:
                keep = u[i]
                if p < k0 + w:
                    u[i] = u[p - k0]
                    u[p - k0] = keep
                else:
                    u[i] = x[b, j, p]
                    x[b, j, p] = keep
        for c in range(w):  # column by column: L₁₁'s column c is a row of x
            f = u[c]
            x[b, j, k0 + c] = f
            for i in range(c + 1, w):
                u[i] = u[i] - x[b, k0 + c, k0 + i] * f

    return linalg_lu_rows
