"""Device functions of the real transforms' half-spectrum algebra, shared by the standalone
passes (real_kernels.py) and the shared-memory FFT kernel (stockham_parts.py).

A real row of even length n = 2h, seen as h complex numbers, has its spectrum from one complex
FFT Z of length h: X_k = E_k + w^k·O_k with E_k = (Z_k + conj Z_(h-k))/2 and
O_k = (Z_k - conj Z_(h-k))/(2i); the inverse rebuilds Z_k = E_k + i·O_k from X_k and X_(h-k).
Complex values travel as (real, imaginary) pairs of the caller's real type.
"""

from __future__ import annotations

import pykern as pk


@pk.func
def times(re, im, wr, wi):
    """(re + i·im)·(wr + i·wi), as (real, imaginary)."""
    return re * wr - im * wi, re * wi + im * wr


@pk.func
def spectrum_from_halves(zr, zi, cr, ci, wr, wi):
    """RFFT: X_k from Z_k = zr + i·zi, Z_(h-k) = cr + i·ci and w^k = wr + i·wi."""
    er = (zr + cr) * 0.5
    ei = (zi - ci) * 0.5
    o_r = (zi + ci) * 0.5
    o_i = (cr - zr) * 0.5
    return er + wr * o_r - wi * o_i, ei + wr * o_i + wi * o_r


@pk.func
def halves_from_spectrum(ar, ai, br, bi, wr, wi):
    """IRFFT: Z_k = E_k + i·O_k from X_k = ar + i·ai, X_(h-k) = br + i·bi and
    w^k = wr + i·wi, with E = (a + conj b)/2, D = (a - conj b)/2 and O = D·conj(w^k)."""
    er = (ar + br) * 0.5
    ei = (ai - bi) * 0.5
    dr = (ar - br) * 0.5
    di = (ai + bi) * 0.5
    o_r, o_i = times(dr, di, wr, -wi)
    return er - o_i, ei + o_r
