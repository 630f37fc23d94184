"""The device functions of the shared-memory FFT kernel (stockham.py, whose module docstring
describes the layout, the stages and the options): each is made for one kernel variant by a
factory that closes over that variant's compile-time constants.
"""

from __future__ import annotations

import pykern as pk

from pykern.fft.half_spectra import halves_from_spectrum, spectrum_from_halves, times
from pykern.fft.radix_plan import HERMITIAN_IN, REAL_IN, LaunchShape, StageConstants
from pykern.lang.dtypes import DType
from pykern.lang.func import Func

LO_BITS = 12  # the four-step twiddle w_L^m = hi[m >> LO_BITS] * lo[m & (2^LO_BITS - 1)]
# the kernel's extra steps (LaunchShape.flags: compiled in where asked for)
TWIDDLE = 1  # output k of transform b times w_L^(k·b) (four-step)
PRE = 2  # input i times pre[i] (Bluestein's chirp)
POST = 4  # output k times post[k] (Bluestein's kernel spectrum, its unchirp)


def padding(shape: LaunchShape) -> tuple[int, int]:
    """(P, NP): the row layout stores element i at i + P·(i >> 5), and a transform takes NP
    slots; stored across, an odd count, so that the transforms' values read together for one
    store (same i, consecutive c) lie in different banks."""
    p = 1 if shape.pad and not shape.columns else 0
    return p, shape.n + p * ((shape.n >> 5) + (1 if shape.stores_across else 0))


def slot_func(shape: LaunchShape) -> Func:
    """`slot(c, i)`: where element i of the workgroup's transform c lives in shared memory."""
    G, COLS = shape.groups, shape.columns  # noqa: N806
    P, NP = padding(shape)  # noqa: N806

    @pk.func
    def slot(c, i):
        if COLS:
            return i * G + c
        return c * NP + i + P * (i >> 5)

    return slot


def place_func(shape: LaunchShape) -> Func:
    """`place()`: (t, g, first, count) of this invocation: its index in its transform, its
    transform's in the workgroup, the workgroup's first transform and the transforms' count."""
    G, COLS = shape.groups, shape.columns  # noqa: N806

    @pk.func
    def place():
        t = pk.local_id(0)
        g = pk.local_id(1)
        first = pk.group_id(1) * G
        count = pk.grid(1)
        if COLS:
            t = pk.local_id(1)
            g = pk.local_id(0)
            first = pk.group_id(0) * G
            count = pk.grid(0)
        return t, g, first, count

    return place


def loaded_func(real: DType, shape: LaunchShape) -> Func:
    """`loaded(x, pre, a, b, e, ok, ci)`: input e of transform (a, b), conjugated by ci, times
    pre[e] under PRE; 0 if not ok."""
    F, N, MODE, FLAGS = real, shape.n, shape.mode, shape.flags  # noqa: N806

    @pk.func
    def loaded(x, pre, a, b, e, ok, ci):
        re = F(0.0)
        im = F(0.0)
        if MODE == HERMITIAN_IN:  # X_e, or conj X_(N-e) past N/2
            src = e
            sign = ci
            if 2 * e > N:
                src = N - e
                sign = -ci
            if ok and src < x.shape[2]:
                re = x[a, b, src, 0]
                im = sign * x[a, b, src, 1]
        elif ok:
            re = x[a, b, e, 0]
            if MODE != REAL_IN:
                im = ci * x[a, b, e, 1]
            if (FLAGS & PRE) != 0:
                re, im = times(re, im, pre[2 * e], pre[2 * e + 1])
        return complex(re, im)

    return loaded


def spectrum_pair_func(real: DType, n: int) -> Func:
    """`spectrum_pair(x, pre, a, b, e, live, n_in, ci, cr)`, IRFFT: Z_e = E_e + i·O_e of the
    half spectrum x (X_e, X_(N-e); zero past n_in; the imaginary parts of X_0 and X_N
    ignored), halved, conjugated by ci."""
    F, N = real, n  # noqa: N806

    @pk.func
    def spectrum_pair(x, pre, a, b, e, live, n_in, ci, cr):
        e2 = N - e
        ar = F(0.0)
        ai = F(0.0)
        br = F(0.0)
        bi = F(0.0)
        if live and e < n_in:
            ar = x[a, b, e, 0]
            ai = cr * x[a, b, e, 1]
        if live and e2 < n_in:
            br = x[a, b, e2, 0]
            bi = cr * x[a, b, e2, 1]
        if e == 0:
            ai = F(0.0)
            bi = F(0.0)
        zr, zi = halves_from_spectrum(ar, ai, br, bi, pre[2 * e], pre[2 * e + 1])
        return complex(zr, ci * zi)

    return spectrum_pair


@pk.func
def real_spectrum(sr, si, at, mirror, post, i):
    """RFFT: X_i of the real row from Z_i (slot `at`) and Z_(N-i) (slot `mirror`)."""
    xr, xi = spectrum_from_halves(sr[at], si[at], sr[mirror], si[mirror], post[2 * i],
                                  post[2 * i + 1])
    return complex(xr, xi)


def store_func(shape: LaunchShape) -> Func:
    """`store(out, a, b, i, z, scale, co, hi, lo, post)`: out[a, b, i] = z · scale
    (· w_L^(i·b) under TWIDDLE, · post[i] under POST), its imaginary part times co."""
    MODE, FLAGS = shape.mode, shape.flags  # noqa: N806
    LO = LO_BITS  # noqa: N806
    MASK = (1 << LO_BITS) - 1  # noqa: N806

    @pk.func
    def store(out, a, b, i, z, scale, co, hi, lo, post):
        re = z.real * scale
        im = z.imag * scale
        if (FLAGS & TWIDDLE) != 0:
            mm = i * b
            hh = mm >> LO
            lw = mm & MASK
            wr, wi = times(hi[2 * hh], hi[2 * hh + 1], lo[2 * lw], lo[2 * lw + 1])
            re, im = times(re, im, wr, wi)
        if (FLAGS & POST) != 0:
            re, im = times(re, im, post[2 * i], post[2 * i + 1])
        out[a, b, i, 0] = re
        if MODE != HERMITIAN_IN:  # (a real output: its real part only)
            out[a, b, i, 1] = co * im

    return store


def spill_func(shape: LaunchShape, k: StageConstants, s: int, slot: Func) -> Func:
    """`spill(vals, sr, si, g, t)`: stage s's outputs from the registers into shared memory,
    output r of butterfly j to (j div Ns)·Ns·R + (j mod Ns) + r·Ns (after a barrier past the
    first stage: every read of this stage is done)."""
    T, R, NS, LOGNS, BF, QS = (shape.threads, shape.radices[s], k.ns[s],  # noqa: N806
                               k.log_ns[s], k.butterflies[s], k.per_thread[s])
    STAGE = s  # noqa: N806

    @pk.func
    def spill(vals, sr, si, g, t):
        if STAGE > 0:
            pk.barrier()
        for q in pk.static_range(QS):
            j = t + q * T
            if LOGNS >= 0:
                kk = j & (NS - 1)
            else:
                kk = j % NS
            base = (j - kk) * R + kk  # (j div Ns)·Ns·R + j mod Ns
            if j < BF:
                for r in pk.static_range(R):
                    sr[slot(g, base + r * NS)] = vals[q * R + r].real
                    si[slot(g, base + r * NS)] = vals[q * R + r].imag

    return spill
