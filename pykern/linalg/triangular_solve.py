"""Triangular solves `T X = Y` in place for a triangular T (lower or upper, unit diagonal or
not) on the diagonal of a row-major stack of matrices: what PyTorch's triangular solves and
lu_solve need on the "pykern" device (pk.linalg's own solve works on transposed factors,
`pykern.linalg.triangular`).

Blocked: a diagonal block of up to PANEL rows is solved by a kernel with one invocation per
right-hand-side column (and matrix), by substitution; the rows still to solve are then
updated with one matrix product (`blocks.subtract_product`), so nearly all the work of a large
solve runs in the GEMM.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.linalg.blocks import block, subtract_product
from pykern.tensor.core.tensor import Tensor

PANEL = 64  # rows of a diagonal block


def solve_triangular(tri: Tensor, y: Tensor, lower: bool, unit: bool) -> None:
    """Y := T⁻¹ Y in place, for the (B, n, n) matrices `tri` (their lower or upper triangle,
    the diagonal taken as ones when `unit`) and the (B, n, k) right-hand sides `y`."""
    n, k = y.shape[1], y.shape[2]
    if n == 0 or k == 0:
        return
    starts = list(range(0, n, PANEL))
    for r0 in (starts if lower else reversed(starts)):
        w = min(PANEL, n - r0)
        solve_diagonal_block(tri, y, r0, r0, w, lower, unit)
        x = block(y, r0, 0, w, k)
        if lower:
            subtract_product(block(y, r0 + w, 0, n - r0 - w, k), block(tri, r0 + w, r0,
                                                                         n - r0 - w, w), x)
        else:
            subtract_product(block(y, 0, 0, r0, k), block(tri, 0, r0, r0, w), x)


def solve_diagonal_block(tri: Tensor, y: Tensor, t0: int, y0: int, w: int, lower: bool,
                         unit: bool) -> None:
    """Rows y0..y0+w of every column of `y` := T⁻¹ times them, T the w×w diagonal block of
    `tri` at (t0, t0)."""
    if y.shape[2] == 0 or w == 0:
        return
    _block_kernel(y.dtype, lower, unit)[y.shape[2], y.shape[0]](tri, y, t0, y0, w)


@functools.lru_cache(maxsize=None)
def _block_kernel(dtype: DType, lower: bool, unit: bool) -> pk.Kernel:
    LOWER = lower  # noqa: N806
    UNIT = unit  # noqa: N806

    @pk.kernel
    def linalg_triangular_block(tri: dtype[:, :, :], y: dtype[:, :, :], t0: int, y0: int,
                                w: int):
        c = pk.global_id(0)
        b = pk.global_id(1)
        for step in range(w):
            i = step
            if not LOWER:
                i = w - 1 - step
            s = y[b, y0 + i, c]
            if LOWER:
                for j in range(i):
                    s -= tri[b, t0 + i, t0 + j] * y[b, y0 + j, c]
            else:
                for j in range(i + 1, w):
                    s -= tri[b, t0 + i, t0 + j] * y[b, y0 + j, c]
            if not UNIT:
                s = s / tri[b, t0 + i, t0 + i]
            y[b, y0 + i, c] = s

    return linalg_triangular_block
