"""How the shared-memory FFT kernel (stockham.py) stores its results: the last stage's values
go straight from the registers to `out`, or through shared memory first (stored across the
transforms, or an RFFT's spectrum, which pairs Z_i with Z_(N-i)). Each device function is made
for one kernel variant by a factory that closes over its compile-time constants.
"""

from __future__ import annotations

import pykern as pk

from pykern.fft.radix_plan import RFFT, LaunchShape, StageConstants
from pykern.fft.stockham_parts import real_spectrum
from pykern.lang.func import Func


def values_per_invocation(shape: LaunchShape) -> int:
    """The outputs an invocation stores from shared memory (an RFFT's N + 1, else N)."""
    n = shape.n + 1 if shape.mode == RFFT else shape.n
    return -(-n // shape.threads)


def stash_func(shape: LaunchShape, k: StageConstants, slot: Func) -> Func:
    """`stash(vals, sr, si, g, t)`: the last stage's value q·R + r into the slot of output
    element j + r·N/R (j = t + q·T), between barriers."""
    T, S, RL, BL, QL = (shape.threads, len(shape.radices), shape.radices[-1],  # noqa: N806
                        k.butterflies[-1], k.per_thread[-1])

    @pk.func
    def stash(vals, sr, si, g, t):
        if S > 1:
            pk.barrier()  # every read of the last stage is done
        for q in pk.static_range(QL):
            j = t + q * T
            if j < BL:
                for r in pk.static_range(RL):
                    sr[slot(g, j + r * BL)] = vals[q * RL + r].real
                    si[slot(g, j + r * BL)] = vals[q * RL + r].imag
        pk.barrier()

    return stash


def spectrum_store_func(shape: LaunchShape, slot: Func, store: Func) -> Func:
    """`store_spectrum(out, sr, si, a, b, g, t, live, scale, cr, hi, lo, post)`, RFFT: X_0 ..
    X_N of transform (a, b) from the stashed Z."""
    N, T, OUTS = shape.n, shape.threads, values_per_invocation(shape)  # noqa: N806

    @pk.func
    def store_spectrum(out, sr, si, a, b, g, t, live, scale, cr, hi, lo, post):
        for m in pk.static_range(OUTS):
            i = t + m * T
            if live and i <= N and i < out.shape[2]:
                store(out, a, b, i, real_spectrum(sr, si, slot(g, i % N),
                                                  slot(g, (N - i) % N), post, i),
                      scale, cr, hi, lo, post)

    return store_spectrum


def across_store_func(shape: LaunchShape, slot: Func, store: Func) -> Func:
    """`store_across(out, sr, si, first, count, nb, g, t, scale, co, hi, lo, post)`: the
    stashed outputs of the workgroup's transforms, consecutive invocations on consecutive
    transforms (`nb`: out's second size)."""
    N, T, G = shape.n, shape.threads, shape.groups  # noqa: N806
    LOG_G, OUTS = G.bit_length() - 1, values_per_invocation(shape)  # noqa: N806

    @pk.func
    def store_across(out, sr, si, first, count, nb, g, t, scale, co, hi, lo, post):
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

    return store_across


def direct_store_func(shape: LaunchShape, k: StageConstants, store: Func) -> Func:
    """`store_direct(out, vals, a, b, t, live, scale, co, hi, lo, post)`: the last stage's
    value q·R + r straight from the registers to output element j + r·N/R (j = t + q·T)."""
    T, RL, BL, QL = (shape.threads, shape.radices[-1], k.butterflies[-1],  # noqa: N806
                     k.per_thread[-1])

    @pk.func
    def store_direct(out, vals, a, b, t, live, scale, co, hi, lo, post):
        for q in pk.static_range(QL):
            j = t + q * T
            for r in pk.static_range(RL):
                i = j + r * BL
                if live and j < BL and i < out.shape[2]:
                    store(out, a, b, i, vals[q * RL + r], scale, co, hi, lo, post)

    return store_direct
