"""LU factorization with partial pivoting, `P A = L U`, shared by `solve`, `inv`, `det` and
`slogdet` (the standard has no `lu` of its own).

Right-looking and blocked, as LAPACK's getrf: for each panel of PANEL columns, a kernel
factors the panel with one workgroup per matrix (`lu_panel`), the panel's row interchanges
are applied to the other columns, the block row right of the panel is solved with the panel's
unit lower triangle, and the trailing matrix is updated with one matrix product. A matrix of
up to PANEL columns is a single panel: one launch factors a whole batch of them. Tiny ones
(`lu_small`: up to 8 columns on GPUs, 32 on CPU devices) take one invocation each instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from pykern.lang import dtypes as dt
from pykern.linalg.blocks import PANEL, block, subtract_product
from pykern.linalg.lu_panel import factor_panel
from pykern.linalg.lu_small import CPU_LARGEST, GPU_LARGEST, factor_small
from pykern.linalg.pivots import swap_rows
from pykern.linalg.triangular import solve_diagonal_block
from pykern.tensor.create.creation import zeros
from pykern.tensor.core.device_limits import is_cpu_device
from pykern.tensor.core.tensor import Tensor, empty


@dataclass(frozen=True)
class LUFactors:
    """The factors of a (B, n, n) stack: `lu` holds U on and above the diagonal and L's
    multipliers below it (L's diagonal is ones); row k was interchanged with row
    `pivots[:, k]` at step k; `info[b]` is 0, or 1 + the first row whose pivot is exactly 0
    (the matrix is singular)."""

    lu: Tensor
    pivots: Tensor
    info: Tensor


def lu_factor(a: Tensor) -> LUFactors:
    """Factors the (B, n, n) row-major stack `a` in place (it becomes `lu`)."""
    bsz, n = a.shape[0], a.shape[1]
    pivots = empty((bsz, n), dt.i32)
    info = zeros((bsz,), dt.i32)
    if bsz == 0 or n == 0:
        return LUFactors(a, pivots, info)
    if n <= (CPU_LARGEST if is_cpu_device() else GPU_LARGEST):
        factor_small(a, pivots, info)
        return LUFactors(a, pivots, info)
    for k0 in range(0, n, PANEL):
        w = min(PANEL, n - k0)
        factor_panel(a, pivots, info, k0, w)
        swap_rows(a, pivots, k0, w, skip0=k0, skip1=k0 + w)
        rest = n - k0 - w
        if rest:
            solve_diagonal_block(a, block(a, 0, k0 + w, n, rest), k0, k0, w, lower=True,
                                 unit=True)
            subtract_product(block(a, k0 + w, k0 + w, rest, rest),
                             block(a, k0 + w, k0, rest, w), block(a, k0, k0 + w, w, rest))
    return LUFactors(a, pivots, info)
