"""The shared-memory FFT kernel: batched complex FFTs of any length N whose prime factors are
2, 3, 5, 7, 11 or 13 and that fits in one workgroup's shared memory, in one launch (one pass
over global memory). Stockham autosort, mixed radix (radix_plan.py picks the radices: 4096 is
8·8·8·8, 1000 is 8·5·5·5), every butterfly in registers (butterflies.py).

Stage s of radix R runs N/R butterflies; with Ns the product of the radices before it,
butterfly j takes the inputs j + r·N/R (r < R), multiplies input r by w_(Ns·R)^(r·(j mod Ns)),
runs the R-point DFT and writes output r to (j div Ns)·Ns·R + (j mod Ns) + r·Ns. Each of the T
invocations of a transform runs butterflies t, t + T, ... of every stage, holding their values
in registers (a tuple: no array in memory); shared memory carries them between stages. The
first stage's inputs and the last stage's outputs are both elements j + r·N/R: they come
straight from global memory and go straight back to it, consecutive invocations on
consecutive elements.

The stage twiddles come from a host-computed table (tables.stage_twiddles, computed in f64 and
rounded once): stage s's w^(r·k) at offset + (r - 1)·Ns + k, real parts first and imaginary parts
M values later, so that consecutive invocations read consecutive values.

Complex numbers travel as interleaved (re, im) pairs of a real dtype (f32 for c64, f64 for c128):
every array is 4-D `(A, B, length, 2)` with any strides, and one transform runs along the third
dimension for each (a, b). A workgroup holds G transforms. In the row layout its invocations
are (t, g), t fastest: consecutive invocations move consecutive elements of one transform. In
the column layout (`columns`) they are (g, t), g fastest: consecutive invocations move one
element of consecutive transforms, which is a contiguous run where adjacent transforms are
adjacent in memory (a strided axis, the columns of a four-step pass). `stores_across` keeps the
row layout for the loads and stores across the transforms through shared memory (rows in,
transposed out: the last pass of a four-step).

Options: the input may be shorter than N (zero padded) or longer (cropped); the imaginary parts
are multiplied by `ci` as they are loaded and by `co` as they are stored (±1: an inverse FFT is
conj(FFT(conj(x))), so one variant serves both directions); the output is multiplied by
`scale`; the output may be shorter than N (cropped). Flags (compiled in) add: in the first pass of
a four-step FFT, output k of transform b multiplied by w_L^(k·b), looked up as the product of
two short tables (`hi[m >> 12] · lo[m & 4095]`); input i multiplied by `pre[i]` after the
load's conjugation, output k by `post[k]` before the store's (Bluestein in two launches).

Real transforms (`mode`): RFFT reads a real row of length 2N as N pairs z_j = x_2j + i·x_2j+1,
transforms them and turns the result Z into the spectrum X_0..X_N of the real row before the
store, X_k = E_k + w_2N^k·O_k with E_k = (Z_k + conj Z_(N-k))/2, O_k = (Z_k - conj Z_(N-k))/(2i)
(`post` holds w_2N^k); IRFFT builds Z_k = E_k + i·O_k from X_k and X_(N-k) as it loads (`pre`
holds w_2N^k) and stores the inverse transform's pairs as the real row. Their own conjugation
of X (hfft, ihfft) is `cr`. Other real transforms take the full length: REAL_IN reads a real
input (x's last dimension has length 1; zero imaginary parts) and its output may be cropped to
the non-negative frequencies; HERMITIAN_IN reads a half spectrum, extended by X_(N-k) =
conj X_k as it is loaded, and stores only the real parts (out's last dimension has length 1).
"""

from __future__ import annotations

import functools

import pykern as pk

from pykern.fft.butterflies import butterfly_at
from pykern.fft.radix_plan import (COMPLEX, HERMITIAN_IN, IRFFT, REAL_IN, RFFT, LaunchShape,
                                   stage_constants)
from pykern.lang.dtypes import DType

LO_BITS = 12  # the four-step twiddle w_L^m = hi[m >> LO_BITS] * lo[m & (2^LO_BITS - 1)]
# the kernel's extra steps (LaunchShape.flags: compiled in where asked for)
TWIDDLE = 1  # output k of transform b times w_L^(k·b) (four-step)
PRE = 2  # input i times pre[i] (Bluestein's chirp)
POST = 4  # output k times post[k] (Bluestein's kernel spectrum, its unchirp)

__all__ = ["COMPLEX", "HERMITIAN_IN", "IRFFT", "LO_BITS", "POST", "PRE", "REAL_IN", "RFFT",
           "TWIDDLE", "fft_kernel", "grid_for"]


def grid_for(shape: LaunchShape, count: int) -> tuple[int, int]:
    """The launch grid of `count` transforms: (transforms, invocations per transform) in the
    column layout, else the other way round."""
    t = shape.threads
    return (count, t) if shape.columns else (t, count)


@functools.lru_cache(maxsize=None)
def fft_kernel(real: DType, shape: LaunchShape) -> pk.Kernel:
    """The kernel of `shape` (radix_plan.launch_shape) for the part dtype `real`, launched on
    `grid_for(shape, count)`; see the module docstring."""
    F = real  # noqa: N806
    N = shape.n  # noqa: N806
    RAD = shape.radices  # noqa: N806
    S = len(RAD)  # noqa: N806
    T = shape.threads  # noqa: N806
    G = shape.groups  # noqa: N806
    COLS = shape.columns  # noqa: N806
    ACROSS = shape.stores_across  # noqa: N806
    MODE = shape.mode  # noqa: N806
    FLAGS = shape.flags  # noqa: N806
    k = stage_constants(shape)
    NS, BF, QS, GUARD, LOGNS, TOFF, TWM = (k.ns, k.butterflies, k.per_thread, k.guarded,  # noqa: N806
                                           k.log_ns, k.table_offset, k.table_size)
    MAXV = k.values  # noqa: N806
    # stage s's butterfly q of an invocation: the DFT of its values, vals[q·R : (q + 1)·R]
    STEPS = tuple(tuple(butterfly_at(q * RAD[s], RAD[s]) for q in range(QS[s]))  # noqa: N806
                  for s in range(S))
    LOG_G = G.bit_length() - 1  # noqa: N806
    P = 1 if shape.pad and not COLS else 0  # noqa: N806 - row layout: i stored at i + P·(i >> 5)
    # a transform's slots; stored across, an odd count, so that the transforms' values read
    # together for one store (same i, consecutive c) lie in different banks
    NP = N + P * ((N >> 5) + (1 if ACROSS else 0))  # noqa: N806
    SHARED = G * NP if (S > 1 or ACROSS or MODE == RFFT) else 1  # noqa: N806
    OUTS = -(-(N + 1) // T) if MODE == RFFT else -(-N // T)  # noqa: N806 - values stored per t
    RL, BL, QL = RAD[-1], BF[-1], QS[-1]  # noqa: N806 - the last stage's
    LO = LO_BITS  # noqa: N806
    MASK = (1 << LO_BITS) - 1  # noqa: N806

    @pk.func
    def slot(c, i):
        """Where element i of the workgroup's transform c lives in shared memory."""
        if COLS:
            return i * G + c
        return c * NP + i + P * (i >> 5)

    @pk.func
    def loaded(x, pre, a, b, e, ok, ci):
        """Input e of transform (a, b), conjugated by ci, times pre[e] under PRE; 0 if not ok."""
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
                pr = pre[2 * e]
                pj = pre[2 * e + 1]
                re2 = re * pr - im * pj
                im = re * pj + im * pr
                re = re2
        return complex(re, im)

    @pk.func
    def spectrum_pair(x, pre, a, b, e, live, n_in, ci, cr):
        """IRFFT: Z_e = E_e + i·O_e of the half spectrum x (X_e, X_(N-e); zero past n_in; the
        imaginary parts of X_0 and X_N ignored), halved, conjugated by ci."""
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
        # E = (a + conj b)/2, D = (a - conj b)/2, O = D · conj(w^e), Z = E + i·O
        er = (ar + br) * 0.5
        ei = (ai - bi) * 0.5
        dr = (ar - br) * 0.5
        di = (ai + bi) * 0.5
        wr = pre[2 * e]
        wi = -pre[2 * e + 1]
        o_r = dr * wr - di * wi
        o_i = dr * wi + di * wr
        return complex(er - o_i, ci * (ei + o_r))

    @pk.func
    def real_spectrum(sr, si, at, mirror, post, i):
        """RFFT: X_i of the real row from Z_i (slot `at`) and Z_(N-i) (slot `mirror`)."""
        zr = sr[at]
        zi = si[at]
        cr2 = sr[mirror]
        ci2 = si[mirror]
        er = (zr + cr2) * 0.5
        ei = (zi - ci2) * 0.5
        o_r = (zi + ci2) * 0.5
        o_i = (cr2 - zr) * 0.5
        wr = post[2 * i]
        wi = post[2 * i + 1]
        return complex(er + wr * o_r - wi * o_i, ei + wr * o_i + wi * o_r)

    @pk.func
    def store(out, a, b, i, z, scale, co, hi, lo, post):
        """out[a, b, i] = z · scale (· w_L^(i·b) under TWIDDLE, · post[i] under POST),
        its imaginary part times co."""
        re = z.real * scale
        im = z.imag * scale
        if (FLAGS & TWIDDLE) != 0:
            mm = i * b
            hh = mm >> LO
            lw = mm & MASK
            hr = hi[2 * hh]
            hj = hi[2 * hh + 1]
            lr = lo[2 * lw]
            lj = lo[2 * lw + 1]
            wr = hr * lr - hj * lj
            wi = hr * lj + hj * lr
            re2 = re * wr - im * wi
            im = re * wi + im * wr
            re = re2
        if (FLAGS & POST) != 0:
            qr = post[2 * i]
            qj = post[2 * i + 1]
            re3 = re * qr - im * qj
            im = re * qj + im * qr
            re = re3
        out[a, b, i, 0] = re
        if MODE != HERMITIAN_IN:  # (a real output: its real part only)
            out[a, b, i, 1] = co * im

    @pk.kernel(workgroup=(G, T, 1) if COLS else (T, G, 1))
    def fft_stockham(x: F[:, :, :, :], out: F[:, :, :, :], tw: F[:], hi: F[:], lo: F[:],
                     pre: F[:], post: F[:], scale: F, ci: F, co: F, cr: F):
        sr = pk.shared(F, SHARED)
        si = pk.shared(F, SHARED)
        t = pk.local_id(0)
        g = pk.local_id(1)
        first = pk.group_id(1) * G
        count = pk.grid(1)
        if COLS:
            t = pk.local_id(1)
            g = pk.local_id(0)
            first = pk.group_id(0) * G
            count = pk.grid(0)
        nb = out.shape[1]
        a = (first + g) // nb
        b = first + g - a * nb
        live = first + g < count
        n_in = x.shape[2]
        zero = F(0.0)
        vals = (complex(zero, zero),) * MAXV
        for s in pk.static_range(S):
            if s > 0:
                pk.barrier()  # the previous stage's stores are done
            for q in pk.static_range(QS[s]):
                j = t + q * T
                if GUARD[s]:  # the last butterflies of a stage: a copy of one that exists
                    j = min(j, BF[s] - 1)
                for r in pk.static_range(RAD[s]):
                    e = j + r * BF[s]
                    if s > 0:
                        vals[q * RAD[s] + r] = complex(sr[slot(g, e)], si[slot(g, e)])
                    elif MODE == IRFFT:
                        vals[q * RAD[s] + r] = spectrum_pair(x, pre, a, b, e, live, n_in, ci,
                                                             cr)
                    elif MODE == HERMITIAN_IN:
                        vals[q * RAD[s] + r] = loaded(x, pre, a, b, e, live, ci)
                    else:
                        vals[q * RAD[s] + r] = loaded(x, pre, a, b, e, live and e < n_in, ci)
                if s > 0:
                    if LOGNS[s] >= 0:  # j mod Ns
                        kk = j & (NS[s] - 1)
                    else:
                        kk = j % NS[s]
                    for r in pk.static_range(1, RAD[s]):
                        at = TOFF[s] + (r - 1) * NS[s] + kk
                        vals[q * RAD[s] + r] = vals[q * RAD[s] + r] * complex(tw[at], tw[TWM + at])
                vals = STEPS[s][q](vals)  # the butterfly's DFT, in place
            if s < S - 1:
                if s > 0:
                    pk.barrier()  # every read of this stage is done
                for q in pk.static_range(QS[s]):
                    j = t + q * T
                    if LOGNS[s] >= 0:
                        kk = j & (NS[s] - 1)
                    else:
                        kk = j % NS[s]
                    base = (j - kk) * RAD[s] + kk  # (j div Ns)·Ns·R + j mod Ns
                    if j < BF[s]:
                        for r in pk.static_range(RAD[s]):
                            sr[slot(g, base + r * NS[s])] = vals[q * RAD[s] + r].real
                            si[slot(g, base + r * NS[s])] = vals[q * RAD[s] + r].imag
        # the last stage's value q·R + r is output element j + r·N/R (j = t + q·T)
        if ACROSS or MODE == RFFT:
            if S > 1:
                pk.barrier()  # every read of the last stage is done
            for q in pk.static_range(QL):
                j = t + q * T
                if j < BL:
                    for r in pk.static_range(RL):
                        sr[slot(g, j + r * BL)] = vals[q * RL + r].real
                        si[slot(g, j + r * BL)] = vals[q * RL + r].imag
            pk.barrier()
        if MODE == RFFT:
            for m in pk.static_range(OUTS):
                i = t + m * T
                if live and i <= N and i < out.shape[2]:
                    store(out, a, b, i, real_spectrum(sr, si, slot(g, i % N),
                                                      slot(g, (N - i) % N), post, i),
                          scale, cr, hi, lo, post)
        elif ACROSS:
            a_first = first // nb
            b_first = first - a_first * nb
            whole = (nb & (G - 1)) == 0
            for m in pk.static_range(OUTS):
                idx = g * T + t + m * (G * T)  # consecutive invocations, consecutive transforms
                c = idx & (G - 1)
                i = idx >> LOG_G
                ac = a_first
                bc = b_first + c
                if not whole:
                    ac = (first + c) // nb
                    bc = first + c - ac * nb
                if first + c < count and i < N and i < out.shape[2]:
                    store(out, ac, bc, i, complex(sr[slot(c, i)], si[slot(c, i)]), scale, co,
                          hi, lo, post)
        else:
            for q in pk.static_range(QL):
                j = t + q * T
                for r in pk.static_range(RL):
                    i = j + r * BL
                    if live and j < BL and i < out.shape[2]:
                        store(out, a, b, i, vals[q * RL + r], scale, co, hi, lo, post)

    return fft_stockham
