"""Host-computed constant tables of the transforms, as device tensors of interleaved (re, im)
pairs: twiddles w_N^m = exp(-2πi m/N) and Bluestein's chirp. Every angle is reduced exactly in
integers and evaluated in f64 before one rounding to the working dtype, so an f32 transform's
twiddles are correctly rounded whatever N (sin/cos of a large f32 argument would not be).

Tables are cached per (device, dtype, length): plans are reused across calls, as cuFFT's are.
"""

from __future__ import annotations

import functools

import numpy as np

import pykern as pk

from pykern.lang.dtypes import DType
from pykern.tensor.core.tensor import Tensor


def pairs(z: np.ndarray, real: DType) -> Tensor:
    """A complex numpy vector as a device tensor of interleaved (re, im) of dtype `real`."""
    flat = np.stack([z.real, z.imag], axis=-1).astype(real.numpy).ravel()
    return pk.asarray(flat)


def unit_roots(length: int, indices: np.ndarray) -> np.ndarray:
    """exp(-2πi m/length) for integer m, in f64, the angle reduced exactly first."""
    m = np.mod(indices.astype(np.int64), length)
    return np.exp(-2j * np.pi * (m / length))


@functools.lru_cache(maxsize=256)
def twiddles(device: object, real: DType, n: int) -> Tensor:
    """w_n^m for m < n (at least one pair, so that the table is never empty)."""
    return pairs(unit_roots(n, np.arange(max(n, 1))), real)


@functools.lru_cache(maxsize=64)
def four_step_twiddles(device: object, real: DType, length: int, lo_bits: int
                       ) -> tuple[Tensor, Tensor]:
    """The two factors of w_L^m = hi[m >> lo_bits] · lo[m & (2^lo_bits - 1)] for m < L."""
    lo_len = 1 << lo_bits
    hi = unit_roots(length, np.arange(max(1, -(-length // lo_len))) * lo_len)
    lo = unit_roots(length, np.arange(lo_len))
    return pairs(hi, real), pairs(lo, real)


def chirp(n: int) -> np.ndarray:
    """Bluestein's chirp h_k = exp(-πi k²/n) for k < n, in f64 (k² reduced modulo 2n)."""
    k = np.arange(n, dtype=np.int64)
    return np.exp(-1j * np.pi * (np.mod(k * k, 2 * n) / n))


@functools.lru_cache(maxsize=64)
def chirp_table(device: object, real: DType, n: int) -> Tensor:
    """h_k for k < n, on the device."""
    return pairs(chirp(n), real)


@functools.lru_cache(maxsize=64)
def conj_chirp_table(device: object, real: DType, n: int) -> Tensor:
    """conj(h_k) for k < n, on the device."""
    return pairs(np.conj(chirp(n)), real)


def chirp_kernel_taps(n: int, m: int) -> np.ndarray:
    """The circular convolution kernel of length m: conj(h_k) at k and at m - k."""
    b = np.zeros(m, dtype=np.complex128)
    h = np.conj(chirp(n))
    b[:n] = h
    b[m - n + 1:] = h[1:][::-1]
    return b


@functools.lru_cache(maxsize=256)
def stage_twiddles(device: object, real: DType, radices: tuple[int, ...]) -> Tensor:
    """The twiddles of the shared-memory kernel's stages (stockham.py): for stage s ≥ 1 of
    radix R after stages whose radices multiply to Ns, w_(Ns·R)^(r·k) for r = 1..R-1, k < Ns at
    offset_s + (r - 1)·Ns + k; the real parts first, then the imaginary parts (two planes of
    M values, at least one)."""
    n = int(np.prod(radices))
    parts = [np.zeros(0, dtype=np.complex128)]
    ns = 1
    for s, r in enumerate(radices):
        if s > 0:
            k = np.arange(ns)
            m = np.concatenate([j * k * (n // (ns * r)) for j in range(1, r)])
            parts.append(unit_roots(n, m))
        ns *= r
    z = np.concatenate(parts)
    if z.size == 0:
        z = np.ones(1, dtype=np.complex128)
    flat = np.concatenate([z.real, z.imag]).astype(real.numpy)
    return pk.asarray(flat)


@functools.lru_cache(maxsize=64)
def half_twiddles(device: object, real: DType, n: int) -> Tensor:
    """w_n^k for k ≤ n/2, as interleaved pairs (the real transforms' pre and post steps)."""
    return pairs(unit_roots(n, np.arange(n // 2 + 1)), real)
