"""The panel kernel of the LU factorization with partial pivoting: one workgroup factors the
panel of one matrix (columns k0..k0+w, all rows from k0 down) in one launch, pivots included.

The factorization works on the transpose X = [A | B]ᵀ (`lu`: row j of X is column j of A, or of
the right-hand sides B), so a column of A is contiguous and the workgroup reads it at once.
Each invocation owns the rows k0 + t, k0 + t + T, ... (t its index, T the workgroup size) and
keeps their entries of SUB columns (a sub-panel) in registers. For each column: the pivot
search is a maximum over the invocation's rows, then over its subgroup (subgroup operations),
then over the subgroups' results in shared memory; the pivot row and row k swap places
through shared memory; the rows below scale and update themselves in registers. Two barriers
a column, nothing else in memory. After a sub-panel: its rows are stored, its interchanges
applied to the panel's other columns, the U block right of it solved with its unit lower
triangle, and the panel's columns right of it updated (a rank-SUB product, each invocation
its rows).

A zero pivot (an exactly singular matrix) is recorded in `info` (1 + its row, the first one
only) and its column left unscaled, as LAPACK does; the factorization goes on. The pivot's
magnitude is `pivot_size`: |a| for real dtypes, |re| + |im| for complex ones (LAPACK's
izamax, so numpy's row interchanges); ties go to the first row, and a NaN on the diagonal is
kept as the pivot, as LAPACK's idamax does.
"""

import functools
import math

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.linalg.pivots import pivot_size
from pykern.tensor.core.device_limits import is_cpu_device, loop_budget
from pykern.tensor.core.strided import cdiv
from pykern.tensor.core.tensor import Tensor

GPU_SUB = 8  # columns of a sub-panel, held in registers
CPU_SUB = 4  # (CPU devices: a smaller kernel to compile)
WIDEST = 64  # the widest panel the kernel takes (its shared arrays' size)
GPU_THREADS = 1024
CPU_THREADS = 64  # CPU devices run a workgroup's invocations in turn
CPU_ROWS = 64  # ... each looping over up to this many rows


def factor_panel(x: Tensor, pivots: Tensor, info: Tensor, k0: int, w: int,
                 shape: tuple[int, bool] | None = None) -> None:
    """Factors columns k0..k0+w (w ≤ WIDEST) of the transposed stack `x` (B, cols, n) in place,
    rows k0..n of A: the rows swapped in the panel's columns, the multipliers below the
    diagonal; the pivot rows into `pivots[:, k0:k0 + w]`. `shape`: (invocations, unrolled),
    by default `panel_shape`'s for the device."""
    rows = x.shape[2] - k0
    threads, unrolled = panel_shape(rows) if shape is None else shape
    per = cdiv(rows, threads)
    kernel = _panel_kernel(x.dtype, threads, per if unrolled else local_rows(per), unrolled,
                           GPU_SUB if unrolled else CPU_SUB)
    kernel[threads, x.shape[0]](x, pivots, info, k0, w, per)


def panel_shape(rows: int) -> tuple[int, bool]:
    """(invocations, unrolled): GPUs hold their rows' entries in registers (loops over them
    unrolled, one kernel per count of rows an invocation); CPU devices loop over at most
    CPU_ROWS rows an invocation (16 where the device has a loop budget, as lavapipe), with up
    to 256 invocations (beyond 16,384 rows, or 4,096 on lavapipe, more rows each)."""
    if not is_cpu_device():
        return min(GPU_THREADS, max(32, 1 << (rows - 1).bit_length())), True
    threads = CPU_THREADS
    most = CPU_ROWS if loop_budget() is None else 16
    while threads < CPU_THREADS * 4 and cdiv(rows, threads) > most:
        threads *= 2
    return threads, False


def local_rows(per: int) -> int:
    """Rows of the CPU devices' per-invocation arrays for `per` rows an invocation: CPU_ROWS,
    or the next power of two above it (huge matrices)."""
    return max(CPU_ROWS, 1 << (per - 1).bit_length())


def _entry_func(sub: int) -> Func:
    """`entry(v, q, kk)`: v[q, kk], with the column index kept constant in each unrolled copy
    (registers)."""
    SB = sub  # noqa: N806

    @pk.func
    def entry(v, q, kk):
        e = v[q, 0]
        for c in pk.static_range(1, SB):
            if c == kk:
                e = v[q, c]
        return e

    return entry


def _pivot_search_func(threads: int, real: DType, entry: Func) -> Func:
    """`pivot_row(v, sv, si, t, k0, kk, k, m, nq)`: the pivot row of column k (the
    sub-panel's kk-th, held in v[:, kk]): the largest pivot size over the invocation's rows,
    its subgroup's (subgroup operations) and the subgroups' (in shared memory); the first
    row of the largest, row k for a NaN there or a column of NaNs."""
    T, RT = threads, real  # noqa: N806

    @pk.func
    def pivot_row(v, sv, si, t, k0, kk, k, m, nq):
        bv = RT(-1.0)
        bi: pk.i32 = m
        for q in range(nq):
            r = k0 + t + q * T
            if r >= k and r < m:
                s = pivot_size(entry(v, q, kk))
                if r == k and pk.isnan(s):  # LAPACK's idamax keeps a NaN in row k
                    s = math.inf
                if s > bv:
                    bv = s
                    bi = r
        top = pk.subgroup_max(bv)
        first = pk.subgroup_min(bi if bv == top else m)
        size = pk.subgroup_size()
        if pk.subgroup_lane() == 0:
            sv[t // size] = top
            si[t // size] = first
        pk.barrier()
        best = RT(-1.0)
        p: pk.i32 = m
        for g in range(T // size):
            gv = sv[g]
            gi = si[g]
            if gv > best or (gv == best and gi < p):
                best = gv
                p = gi
        if p >= m:
            p = k  # a column of NaNs: keep the diagonal
        return p

    return pivot_row


def _column_step_func(threads: int, sub: int, real: DType) -> Func:
    """`column_step(x, v, sv, si, prow, krow, piv, pivots, info, b, t, k0, kk, k, m, nq)`:
    column k (the sub-panel's kk-th, held in v[:, kk]): pivot search, interchange, scaling
    and update of the sub-panel's columns right of it, in registers."""
    T, SB = threads, sub  # noqa: N806
    entry = _entry_func(sub)
    pivot_row = _pivot_search_func(threads, real, entry)

    @pk.func
    def column_step(x, v, sv, si, prow, krow, piv, pivots, info, b, t, k0, kk, k, m, nq):
        p = pivot_row(v, sv, si, t, k0, kk, k, m, nq)
        for q in range(nq):
            r = k0 + t + q * T
            if r == p:
                for c in pk.static_range(SB):
                    prow[c] = v[q, c]
            if r == k:
                for c in pk.static_range(SB):
                    krow[c] = v[q, c]
        pk.barrier()
        d = prow[kk]
        for q in range(nq):
            r = k0 + t + q * T
            if r == k:
                for c in pk.static_range(SB):
                    v[q, c] = prow[c]
            elif r == p:
                for c in pk.static_range(SB):
                    v[q, c] = krow[c]
            if r > k and r < m and d != 0:
                ell = entry(v, q, kk) / d
                for c in pk.static_range(SB):
                    if c == kk:
                        v[q, c] = ell
                    elif c > kk:
                        v[q, c] = v[q, c] - ell * prow[c]
        if t == 0:
            pivots[b, k] = p
            piv[kk] = p
            if d == 0 and info[b] == 0:
                info[b] = k + 1

    return column_step


def _finish_func(threads: int, sub: int) -> Func:
    """`finish_sub_panel(x, v, u, l11, u12, piv, b, t, k0, w, cs, sb, m, nq)`: stores the
    sub-panel's rows; applies its interchanges to the panel's other columns, solves the U
    block right of it (unit lower L11) and updates the rows below it there."""
    T, SB = threads, sub  # noqa: N806

    @pk.func
    def finish_sub_panel(x, v, u, l11, u12, piv, b, t, k0, w, cs, sb, m, nq):
        for q in range(nq):
            r = k0 + t + q * T
            if r >= cs and r < m:
                for c in pk.static_range(SB):
                    if c < sb:
                        x[b, cs + c, r] = v[q, c]
                        if r < cs + sb:
                            l11[r - cs, c] = v[q, c]
        pk.barrier()
        after = cs + sb  # the panel's first column right of the sub-panel
        for j in range(k0 + t, k0 + w, T):  # invocation t: the panel's columns j ≡ t
            if j < cs or j >= after:
                for kk in range(sb):
                    p = min(max(piv[kk], cs), m - 1)  # (clamped: a bound the host can prove)
                    if p != cs + kk:
                        keep = x[b, j, cs + kk]
                        x[b, j, cs + kk] = x[b, j, p]
                        x[b, j, p] = keep
            if j >= after:
                for i in pk.static_range(SB):
                    if i < sb:
                        s = x[b, j, cs + i]
                        for c in pk.static_range(i):
                            s -= l11[i, c] * u[c]
                        u[i] = s
                        x[b, j, cs + i] = s
                        u12[i, j - after] = s
        pk.barrier()
        for q in range(nq):
            r = k0 + t + q * T
            if r >= after and r < m:
                for j in range(after, k0 + w):
                    s = x[b, j, r]
                    for c in pk.static_range(SB):
                        if c < sb:
                            s -= v[q, c] * u12[c, j - after]
                    x[b, j, r] = s

    return finish_sub_panel


def _load_func(threads: int, sub: int, dtype: DType) -> Func:
    """`load_sub_panel(x, v, b, t, k0, cs, sb, m, nq)`: the invocation's rows of the
    sub-panel's columns cs..cs+sb into v (zeros outside the matrix and the sub-panel)."""
    T, SB, DT = threads, sub, dtype  # noqa: N806

    @pk.func
    def load_sub_panel(x, v, b, t, k0, cs, sb, m, nq):
        for q in range(nq):
            r = k0 + t + q * T
            for c in pk.static_range(SB):
                e = DT(0.0)
                if r >= cs and r < m and c < sb:
                    e = x[b, cs + c, r]
                v[q, c] = e

    return load_sub_panel


@functools.lru_cache(maxsize=None)
def _panel_kernel(dtype: DType, threads: int, most_rows: int, unrolled: bool, sub: int
                  ) -> pk.Kernel:
    T, SB, WMAX, RM = threads, sub, WIDEST, most_rows  # noqa: N806
    DT, RT = dtype, dtype.real_dtype  # noqa: N806
    NQ = pk.constexpr if unrolled else int  # noqa: N806
    load_sub_panel = _load_func(threads, sub, dtype)
    column_step = _column_step_func(threads, sub, RT)
    finish_sub_panel = _finish_func(threads, sub)

    UNROLLED = unrolled  # noqa: N806

    @pk.kernel(workgroup=(T, 1, 1))
    def linalg_lu_panel(x: DT[:, :, :], pivots: pk.i32[:, :], info: pk.i32[:], k0: int, w: int,
                        nq: NQ):
        sv = pk.shared(RT, T)  # each subgroup's largest pivot size, and its row
        si = pk.shared(pk.i32, T)
        prow = pk.shared(DT, SB)  # the pivot row's sub-panel entries
        krow = pk.shared(DT, SB)  # row k's, which go where the pivot row was
        piv = pk.shared(pk.i32, SB)
        l11 = pk.shared(DT, (SB, SB))
        u12 = pk.shared(DT, (SB, WMAX))
        v = pk.local(DT, (RM, SB))
        u = pk.local(DT, SB)  # a column of the U block right of a sub-panel
        t = pk.local_id(0)
        b = pk.global_id(1)
        m = x.shape[2]
        for s0 in range(0, w, SB):
            cs = k0 + s0
            sb = min(SB, w - s0)
            load_sub_panel(x, v, b, t, k0, cs, sb, m, nq)
            # GPUs: the sub-panel's columns unrolled, so that every index into the registers
            # is a constant; CPU devices: a loop (LLVM compiles the unrolled kernel for minutes)
            if UNROLLED:
                for kk in pk.static_range(SB):
                    if kk < sb:
                        column_step(x, v, sv, si, prow, krow, piv, pivots, info, b, t, k0, kk,
                                    cs + kk, m, nq)
            else:
                for kk in range(sb):
                    column_step(x, v, sv, si, prow, krow, piv, pivots, info, b, t, k0, kk,
                                cs + kk, m, nq)
            finish_sub_panel(x, v, u, l11, u12, piv, b, t, k0, w, cs, sb, m, nq)

    return linalg_lu_panel
