"""The shared-memory FFT kernel: batched complex FFTs of a power-of-two length N that fits in one
workgroup's shared memory, Stockham autosort (no bit reversal), radix 4 with one radix-2 stage
first when log2(N) is odd.

Complex numbers travel as interleaved (re, im) pairs of a real dtype (f32 for c64, f64 for c128):
every array is 4-D `(A, B, length, 2)` with any strides, and one transform runs along the third
dimension for each (a, b). Each workgroup holds G transforms in shared memory (real and imaginary
parts in separate arrays); each of its T invocations per transform keeps its radix-4 inputs in
registers between the stage's read and write, so one buffer of N values is enough.

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

MAX_THREADS = 256  # invocations per transform
MIN_GROUP = 64  # invocations per workgroup we aim for (several short transforms per workgroup)
COLUMN_INVOCATIONS = 256  # invocations per workgroup we aim for in the strided column passes
MAX_INVOCATIONS = 512  # invocations per workgroup of the column passes, at most
PAD = True  # pad shared memory (value i at i + i/32) where it fits: see stockham_kernel
LO_BITS = 12  # the four-step twiddle w_L^m = hi[m >> LO_BITS] * lo[m & (2^LO_BITS - 1)]
# the kernel's `flags` (run-time, uniform: one compiled variant serves every use)
TWIDDLE = 1  # output k of transform b times w_L^(k·b) (four-step)
PRE = 2  # input i times pre[i] (Bluestein's chirp)
POST = 4  # output k times post[k] (Bluestein's kernel spectrum, its unchirp)


def threads_for(n: int) -> int:
    """Invocations per transform of length n: one radix-4 butterfly each per stage, at most
    MAX_THREADS (they then loop)."""
    return max(1, min(MAX_THREADS, n // 4))


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
    """Whether `groups` transforms of length n get padded shared memory: PAD, and it fits."""
    return PAD and 2 * groups * (n + (n >> 5)) * itemsize <= limit


def transforms_per_group(n: int, capacity: int) -> int:
    """How many transforms of length n one workgroup holds: enough for MIN_GROUP invocations,
    within `capacity` complex values of shared memory."""
    g = max(1, MIN_GROUP // threads_for(n))
    while g > 1 and g * n > capacity:
        g //= 2
    return g


@functools.lru_cache(maxsize=None)
def stockham_kernel(real: DType, n: int, groups: int, columns: bool = False,
                    pad: bool = False, stores_across: bool = False) -> pk.Kernel:
    """The kernel for transforms of length n (a power of two), `groups` (a power of two) per
    workgroup; `columns`: the loads and stores run across the transforms first (adjacent
    invocations, adjacent transforms), coalesced where adjacent transforms are adjacent in
    memory, as the strided columns of a four-step pass are; `stores_across`: the stores alone
    do (rows in, transposed out: a four-step's last pass); `pad`: shared value i lives at
    i + i/32, so that the early stages' stores (strides 4 and 16) spread over the banks."""
    F = real  # noqa: N806
    N = n  # noqa: N806
    T = threads_for(n)  # noqa: N806
    G = groups  # noqa: N806
    LOG_G = groups.bit_length() - 1  # noqa: N806
    COLS = columns  # noqa: N806 - loads across the transforms
    COLS_OUT = columns or stores_across  # noqa: N806 - stores across them
    LOG = n.bit_length() - 1  # noqa: N806
    ODD = LOG % 2  # noqa: N806 - a radix-2 stage first
    R4 = LOG // 2  # noqa: N806 - radix-4 stages
    PER = N // T  # noqa: N806 - values per invocation
    J4 = max(1, N // (4 * T))  # noqa: N806 - radix-4 butterflies per invocation and stage
    J2 = max(1, N // (2 * T))  # noqa: N806 - radix-2 butterflies per invocation
    Q = N // 4  # noqa: N806
    H = N // 2  # noqa: N806
    LO = LO_BITS  # noqa: N806
    P = 1 if pad else 0  # noqa: N806 - shared index i is stored at i + P·(i >> 5)
    NP = N + P * (N >> 5)  # noqa: N806
    MASK = (1 << LO_BITS) - 1  # noqa: N806

    @pk.kernel(workgroup=(T, G, 1))
    def fft_stockham(x: F[:, :, :, :], out: F[:, :, :, :], tw: F[:], hi: F[:], lo: F[:],
                     pre: F[:], post: F[:], scale: F, ci: F, co: F, flags: int):
        sr = pk.shared(F, (G, NP))
        si = pk.shared(F, (G, NP))
        vr = pk.local(F, 4 * J4)
        vi = pk.local(F, 4 * J4)
        t = pk.local_id(0)
        g = pk.local_id(1)
        tr = pk.global_id(1)
        first = tr - g  # the workgroup's first transform
        count = pk.grid(1)
        nb = out.shape[1]
        a = 0
        b = 0
        if tr < count:
            a = tr // nb
            b = tr - a * nb
        # the workgroup's transforms share one a where nb is a multiple of G (no division
        # per value when loading or storing across them)
        a_first = first // nb
        b_first = first - a_first * nb
        whole = (nb & (G - 1)) == 0
        n_in = x.shape[2]
        for q in range(PER):
            # which transform (slot c) and element i this invocation moves: its own slot's
            # i = t + q·T, or (COLS) consecutive invocations across the slots, element-major
            c = g
            i = t + q * T
            ac = a
            bc = b
            if COLS:
                idx = g * T + t + q * (G * T)
                c = idx & (G - 1)
                i = idx >> LOG_G
                ac = a_first
                bc = b_first + c
                if not whole:
                    ac = (first + c) // nb
                    bc = first + c - ac * nb
            re = F(0.0)
            im = F(0.0)
            if first + c < count and i < n_in:
                re = x[ac, bc, i, 0]
                im = ci * x[ac, bc, i, 1]
                if (flags & PRE) != 0:
                    pr = pre[2 * i]
                    pj = pre[2 * i + 1]
                    re2 = re * pr - im * pj
                    im = re * pj + im * pr
                    re = re2
            sr[c, i + P * (i >> 5)] = re
            si[c, i + P * (i >> 5)] = im
        pk.barrier()
        if ODD == 1:  # Ns = 1: no twiddles
            for q in range(J2):
                j = t + q * T
                vr[2 * q] = sr[g, j + P * (j >> 5)]
                vi[2 * q] = si[g, j + P * (j >> 5)]
                vr[2 * q + 1] = sr[g, j + H + P * ((j + H) >> 5)]
                vi[2 * q + 1] = si[g, j + H + P * ((j + H) >> 5)]
            pk.barrier()
            for q in range(J2):
                j = t + q * T
                ar = vr[2 * q]
                ai = vi[2 * q]
                br = vr[2 * q + 1]
                bi = vi[2 * q + 1]
                sr[g, 2 * j + P * ((2 * j) >> 5)] = ar + br
                si[g, 2 * j + P * ((2 * j) >> 5)] = ai + bi
                sr[g, 2 * j + 1 + P * ((2 * j + 1) >> 5)] = ar - br
                si[g, 2 * j + 1 + P * ((2 * j + 1) >> 5)] = ai - bi
            pk.barrier()
        for s in range(R4):
            log_ns = 2 * s + ODD
            ns = 1 << log_ns
            step = N >> (log_ns + 2)  # twiddle index stride: w_{4 Ns}^(k r) = w_N^(k r step)
            for q in range(J4):
                j = t + q * T
                if j < Q:
                    k = j & (ns - 1)
                    vr[4 * q] = sr[g, j + P * (j >> 5)]
                    vi[4 * q] = si[g, j + P * (j >> 5)]
                    for r in range(1, 4):
                        xr = sr[g, j + r * Q + P * ((j + r * Q) >> 5)]
                        xi = si[g, j + r * Q + P * ((j + r * Q) >> 5)]
                        m = k * r * step
                        wr = tw[2 * m]
                        wi = tw[2 * m + 1]
                        vr[4 * q + r] = xr * wr - xi * wi
                        vi[4 * q + r] = xr * wi + xi * wr
            pk.barrier()
            for q in range(J4):
                j = t + q * T
                if j < Q:
                    k = j & (ns - 1)
                    base = ((j >> log_ns) << (log_ns + 2)) + k
                    a0r = vr[4 * q] + vr[4 * q + 2]
                    a0i = vi[4 * q] + vi[4 * q + 2]
                    a1r = vr[4 * q] - vr[4 * q + 2]
                    a1i = vi[4 * q] - vi[4 * q + 2]
                    a2r = vr[4 * q + 1] + vr[4 * q + 3]
                    a2i = vi[4 * q + 1] + vi[4 * q + 3]
                    # (v1 - v3) * -i
                    a3r = vi[4 * q + 1] - vi[4 * q + 3]
                    a3i = vr[4 * q + 3] - vr[4 * q + 1]
                    sr[g, base + P * (base >> 5)] = a0r + a2r
                    si[g, base + P * (base >> 5)] = a0i + a2i
                    sr[g, base + ns + P * ((base + ns) >> 5)] = a1r + a3r
                    si[g, base + ns + P * ((base + ns) >> 5)] = a1i + a3i
                    sr[g, base + 2 * ns + P * ((base + 2 * ns) >> 5)] = a0r - a2r
                    si[g, base + 2 * ns + P * ((base + 2 * ns) >> 5)] = a0i - a2i
                    sr[g, base + 3 * ns + P * ((base + 3 * ns) >> 5)] = a1r - a3r
                    si[g, base + 3 * ns + P * ((base + 3 * ns) >> 5)] = a1i - a3i
            pk.barrier()
        n_out = out.shape[2]
        for q in range(PER):
            c = g
            i = t + q * T
            ac = a
            bc = b
            if COLS_OUT:
                idx = g * T + t + q * (G * T)
                c = idx & (G - 1)
                i = idx >> LOG_G
                ac = a_first
                bc = b_first + c
                if not whole:
                    ac = (first + c) // nb
                    bc = first + c - ac * nb
            if first + c < count and i < n_out:
                re = sr[c, i + P * (i >> 5)] * scale
                im = si[c, i + P * (i >> 5)] * scale
                if (flags & TWIDDLE) != 0:
                    mm = i * bc
                    h = mm >> LO
                    lw = mm & MASK
                    hr = hi[2 * h]
                    hj = hi[2 * h + 1]
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
