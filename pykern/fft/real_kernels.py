"""Kernels of the real transforms, on pair tensors `(R, length, 2)`.

A real signal of even length n = 2h, seen as h complex numbers z_j = x_2j + i·x_2j+1 (the same
memory), has its spectrum from one complex FFT Z of length h:
X_k = E_k + w_n^k·O_k with E_k = (Z_k + conj Z_(h-k))/2 and O_k = (Z_k - conj Z_(h-k))/(2i),
the transforms of the even and odd samples (`rfft_post`). The inverse (`irfft_pre`) rebuilds
Z_k = E_k + i·O_k from X_k and X_(h-k), and one inverse FFT of length h gives z, that is x.
Other lengths go through the full complex spectrum (`hermitian_extend`: X_(n-k) = conj X_k).
"""

import functools

import pykern as pk

from pykern.lang.dtypes import DType


@functools.lru_cache(maxsize=None)
def rfft_post(real: DType) -> pk.Kernel:
    """out (R, h+1, 2) = the spectrum X_0..X_h of the real rows whose pairs' FFT is z (R, h, 2),
    times `scale`, imaginary parts times `co` (-1: conjugated); tw holds w_n^k (n = 2h)."""
    F = real  # noqa: N806

    @pk.kernel
    def rfft_post_pass(z: F[:, :, :], tw: F[:], out: F[:, :, :], scale: F, co: F):
        k = pk.global_id(0)
        r = pk.global_id(1)
        h = z.shape[1]
        k1 = k
        if k1 == h:
            k1 = 0
        k2 = h - k
        if k2 == h:
            k2 = 0
        zr = z[r, k1, 0]
        zi = z[r, k1, 1]
        cr = z[r, k2, 0]
        ci = z[r, k2, 1]
        er = (zr + cr) * 0.5
        ei = (zi - ci) * 0.5
        o_r = (zi + ci) * 0.5
        o_i = (cr - zr) * 0.5
        wr = tw[2 * k]
        wi = tw[2 * k + 1]
        out[r, k, 0] = (er + wr * o_r - wi * o_i) * scale
        out[r, k, 1] = co * (ei + wr * o_i + wi * o_r) * scale

    return rfft_post_pass


@functools.lru_cache(maxsize=None)
def irfft_pre(real: DType) -> pk.Kernel:
    """z (R, h, 2) = Z_k = E_k + i·O_k from the half spectrum x (R, m, 2) (zero past m; the
    imaginary parts of X_0 and X_h ignored, as numpy does); x's imaginary parts are multiplied
    by `ci` first."""
    F = real  # noqa: N806

    @pk.kernel
    def irfft_pre_pass(x: F[:, :, :], tw: F[:], z: F[:, :, :], ci: F):
        k = pk.global_id(0)
        r = pk.global_id(1)
        h = z.shape[1]
        m = x.shape[1]
        k2 = h - k
        ar = F(0.0)
        ai = F(0.0)
        br = F(0.0)
        bi = F(0.0)
        if k < m:
            ar = x[r, k, 0]
            ai = ci * x[r, k, 1]
        if k2 < m:
            br = x[r, k2, 0]
            bi = ci * x[r, k2, 1]
        if k == 0:
            ai = F(0.0)
            bi = F(0.0)
        # E = (a + conj b)/2, D = (a - conj b)/2, O = D · conj(w^k), Z = E + i·O
        er = (ar + br) * 0.5
        ei = (ai - bi) * 0.5
        dr = (ar - br) * 0.5
        di = (ai + bi) * 0.5
        wr = tw[2 * k]
        wi = -tw[2 * k + 1]
        o_r = dr * wr - di * wi
        o_i = dr * wi + di * wr
        z[r, k, 0] = er - o_i
        z[r, k, 1] = ei + o_r

    return irfft_pre_pass


@functools.lru_cache(maxsize=None)
def hermitian_extend(real: DType) -> pk.Kernel:
    """out (A, B, n, 2): X_k for k ≤ n/2 and conj X_(n-k) above, from the half spectrum x
    (A, B, m, 2), zero past m; x's imaginary parts are multiplied by `ci`."""
    F = real  # noqa: N806

    @pk.kernel
    def fft_hermitian_extend(x: F[:, :, :, :], out: F[:, :, :, :], ci: F):
        k = pk.global_id(0)
        r = pk.global_id(1)
        nb = out.shape[1]
        a = r // nb
        b = r - a * nb
        n = out.shape[2]
        src = k
        sign = ci
        if 2 * k > n:
            src = n - k
            sign = -ci
        re = F(0.0)
        im = F(0.0)
        if src < x.shape[2]:
            re = x[a, b, src, 0]
            im = sign * x[a, b, src, 1]
        out[a, b, k, 0] = re
        out[a, b, k, 1] = im

    return fft_hermitian_extend
