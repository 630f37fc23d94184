"""The kernels of the blocked Cholesky factorization: the diagonal block's factor (and the
inverse of its adjoint, for the block column below), and the update that stores the block
column and subtracts its product from the trailing matrix.

The diagonal block kernel keeps the block in registers: one workgroup per matrix of G×G
invocations, each holding a TS×TS tile of the (G·TS)² block. Column k of the factorization is
passed round through shared memory (double-buffered, so one barrier per column): every
invocation then scales and updates its own tile from the column, so the block costs one
barrier and TS² multiply-adds per column and invocation, with no other memory traffic. The
inverse of the factor, L⁻¹, is computed the same way (one barrier per row) by forward
substitution on the identity, and written out as (L⁻¹)ᴴ, which the block column below needs:
L₂₁ = A₂₁ (L₁₁)⁻ᴴ is then a matrix product.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType


@functools.lru_cache(maxsize=None)
def diagonal_kernel(dtype: DType, g: int, ts: int) -> pk.Kernel:
    """Factors the w×w diagonal block at (k0, k0) of each matrix of `a` (w ≤ g·ts) in place
    (its lower triangle; the real part of its diagonal is read); writes (L⁻¹)ᴴ into
    `inv_h[b, :w, :w]` when `invert`; records 1 + the first pivot that is not positive in
    `info` (where info is still 0). Launch with g·g invocations per matrix."""
    DT = dtype  # noqa: N806
    G, TS = g, ts  # noqa: N806
    NB = g * ts  # noqa: N806

    @pk.func
    def invert_lower(x, y, col, row, inv_h, b, w, r0, c0):
        """(L⁻¹)ᴴ of the factor held in the tiles `x`, into inv_h[b]: Y (the tiles `y`, zero)
        := I, then for each k row k of Y is divided by L[k, k] (it is row k of L⁻¹) and L[i, k]
        times it taken from the rows i > k below."""
        pk.barrier()  # the factorization's last reads of `col` are done
        for r in pk.static_range(TS):
            for c in pk.static_range(TS):
                if r0 + r == c0 + c:
                    y[r, c] = DT(1)
        for k in range(w):
            buf = k % 2
            if c0 <= k and k < c0 + TS:
                for c in pk.static_range(TS):
                    if c0 + c == k:
                        for r in pk.static_range(TS):
                            col[buf, r0 + r] = x[r, c]
            if r0 <= k and k < r0 + TS:
                for r in pk.static_range(TS):
                    if r0 + r == k:
                        for c in pk.static_range(TS):
                            row[buf, c0 + c] = y[r, c]
            pk.barrier()
            pivot = col[buf, k]
            for c in pk.static_range(TS):
                yk = row[buf, c0 + c] / pivot
                for r in pk.static_range(TS):
                    i = r0 + r
                    if i == k:
                        y[r, c] = yk
                    elif i > k:
                        y[r, c] = y[r, c] - col[buf, i] * yk
        for r in pk.static_range(TS):
            for c in pk.static_range(TS):
                if r0 + r < w and c0 + c < w:
                    inv_h[b, c0 + c, r0 + r] = pk.conj(y[r, c])

    @pk.kernel(workgroup=(G * G, 1, 1))
    def linalg_cholesky_diagonal(a: DT[:, :, :], inv_h: DT[:, :, :], info: pk.i32[:],
                                 k0: int, w: int, invert: int):
        col = pk.shared(DT, (2, NB))
        row = pk.shared(DT, (2, NB))
        t = pk.local_id(0)
        b = pk.global_id(1)
        r0 = (t // G) * TS
        c0 = (t % G) * TS
        x = pk.local(DT, (TS, TS))
        y = pk.local(DT, (TS, TS))  # the inverse's tiles
        for r in pk.static_range(TS):
            for c in pk.static_range(TS):
                if r0 + r < w and c0 + c <= r0 + r:
                    x[r, c] = a[b, k0 + r0 + r, k0 + c0 + c]
        for k in range(w):
            buf = k % 2
            if c0 <= k and k < c0 + TS:  # this invocation holds part of column k
                for c in pk.static_range(TS):
                    if c0 + c == k:
                        for r in pk.static_range(TS):
                            col[buf, r0 + r] = x[r, c]
            pk.barrier()
            d = col[buf, k].real
            if t == 0 and not (d > 0) and info[b] == 0:
                info[b] = k0 + k + 1
            root = pk.sqrt(d)
            scale = 1 / root
            for r in pk.static_range(TS):
                i = r0 + r
                if i >= k:
                    li = col[buf, i] * scale
                    for c in pk.static_range(TS):
                        j = c0 + c
                        if j == k:
                            x[r, c] = li if i > k else DT(root)
                        elif j > k and j <= i:
                            x[r, c] = x[r, c] - li * pk.conj(col[buf, j] * scale)
        for r in pk.static_range(TS):
            for c in pk.static_range(TS):
                if r0 + r < w and c0 + c <= r0 + r:
                    a[b, k0 + r0 + r, k0 + c0 + c] = x[r, c]
        if invert != 0:
            invert_lower(x, y, col, row, inv_h, b, w, r0, c0)

    return linalg_cholesky_diagonal


@functools.lru_cache(maxsize=None)
def update_kernel(dtype: DType) -> pk.Kernel:
    """Invocation (c, r, b), over (w + rest, rest, B): for c < w, stores the block column
    a[b, k0 + w + r, k0 + c] = p[b, r, c]; beyond, subtracts q[b, r, j] (j = c - w) from the
    trailing matrix's lower triangle, a[b, k0 + w + r, k0 + w + j] for j ≤ r."""

    @pk.kernel
    def linalg_cholesky_update(a: dtype[:, :, :], p: dtype[:, :, :], q: dtype[:, :, :],
                               k0: int, w: int):
        c = pk.global_id(0)
        r = pk.global_id(1)
        b = pk.global_id(2)
        if c < w:
            a[b, k0 + w + r, k0 + c] = p[b, r, c]
        elif c - w <= r:
            a[b, k0 + w + r, k0 + c] = a[b, k0 + w + r, k0 + c] - q[b, r, c - w]

    return linalg_cholesky_update


@functools.lru_cache(maxsize=None)
def small_kernel(dtype: DType) -> pk.Kernel:
    """Factors each matrix of `a` (B, n, n) in place, one invocation per matrix, no barriers
    (CPU devices, for batches of small matrices): the lower triangle, info as the diagonal
    block kernel's."""
    DT = dtype  # noqa: N806

    @pk.kernel
    def linalg_cholesky_small(a: DT[:, :, :], info: pk.i32[:]):
        b = pk.global_id(0)
        n = a.shape[1]
        for k in range(n):
            d = a[b, k, k].real
            if not (d > 0) and info[b] == 0:
                info[b] = k + 1
            root = pk.sqrt(d)
            scale = 1 / root
            a[b, k, k] = DT(root)
            for i in range(k + 1, n):
                a[b, i, k] = a[b, i, k] * scale
            for j in range(k + 1, n):
                f = pk.conj(a[b, j, k])
                for i in range(j, n):
                    a[b, i, j] = a[b, i, j] - a[b, i, k] * f

    return linalg_cholesky_small
