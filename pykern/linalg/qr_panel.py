"""The kernels of the blocked Householder QR: the panel factorization (one workgroup per
matrix) and the triangular factor T of the panel's compact WY form, I - V T Vᴴ.

In the panel kernel each invocation owns the rows congruent to its index modulo the
workgroup size, and only it touches them in device memory; column norms and the products
vᴴ·column are reduced in shared memory. The reflectors follow LAPACK's larfg: H = I - τ v vᴴ
with v[0] = 1, β = -sign(Re α)·‖(α, x)‖ (real), τ = (β - α)/β, and τ = 0 (H = I) for a column
whose part below the diagonal is zero and whose diagonal entry is real — so R's diagonal is
real, with LAPACK's (and numpy's) signs. Hᴴ is applied to the columns right of the reflector.
One kernel serves real and complex dtypes (`pk.conj`, `.real`, `.imag` are trivial on reals).

A device that stops invocations after a number of loop iterations (lavapipe) gets the panel's
columns in several launches, each within its budget (a tall panel's columns cost about 2w·m/32
iterations each); every other device factors the whole panel in one.
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.linalg.blocks import PANEL
from pykern.tensor.core.device_limits import loop_budget
from pykern.tensor.core.strided import cdiv
from pykern.tensor.core.tensor import Tensor, empty

THREADS = 32  # also the panel width: invocation j reduces column j


def factor_panel(a: Tensor, taus: Tensor, c0: int, w: int) -> Tensor:
    """Householder-factors columns c0..c0+w of the (B, m, n) stack `a` in place (R above the
    diagonal, the reflectors below), writing their τ into `taus`; returns V, the (B, m - c0,
    w) reflectors with their unit diagonal and zeros above it."""
    rows = a.shape[1] - c0
    v = empty((a.shape[0], rows, w), a.dtype)
    kernel = _panel_kernel(a.dtype)
    for lo, hi in column_launches(rows, w, loop_budget()):
        kernel[THREADS, a.shape[0]](a, taus, v, c0, w, lo, hi, int(hi == w))
    return v


def column_launches(rows: int, w: int, budget: int | None) -> list[tuple[int, int]]:
    """The panel's columns [lo, hi) that each launch of the panel kernel factors: all in one
    without a loop budget, else as many consecutive columns as keep an invocation's loop
    iterations (`_column_cost`, and V's writing in the last launch) within `budget`. A column
    that alone exceeds it still gets a launch: the runtime reports the cut loop."""
    if budget is None:
        return [(0, w)]
    per_invocation = cdiv(rows, THREADS)
    launches: list[tuple[int, int]] = []
    lo, spent = 0, 0
    for kk in range(w):
        cost = _column_cost(per_invocation, w, kk)
        if kk == w - 1:
            cost += per_invocation * (w + 1)  # writing V
        if kk > lo and spent + cost > budget:
            launches.append((lo, kk))
            lo, spent = kk, 0
        spent += cost
    launches.append((lo, w))
    return launches


def _column_cost(per_invocation: int, w: int, kk: int) -> int:
    """An upper bound on the loop iterations one invocation of the panel kernel makes for
    column kk, owning `per_invocation` rows: the norm and scaling loops over its rows, the
    row k read and written (w), and for each later column the product vᴴ·column and the
    update over its rows."""
    later = w - kk
    return 3 + 3 * per_invocation + w + (2 * per_invocation + 2) * later


def triangular_factor(gram: Tensor, taus: Tensor, c0: int) -> Tensor:
    """T (B, w, w), upper triangular, with H_c0 ··· H_c0+w-1 = I - V T Vᴴ, from the Gram
    matrices Vᴴ V of the panel's reflectors and their τ."""
    t = empty(gram.shape, gram.dtype)
    _t_kernel(gram.dtype)[gram.shape[0]](gram, taus, t, c0)
    return t


@pk.func
def squares_below(a, b, k, first, m, zero):
    """The sum of |a[b, i, k]|² over the rows first, first + THREADS, ... < m."""
    ss = zero
    for i in range(first, m, THREADS):
        x = a[b, i, k]
        ss += x.real * x.real + x.imag * x.imag
    return ss


@functools.lru_cache(maxsize=None)
def _panel_kernel(dtype: DType) -> pk.Kernel:
    T = THREADS  # noqa: N806
    NB = PANEL  # noqa: N806
    LEVELS = THREADS.bit_length() - 1  # noqa: N806
    DT = dtype  # noqa: N806
    RT = dtype.real_dtype  # noqa: N806

    @pk.func
    def write_vectors(a, v, b, c0, w, t):
        """The panel's Householder vectors into v (their leading 1s, zeros above), the rows of
        invocation t."""
        m = a.shape[1]
        for i in range(c0 + (t - c0 % T + T) % T, m, T):
            for j in range(w):
                x: DT = 0.0
                if i > c0 + j:
                    x = a[b, i, c0 + j]
                elif i == c0 + j:
                    x = 1.0
                v[b, i - c0, j] = x

    @pk.kernel(workgroup=(T, 1, 1))
    def linalg_qr_panel(a: dtype[:, :, :], taus: dtype[:, :], v: dtype[:, :, :], c0: int,
                        w: int, k_lo: int, k_hi: int, write_v: int):
        part = pk.shared(DT, (T, NB))
        red = pk.shared(RT, T)
        krow = pk.shared(DT, NB)
        colw = pk.shared(DT, NB)
        t = pk.local_id(0)
        b = pk.global_id(1)
        m = a.shape[1]
        for kk in range(k_lo, k_hi):  # every row k and column is re-read from `a`
            k = c0 + kk
            first = k + 1 + (t - (k + 1) % T + T) % T  # this invocation's first row below k
            red[t] = squares_below(a, b, k, first, m, RT(0.0))
            if t == k % T:
                for j in range(w):
                    krow[j] = a[b, k, c0 + j]
            pk.barrier()
            for level in range(LEVELS):
                step = T >> (level + 1)
                if t < step:
                    red[t] = red[t] + red[t + step]
                pk.barrier()
            sigma = red[0]
            alpha = krow[kk]
            ar = alpha.real
            ai = alpha.imag
            beta = ar
            tau: DT = 0.0
            if sigma != 0 or ai != 0:
                beta = -pk.copysign(pk.sqrt(ar * ar + ai * ai + sigma), ar)
                tau = (beta - alpha) / beta
                scale = 1 / (alpha - beta)
                for i in range(first, m, T):
                    a[b, i, k] = a[b, i, k] * scale
            for j in range(kk + 1, w):
                acc: DT = 0.0
                for i in range(first, m, T):
                    acc += pk.conj(a[b, i, k]) * a[b, i, c0 + j]
                part[t, j] = acc
            pk.barrier()
            if t > kk and t < w:
                total = krow[t]  # v's leading 1 times row k
                for r in range(T):
                    total += part[r, t]
                colw[t] = pk.conj(tau) * total  # Hᴴ applied: conj(τ) v (vᴴ column)
            pk.barrier()
            if t == k % T:
                a[b, k, k] = beta
                for j in range(kk + 1, w):
                    a[b, k, c0 + j] = krow[j] - colw[j]
            for i in range(first, m, T):
                vi = a[b, i, k]
                for j in range(kk + 1, w):
                    a[b, i, c0 + j] = a[b, i, c0 + j] - vi * colw[j]
            if t == 0:
                taus[b, k] = tau
            pk.barrier()
        if write_v != 0:
            write_vectors(a, v, b, c0, w, t)

    return linalg_qr_panel


@functools.lru_cache(maxsize=None)
def _t_kernel(dtype: DType) -> pk.Kernel:
    DT = dtype  # noqa: N806

    @pk.kernel
    def linalg_qr_t(gram: dtype[:, :, :], taus: dtype[:, :], t: dtype[:, :, :], c0: int):
        b = pk.global_id(0)
        w = gram.shape[1]
        for j in range(w):
            tj = taus[b, c0 + j]
            for i in range(j + 1, w):
                t[b, i, j] = 0.0
            t[b, j, j] = tj
            for i in range(j):  # T[:j, j] = -τ_j T[:j, :j] Vᵀ v_j
                s: DT = 0.0
                for col in range(i, j):
                    s += t[b, i, col] * gram[b, col, j]
                t[b, i, j] = -tj * s

    return linalg_qr_t
