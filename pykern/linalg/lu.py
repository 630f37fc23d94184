"""LU factorization with partial pivoting, `P A = L U`, shared by `solve`, `inv`, `det` and
`slogdet` (the standard has no `lu` of its own).

Right-looking and blocked, as LAPACK's getrf, on the transpose X = [A | B]ᵀ (B: right-hand
sides carried along, so that the factorization leaves L⁻¹ P B in their place and only U is
left to solve with). For each panel of up to `panel_width` columns: one launch factors the
panel, pivots included (`lu_panel`); one applies its row interchanges to the columns right
of it and solves the panel's block row of U (`lu_rows`); the trailing matrix is updated by
one matrix product. Four launches a panel, no wait for the device inside; `solve`, `inv`, `det`
and `slogdet` record them on the first call of a shape and replay them after
(`pykern.tensor.core.dispatch`). Tiny matrices (`lu_small`: up to 8 columns on GPUs, 32 on
CPU devices) take one invocation each instead.

The interchanges are applied to the columns right of each panel only: the multipliers of
earlier panels stay in the rows they were computed in (LAPACK's L would have them swapped),
as nothing reads them after the factorization.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykern.lang import dtypes as dt
from pykern.linalg.blocks import block, subtract_product
from pykern.linalg.lu_panel import WIDEST, factor_panel
from pykern.linalg.lu_rows import apply_panel
from pykern.linalg.lu_small import CPU_LARGEST, GPU_LARGEST, factor_small
from pykern.runtime import get_device
from pykern.tensor.core.device_limits import is_cpu_device
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.create.creation import zeros

# tests set this to factor in narrow panels (several panels at small sizes)
FORCE_WIDTH: int | None = None


@dataclass(frozen=True)
class LUFactors:
    """The factors of a (B, n, n) stack, transposed: `lu` (B, n + k, n) holds Uᵀ in its first
    n rows on and below the diagonal (U[i, j] = lu[b, j, i]) and the multipliers above it, then
    the k right-hand sides eliminated, (L⁻¹ P B)ᵀ; row k was interchanged with row
    `pivots[:, k]` at step k; `info[b]` is 0, or 1 + the first row whose pivot is exactly 0
    (the matrix is singular)."""

    lu: Tensor
    pivots: Tensor
    info: Tensor


def panel_width(dtype: dt.DType) -> int:
    """Columns per panel: WIDEST, narrower where the panel's L₁₁ would crowd the device's
    shared memory (it stays in cache for the substitution)."""
    if FORCE_WIDTH is not None:
        return FORCE_WIDTH
    width = WIDEST
    shared = get_device().info.limits.max_shared_memory
    while width > 8 and width * width * dtype.itemsize * 4 > shared * 3:
        width //= 2
    return width


def small(n: int) -> bool:
    """Whether n×n matrices are factored one invocation each."""
    return n <= (CPU_LARGEST if is_cpu_device() else GPU_LARGEST)


def lu_factor(a: Tensor, rhs: Tensor | None = None) -> LUFactors:
    """Factors the (B, n, n) stack `a` (row-major), carrying the elimination to the (B, n, k)
    right-hand sides `rhs` where given."""
    bsz, n = a.shape[0], a.shape[1]
    cols = n + (0 if rhs is None else rhs.shape[2])
    x = empty((bsz, cols, n), a.dtype)
    x[:, :n, :] = a.mT
    if rhs is not None:
        x[:, n:, :] = rhs.mT
    return factor_transposed(x)


def factor_transposed(x: Tensor) -> LUFactors:
    """Factors the transposed stack `x` (B, n + k, n) in place (see LUFactors)."""
    bsz, n = x.shape[0], x.shape[2]
    pivots = empty((bsz, n), dt.i32)
    info = zeros((bsz,), dt.i32)
    if bsz == 0 or n == 0:
        return LUFactors(x, pivots, info)
    if small(n):
        factor_small(x, pivots, info)
        return LUFactors(x, pivots, info)
    width = panel_width(x.dtype)
    cols = x.shape[1]
    for k0 in range(0, n, width):
        w = min(width, n - k0)
        factor_panel(x, pivots, info, k0, w)
        apply_panel(x, pivots, k0, w, width)
        rest = n - k0 - w
        if rest:
            subtract_product(block(x, k0 + w, k0 + w, cols - k0 - w, rest),
                             block(x, k0 + w, k0, cols - k0 - w, w),
                             block(x, k0, k0 + w, w, rest))
    return LUFactors(x, pivots, info)
