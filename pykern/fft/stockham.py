"""The shared-memory FFT kernel: batched complex FFTs of a power-of-two length N that fits in one
workgroup's shared memory, Stockham autosort (no bit reversal), radix 8 in registers.

Each of the T = N/V invocations of a transform holds V = min(8, N) values in registers: value m
of invocation t is element t + m·T. Every stage reads those V values, twiddles them and runs
its butterflies in registers: the first stage one radix-8 (or 2 or 4 radix-4, or 4 radix-2,
for lengths that are not a power of 8) butterfly, every later stage one radix-8 butterfly. In
Stockham order, the first stage's inputs and the last stage's outputs are both elements
t + m·T, so the values come from global memory straight into registers and go back from
there; shared memory only carries them between stages (N = 512: three stages, two exchanges).

Complex numbers travel as interleaved (re, im) pairs of a real dtype (f32 for c64, f64 for c128):
every array is 4-D `(A, B, length, 2)` with any strides, and one transform runs along the third
dimension for each (a, b). A workgroup holds G transforms. In the row layout its invocations
are (t, g), t fastest: consecutive invocations move consecutive elements of one transform. In
the column layout (`columns`) they are (g, t), g fastest: consecutive invocations move one
element of consecutive transforms, which is a contiguous run where adjacent transforms are
adjacent in memory (the strided columns of a four-step pass). `stores_across` keeps the row
layout for the loads and stores across the transforms through shared memory (rows in,
transposed out: the last pass of a four-step).

Twiddles come from a host-computed table `tw` of w_N^m = exp(-2πi m/N), computed in f64 and
rounded once to the working dtype, rather than from sin/cos in the kernel.

Options: the input may be shorter than N (zero padded) or longer (cropped); the imaginary parts
are multiplied by `ci` as they are loaded and by `co` as they are stored (±1: an inverse FFT is
conj(FFT(conj(x))), so one variant serves both directions); the output is multiplied by
`scale`; the output may be shorter than N (cropped). Run-time flags add: in the first pass of
a four-step FFT, output k of transform b multiplied by w_L^(k·b), looked up as the product of
two short tables (`hi[m >> 12] · lo[m & 4095]`); input i multiplied by `pre[i]` after the
load's conjugation, output k by `post[k]` before the store's (Bluestein in two launches).
"""

from __future__ import annotations

import functools

import pykern as pk

from pykern.lang.dtypes import DType

VALUES = 8  # values per invocation: one radix-8 butterfly per stage
MIN_GROUP = 64  # invocations per workgroup we aim for (several short transforms per workgroup)
COLUMN_INVOCATIONS = 256  # invocations per workgroup we aim for in the strided column passes
MAX_INVOCATIONS = 512  # invocations per workgroup of the column passes, at most
PAD = True  # pad shared memory (row layout: value i at i + i/32) where it fits
LO_BITS = 12  # the four-step twiddle w_L^m = hi[m >> LO_BITS] * lo[m & (2^LO_BITS - 1)]
# the kernel's `flags` (run-time, uniform: one compiled variant serves every use)
TWIDDLE = 1  # output k of transform b times w_L^(k·b) (four-step)
PRE = 2  # input i times pre[i] (Bluestein's chirp)
POST = 4  # output k times post[k] (Bluestein's kernel spectrum, its unchirp)
H = 0.7071067811865476  # cos(π/4)


def threads_for(n: int) -> int:
    """Invocations per transform of length n: VALUES values each."""
    return max(1, n // VALUES)


def columns_per_group(n: int, capacity: int) -> int:
    """How many strided columns of length n one workgroup transforms: as many as fill
    COLUMN_INVOCATIONS invocations, and up to 16 (128 bytes of c64 per row, read together),
    within `capacity` and MAX_INVOCATIONS. Short columns get many: the columns of 2 of a
    four-step take 256 per workgroup, each load a 2 KiB contiguous run."""
    t = threads_for(n)
    g = 1
    while (2 * g * n <= capacity and 2 * g * t <= MAX_INVOCATIONS
           and (2 * g * t <= COLUMN_INVOCATIONS or 2 * g <= 16)):
        g *= 2
    return g


def padded(n: int, groups: int, itemsize: int, limit: int) -> bool:
    """Whether `groups` transforms of length n get padded shared memory: PAD, and it fits
    (with the one more slot per transform that `stores_across` takes)."""
    return PAD and 2 * groups * (n + (n >> 5) + 1) * itemsize <= limit


def transforms_per_group(n: int, capacity: int) -> int:
    """How many transforms of length n one workgroup holds: enough for MIN_GROUP invocations,
    within `capacity` complex values of shared memory."""
    g = max(1, MIN_GROUP // threads_for(n))
    while g > 1 and g * n > capacity:
        g //= 2
    return g


def grid_for(n: int, count: int, columns: bool) -> tuple[int, int]:
    """The launch grid of `count` transforms of length n: (transforms, invocations per
    transform) in the column layout, else the other way round."""
    return (count, threads_for(n)) if columns else (threads_for(n), count)


@pk.func
def minus_i(z):
    """z · (-i)."""
    return complex(z.imag, -z.real)


@pk.func
def dft2(a, b):
    return a + b, a - b


@pk.func
def dft4(a, b, c, d):
    """The forward 4-point DFT of (a, b, c, d)."""
    s0 = a + c
    s1 = a - c
    s2 = b + d
    s3 = minus_i(b - d)
    return s0 + s2, s1 + s3, s0 - s2, s1 - s3


@pk.func
def dft8(x0, x1, x2, x3, x4, x5, x6, x7, h):
    """The forward 8-point DFT: two 4-point DFTs of the even and odd inputs, the odd ones
    twiddled by w_8^k (w_8 = h·(1 - i), h = cos(π/4) in the working dtype)."""
    e0, e1, e2, e3 = dft4(x0, x2, x4, x6)
    o0, o1, o2, o3 = dft4(x1, x3, x5, x7)
    o1 = complex(h * (o1.real + o1.imag), h * (o1.imag - o1.real))
    o2 = minus_i(o2)
    o3 = complex(h * (o3.imag - o3.real), -h * (o3.real + o3.imag))
    return e0 + o0, e1 + o1, e2 + o2, e3 + o3, e0 - o0, e1 - o1, e2 - o2, e3 - o3


@functools.lru_cache(maxsize=None)
def stockham_kernel(real: DType, n: int, groups: int, columns: bool = False,
                    pad: bool = False, stores_across: bool = False) -> pk.Kernel:
    """The kernel for transforms of length n (a power of two), `groups` (a power of two) per
    workgroup, launched on `grid_for(n, count, columns)`; `columns`: the column layout (loads
    and stores across the transforms); `stores_across`: the row layout, stored across the
    transforms through shared memory; `pad`: in the row layout, shared value i lives at
    i + i/32, so that the first stage's stores (stride 8) spread over the banks."""
    F = real  # noqa: N806
    N = n  # noqa: N806
    V = min(VALUES, n)  # noqa: N806 - values per invocation
    T = threads_for(n)  # noqa: N806
    G = groups  # noqa: N806
    LOG_G = groups.bit_length() - 1  # noqa: N806
    COLS = columns  # noqa: N806 - the column layout
    ACROSS = stores_across and groups > 1 and not columns  # noqa: N806
    LOG = n.bit_length() - 1  # noqa: N806
    # the first stage's radix: what makes the rest radix 8
    LOG0 = min(LOG, 3) if LOG % 3 == 0 else LOG % 3  # noqa: N806
    R0 = 1 << LOG0  # noqa: N806
    S8 = (LOG - LOG0) // 3  # noqa: N806 - radix-8 stages after the first
    Q0 = V // R0  # noqa: N806 - first-stage butterflies per invocation
    P = 1 if pad and not columns else 0  # noqa: N806 - row layout: i stored at i + P·(i >> 5)
    # a transform's slots; stored across, an odd count, so that the transforms' values read
    # together for one store (same i, consecutive c) lie in different banks
    NP = N + P * ((N >> 5) + (1 if ACROSS else 0))  # noqa: N806
    LO = LO_BITS  # noqa: N806
    MASK = (1 << LO_BITS) - 1  # noqa: N806
    C = pk.c64 if real == pk.f32 else pk.c128  # noqa: N806

    @pk.func
    def slot(c, i):
        """Where element i of the workgroup's transform c lives in shared memory."""
        if COLS:
            return i * G + c
        return c * NP + i + P * (i >> 5)

    @pk.kernel(workgroup=(G, T, 1) if COLS else (T, G, 1))
    def fft_stockham(x: F[:, :, :, :], out: F[:, :, :, :], tw: F[:], hi: F[:], lo: F[:],
                     pre: F[:], post: F[:], scale: F, ci: F, co: F, flags: int):
        sr = pk.shared(F, G * NP)
        si = pk.shared(F, G * NP)
        v = pk.local(C, VALUES)  # (V of them used; dead branches name up to 8)
        h = F(H)
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
        # the workgroup's transforms share one a where nb is a multiple of G (no division
        # per value when storing across them)
        a_first = first // nb
        b_first = first - a_first * nb
        whole = (nb & (G - 1)) == 0
        a = (first + g) // nb
        b = first + g - a * nb
        live = first + g < count
        n_in = x.shape[2]
        for m in range(V):
            i = t + m * T
            re = F(0.0)
            im = F(0.0)
            if live and i < n_in:
                re = x[a, b, i, 0]
                im = ci * x[a, b, i, 1]
                if (flags & PRE) != 0:
                    pr = pre[2 * i]
                    pj = pre[2 * i + 1]
                    re2 = re * pr - im * pj
                    im = re * pj + im * pr
                    re = re2
            v[m] = complex(re, im)
        # the first stage (Ns = 1: no twiddles)
        if R0 == 2:
            for q in range(Q0):
                v[q], v[q + Q0] = dft2(v[q], v[q + Q0])
        if R0 == 4:
            for q in range(Q0):
                v[q], v[q + Q0], v[q + 2 * Q0], v[q + 3 * Q0] = dft4(
                    v[q], v[q + Q0], v[q + 2 * Q0], v[q + 3 * Q0])
        if R0 == 8:
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] = dft8(
                v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], h)
        for s in range(S8):
            # the previous stage's outputs to shared memory: input r of its butterfly
            # j = t + q·T (sub-transforms of ns) goes to (j / ns)·ns·R + j % ns + r·ns
            log_ns = LOG0 + 3 * s  # of the previous stage's output sub-transforms
            if s == 0:
                for q in range(Q0):
                    for r in range(R0):
                        j = t + q * T
                        e = (j << LOG0) + r
                        sr[slot(g, e)] = v[q + r * Q0].real
                        si[slot(g, e)] = v[q + r * Q0].imag
            else:
                pk.barrier()  # every read of the stage before is done
                ns = 1 << (log_ns - 3)
                k = t & (ns - 1)
                base = ((t >> (log_ns - 3)) << log_ns) + k
                for r in range(8):
                    e = base + r * ns
                    sr[slot(g, e)] = v[r].real
                    si[slot(g, e)] = v[r].imag
            pk.barrier()
            # this stage: radix 8 over sub-transforms of ns = 2^log_ns, inputs t + r·T
            ns = 1 << log_ns
            k = t & (ns - 1)
            step = N >> (log_ns + 3)  # w_{8 ns}^(k r) = w_N^(k r step)
            for r in range(8):
                e = t + r * T
                z = complex(sr[slot(g, e)], si[slot(g, e)])
                if r > 0:
                    w = (k * r * step) & (N - 1)
                    z = z * complex(tw[2 * w], tw[2 * w + 1])
                v[r] = z
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] = dft8(
                v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], h)
        # value m is output element t + m·T
        n_out = out.shape[2]
        if ACROSS:
            pk.barrier()  # every read of the last stage is done
            for m in range(V):
                sr[slot(g, t + m * T)] = v[m].real
                si[slot(g, t + m * T)] = v[m].imag
            pk.barrier()
        for m in range(V):
            c = g
            i = t + m * T
            ac = a
            bc = b
            if ACROSS:  # consecutive invocations, consecutive transforms
                idx = g * T + t + m * (G * T)
                c = idx & (G - 1)
                i = idx >> LOG_G
                ac = a_first
                bc = b_first + c
                if not whole:
                    ac = (first + c) // nb
                    bc = first + c - ac * nb
            if first + c < count and i < n_out:
                re = v[m].real
                im = v[m].imag
                if ACROSS:
                    re = sr[slot(c, i)]
                    im = si[slot(c, i)]
                re = re * scale
                im = im * scale
                if (flags & TWIDDLE) != 0:
                    mm = i * bc
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
                if (flags & POST) != 0:
                    qr = post[2 * i]
                    qj = post[2 * i + 1]
                    re3 = re * qr - im * qj
                    im = re * qj + im * qr
                    re = re3
                out[ac, bc, i, 0] = re
                out[ac, bc, i, 1] = co * im

    return fft_stockham
