"""The panel kernel of the blocked Householder QR: one workgroup factors the panel of one
matrix (columns c0..c0+w, rows c0..m) in one launch and writes what the block reflector
I - V T Vᴴ needs to be applied with two matrix products.

The factorization works on the transpose X = Aᵀ (`qr`), so a column of A is contiguous. Each
invocation owns the rows c0 + t, c0 + t + T, ... (t its index, T the workgroup size). For each
column k one reduction over the rows gives, together: the squared norm below the diagonal,
the products of the column with the panel's later columns (what the reflector's application
needs), and with the earlier reflectors (what the column of T needs, LAPACK's larft); the sums
go through subgroup operations and shared memory, two barriers a column. The reflectors follow
LAPACK's larfg: H = I - τ v vᴴ with v[0] = 1, β = -sign(Re α)·‖(α, x)‖ (real),
τ = (β - α)/β, and τ = 0 (H = I) for a column whose part below the diagonal is zero and whose
diagonal entry is real — so R's diagonal is real, with LAPACK's (and numpy's) signs. Hᴴ is
applied to the panel's columns right of the reflector.

Written at the end, for the products (V: the reflectors with their unit diagonal, zeros
above it, (m - c0) × w): `vc` = conj(V), `left` = conj(T) Vᵀ, for Qᴴ applied to the columns
right of the panel (Xᵀ-side: X₂ -= (X₂ conj(V)) (conj(T) Vᵀ)), and `right` = Tᵀ Vᵀ, for Q
itself applied to the identity. One kernel serves real and complex dtypes (`pk.conj`,
`.real`, `.imag` are trivial on reals).
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.lang.func import Func
from pykern.linalg.lu_panel import local_rows, panel_shape
from pykern.runtime import get_device
from pykern.tensor.core.strided import cdiv
from pykern.tensor.complex.complex_elementwise import conj
from pykern.tensor.core.tensor import Tensor, empty
from pykern.tensor.gemm.matmul import matmul

WIDEST = 32  # columns of a panel (its shared arrays' size)
# tests set this to factor in narrow panels (several panels at small sizes)
FORCE_WIDTH: int | None = None


def panel_width() -> int:
    """Columns per panel."""
    return WIDEST if FORCE_WIDTH is None else FORCE_WIDTH

CHUNK = 8  # sums (and updates) an invocation keeps going at once


def factor_panel(x: Tensor, c0: int, w: int, widest: int) -> tuple[Tensor, Tensor, Tensor]:
    """Householder-factors columns c0..c0+w (w ≤ widest: the kernel's size) of the transposed
    stack `x` (B, n, m) in place (R on and above the diagonal, the reflectors below); returns
    (vc, left, right): conj(V) (B, m - c0, w), conj(T) Vᵀ and Tᵀ Vᵀ (B, w, m - c0)."""
    bsz, m = x.shape[0], x.shape[2]
    rows = m - c0
    vc = empty((bsz, rows, w), x.dtype)
    left = empty((bsz, w, rows), x.dtype)
    right = empty((bsz, w, rows), x.dtype)
    threads, unrolled = panel_shape(rows)
    per = cdiv(rows, threads)
    # each subgroup's sums through subgroup operations, or (CPU devices, where each of those is
    # a pass over the workgroup) each invocation's through shared memory, where they fit
    groups = cdiv(threads, get_device().info.features.subgroup_size)
    if not unrolled and threads * widest * x.dtype.itemsize <= 16384:
        groups = 0
    kernel = _panel_kernel(x.dtype, threads, per if unrolled else local_rows(per), unrolled,
                           groups, widest)
    taus = empty((bsz, w), x.dtype)
    kernel[threads, bsz](x, vc, left, right, taus, c0, w, per)
    if not unrolled:  # CPU devices: T from the Gram matrix, the factors by matrix products
        v_t = conj(vc).mT if x.dtype.is_complex else vc.mT  # Vᵀ
        gram = matmul(conj(v_t), v_t.mT) if x.dtype.is_complex else matmul(v_t, vc)  # Vᴴ V
        tf = empty(gram.shape, gram.dtype)
        _t_kernel(x.dtype)[bsz](gram, taus, tf)
        left = matmul(conj(tf) if x.dtype.is_complex else tf, v_t)
        right = matmul(tf.mT, v_t)
    return vc, left, right


@functools.lru_cache(maxsize=None)
def _t_kernel(dtype: DType) -> pk.Kernel:
    """T (B, w, w), upper triangular, with H_0 ··· H_w-1 = I - V T Vᴴ, from the Gram matrices
    Vᴴ V and the τ of the panel's reflectors (LAPACK's larft); one invocation per matrix."""
    DT = dtype  # noqa: N806

    @pk.kernel
    def linalg_qr_t(gram: DT[:, :, :], taus: DT[:, :], tf: DT[:, :, :]):
        b = pk.global_id(0)
        w = gram.shape[1]
        for j in range(w):
            tj = taus[b, j]
            for i in range(j + 1, w):
                tf[b, i, j] = DT(0.0)
            tf[b, j, j] = tj
            for i in range(j):  # T[:j, j] = -τ_j T[:j, :j] Vᴴ v_j
                s = DT(0.0)
                for c in range(i, j):
                    s += tf[b, i, c] * gram[b, c, j]
                tf[b, i, j] = -tj * s

    return linalg_qr_t


def _reduce_column_func(threads: int, dtype: DType, by_subgroups: bool) -> Func:
    """`reduce_column(x, xk, acc, part, total, krow, vrow, b, t, c0, kk, k, w, m, nq)`: the
    column's sums over the rows i > k, into total[kk % 2, c]: Σ conj(v_ci) x_ik for c < kk (the
    reflectors: T's column), Σ |x_ik|² for c = kk, Σ conj(x_ik) x_ic for c > kk (the later
    columns: the reflector's application); and row k's entries of the panel (krow[c ≥ kk]) and
    of the reflectors (vrow[c < kk]). `xk` caches the column."""
    T, CH, DT, BY_SUBGROUPS = threads, CHUNK, dtype, by_subgroups  # noqa: N806
    gather_column = _gather_column_func(dtype)

    @pk.func
    def reduce_column(x, xk, acc, part, total, krow, vrow, b, t, c0, kk, k, w, m, nq):
        size = pk.subgroup_size() if BY_SUBGROUPS else 1
        for q in range(nq):
            i = c0 + t + q * T
            e = DT(0.0)
            if i > k and i < m:
                e = x[b, k, i]
            xk[q] = e
        for c8 in range(0, w, CH):  # CH sums at a time: their loads go out together
            for cc in pk.static_range(CH):
                acc[cc] = DT(0.0)
            for q in range(nq):
                i = c0 + t + q * T
                if i > k and i < m:
                    xi = xk[q]
                    for cc in pk.static_range(CH):
                        c = c8 + cc
                        if c < kk:
                            acc[cc] = acc[cc] + pk.conj(x[b, c0 + c, i]) * xi
                        elif c == kk:
                            acc[cc] = acc[cc] + DT(xi.real * xi.real + xi.imag * xi.imag)
                        elif c < w:
                            acc[cc] = acc[cc] + pk.conj(xi) * x[b, c0 + c, i]
            for cc in pk.static_range(CH):
                if BY_SUBGROUPS:
                    s = pk.subgroup_add(acc[cc])
                    if pk.subgroup_lane() == 0 and c8 + cc < w:
                        part[t // size, c8 + cc] = s
                elif c8 + cc < w:
                    part[t, c8 + cc] = acc[cc]
        gather_column(x, part, total, krow, vrow, b, t, c0, kk, k, w, (k - c0) % T,
                      T // size if BY_SUBGROUPS else T)

    return reduce_column


def _gather_column_func(dtype: DType) -> Func:
    """`gather_column(x, part, total, krow, vrow, b, t, c0, kk, k, w, owner, parts)`, the end
    of reduce_column (either kind): invocation `owner` (row k's) copies row k's entries of the
    panel (krow[c ≥ kk]) and of the reflectors (vrow[c < kk]); after a barrier the column's
    sums are the totals of the `parts` rows of `part`, into total[kk % 2, c]; a barrier."""
    DT = dtype  # noqa: N806

    @pk.func
    def gather_column(x, part, total, krow, vrow, b, t, c0, kk, k, w, owner, parts):
        buf = kk % 2
        if t == owner:
            for c in range(w):
                if c < kk:
                    vrow[buf, c] = x[b, c0 + c, k]
                else:
                    krow[buf, c] = x[b, c0 + c, k]
        pk.barrier()
        if t < w:
            s = DT(0.0)
            for g in range(parts):
                s += part[g, t]
            total[buf, t] = s
        pk.barrier()

    return gather_column


def _apply_reflector_func(threads: int, dtype: DType) -> Func:
    """`apply_reflector(x, xk, krow, total, b, t, c0, kk, k, w, m, nq, scale, tau, beta)`:
    stores v (the column below k times `scale`) and applies Hᴴ = I - conj(τ) v vᴴ to
    the panel's columns right of k: x_j -= conj(τ) (vᴴ x_j) v, vᴴ x_j = x_kj + conj(scale)
    Σ conj(x_ik) x_ij."""
    T, CH, DT = threads, CHUNK, dtype  # noqa: N806

    @pk.func
    def apply_reflector(x, xk, krow, total, b, t, c0, kk, k, w, m, nq, scale, tau, beta):
        buf = kk % 2
        for q in range(nq):
            i = c0 + t + q * T
            if i > k and i < m:
                vi = xk[q] * scale
                x[b, k, i] = vi
                f = vi * pk.conj(tau)
                for j8 in range(kk + 1, w, CH):
                    for jj in pk.static_range(CH):
                        j = j8 + jj
                        if j < w:
                            d = krow[buf, j] + pk.conj(scale) * total[buf, j]
                            x[b, c0 + j, i] = x[b, c0 + j, i] - f * d
            if i == k:
                x[b, k, k] = DT(beta)
                for j in range(kk + 1, w):
                    d = krow[buf, j] + pk.conj(scale) * total[buf, j]
                    x[b, c0 + j, k] = krow[buf, j] - pk.conj(tau) * d

    return apply_reflector


@pk.func
def run_below(c0, t, k, m, nq):
    """The rows below k of invocation t on CPU devices, which owns the run c0 + t·nq ..
    c0 + (t + 1)·nq (a run of memory in each column: the host's loops stream along it)."""
    return max(k + 1, c0 + t * nq), min(m, c0 + (t + 1) * nq)


def _reduce_column_cpu_func(threads: int, dtype: DType, by_subgroups: bool) -> Func:
    """`reduce_column_cpu`, with reduce_column's parameters: reduce_column for CPU devices,
    one sum at a time over the invocation's run of rows, each invocation's sums through shared
    memory."""
    T, DT, BY_SUBGROUPS = threads, dtype, by_subgroups  # noqa: N806
    gather_column = _gather_column_func(dtype)

    @pk.func
    def reduce_column_cpu(x, xk, acc, part, total, krow, vrow, b, t, c0, kk, k, w, m, nq):
        lo, hi = run_below(c0, t, k, m, nq)
        for c in range(kk, w):  # (T's sums with the earlier reflectors: a product, after)
            s = DT(0.0)
            if c == kk:
                for i in range(lo, hi):
                    xi = x[b, k, i]
                    s += DT(xi.real * xi.real + xi.imag * xi.imag)
            else:
                for i in range(lo, hi):
                    s += pk.conj(x[b, k, i]) * x[b, c0 + c, i]
            if BY_SUBGROUPS:  # (lavapipe's larger workgroups)
                s = pk.subgroup_add(s)
                if pk.subgroup_lane() == 0:
                    part[t // pk.subgroup_size(), c] = s
            else:
                part[t, c] = s
        gather_column(x, part, total, krow, vrow, b, t, c0, kk, k, w, (k - c0) // nq,
                      T // pk.subgroup_size() if BY_SUBGROUPS else T)

    return reduce_column_cpu


def _apply_reflector_cpu_func(dtype: DType) -> Func:
    """`apply_reflector_cpu`, with apply_reflector's parameters: apply_reflector for CPU
    devices, column by column along the invocation's run."""
    DT = dtype  # noqa: N806

    @pk.func
    def apply_reflector_cpu(x, xk, krow, total, b, t, c0, kk, k, w, m, nq, scale, tau, beta):
        buf = kk % 2
        lo, hi = run_below(c0, t, k, m, nq)
        for i in range(lo, hi):
            x[b, k, i] = x[b, k, i] * scale
        for j in range(kk + 1, w):
            f = pk.conj(tau) * (krow[buf, j] + pk.conj(scale) * total[buf, j])
            for i in range(lo, hi):
                x[b, c0 + j, i] = x[b, c0 + j, i] - x[b, k, i] * f
            if t == (k - c0) // nq:
                x[b, c0 + j, k] = krow[buf, j] - f
        if t == (k - c0) // nq:
            x[b, k, k] = DT(beta)

    return apply_reflector_cpu


def _write_products_func(threads: int, dtype: DType, in_kernel: bool) -> Func:
    """`write_products(x, vd, vc, left, right, tf, b, t, c0, w, m, nq)`: vc = conj(V),
    left = conj(T) Vᵀ, right = Tᵀ Vᵀ for the rows of invocation t."""
    T, DT, IN_KERNEL = threads, dtype, in_kernel  # noqa: N806

    @pk.func
    def write_products(x, vd, vc, left, right, tf, b, t, c0, w, m, nq):
        for q in range(nq):
            i = c0 + t + q * T
            if i < m:
                for d in range(w):
                    e = DT(0.0)
                    if i > c0 + d:
                        e = x[b, c0 + d, i]
                    elif i == c0 + d:
                        e = DT(1.0)
                    vd[d] = e
                    vc[b, i - c0, d] = pk.conj(e)
                if not IN_KERNEL:
                    continue
                for c in range(w):
                    sl = DT(0.0)
                    sr = DT(0.0)
                    for d in range(c, w):
                        sl += pk.conj(tf[c, d]) * vd[d]
                    for d in range(c + 1):
                        sr += tf[d, c] * vd[d]
                    left[b, c, i - c0] = sl
                    right[b, c, i - c0] = sr

    return write_products


@functools.lru_cache(maxsize=None)
def _panel_kernel(dtype: DType, threads: int, most_rows: int, unrolled: bool, groups: int,
                  widest: int) -> pk.Kernel:
    T, W, RM, CH = threads, widest, most_rows, CHUNK  # noqa: N806
    G = T if groups == 0 else groups  # noqa: N806  (rows of the partial sums)
    BY_SUBGROUPS = groups != 0  # noqa: N806
    DT = dtype  # noqa: N806
    NQ = pk.constexpr if unrolled else int  # noqa: N806
    IN_KERNEL = unrolled  # noqa: N806  (T and the factors here; CPU devices: by products after)
    if unrolled:
        REDUCE = _reduce_column_func(T, DT, BY_SUBGROUPS)  # noqa: N806
        APPLY = _apply_reflector_func(T, DT)  # noqa: N806
    else:
        REDUCE = _reduce_column_cpu_func(T, DT, BY_SUBGROUPS)  # noqa: N806
        APPLY = _apply_reflector_cpu_func(DT)  # noqa: N806
    write_products = _write_products_func(T, DT, IN_KERNEL)

    @pk.kernel(workgroup=(T, 1, 1))
    def linalg_qr_panel(x: DT[:, :, :], vc: DT[:, :, :], left: DT[:, :, :], right: DT[:, :, :],
                        taus: DT[:, :], c0: int, w: int, nq: NQ):
        part = pk.shared(DT, (G, W))  # each subgroup's sums
        total = pk.shared(DT, (2, W))  # the column's sums, double-buffered
        krow = pk.shared(DT, (2, W))  # row k's entries of the panel, and of the reflectors
        vrow = pk.shared(DT, (2, W))
        tf = pk.shared(DT, (W, W))  # T
        xk = pk.local(DT, RM)  # the invocation's rows of the current column
        acc = pk.local(DT, CH)
        vd = pk.local(DT, W)  # a row's reflector entries, at the end
        t = pk.local_id(0)
        b = pk.global_id(1)
        m = x.shape[2]
        for kk in range(w):
            k = c0 + kk
            buf = kk % 2
            REDUCE(x, xk, acc, part, total, krow, vrow, b, t, c0, kk, k, w, m, nq)
            sigma = total[buf, kk].real
            alpha = krow[buf, kk]
            ar = alpha.real
            ai = alpha.imag
            beta = ar
            tau = DT(0.0)
            scale = DT(0.0)
            if sigma != 0 or ai != 0:
                beta = -pk.copysign(pk.sqrt(ar * ar + ai * ai + sigma), ar)
                tau = (beta - alpha) / beta
                scale = 1 / (alpha - beta)
            # T's column kk: T[c, kk] = -τ Σ_d T[c, d] (v_dᴴ v_k), v_dᴴ v_k = conj(v_dk) +
            # scale · Σ conj(v_di) x_ik (rows below k)
            if IN_KERNEL and t < kk:
                s = DT(0.0)
                for d in range(t, kk):
                    s += tf[t, d] * (pk.conj(vrow[buf, d]) + scale * total[buf, d])
                tf[t, kk] = -tau * s
            if t == kk:
                tf[kk, kk] = tau
                taus[b, kk] = tau
            APPLY(x, xk, krow, total, b, t, c0, kk, k, w, m, nq, scale, tau, beta)
        pk.barrier()  # T complete, every reflector stored
        write_products(x, vd, vc, left, right, tf, b, t, c0, w, m, nq)

    return linalg_qr_panel
