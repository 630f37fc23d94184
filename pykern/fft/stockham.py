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

The kernel's device functions are made per variant in stockham_parts.py (loads, the output
store, the moves between stages through shared memory) and stockham_outputs.py (the ways the
last stage's values reach `out`).
"""

from __future__ import annotations

import functools

import pykern as pk

from pykern.fft.butterflies import butterfly_at
from pykern.fft.radix_plan import (COMPLEX, HERMITIAN_IN, IRFFT, REAL_IN, RFFT, LaunchShape,
                                   stage_constants)
from pykern.fft.stockham_outputs import (across_store_func, direct_store_func, spectrum_store_func,
                                         stash_func)
from pykern.fft.stockham_parts import (LO_BITS, POST, PRE, TWIDDLE, loaded_func, padding,
                                       place_func, slot_func, spectrum_pair_func, spill_func,
                                       store_func)
from pykern.lang.dtypes import DType

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
    k = stage_constants(shape)
    NS, BF, QS, GUARD, LOGNS, TOFF, TWM = (k.ns, k.butterflies, k.per_thread, k.guarded,  # noqa: N806
                                           k.log_ns, k.table_offset, k.table_size)
    MAXV = k.values  # noqa: N806
    # stage s's butterfly q of an invocation: the DFT of its values, vals[q·R : (q + 1)·R]
    STEPS = tuple(tuple(butterfly_at(q * RAD[s], RAD[s]) for q in range(QS[s]))  # noqa: N806
                  for s in range(S))
    NP = padding(shape)[1]  # noqa: N806 - a transform's slots in shared memory
    SHARED = G * NP if (S > 1 or ACROSS or MODE == RFFT) else 1  # noqa: N806
    slot = slot_func(shape)
    place = place_func(shape)
    loaded = loaded_func(F, shape)
    spectrum_pair = spectrum_pair_func(F, N)
    store = store_func(shape)
    # stage s's outputs into shared memory, for the next stage (none after the last)
    SPILL = tuple(spill_func(shape, k, s, slot) for s in range(S - 1))  # noqa: N806
    stash = stash_func(shape, k, slot)
    store_spectrum = spectrum_store_func(shape, slot, store)
    store_across = across_store_func(shape, slot, store)
    store_direct = direct_store_func(shape, k, store)

    @pk.kernel(workgroup=(G, T, 1) if COLS else (T, G, 1))
    def fft_stockham(x: F[:, :, :, :], out: F[:, :, :, :], tw: F[:], hi: F[:], lo: F[:],
                     pre: F[:], post: F[:], scale: F, ci: F, co: F, cr: F):
        sr = pk.shared(F, SHARED)
        si = pk.shared(F, SHARED)
        t, g, first, count = place()
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
                SPILL[s](vals, sr, si, g, t)
        # the last stage's value q·R + r is output element j + r·N/R (j = t + q·T)
        if ACROSS or MODE == RFFT:
            stash(vals, sr, si, g, t)
        if MODE == RFFT:
            store_spectrum(out, sr, si, a, b, g, t, live, scale, cr, hi, lo, post)
        elif ACROSS:
            store_across(out, sr, si, first, count, nb, g, t, scale, co, hi, lo, post)
        else:
            store_direct(out, vals, a, b, t, live, scale, co, hi, lo, post)

    return fft_stockham
