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

from pykern.fft.half_spectra import halves_from_spectrum, spectrum_from_halves
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
        xr, xi = spectrum_from_halves(z[r, k1, 0], z[r, k1, 1], z[r, k2, 0], z[r, k2, 1],
                                      tw[2 * k], tw[2 * k + 1])
        out[r, k, 0] = xr * scale
        out[r, k, 1] = co * xi * scale

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
        zr, zi = halves_from_spectrum(ar, ai, br, bi, tw[2 * k], tw[2 * k + 1])
        z[r, k, 0] = zr
        z[r, k, 1] = zi

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
